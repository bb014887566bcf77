"""The reference PyTorch module of exactly what the planner counts (docs/torch.md).

``build_model(config)`` returns a decoder-only transformer whose stored weights are, tensor for
tensor, the parameters of the op list (``budget::layer_ops``, docs/accounting.md) and whose
forward pass runs the loop as the planner executes it:

- physical layers 1..L (1-based), with layers first..last of the loop run ``repeats`` times in a
  row with the same weights (executed depth L + (r − 1)·(last − first + 1));
- inside the loop the residual update of every sub-layer is scaled by 1/r (the SMELT paper's
  convention, arXiv 2609.01343, "Looping"): h ← h + (1/r)·f(norm(h)); outside it, by 1;
- per layer: norm → attention (GQA with optional q/k/v and output biases and q/k norms, or MLA
  with DeepSeek's q/kv low-rank projections and latent norms, rope/nope head split) → residual;
  norm → FFN (routed experts + shared experts + the shared-expert gate, or a dense MLP for the
  first ``first_dense_layers`` layers and dense models) → residual; a final norm; embedding and
  LM head (tied or not, optional LM-head bias) when ``vocab_size`` > 0; ``mtp_layers``
  multi-token-prediction modules (DeepSeek-V3 §2.2) kept apart in ``model.mtp``.

What the planner does not count is chosen here, once, and written down (docs/torch.md): rotary
embeddings (base ``rope_theta``, default 10000), RMSNorm ε, SiLU gating (gated MLPs) or GELU
(plain ones), the router's softmax over all experts in fp32, top-k selection (on the scores plus
the router bias, DeepSeek-V3's e_score_correction_bias, when the config has it) and top-k weights
renormalised to sum 1, the shared-expert gate as a sigmoid. None of these change a parameter or a
counted FLOP.
"""

import json
import os

import torch
import torch.nn.functional as F
from torch import nn

import budget
from budget import _budget

from . import flops as _flops
from .layers import MLP, CountedLinear, GroupedQueryAttention, MoE, MultiHeadLatentAttention, _norm, attention_mask

# Keys of the native config (docs/config.md) this module builds. A key outside these is refused
# rather than ignored: a config it does not fully understand is not approximated.
_TOP_KEYS = {"name", "hidden_size", "num_layers", "vocab_size", "tie_embeddings", "lm_head_bias", "norm",
             "mtp_layers", "attention", "ffn", "loop", "settings"}
_ATTENTION_KEYS = {"num_heads", "head_dim", "num_kv_heads", "mla", "qkv_bias", "output_bias", "qk_norm",
                   "sliding_window", "layer_types"}
_MLA_KEYS = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}
_FFN_KEYS = {"num_experts", "top_k", "expert_dim", "gated", "bias", "router_bias", "shared_expert_gate",
             "num_shared_experts", "shared_expert_dim", "first_dense_layers", "dense_dim"}
_LOOP_KEYS = {"first", "last", "repeats"}

# The components of `budget-match report`'s params.by_component, plus the two reported apart.
COMPONENTS = ("attention", "router", "routed_experts", "shared_experts", "dense_ffn", "norms", "embedding", "mtp")


def _error(path, message, source="config"):
    """A budget.Error like the compiled module's (source, path, message)."""
    error = budget.Error(f"{source}: {path}: {message}")
    error.source = source
    error.file = source
    error.path = path
    error.message = message
    error.value = None
    return error


def native_config(config):
    """The validated native config dict (docs/config.md) of a path, dict or budget.Config: what
    budget.load_config(config).to_dict() gives, Hugging Face files included."""
    if not isinstance(config, budget.Config):
        config = budget.load_config(config)
    return config.to_dict()


def _workload_json(workload):
    if workload is None:
        return ""
    if isinstance(workload, dict):
        return json.dumps(workload)
    if isinstance(workload, (str, os.PathLike)):
        with open(workload, encoding="utf-8") as f:
            return f.read()
    raise _error("", f"a {type(workload).__name__} is not accepted; allowed: None (the paper's), a dict or a file path",
                 source="workload")


def layer_ops(config, workload=None):
    """The planner's op list (budget::layer_ops) of a config under a workload (None: the paper's):
    one dict per op with kind, shapes, params_per_layer, active_params_per_layer, forward_flops (per
    token and execution), physical_layers and executed_layers."""
    return _budget._layer_ops(json.dumps(native_config(config)), _workload_json(workload))


def _check_keys(document, allowed, path):
    for key in document:
        if key not in allowed:
            raise _error(f"{path}/{key}", f"key \"{key}\" is not built by budget.torch; allowed: {', '.join(sorted(allowed))}")


class _Spec:
    """The native config read into plain attributes (defaults as docs/config.md states them)."""

    def __init__(self, c):
        _check_keys(c, _TOP_KEYS, "")
        a, f = c["attention"], c["ffn"]
        _check_keys(a, _ATTENTION_KEYS, "/attention")
        _check_keys(f, _FFN_KEYS, "/ffn")
        self.name = c.get("name", "")
        self.hidden = c["hidden_size"]
        self.layers = c["num_layers"]
        self.vocab = c.get("vocab_size", 0)
        self.tie = c.get("tie_embeddings", False)
        self.lm_head_bias = c.get("lm_head_bias", False)
        self.norm = c.get("norm", "rmsnorm")
        self.mtp_layers = c.get("mtp_layers", 0)
        self.heads = a["num_heads"]
        self.head_dim = a["head_dim"]
        self.mla = a.get("mla")
        if self.mla is not None:
            _check_keys(self.mla, _MLA_KEYS, "/attention/mla")
            self.mla = dict(self.mla)
            self.mla.setdefault("q_lora_rank", 0)
        self.kv_heads = a.get("num_kv_heads", 1 if self.mla else self.heads)
        self.qkv_bias = a.get("qkv_bias", False)
        self.output_bias = a.get("output_bias", False)
        self.qk_norm = a.get("qk_norm", "none")
        self.window = a.get("sliding_window", 0)
        self.layer_types = a.get("layer_types") or ["full"] * self.layers
        self.experts = f.get("num_experts", 0)
        self.top_k = f.get("top_k", 0)
        self.expert_dim = f.get("expert_dim", 0)
        self.gated = f.get("gated", True)
        self.mlp_bias = f.get("bias", False)
        self.router_bias = f.get("router_bias", False)
        self.shared_gate = f.get("shared_expert_gate", False)
        self.shared = f.get("num_shared_experts", 0)
        self.shared_dim = f.get("shared_expert_dim", 0)
        self.first_dense = f.get("first_dense_layers", 0)
        self.dense_dim = f.get("dense_dim", 0)
        loop = c.get("loop")
        if loop is not None:
            _check_keys(loop, _LOOP_KEYS, "/loop")
            self.loop = (loop["first"], loop["last"], loop.get("repeats", 2))
        else:
            self.loop = None

    def is_moe_layer(self, index):
        """0-based physical layer `index` has routed experts."""
        return self.experts > 0 and index >= self.first_dense


def execution_schedule(num_layers, loop):
    """The executed layers in order: (0-based physical layer, residual scale) pairs. `loop` is
    (first, last, repeats), 1-based inclusive, or None. Layers first..last run `repeats` times in
    a row, each with residual scale 1/repeats; the others once with scale 1."""
    if loop is None:
        return [(i, 1.0) for i in range(num_layers)]
    first, last, repeats = loop
    order = [(i, 1.0) for i in range(first - 1)]
    for _ in range(repeats):
        order += [(i, 1.0 / repeats) for i in range(first - 1, last)]
    order += [(i, 1.0) for i in range(last, num_layers)]
    return order


class DecoderLayer(nn.Module):
    """h ← h + scale·attention(norm(h)); h ← h + scale·ffn(norm(h)). scale is 1/r inside the
    loop (given by the model's schedule), else 1."""

    def __init__(self, s, index, factory, rope_theta, norm_eps, sliding):
        super().__init__()
        self.index = index
        self.sliding = sliding
        self.window = s.window if sliding else 0
        self.attn_norm = _norm(s.norm, s.hidden, norm_eps, factory)
        attention = MultiHeadLatentAttention if s.mla else GroupedQueryAttention
        self.attention = attention(s, factory, rope_theta, norm_eps)
        self.ffn_norm = _norm(s.norm, s.hidden, norm_eps, factory)
        if s.is_moe_layer(index):
            self.ffn = MoE(s, factory)
        else:
            self.ffn = MLP(s.hidden, s.dense_dim, s.gated, s.mlp_bias, "dense_ffn", "dense_ffn", factory)

    def forward(self, h, masks, positions, scale=1.0):
        mask = masks[self.window]
        h = h + scale * self.attention(self.attn_norm(h), mask, positions)
        return h + scale * self.ffn(self.ffn_norm(h))


class MTPModule(nn.Module):
    """A multi-token-prediction module (DeepSeek-V3 §2.2): h' = layer(W·[norm(h); norm(emb(t))])
    with W of 2H × H, a decoder layer like the stack's last (full attention; MoE when the stack has
    MoE layers) and a third norm before the shared LM head. Embedding and head are the model's."""

    component = "mtp"

    def __init__(self, s, factory, rope_theta, norm_eps):
        super().__init__()
        self.hidden_norm = _norm(s.norm, s.hidden, norm_eps, factory)
        self.embedding_norm = _norm(s.norm, s.hidden, norm_eps, factory)
        self.projection = CountedLinear(2 * s.hidden, s.hidden, "mtp_module", **factory)
        self.layer = DecoderLayer(s, s.layers - 1, factory, rope_theta, norm_eps, sliding=False)
        self.head_norm = _norm(s.norm, s.hidden, norm_eps, factory)

    def forward(self, h, embedded, masks, positions):
        x = self.projection(torch.cat([self.hidden_norm(h), self.embedding_norm(embedded)], -1))
        return self.layer(x, masks, positions)


class LoopedTransformer(nn.Module):
    """The model of a native config (build it with build_model()). forward(tokens) takes token
    ids [B, T] when vocab_size > 0 and returns logits [B, T, V]; with vocab_size 0 it takes hidden
    states [B, T, H] and returns the final-normed hidden states. `schedule` is the executed order
    of (0-based layer, residual scale); `config` the native dict it was built from."""

    def __init__(self, config, device=None, dtype=None, rope_theta=10000.0, norm_eps=1e-6):
        super().__init__()
        s = _Spec(config)
        self.config = config
        self.spec = s
        self.schedule = execution_schedule(s.layers, s.loop)
        factory = {"device": device, "dtype": dtype}
        self.embedding = None
        if s.vocab > 0:
            self.embedding = nn.Embedding(s.vocab, s.hidden, **factory)
            self.embedding.component = "embedding"
        self.layers = nn.ModuleList(
            DecoderLayer(s, i, factory, rope_theta, norm_eps, sliding=s.layer_types[i] == "sliding")
            for i in range(s.layers))
        self.final_norm = _norm(s.norm, s.hidden, norm_eps, factory)
        self.lm_head = None
        self.lm_head_bias = None
        if s.vocab > 0:
            if not s.tie:
                self.lm_head = CountedLinear(s.hidden, s.vocab, "lm_head", bias=s.lm_head_bias, **factory)
                self.lm_head.component = "embedding"
            elif s.lm_head_bias:
                self.lm_head_bias = nn.Parameter(torch.zeros(s.vocab, **factory))
        self.mtp = nn.ModuleList(MTPModule(s, factory, rope_theta, norm_eps) for _ in range(s.mtp_layers))

    def _masks(self, tokens, device, document_ids):
        windows = {layer.window for layer in self.layers} | {0}
        return {w: attention_mask(tokens, w, document_ids, device) for w in windows}

    def logits(self, h):
        """The LM head on final hidden states (tied: the embedding matrix). 2·H·V FLOPs a token."""
        if self.lm_head is not None:
            return self.lm_head(h)
        _flops.record("lm_head", 2 * (h.numel() // h.shape[-1]) * h.shape[-1] * self.embedding.weight.shape[0])
        return F.linear(h, self.embedding.weight, self.lm_head_bias)

    def forward(self, inputs, document_ids=None, return_hidden=False):
        if self.embedding is not None:
            h = self.embedding(inputs)
        else:
            h = inputs
        tokens = h.shape[1]
        positions = torch.arange(tokens, device=h.device)
        masks = self._masks(tokens, h.device, document_ids)
        for index, scale in self.schedule:
            h = self.layers[index](h, masks, positions, scale)
        hidden = h
        h = self.final_norm(h)
        out = self.logits(h) if self.embedding is not None else h
        return (out, hidden) if return_hidden else out

    def mtp_forward(self, hidden, tokens, document_ids=None):
        """Logits of the MTP modules, depth by depth (DeepSeek-V3 §2.2): module k combines the
        previous depth's hidden state at position i with the embedding of token i + k and predicts
        token i + k + 1; each depth is one position shorter. Counted under ``mtp_module`` (the shared
        LM head under ``lm_head``)."""
        if self.embedding is None:
            raise _error("/mtp_layers", "MTP modules need the embedding (vocab_size > 0) to run")
        out = []
        h = hidden
        for k, module in enumerate(self.mtp, start=1):
            h = h[:, :-1]
            length = h.shape[1]
            embedded = self.embedding(tokens[:, k:k + length])
            ids = None if document_ids is None else document_ids[:, :length]
            masks = self._masks(length, h.device, ids)
            positions = torch.arange(length, device=h.device)
            with _flops.scope("mtp_module"):
                h = module(h, embedded, masks, positions)
            out.append(self.logits(module.head_norm(h)))
        return out


def build_model(config, device=None, dtype=None, rope_theta=None, norm_eps=None):
    """The reference module of a config (a path, dict or budget.Config, native or Hugging Face;
    validated by budget.load_config). device="meta" builds a full-size model without memory.
    rope_theta and norm_eps default to the config's `settings` (docs/config.md; a Hugging Face
    file's rope_theta and rms_norm_eps), else 10000 and 1e-6; no count depends on them."""
    native = native_config(config)
    settings = native.get("settings", {})
    # The 2025 layer kinds this module does not build (docs/config.md, "Hybrid stacks"): refused by
    # name rather than built as full attention with full RoPE. (layer_mixers, layer_ffns,
    # linear_attention, mamba and the attention keys sinks, output_gate, indexer, chunk_size are
    # refused by the key checks.)
    if "chunked" in native["attention"].get("layer_types", []):
        raise _error("/attention/layer_types", "chunked attention layers are not built by budget.torch")
    for key in ("partial_rotary_factor", "nope_layers"):
        if key in settings:
            raise _error(f"/settings/{key}", f"{key} (partial or absent rotary embeddings) is not built by budget.torch")
    if rope_theta is None:
        rope_theta = float(settings.get("rope_theta", 10000.0))
    if norm_eps is None:
        norm_eps = float(settings.get("norm_epsilon", 1e-6))
    return LoopedTransformer(native, device=device, dtype=dtype, rope_theta=rope_theta, norm_eps=norm_eps)


def parameter_counts(model):
    """Stored parameters by component (the keys of `budget-match report`'s params.by_component,
    plus embedding and mtp), each tensor once: {"by_component": {...}, "non_embedding_total",
    "embedding", "mtp", "total"}. A parameter whose module names no component raises."""
    counts = dict.fromkeys(COMPONENTS, 0)
    seen = set()
    for module_name, module in model.named_modules():
        for _, parameter in module.named_parameters(recurse=False):
            if id(parameter) in seen:
                continue
            seen.add(id(parameter))
            if module_name == "mtp" or module_name.startswith("mtp."):
                component = "mtp"
            elif module is model:
                component = "embedding"  # the tied head's bias
            else:
                component = _component_of(model, module_name)
            counts[component] += parameter.numel()
    non_embedding = sum(counts[c] for c in COMPONENTS[:6])
    return {"by_component": {c: counts[c] for c in COMPONENTS[:6]}, "non_embedding_total": non_embedding,
            "embedding": counts["embedding"], "mtp": counts["mtp"],
            "total": non_embedding + counts["embedding"] + counts["mtp"]}


def _component_of(model, module_name):
    """The `component` of the module or of its nearest ancestor that names one."""
    parts = module_name.split(".")
    for end in range(len(parts), 0, -1):
        module = model.get_submodule(".".join(parts[:end]))
        if hasattr(module, "component"):
            return module.component
    raise ValueError(f"budget.torch: module {module_name} names no component")
