"""budget.torch: the reference PyTorch module of exactly what the planner counts (docs/torch.md).

Needs PyTorch (Debian: python3-torch); the rest of the package `budget` works without it.

    import budget.torch
    model = budget.torch.build_model("examples/configs/paper-200M-S95-smelt.json")
    budget.torch.parameter_counts(model)["non_embedding_total"]   # = budget.account(...)["params"]["non_embedding_total"]

`python3 -m budget.torch.layer_time CFG... --out F` times one layer's training step on CUDA.
`python3 -m budget.torch.pipeline CFG --pp P --vp V --micro-batches M --loop-placement wrap --check` runs a
looped model through Megatron-Core's pipeline schedule on CPU processes (gloo) and checks it.
"""

try:
    import torch as _torch  # noqa: F401
except ImportError as _missing:  # pragma: no cover - exercised only where torch is absent
    raise ImportError("budget.torch needs PyTorch (Debian: apt-get install python3-torch; or pip install torch); "
                      "the rest of the package budget works without it") from _missing

from .flops import FlopCounter  # noqa: E402
from .model import (COMPONENTS, LoopedTransformer, attention_mask, build_model, execution_schedule,  # noqa: E402
                    layer_ops, native_config, parameter_counts)

__all__ = ["COMPONENTS", "FlopCounter", "LoopedTransformer", "attention_mask", "build_model", "execution_schedule",
           "layer_ops", "native_config", "parameter_counts"]
