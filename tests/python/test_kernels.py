"""Tests of the kernel target in the Python module (issue 43; docs/kernels.md): match(gpu=,
precision=, attention_backend=) and grid(gpu=, ...) give the CLI's JSON with --gpu/--precision.

References: Mixtral-8x7B on B200 + MXFP8 has a padded row #1 (168 on FlashAttention-2's 192
kernel) and its best native shape at +3.12% KV (docs/kernels.md, "Measured"); a precision without
a GPU, and MXFP8 on Hopper, are refused naming the argument.
"""

import json
import subprocess

import budget
from budget_test_support import CLI, MIXTRAL, run_tests


def test_match_with_a_kernel_target():
    r = budget.match(MIXTRAL, top=2, gpu="b200", precision="mxfp8")
    assert r["summary"]["kernel_stack"]["arch"] == "sm100"
    assert r["summary"]["kernel_stack"]["gemm_width_multiple"] == 32
    first = r["candidates"][0]["kernel_fit"]
    assert first["fit"] == "padded" and first["executed_head_dims"] == [192, 192]
    reach = r["summary"]["native_reach"]
    assert reach["best_native"]["kernel_fit"]["fit"] == "native"
    assert abs(reach["best_native"]["deviation"]["kv"] - 0.03125) < 1e-9
    if CLI:
        out = subprocess.run([CLI, "--baseline", MIXTRAL, "--top", "2", "--gpu", "b200", "--precision", "mxfp8",
                              "--format", "json"], check=True, capture_output=True, text=True)
        assert json.loads(out.stdout)["candidates"] == r["candidates"]


def test_kernel_target_refusals():
    for kwargs, where in (({"precision": "mxfp8"}, "precision"), ({"gpu": "h100-sxm", "precision": "mxfp8"}, "precision"),
                          ({"gpu": "mi300x"}, "gpu")):
        try:
            budget.match(MIXTRAL, top=1, **kwargs)
        except budget.Error as e:
            assert where in str(e)
        else:
            raise AssertionError(f"{kwargs} was not refused")


def test_grid_with_a_kernel_target():
    g = budget.grid(gpu="h100-sxm", attention_backend="fa3")
    fits = [cell["matched"]["kernel_fit"]["fit"] for cell in g["cells"]]
    assert len(fits) == 16 and "refused" not in fits
    assert all(cell["kernel_stack"]["attention_backend"] == "fa3" for cell in g["cells"])


if __name__ == "__main__":
    run_tests(globals())
