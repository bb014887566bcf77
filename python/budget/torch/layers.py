"""The building blocks of budget.torch's model (model.py, docs/torch.md): counted linear layers,
norms, rotary embeddings, attention (GQA and MLA) and the FFNs (a dense MLP, routed experts, the
router, the MoE block). Each reports its counted FLOPs under the planner's op names (flops.py)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from . import flops as _flops


class CountedLinear(nn.Linear):
    """nn.Linear that reports its matmul FLOPs (2·rows·in·out) under the planner's op name. The
    bias add is not a counted FLOP (docs/accounting.md, "Biases and norms")."""

    def __init__(self, in_features, out_features, op, bias=False, **factory):
        super().__init__(in_features, out_features, bias=bias, **factory)
        self.op = op

    def forward(self, x):
        _flops.record(self.op, 2 * (x.numel() // self.in_features) * self.in_features * self.out_features)
        return super().forward(x)


class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x²) + ε) · w: `width` weights (component "norms", q/k and latent norms too)."""

    component = "norms"

    def __init__(self, width, eps=1e-6, **factory):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width, **factory))

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def _norm(kind, width, eps, factory):
    """A model norm: RMSNorm (width weights) or LayerNorm (width weights + width biases)."""
    if kind == "layernorm":
        norm = nn.LayerNorm(width, eps=eps, **factory)
        norm.component = "norms"
        return norm
    return RMSNorm(width, eps, **factory)


def _rotary(x, positions, theta):
    """Rotary position embedding (rotate-half form) over the last dim of x [B, heads, T, d]; an
    odd d leaves its last element unrotated. No weights, no counted FLOPs."""
    d = x.shape[-1] - x.shape[-1] % 2
    if d == 0:
        return x
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d))
    angles = positions.to(torch.float32)[:, None] * inv_freq[None, :]
    cos = torch.cat([angles.cos(), angles.cos()], -1).to(x.dtype)
    sin = torch.cat([angles.sin(), angles.sin()], -1).to(x.dtype)
    rot, rest = x[..., :d], x[..., d:]
    half = d // 2
    rotated = torch.cat([-rot[..., half:], rot[..., :half]], -1)
    return torch.cat([rot * cos + rotated * sin, rest], -1)


def attention_mask(tokens, window=0, document_ids=None, device=None):
    """Boolean [T, T] (or [B, T, T] with document_ids [B, T]) mask: query i attends key j when
    j ≤ i, i − j < window (window > 0: the accounting's min(i, W) keys for 1-based i), and both
    are in the same document."""
    i = torch.arange(tokens, device=device)
    mask = i[None, :] <= i[:, None]
    if window > 0:
        mask = mask & (i[:, None] - i[None, :] < window)
    if document_ids is not None:
        mask = mask[None] & (document_ids[:, :, None] == document_ids[:, None, :])
    return mask


def _attend(q, k, v, mask):
    """Softmax attention. q [B, n, T, d_qk], k [B, n_kv, T, d_qk], v [B, n_kv, T, d_v]; each KV
    head serves n / n_kv query heads. Reports 2·(d_qk + d_v) FLOPs per head and attended pair
    (QKᵀ and PV over the pairs the mask keeps)."""
    batch, heads, _, qk_dim = q.shape
    groups = heads // k.shape[1]
    if groups > 1:
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
    pairs = int(mask.sum()) * (batch if mask.dim() == 2 else 1)
    _flops.record("attention_scores", 2 * heads * pairs * (qk_dim + v.shape[-1]))
    scores = torch.matmul(q, k.transpose(-1, -2)).float() / math.sqrt(qk_dim)
    m = mask if mask.dim() == 2 else mask[:, None]
    scores = scores.masked_fill(~m, float("-inf"))
    return torch.matmul(scores.softmax(-1).to(v.dtype), v)


class GroupedQueryAttention(nn.Module):
    """Fused x·[W_q W_k W_v] (H × (q + 2·kv), optional biases), optional q/k norms (per_head:
    one head_dim vector each for queries and keys; full: q + kv weights), attention, W_o (q × H,
    optional bias). Parameters: docs/accounting.md, qkv_projection and output_projection."""

    component = "attention"

    def __init__(self, s, factory, rope_theta, norm_eps):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = s.heads, s.kv_heads, s.head_dim
        self.q_width, self.kv_width = s.heads * s.head_dim, s.kv_heads * s.head_dim
        self.rope_theta = rope_theta
        self.qkv = CountedLinear(s.hidden, self.q_width + 2 * self.kv_width, "qkv_projection", bias=s.qkv_bias, **factory)
        self.qk_norm = s.qk_norm
        if s.qk_norm == "per_head":
            self.q_norm, self.k_norm = RMSNorm(s.head_dim, norm_eps, **factory), RMSNorm(s.head_dim, norm_eps, **factory)
        elif s.qk_norm == "full":
            self.q_norm, self.k_norm = RMSNorm(self.q_width, norm_eps, **factory), RMSNorm(self.kv_width, norm_eps, **factory)
        self.out = CountedLinear(self.q_width, s.hidden, "output_projection", bias=s.output_bias, **factory)

    def forward(self, x, mask, positions):
        batch, tokens, _ = x.shape
        q, k, v = self.qkv(x).split([self.q_width, self.kv_width, self.kv_width], -1)
        if self.qk_norm == "full":
            q, k = self.q_norm(q), self.k_norm(k)
        q = q.view(batch, tokens, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(batch, tokens, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(batch, tokens, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.qk_norm == "per_head":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = _rotary(q, positions, self.rope_theta), _rotary(k, positions, self.rope_theta)
        o = _attend(q, k, v, mask).transpose(1, 2).reshape(batch, tokens, self.q_width)
        return self.out(o)


class MultiHeadLatentAttention(nn.Module):
    """DeepSeek-V2/V3 MLA as trained (not absorbed): queries x·W_dq (H × r_q) → RMSNorm(r_q) →
    ·W_uq (r_q × n·(d_n + d_r)), or x·W_q (H × n·(d_n + d_r)) without r_q; keys and values
    x·W_dkv (H × (r_kv + d_r): the latent and one rotary key shared by all heads) → RMSNorm(r_kv)
    on the latent → ·W_ukv (r_kv × n·(d_n + d_v)); scores over d_n + d_r, values of d_v; W_o
    (n·d_v × H). Parameters: docs/accounting.md, "MLA"."""

    component = "attention"

    def __init__(self, s, factory, rope_theta, norm_eps):
        super().__init__()
        m = s.mla
        self.heads = s.heads
        self.nope, self.rope, self.v_dim = m["qk_nope_head_dim"], m["qk_rope_head_dim"], m["v_head_dim"]
        self.kv_rank = m["kv_lora_rank"]
        self.rope_theta = rope_theta
        q_width = s.heads * (self.nope + self.rope)
        if m["q_lora_rank"] > 0:
            self.q_down = CountedLinear(s.hidden, m["q_lora_rank"], "q_down_projection", **factory)
            self.q_norm = RMSNorm(m["q_lora_rank"], norm_eps, **factory)
            self.q_up = CountedLinear(m["q_lora_rank"], q_width, "q_up_projection", **factory)
        else:
            self.q_down = None
            self.q_up = CountedLinear(s.hidden, q_width, "q_up_projection", **factory)
        self.kv_down = CountedLinear(s.hidden, self.kv_rank + self.rope, "kv_down_projection", **factory)
        self.kv_norm = RMSNorm(self.kv_rank, norm_eps, **factory)
        self.kv_up = CountedLinear(self.kv_rank, s.heads * (self.nope + self.v_dim), "kv_up_projection", **factory)
        self.out = CountedLinear(s.heads * self.v_dim, s.hidden, "output_projection", **factory)

    def forward(self, x, mask, positions):
        batch, tokens, _ = x.shape
        q = self.q_up(self.q_norm(self.q_down(x))) if self.q_down is not None else self.q_up(x)
        q = q.view(batch, tokens, self.heads, self.nope + self.rope).transpose(1, 2)
        q_nope, q_rope = q.split([self.nope, self.rope], -1)
        latent, k_rope = self.kv_down(x).split([self.kv_rank, self.rope], -1)
        kv = self.kv_up(self.kv_norm(latent)).view(batch, tokens, self.heads, self.nope + self.v_dim).transpose(1, 2)
        k_nope, v = kv.split([self.nope, self.v_dim], -1)
        k_rope = _rotary(k_rope[:, None], positions, self.rope_theta).expand(batch, self.heads, tokens, self.rope)
        q = torch.cat([q_nope, _rotary(q_rope, positions, self.rope_theta)], -1)
        k = torch.cat([k_nope, k_rope], -1)
        o = _attend(q, k, v, mask).transpose(1, 2).reshape(batch, tokens, self.heads * self.v_dim)
        return self.out(o)


def _activation(gated):
    return F.silu if gated else F.gelu


class MLP(nn.Module):
    """A dense FFN or one shared expert: gated, down(silu(gate(x)) · up(x)) with 3 matrices of
    H × width; plain, down(gelu(up(x))) with 2. Biases (ffn.bias): gate and up width each, down H."""

    def __init__(self, hidden, width, gated, bias, op, component, factory):
        super().__init__()
        self.component = component
        self.gate = CountedLinear(hidden, width, op, bias=bias, **factory) if gated else None
        self.up = CountedLinear(hidden, width, op, bias=bias, **factory)
        self.down = CountedLinear(width, hidden, op, bias=bias, **factory)

    def forward(self, x):
        if self.gate is not None:
            return self.down(F.silu(self.gate(x)) * self.up(x))
        return self.down(F.gelu(self.up(x)))


class RoutedExperts(nn.Module):
    """E MLPs of width d stored as stacked tensors ([E, d, H] gate and up, [E, H, d] down, biases
    [E, d] / [E, H] with ffn.bias): E·m·H·d weights. Each expert runs on the rows routed to it and
    reports 2·rows·m·H·d FLOPs."""

    component = "routed_experts"

    def __init__(self, s, factory):
        super().__init__()
        E, H, d = s.experts, s.hidden, s.expert_dim
        self.gated = s.gated
        self.matrices = 3 if s.gated else 2
        self.w_gate = nn.Parameter(torch.empty(E, d, H, **factory)) if s.gated else None
        self.w_up = nn.Parameter(torch.empty(E, d, H, **factory))
        self.w_down = nn.Parameter(torch.empty(E, H, d, **factory))
        if s.mlp_bias:
            self.b_gate = nn.Parameter(torch.zeros(E, d, **factory)) if s.gated else None
            self.b_up = nn.Parameter(torch.zeros(E, d, **factory))
            self.b_down = nn.Parameter(torch.zeros(E, H, **factory))
        else:
            self.b_gate = self.b_up = self.b_down = None
        for w in (self.w_gate, self.w_up, self.w_down):
            if w is not None and w.device.type != "meta":
                nn.init.normal_(w, std=0.02)

    def forward(self, x, choice, weights):
        """x [N, H]; choice [N, k] expert indices; weights [N, k]. Σ_j weights[:, j]·expert_{choice[:, j]}(x)."""
        out = torch.zeros_like(x)
        H, d = self.w_up.shape[2], self.w_up.shape[1]
        for e in torch.unique(choice).tolist():
            rows, slot = (choice == e).nonzero(as_tuple=True)
            xe = x[rows]
            _flops.record("routed_experts", 2 * rows.numel() * self.matrices * H * d)
            up = F.linear(xe, self.w_up[e], None if self.b_up is None else self.b_up[e])
            if self.gated:
                gate = F.linear(xe, self.w_gate[e], None if self.b_gate is None else self.b_gate[e])
                hidden = F.silu(gate) * up
            else:
                hidden = F.gelu(up)
            ye = F.linear(hidden, self.w_down[e], None if self.b_down is None else self.b_down[e])
            out.index_add_(0, rows, ye * weights[rows, slot, None].to(ye.dtype))
        return out


class Router(nn.Module):
    """x·W_router (H × E) → softmax in fp32 → top-k (selected on scores + bias when router_bias,
    the E-vector of DeepSeek-V3's e_score_correction_bias, which only steers selection) →
    the chosen scores renormalised to sum 1."""

    component = "router"

    def __init__(self, s, factory):
        super().__init__()
        self.top_k = s.top_k
        self.gate = CountedLinear(s.hidden, s.experts, "router", **factory)
        # DeepSeek-V3 §2.1.2 updates this bias by its auxiliary-loss-free balancing rule, not by
        # gradient: a stored parameter (counted in N, as the planner does) that SGD leaves alone.
        self.bias = nn.Parameter(torch.zeros(s.experts, **factory), requires_grad=False) if s.router_bias else None

    def forward(self, x):
        scores = self.gate(x).float().softmax(-1)
        selection = scores if self.bias is None else scores + self.bias.float()
        choice = selection.topk(self.top_k, dim=-1).indices
        weights = scores.gather(-1, choice)
        return choice, weights / weights.sum(-1, keepdim=True)


class MoE(nn.Module):
    """Router, routed experts, shared experts (each an MLP of shared_expert_dim, used by every
    token) and the optional H → 1 shared-expert gate (Qwen-MoE: sigmoid(x·w)·shared(x)). Holds no
    parameter of its own: each part names its component."""

    def __init__(self, s, factory):
        super().__init__()
        self.router = Router(s, factory)
        self.experts = RoutedExperts(s, factory)
        self.shared = nn.ModuleList(
            MLP(s.hidden, s.shared_dim, s.gated, s.mlp_bias, "shared_experts", "shared_experts", factory)
            for _ in range(s.shared))
        self.shared_gate = None
        if s.shared_gate:
            self.shared_gate = CountedLinear(s.hidden, 1, "shared_experts", **factory)
            self.shared_gate.component = "shared_experts"

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        choice, weights = self.router(x)
        out = self.experts(x, choice, weights)
        if len(self.shared) > 0:
            shared = sum(expert(x) for expert in self.shared)
            if self.shared_gate is not None:
                shared = torch.sigmoid(self.shared_gate(x)) * shared
            out = out + shared
        return out.reshape(shape)
