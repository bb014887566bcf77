"""python3 -m budget.torch.layer_time CFG... --out F: one layer's training step timed on CUDA.

The measurement of tests/data/time/h200_torch_layers.jsonl (docs/calibration.md, "Layer rows"): one
layer, forward + backward, bf16, at `docs` documents of `doc_len` tokens (default 41 × 799 =
32,759 tokens, causal inside each document), random inputs, CUDA events, the median of
`repeats` (10) steps after `warmup` (3). Per config:

- attention block: RMSNorm, one fused QKV GEMM (H × (q + 2·kv)), q/k/v viewed as
  (docs, heads, doc_len, head_dim), PyTorch's scaled_dot_product_attention (causal; its own
  backend choice; `attention_backend_ms` forces flash, efficient and cudnn in turn, or says
  "refused: <error>"), the output reshaped to tokens × q and projected (q × H), residual add;
- MoE block: RMSNorm, router GEMM (H × E), softmax and top-k in fp32, a perfectly balanced
  dispatch (each expert gets the same number R = ⌈T·k/E⌉ of token rows, gathered by index; the
  T·k routed rows are dealt round-robin in a fixed random order, padding rows carry weight 0),
  two batched GEMMs (torch.bmm: H → 2·expert_dim, SwiGLU, expert_dim → H), the routing weights
  gathered and multiplied, a scatter-add (index_add_) combine into a zeroed buffer, residual add.
  `pad_fraction` = (E·R − T·k)/(T·k). A dense model's FFN block (RMSNorm, gated MLP, residual)
  is timed in its place (`moe_block_ms` then holds the dense FFN's time, `ffn` says "dense").

`layer_ms` times both blocks in one step, `attn_block_ms` and `moe_block_ms` each alone;
`layer_spread_ms` is the spread (max − min) of the `repeats` layer steps. Time per token of the
whole model = layer_ms × executed_layers / tokens. The first row (op "device") names the device,
torch's version and an n³ GEMM's rate (n = 8192 on CUDA).

Beyond the file's layer, the same blocks also time, where the config has them: q/k/v and
output biases, q/k norms (per-head or full), LayerNorm, plain (GELU) MLPs, a router bias
(steering the top-k choice), shared experts (one MLP of num_shared·shared_expert_dim over every
token, with the optional sigmoid gate), MLA (as trained: q down → RMSNorm → q up or one q
projection, kv down → RMSNorm(latent) → kv up, one rotary key shared by the heads, SDPA over
nope + rope with values of v_head_dim; no rotary embedding is applied, as in the file's GQA
layer), and dense-first layers (both layer kinds timed: `moe_layer_ms`, `dense_layer_ms`,
`dense_ffn_block_ms`, `executed_dense_layers`, and `layer_ms` their mean over the executed
layers; `layer_spread_ms` is then the MoE layer's). Sliding-window layers and MLP biases are
refused by name before anything is timed: the row would be the time of another layer. Without CUDA the
command refuses with one sentence; `--device cpu --allow-cpu` dry-runs the same code path on the
CPU (manual attention where torch has no scaled_dot_product_attention) for tests, not for data.
"""

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

import budget

BACKENDS = ("flash", "efficient", "cudnn")


class Refusal(Exception):
    """A config or setting this entry point does not time (one sentence)."""


def _refuse_unsupported(config, source):
    a, f = config["attention"], config["ffn"]
    unsupported = [
        ("sliding" in (a.get("layer_types") or []), "sliding-window layers"),
        (f.get("bias", False), "MLP biases"),
    ]
    for present, what in unsupported:
        if present:
            raise Refusal(f"{source}: {what} are not timed by budget.torch.layer_time (its layer is the GQA + "
                          f"routed-MoE layer of h200_torch_layers.jsonl); nothing was measured")


def _rms_norm(x, weight, eps=1e-6):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def _norm(x, weight, bias):
    """RMSNorm, or LayerNorm when the norm has a bias (norm: layernorm)."""
    if bias is None:
        return _rms_norm(x, weight)
    return F.layer_norm(x, x.shape[-1:], weight, bias, 1e-5)


def _sdpa(q, k, v):
    """Causal attention per document: q (docs, heads, len, d), k/v (docs, kv_heads, len, d)."""
    groups = q.shape[1] // k.shape[1]
    if hasattr(F, "scaled_dot_product_attention"):
        if groups > 1:
            try:
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            except TypeError:  # torch < 2.5: no enable_gqa
                pass
            k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    if groups > 1:
        k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
    length = q.shape[2]
    mask = torch.ones(length, length, dtype=torch.bool, device=q.device).tril()
    scores = torch.matmul(q, k.transpose(-1, -2)).float() / math.sqrt(q.shape[-1])
    return torch.matmul(scores.masked_fill(~mask, float("-inf")).softmax(-1).to(v.dtype), v)


class Layer:
    """The weights and inputs of one layer of `config` (native dict) for `docs` × `doc_len` tokens."""

    def __init__(self, config, docs, doc_len, device, dtype, generator, dense=False):
        a, f = config["attention"], config["ffn"]
        self.H = config["hidden_size"]
        self.heads, self.head_dim = a["num_heads"], a["head_dim"]
        self.kv_heads = a.get("num_kv_heads", 1 if a.get("mla") else self.heads)
        self.q, self.kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        self.docs, self.doc_len, self.tokens = docs, doc_len, docs * doc_len
        self.experts, self.top_k, self.expert_dim = f.get("num_experts", 0), f.get("top_k", 0), f.get("expert_dim", 0)
        if dense:  # a dense-first layer of an MoE stack
            self.experts = self.top_k = self.expert_dim = 0
        self.dense_dim = f.get("dense_dim", 0)
        self.gated = f.get("gated", True)
        self.qk_norm = a.get("qk_norm", "none")
        self.shared_width = f.get("num_shared_experts", 0) * f.get("shared_expert_dim", 0)

        def weight(*shape, fan_in):
            w = torch.randn(*shape, device=device, generator=generator) / math.sqrt(fan_in)
            return w.to(dtype).requires_grad_(True)

        def vector(width, value):
            return torch.full((width,), value, device=device, dtype=dtype, requires_grad=True)

        self._attention_weights(config, a, weight, vector)
        self._ffn_weights(f, weight, vector, generator, device)
        H = self.H
        self.x = torch.randn(self.tokens, H, device=device, generator=generator).to(dtype).requires_grad_(True)
        self.grad_out = torch.randn(self.tokens, H, device=device, generator=generator).to(dtype)

    def _attention_weights(self, config, a, weight, vector):
        """The norms, the attention projections (MLA's or the fused QKV), biases and q/k norms."""
        H = self.H
        layernorm = config.get("norm", "rmsnorm") == "layernorm"
        self.attn_norm, self.ffn_norm = vector(H, 1.0), vector(H, 1.0)
        self.attn_norm_bias = vector(H, 0.0) if layernorm else None
        self.ffn_norm_bias = vector(H, 0.0) if layernorm else None
        self.mla = a.get("mla")
        if self.mla is not None:
            # MLA as trained (docs/accounting.md "MLA"): q down → RMSNorm → q up (or one q
            # projection), kv down (latent + one shared rotary key) → RMSNorm(latent) → kv up.
            m = self.mla
            self.q_rank, self.kv_rank = m.get("q_lora_rank", 0), m["kv_lora_rank"]
            self.nope, self.rope, self.v_dim = m["qk_nope_head_dim"], m["qk_rope_head_dim"], m["v_head_dim"]
            q_width = self.heads * (self.nope + self.rope)
            if self.q_rank > 0:
                self.w_q_down = weight(self.q_rank, H, fan_in=H)
                self.q_latent_norm = vector(self.q_rank, 1.0)
                self.w_q_up = weight(q_width, self.q_rank, fan_in=self.q_rank)
            else:
                self.w_q_up = weight(q_width, H, fan_in=H)
            self.w_kv_down = weight(self.kv_rank + self.rope, H, fan_in=H)
            self.kv_latent_norm = vector(self.kv_rank, 1.0)
            self.w_kv_up = weight(self.heads * (self.nope + self.v_dim), self.kv_rank, fan_in=self.kv_rank)
            self.value_width = self.heads * self.v_dim
        else:
            self.w_qkv = weight(self.q + 2 * self.kv, H, fan_in=H)
            self.value_width = self.q
        self.b_qkv = vector(self.q + 2 * self.kv, 0.0) if a.get("qkv_bias", False) else None
        self.w_o = weight(H, self.value_width, fan_in=self.value_width)
        self.b_o = vector(H, 0.0) if a.get("output_bias", False) else None
        # q/k norms (docs/accounting.md): per_head, head_dim weights each after the head split;
        # full, q and kv weights before it.
        norm_q, norm_k = {"per_head": (self.head_dim, self.head_dim), "full": (self.q, self.kv)}.get(self.qk_norm, (0, 0))
        self.q_norm = vector(norm_q, 1.0) if norm_q else None
        self.k_norm = vector(norm_k, 1.0) if norm_k else None

    def _ffn_weights(self, f, weight, vector, generator, device):
        """The routed experts with their balanced dispatch and the shared experts, or a dense MLP."""
        H = self.H
        matrices = 2 if self.gated else 1  # the up (and gate) projection's output widths
        if self.experts > 0:
            E, d, k, T = self.experts, self.expert_dim, self.top_k, self.tokens
            self.w_router = weight(E, H, fan_in=H)
            self.router_bias = vector(E, 0.0) if f.get("router_bias", False) else None
            self.w_up_gate = weight(E, H, matrices * d, fan_in=H)
            self.w_down = weight(E, d, H, fan_in=d)
            # Balanced dispatch: the T·k routed slots (token t's j-th choice is slot t·k + j), in a
            # fixed random order, dealt to E experts of R rows; padding slots point at token 0
            # with weight 0.
            self.rows_per_expert = -(-T * k // E)
            slots = torch.randperm(T * k, generator=torch.Generator().manual_seed(int(generator.initial_seed())))
            padded = E * self.rows_per_expert
            valid = torch.zeros(padded, dtype=torch.bool)
            valid[:T * k] = True
            slot_of_row = torch.zeros(padded, dtype=torch.long)
            slot_of_row[:T * k] = slots
            self.slot_of_row = slot_of_row.to(device)
            self.token_of_row = (slot_of_row // k).to(device)
            self.row_valid = valid.to(device)
            self.pad_fraction = (padded - T * k) / (T * k)
            # Shared experts: every token, as one MLP of num_shared·shared_expert_dim (the same
            # GEMMs as separate experts concatenated along the width), with the optional H → 1 gate.
            if self.shared_width > 0:
                self.w_shared_up = weight(matrices * self.shared_width, H, fan_in=H)
                self.w_shared_down = weight(H, self.shared_width, fan_in=self.shared_width)
            self.w_shared_gate = weight(1, H, fan_in=H) if f.get("shared_expert_gate", False) else None
        else:
            self.w_gate_up = weight(matrices * self.dense_dim, H, fan_in=H)
            self.w_down_dense = weight(H, self.dense_dim, fan_in=self.dense_dim)
            self.pad_fraction = 0.0

    def parameters(self):
        return [v for v in vars(self).values() if isinstance(v, torch.Tensor) and v.requires_grad]

    def _activate(self, projected):
        """SwiGLU over [gate, up] halves (gated), or GELU (plain)."""
        if self.gated:
            gate, up = projected.chunk(2, -1)
            return F.silu(gate) * up
        return F.gelu(projected)

    def _mla_qkv(self, h):
        """q, k, v of MLA as (docs, heads, len, ·): scores over nope + rope, values of v_head_dim."""
        shape = (self.docs, self.doc_len)
        if self.q_rank > 0:
            q = F.linear(_rms_norm(F.linear(h, self.w_q_down), self.q_latent_norm), self.w_q_up)
        else:
            q = F.linear(h, self.w_q_up)
        q = q.reshape(*shape, self.heads, self.nope + self.rope).transpose(1, 2)
        latent, k_rope = F.linear(h, self.w_kv_down).split([self.kv_rank, self.rope], -1)
        kv = F.linear(_rms_norm(latent, self.kv_latent_norm), self.w_kv_up)
        kv = kv.reshape(*shape, self.heads, self.nope + self.v_dim).transpose(1, 2)
        k_nope, v = kv.split([self.nope, self.v_dim], -1)
        k_rope = k_rope.reshape(*shape, 1, self.rope).transpose(1, 2).expand(-1, self.heads, -1, -1)
        return q, torch.cat([k_nope, k_rope], -1), v

    def attention_block(self, x):
        h = _norm(x, self.attn_norm, self.attn_norm_bias)
        if self.mla is not None:
            o = _sdpa(*self._mla_qkv(h)).transpose(1, 2).reshape(self.tokens, self.value_width)
            return x + F.linear(o, self.w_o, self.b_o)
        q, k, v = F.linear(h, self.w_qkv, self.b_qkv).split([self.q, self.kv, self.kv], -1)
        if self.qk_norm == "full":
            q, k = _rms_norm(q, self.q_norm), _rms_norm(k, self.k_norm)
        shape = (self.docs, self.doc_len)
        q = q.reshape(*shape, self.heads, self.head_dim).transpose(1, 2)
        k = k.reshape(*shape, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.reshape(*shape, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.qk_norm == "per_head":
            q, k = _rms_norm(q, self.q_norm), _rms_norm(k, self.k_norm)
        o = _sdpa(q, k, v).transpose(1, 2).reshape(self.tokens, self.q)
        return x + F.linear(o, self.w_o, self.b_o)

    def ffn_block(self, x):
        h = _norm(x, self.ffn_norm, self.ffn_norm_bias)
        if self.experts == 0:
            return x + F.linear(self._activate(F.linear(h, self.w_gate_up)), self.w_down_dense)
        scores = F.linear(h, self.w_router).float().softmax(-1)
        if self.router_bias is None:
            weights = scores.topk(self.top_k, dim=-1).values  # (T, k), fp32
        else:  # the bias steers the choice only (DeepSeek-V3's e_score_correction_bias)
            weights = scores.gather(-1, (scores + self.router_bias.float()).topk(self.top_k, dim=-1).indices)
        rows = h[self.token_of_row].view(self.experts, self.rows_per_expert, self.H)
        y = torch.bmm(self._activate(torch.bmm(rows, self.w_up_gate)), self.w_down)
        w = weights.reshape(-1)[self.slot_of_row] * self.row_valid
        y = y.reshape(-1, self.H) * w[:, None].to(y.dtype)
        combined = torch.zeros_like(h).index_add_(0, self.token_of_row, y)
        if self.shared_width > 0:
            shared = F.linear(self._activate(F.linear(h, self.w_shared_up)), self.w_shared_down)
            if self.w_shared_gate is not None:
                shared = torch.sigmoid(F.linear(h, self.w_shared_gate)) * shared
            combined = combined + shared
        return x + combined

    def layer(self, x):
        return self.ffn_block(self.attention_block(x))


class Timer:
    """Milliseconds of `step()` on the device: CUDA events on CUDA, perf_counter on the CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def __call__(self, step):
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            torch.cuda.synchronize()
            return start.elapsed_time(end)
        started = time.perf_counter()
        step()
        return (time.perf_counter() - started) * 1e3


def _training_step(layer, block):
    def step():
        for p in layer.parameters():
            p.grad = None
        block(layer.x).backward(layer.grad_out)
    return step


def _measure(timer, step, warmup, repeats):
    for _ in range(warmup):
        timer(step)
    return [timer(step) for _ in range(repeats)]


def _backend_context(name):
    """A context forcing one SDPA backend (torch ≥ 2.3: torch.nn.attention.sdpa_kernel)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
               "cudnn": SDPBackend.CUDNN_ATTENTION}[name]
    return sdpa_kernel(backend)


def _executed_dense_layers(config):
    """Executions of the first_dense_layers layers per token (a loop may cover them)."""
    from .model import execution_schedule
    loop = config.get("loop")
    schedule = execution_schedule(config["num_layers"],
                                  None if loop is None else (loop["first"], loop["last"], loop.get("repeats", 2)))
    first_dense = config["ffn"].get("first_dense_layers", 0)
    return sum(1 for index, _ in schedule if index < first_dense)


def time_config(config, args, device, dtype, generator):
    """One row of the shared form for a native config dict. A stack with dense-first layers has
    both layer kinds timed: `moe_layer_ms` and `dense_layer_ms`, `dense_ffn_block_ms`, and
    `layer_ms` their mean over the executed layers, so that layer_ms × executed_layers / tokens
    stays the model's time per token."""
    layer = Layer(config, args.docs, args.doc_len, device, dtype, generator)
    timer = Timer(device)
    layer_ms = _measure(timer, _training_step(layer, layer.layer), args.warmup, args.repeats)
    attn_ms = _measure(timer, _training_step(layer, layer.attention_block), args.warmup, args.repeats)
    ffn_ms = _measure(timer, _training_step(layer, layer.ffn_block), args.warmup, args.repeats)
    executed = budget.account(config)["effective_layers"]
    mixed = {}
    executed_dense = _executed_dense_layers(config) if layer.experts > 0 else 0
    if executed_dense > 0:
        del layer
        dense = Layer(config, args.docs, args.doc_len, device, dtype, generator, dense=True)
        dense_ms = _measure(timer, _training_step(dense, dense.layer), args.warmup, args.repeats)
        dense_ffn_ms = _measure(timer, _training_step(dense, dense.ffn_block), args.warmup, args.repeats)
        del dense
        layer = Layer(config, args.docs, args.doc_len, device, dtype, generator)
        moe_median, dense_median = statistics.median(layer_ms), statistics.median(dense_ms)
        mixed = {"moe_layer_ms": moe_median, "dense_layer_ms": dense_median,
                 "dense_ffn_block_ms": statistics.median(dense_ffn_ms), "executed_dense_layers": executed_dense}
    backends = {}
    for name in BACKENDS:
        if device.type != "cuda":
            backends[name] = "refused: not a CUDA device (dry run)"
            continue
        try:
            with _backend_context(name):
                backends[name] = statistics.median(
                    _measure(timer, _training_step(layer, layer.attention_block), args.warmup, args.repeats))
        except Exception as error:  # a backend that cannot run this shape: recorded as the file does
            backends[name] = f"refused: {type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
    row = {"run": args.run}
    if args.tag:
        row["tag"] = args.tag
    row.update({"config": config, "tokens": layer.tokens, "doc_len": args.doc_len, "executed_layers": executed,
                "attn_block_ms": statistics.median(attn_ms), "moe_block_ms": statistics.median(ffn_ms),
                "layer_ms": statistics.median(layer_ms), "layer_spread_ms": max(layer_ms) - min(layer_ms),
                "attention_backend_ms": backends, "pad_fraction": layer.pad_fraction,
                "ffn": "moe" if layer.experts > 0 else "dense"})
    if mixed:
        row["ffn"] = "moe+dense"
        row["layer_ms"] = ((executed - executed_dense) * mixed["moe_layer_ms"] +
                           executed_dense * mixed["dense_layer_ms"]) / executed
        row.update(mixed)
    return row


def device_row(args, device, dtype):
    n = args.gemm_size
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    timer = Timer(device)
    times = _measure(timer, lambda: torch.matmul(a, b), 3, 9)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    return {"op": "device", "device": name, "torch": torch.__version__,
            f"gemm_{n}_tflops": 2.0 * n ** 3 / (statistics.median(times) * 1e-3) / 1e12,
            "tokens": args.docs * args.doc_len, "doc_len": args.doc_len, "dtype": args.dtype,
            "attention": "scaled_dot_product_attention" if hasattr(F, "scaled_dot_product_attention") else "manual"}


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python3 -m budget.torch.layer_time",
                                     description="Time one layer's training step (forward + backward) of each config "
                                                 "on CUDA; rows in the form of h200_torch_layers.jsonl.")
    parser.add_argument("configs", nargs="+", metavar="CFG", help="native or Hugging Face config files")
    parser.add_argument("--out", required=True, help="JSON-lines file to write (a device row, then one row a config)")
    parser.add_argument("--docs", type=int, default=41, help="documents per step (default 41)")
    parser.add_argument("--doc-len", type=int, default=799, help="tokens per document (default 799)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (default 3)")
    parser.add_argument("--repeats", type=int, default=10, help="timed steps, median reported (default 10)")
    parser.add_argument("--dtype", choices=("bfloat16", "float16", "float32"), default="bfloat16")
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu with --allow-cpu")
    parser.add_argument("--allow-cpu", action="store_true", help="dry-run on the CPU (tests; not a measurement)")
    parser.add_argument("--gemm-size", type=int, default=None, help="n of the device row's n³ GEMM (CUDA 8192, CPU 256)")
    parser.add_argument("--run", type=int, default=1, help="the run number written in every row (default 1)")
    parser.add_argument("--tag", default="", help="a tag written in every row")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("docs", "doc_len", "repeats"):
        if getattr(args, name) < 1:
            raise Refusal(f"--{name.replace('_', '-')} must be at least 1")
    if args.warmup < 0:
        raise Refusal("--warmup must be at least 0")
    return args


def main(argv=None):
    prog = "python3 -m budget.torch.layer_time"
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        device = torch.device(args.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise Refusal("CUDA is not available (torch.cuda.is_available() is False), and this entry point times "
                          "layers on a CUDA GPU only; nothing was measured (--device cpu --allow-cpu dry-runs the code)")
        if device.type != "cuda" and not args.allow_cpu:
            raise Refusal(f"device {args.device} is not a CUDA device; give --allow-cpu for a dry run (not a measurement)")
        if args.gemm_size is None:
            args.gemm_size = 8192 if device.type == "cuda" else 256
        configs = []
        for path in args.configs:
            config = budget.load_config(path).to_dict()
            _refuse_unsupported(config, path)
            configs.append(config)
        dtype = getattr(torch, args.dtype)
        generator = torch.Generator(device=device).manual_seed(args.seed)
        rows = [device_row(args, device, dtype)]
        for path, config in zip(args.configs, configs):
            print(f"{prog}: timing {path}", file=sys.stderr)
            rows.append(time_config(config, args, device, dtype, generator))
    except (Refusal, budget.Error) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    directory = os.path.dirname(os.path.abspath(args.out))
    with tempfile.NamedTemporaryFile("w", dir=directory, delete=False, suffix=".tmp", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    os.replace(f.name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
