"""Builds each torchtitan export against a stand-in of torchtitan b5bcd76c's config constructors and
counts the parameters of the model it describes; they must equal budget's own count (`budget-match
report`), for configs with a vocabulary (the export refuses to build without one).

The stand-in (make_stub below) mirrors, for shapes only, what the real constructors build: the keyword
parameters each accepts (an unknown one is a TypeError, as in Python), and the weights of
    Linear(in, out, bias)            in·out (+ out)              common/linear.py:26-41 (nn.Linear)
    RMSNorm(normalized_shape)        normalized_shape            common/nn_modules.py:134-148 (nn.RMSNorm)
    Embedding(num, dim)              num·dim                     common/embedding.py:24-40
    GroupedExperts(dim, hidden, E)   3·E·dim·hidden (w1, w2, w3) common/moe.py:35-60
    make_gqa_config                  wqkv (n_heads + 2·n_kv)·head_dim × dim, wo, qk_norm  config_utils.py:187-278
    make_ffn_config                  w1, w2, w3                  config_utils.py:281-308
    make_router_config               gate Linear(dim, E, bias)   config_utils.py:329-357
    MoE load_balance_coeff           expert_bias_E: a buffer of E (moe.py:362, 391-398), counted here
                                     as budget counts a router bias (E per MoE layer)
    Decoder                          tok_embeddings, layers, norm, lm_head unless enable_weight_tying
    make_mla_attention_config        wq (q_lora_rank 0) or wq_a, q_norm, wq_b; wkv_a, kv_norm, wkv_b, wo
                                     deepseek_v3/__init__.py:83-165 (a dataclass, as Attention.Config,
                                     so that dataclasses.replace works on it)
    MTPTransformerBlock              its block plus enorm, hnorm, eh_proj, mtp_norm   deepseek_v3/mtp.py:106-121
    DeepSeekV3Model (MTPDecoder)     Decoder plus mtp_layers, compared with budget's MTP count apart
Usage: torchtitan_params.py BUDGET_MATCH SOURCE_DIR WORK_DIR
"""
import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import types

exe, src, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)


def make_stub():
    """Installs stand-in torch.nn and torchtitan modules into sys.modules."""

    def config_class(name, required, optional, count):
        def init(self, **kwargs):
            for key in kwargs:
                if key not in required and key not in optional and key != "param_init":
                    raise TypeError(f"{name}.Config got an unexpected keyword argument '{key}'")
            for key in required:
                if key not in kwargs:
                    raise TypeError(f"{name}.Config missing required keyword argument '{key}'")
            self.kw = {**optional, **kwargs}
            self.__dict__.update(self.kw)  # fields as attributes, as the real dataclasses have

        cfg = type("Config", (), {"__init__": init, "params": lambda self: count(self.kw)})
        return type(name, (), {"Config": cfg})

    def params_of(value):
        if value is None:
            return 0
        if isinstance(value, list):
            return sum(params_of(v) for v in value)
        return value.params()

    linear = config_class("Linear", ["in_features", "out_features"], {"bias": False},
                          lambda k: k["in_features"] * k["out_features"] + (k["out_features"] if k["bias"] else 0))
    rmsnorm = config_class("RMSNorm", ["normalized_shape"], {"eps": 1e-5, "elementwise_affine": True},
                           lambda k: k["normalized_shape"] if k["elementwise_affine"] else 0)
    embedding = config_class("Embedding", ["num_embeddings", "embedding_dim"], {},
                             lambda k: k["num_embeddings"] * k["embedding_dim"])
    rope_optional = {key: None for key in ["theta", "scaling", "scaling_factor", "low_freq_factor", "high_freq_factor",
                                           "original_max_position_embeddings", "rope_factor", "beta_fast", "beta_slow",
                                           "original_seq_len", "truncate"]}
    rope = config_class("CosSinRoPE", ["dim", "max_context_length"], rope_optional, lambda k: 0)
    complex_rope = config_class("ComplexRoPE", ["dim", "max_context_length"], rope_optional, lambda k: 0)
    gated_ffn = config_class("SigmoidGatedFeedForward", ["w1", "w2", "w3", "gate"], {},
                             lambda k: sum(params_of(k[w]) for w in ["w1", "w2", "w3", "gate"]))
    block = config_class("Qwen3TransformerBlock", ["attention", "attention_norm", "ffn_norm"],
                         {"feed_forward": None, "moe": None},
                         lambda k: sum(params_of(k[w]) for w in ["attention", "attention_norm", "ffn_norm",
                                                                   "feed_forward", "moe"]))

    def model_count(k):
        tied = k["enable_weight_tying"]
        return (params_of(k["tok_embeddings"]) + params_of(k["layers"]) + params_of(k["norm"]) +
                (0 if tied else params_of(k["lm_head"])))

    model = config_class("Qwen3Model", ["dim", "vocab_size", "lm_head", "tok_embeddings", "norm", "layers"],
                         {"enable_weight_tying": False}, model_count)
    ds_block = config_class("DeepSeekV3TransformerBlock", ["attention", "attention_norm", "ffn_norm"],
                            {"feed_forward": None, "moe": None},
                            lambda k: sum(params_of(k[w]) for w in ["attention", "attention_norm", "ffn_norm",
                                                                      "feed_forward", "moe"]))
    mtp_block = config_class("MTPTransformerBlock",
                             ["attention", "attention_norm", "ffn_norm", "enorm", "hnorm", "eh_proj", "mtp_norm"],
                             {"feed_forward": None, "moe": None},
                             lambda k: sum(params_of(k[w]) for w in ["attention", "attention_norm", "ffn_norm",
                                                                       "feed_forward", "moe", "enorm", "hnorm",
                                                                       "eh_proj", "mtp_norm"]))
    # The main model's count; its mtp_layers are counted apart (mtp_params_of).
    ds_model = config_class("DeepSeekV3Model", ["dim", "vocab_size", "lm_head", "tok_embeddings", "norm", "layers"],
                            {"enable_weight_tying": False, "mtp_layers": []}, model_count)

    @dataclasses.dataclass
    class MlaAttention:
        linear_params: int
        q_lora_rank: int
        q_norm: object
        kv_norm: object

        def params(self):
            # q_norm is a placeholder, never built, without query compression (__init__.py:117-119).
            return self.linear_params + (params_of(self.q_norm) if self.q_lora_rank > 0 else 0) + params_of(self.kv_norm)

    def make_mla_attention_config(*, layer_id, dim, n_heads, q_lora_rank, kv_lora_rank, qk_nope_head_dim,
                                  qk_rope_head_dim, v_head_dim, mscale=1.0, attn_backend, linear_init, norm_init,
                                  depth_init, rope):
        get_attention_config(attn_backend)
        depth_init(layer_id)
        qk_head = qk_nope_head_dim + qk_rope_head_dim
        wq = dim * n_heads * qk_head if q_lora_rank == 0 else dim * q_lora_rank + q_lora_rank * n_heads * qk_head
        linear = (wq + dim * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank * n_heads * (qk_nope_head_dim + v_head_dim)
                  + n_heads * v_head_dim * dim)
        q_norm = rmsnorm.Config(normalized_shape=q_lora_rank if q_lora_rank > 0 else 1, param_init=norm_init)
        return MlaAttention(linear, q_lora_rank, q_norm, rmsnorm.Config(normalized_shape=kv_lora_rank,
                                                                         param_init=norm_init))

    class Counted:
        def __init__(self, n):
            self.n = n

        def params(self):
            return self.n

    def get_attention_config(backend):
        assert backend in ("flex", "flex_flash", "varlen"), backend
        return None

    def make_gqa_config(*, dim, n_heads, wqkv_param_init, wo_param_init, inner_attention, rope, n_kv_heads=None,
                        head_dim=None, fuse_qkv=False, qk_norm=None, tp_gemm_backend="default"):
        n_kv = n_kv_heads if n_kv_heads is not None else n_heads
        hd = head_dim if head_dim is not None else dim // n_heads
        return Counted(dim * (n_heads + 2 * n_kv) * hd + n_heads * hd * dim + 2 * params_of(qk_norm))

    def make_ffn_config(*, dim, hidden_dim, w1_param_init, w2w3_param_init, tp_gemm_backend="default"):
        return Counted(3 * dim * hidden_dim)

    def make_router_config(*, dim, num_experts, gate_param_init, top_k=1, score_func="sigmoid", route_norm=False,
                           route_scale=1.0, num_expert_groups=None, num_limited_groups=None, bias=False):
        assert score_func in ("softmax", "sigmoid"), score_func
        return Counted(dim * num_experts + (num_experts if bias else 0))

    def make_routed_experts_config(*, dim, hidden_dim, num_experts, top_k, param_init, comm_backend,
                                   non_blocking_capacity_factor=None, num_max_tokens_per_rank=None,
                                   cudagraphable=False):
        assert comm_backend in ("standard", "deepep", "hybridep", "minimal_async_ep"), comm_backend
        return Counted(3 * num_experts * dim * hidden_dim)

    def make_moe_config(*, num_experts=8, router, routed_experts, shared_experts=None, load_balance_coeff=1e-3):
        buffer = num_experts if load_balance_coeff is not None else 0
        return Counted(params_of(router) + params_of(routed_experts) + params_of(shared_experts) + buffer)

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    noop = lambda *a, **k: None
    init = module("torch.nn.init", normal_=noop, zeros_=noop, ones_=noop, trunc_normal_=noop)
    module("torch", nn=module("torch.nn", init=init))
    module("torchtitan")
    module("torchtitan.models")
    module("torchtitan.models.common", ComplexRoPE=complex_rope, CosSinRoPE=rope, Embedding=embedding, Linear=linear,
           SigmoidGatedFeedForward=gated_ffn)
    module("torchtitan.models.common.config_utils", get_attention_config=get_attention_config,
           make_ffn_config=make_ffn_config, make_gqa_config=make_gqa_config, make_moe_config=make_moe_config,
           make_routed_experts_config=make_routed_experts_config, make_router_config=make_router_config)
    module("torchtitan.models.common.nn_modules", RMSNorm=rmsnorm)
    module("torchtitan.models.qwen3")
    module("torchtitan.models.qwen3.model", Qwen3Model=model, Qwen3TransformerBlock=block)
    module("torchtitan.models.deepseek_v3", make_mla_attention_config=make_mla_attention_config)
    module("torchtitan.models.deepseek_v3.model", DeepSeekV3Model=ds_model, DeepSeekV3TransformerBlock=ds_block)
    module("torchtitan.models.deepseek_v3.mtp", MTPTransformerBlock=mtp_block)
    return params_of


params_of = make_stub()
configs = ["tests/data/hf/llama-3.1-8b.json", "tests/data/hf/qwen3-8b.json", "tests/data/hf/qwen3-30b-a3b.json",
           "tests/data/hf/granite-3.0-8b.json", "tests/data/hf/granite-3.0-3b-a800m.json",
           "tests/data/hf/mistral-small-3.1-24b.json", "examples/hf/deepseek-moe-16b.json",
           "examples/hf/mixtral-8x7b.json", "tests/data/hf/deepseek-v3.json", "tests/data/hf/kimi-k2.json",
           "tests/data/hf/deepseek-v2-lite.json"]
failures = 0
matched = ["matched:tests/data/hf/qwen3-30b-a3b.json", "matched:tests/data/hf/deepseek-v3.json"]
for i, cfg in enumerate(configs + matched):
    if cfg.startswith("matched:"):
        # A matched, looped config: the stored layers' parameters are what torchtitan builds.
        base = cfg.split(":", 1)[1]
        native = os.path.join(work, "matched.json")
        subprocess.run([exe, "--baseline", os.path.join(src, base), "--top", "1", "--out", native],
                       check=True, capture_output=True)
        path = native
    else:
        path = os.path.join(src, cfg)
    out = os.path.join(work, f"export_{i}.py")
    subprocess.run([exe, "export", path, "--to", "torchtitan", "--out", out], check=True, capture_output=True)
    report = json.loads(subprocess.run([exe, "report", path, "--format", "json"], check=True,
                                       capture_output=True, text=True).stdout)
    want = report["params"]["non_embedding_total"] + report["params"]["embedding"]
    spec = importlib.util.spec_from_file_location(f"export_{i}", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    built = mod.budget_config(attn_backend="flex", moe_comm_backend="standard")
    got = params_of(built)
    status = "ok" if got == want else "MISMATCH"
    failures += got != want
    print(f"{status}: {cfg}: torchtitan config {got} parameters, budget {want}")
    if "mtp_layers" in built.kw:
        # deepseek_v3: the MTP modules, built with the config's count, against budget's MTP count.
        mtp_want = report.get("mtp", {}).get("params", 0)
        mtp_got = params_of(mod.budget_config(num_mtp_layers=mod.MTP_LAYERS).kw["mtp_layers"])
        status = "ok" if mtp_got == mtp_want else "MISMATCH"
        failures += mtp_got != mtp_want
        print(f"{status}: {cfg}: torchtitan MTP modules {mtp_got} parameters, budget {mtp_want}")
if failures:
    sys.exit(f"FAIL: {failures} torchtitan exports describe another parameter count than budget's")
print(f"OK: {len(configs) + len(matched)} torchtitan exports have budget's parameter counts")
