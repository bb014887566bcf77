// The torchtitan modules (see export_torchtitan.cpp for what is written and why): one writer,
// write_module, for torchtitan's qwen3 and deepseek_v3 models, and the two families as data
// (TorchtitanFamily: torchtitan's names, imports, constants and per-layer attention of each).

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "export/export_targets.hpp"
#include "budget/text_escape.hpp"
#include "export/torchtitan_text.hpp"

namespace budget::detail {
namespace {

// ---------------------------------------------------------------------------------------------
// The module: one writer for both models, each family's names and own parts as data.

/// What the qwen3 and deepseek_v3 modules do not share: torchtitan's names, the imports, the
/// model constants, the per-layer attention config and the extra keywords of the family's
/// builders. Everything else (header, notes, FFN constants, inits, the per-layer loop with its
/// dense and MoE blocks, the model config) is write_module()'s, the same for both.
struct TorchtitanFamily {
  const char* package;         ///< torchtitan/models/<package>
  const char* model;           ///< the model class: <model>.Config is what budget_config returns
  const char* block;           ///< the per-layer block class
  const char* configs;         ///< the flavor dict of <package>/__init__.py
  const char* register_where;  ///< "Use: ... and add <register_where>"
  const char* register_after;  ///< after "<package>/__init__.py" on the next line
  const char* imports;         ///< the import block (blank lines around it included)
  const char* linear_init;     ///< the nn.init function of _LINEAR_INIT's weights
  const char* embedding_std;   ///< the std of _EMBEDDING_INIT
  bool attention_first;        ///< the block's keywords: attention before the norms (deepseek_v3's order)
  /// Model constants (name, Python value) of the family's own, in order, besides the shared DIM,
  /// N_LAYERS, N_HEADS, VOCAB_SIZE, NORM_EPS, ROPE_THETA and MAX_CONTEXT_LENGTH.
  using Constants = std::vector<std::pair<std::string, std::string>>;
  Constants head_constants;    ///< after N_HEADS (qwen3: N_KV_HEADS, HEAD_DIM)
  Constants latent_constants;  ///< after VOCAB_SIZE (deepseek_v3: the latent ranks, the head dims)
  Constants rope_constants;    ///< after MAX_CONTEXT_LENGTH (deepseek_v3: MSCALE, MTP_LAYERS)
  const char* helpers;         ///< Python defined after _norm (ends with two blank lines)
  const char* signature;       ///< budget_config's parameters and return type, after "def budget_config("
  const char* before_rope;     ///< lines of budget_config before the RoPE line
  std::string rope_format;     ///< "CosSinRoPE" or "ComplexRoPE"
  const char* rope_dim;        ///< the constant the RoPE rotates over
  std::string rope_keywords;
  std::string attention;       ///< the loop body up to the dense block: sets `attention`
  const char* router_keywords;   ///< make_router_config keywords after route_norm
  const char* experts_keywords;  ///< make_routed_experts_config keywords after comm_backend
  const char* before_return;     ///< lines of budget_config before the return
  const char* model_keywords;    ///< <model>.Config keywords after layers
};

/// The block's keywords for its attention and norms at `indent` spaces, in the family's order.
std::string block_keywords(const TorchtitanFamily& family, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  const std::string norms = pad + "attention_norm=_norm(DIM),\n" + pad + "ffn_norm=_norm(DIM),\n";
  const std::string attention = pad + "attention=attention,\n";
  return family.attention_first ? attention + norms : norms + attention;
}

/// The shared expert's config (None without shared experts): gated (SigmoidGatedFeedForward) or
/// an MLP (make_ffn_config) of width num_shared_experts·shared_expert_dim.
std::string shared_experts_text(const FfnConfig& f) {
  if (f.num_shared_experts > 0 && f.shared_expert_gate) {
    return R"(SigmoidGatedFeedForward.Config(
            w1=Linear.Config(in_features=DIM, out_features=SHARED_HIDDEN_DIM, param_init=_LINEAR_INIT),
            w2=Linear.Config(in_features=SHARED_HIDDEN_DIM, out_features=DIM, param_init=_LINEAR_INIT),
            w3=Linear.Config(in_features=DIM, out_features=SHARED_HIDDEN_DIM, param_init=_LINEAR_INIT),
            gate=Linear.Config(in_features=DIM, out_features=1, param_init=_LINEAR_INIT),
        ))";
  }
  if (f.num_shared_experts > 0) {
    return R"(make_ffn_config(
            dim=DIM,
            hidden_dim=SHARED_HIDDEN_DIM,
            w1_param_init=_LINEAR_INIT,
            w2w3_param_init=_LINEAR_INIT,
        ))";
  }
  return "None";
}

/// The module's head: the comments (target, use, notes), the family's imports and NOT_EXPRESSED.
void write_module_header(const ArchConfig& c, const TorchtitanFamily& family,
                         const std::vector<std::string>& not_expressed, std::string& o) {
  const std::string flavor = flavor_of(c);
  o += fmt::format("# torchtitan model config for {} (budget-match export; docs/export.md)\n",
                   comment_text(c.name.empty() ? "the config" : c.name));
  o += fmt::format("# Target: {} (torchtitan/models/{}: {}.Config from per-layer configs)\n", torchtitan_target_commit,
                   family.package, family.model);
  o += fmt::format("# Use: save as torchtitan/models/{}/budget_config.py and add {}\n", family.package,
                   family.register_where);
  o += fmt::format("# torchtitan/models/{}/__init__.py{}\n", family.package, family.register_after);
  o += "#     from .budget_config import budget_config\n";
  o += fmt::format("#     {}[\"{}\"] = budget_config\n", family.configs, flavor);
  o += fmt::format("# then train with the {} model, flavor \"{}\".\n", family.package, flavor);
  for (const auto& note : not_expressed) o += "# NOT EXPRESSED: " + comment_text(note) + "\n";
  o += family.imports;
  o += "NOT_EXPRESSED = [\n";
  for (const auto& note : not_expressed) {
    std::string quoted;
    for (const char ch : comment_text(note)) {
      if (ch == '\\' || ch == '"') quoted += '\\';
      quoted += ch;
    }
    o += "    \"" + quoted + "\",\n";
  }
  o += "]\n\n";
}

/// The model constants (the family's own among the shared ones) and the FFN constants.
void write_module_constants(const ArchConfig& c, const ExportOptions& options, const TorchtitanFamily& family,
                            std::string& o) {
  const FfnConfig& f = c.ffn;
  const ModelSettings& s = c.settings;
  const auto write_constants = [&o](const TorchtitanFamily::Constants& constants) {
    for (const auto& [name, value] : constants) o += name + " = " + value + "\n";
  };
  const std::int64_t seq_length = options.seq_length > 0 ? options.seq_length : default_export_seq_length;
  const std::int64_t context = s.max_position_embeddings > 0 ? s.max_position_embeddings : seq_length;
  o += fmt::format("DIM = {}\nN_LAYERS = {}\nN_HEADS = {}\n", c.hidden_size, c.num_layers, c.attention.num_heads);
  write_constants(family.head_constants);
  o += fmt::format("VOCAB_SIZE = {}\n", c.vocab_size);
  write_constants(family.latent_constants);
  o += fmt::format("NORM_EPS = {}\nROPE_THETA = {}\nMAX_CONTEXT_LENGTH = {}\n", py_float(s.norm_epsilon.value_or(1e-5)),
                   py_float(s.rope_theta.value_or(10000.0)), context);
  write_constants(family.rope_constants);
  if (f.is_moe()) {
    o += fmt::format("FIRST_DENSE_LAYERS = {}\nDENSE_HIDDEN_DIM = {}\n", f.first_dense_layers, f.dense_dim);
    o += fmt::format("NUM_EXPERTS = {}\nTOP_K = {}\nMOE_HIDDEN_DIM = {}\nSHARED_HIDDEN_DIM = {}\n", f.num_experts,
                     f.top_k, f.expert_dim, f.num_shared_experts * f.shared_expert_dim);
  } else {
    o += fmt::format("FIRST_DENSE_LAYERS = N_LAYERS\nDENSE_HIDDEN_DIM = {}\n", f.dense_dim);
  }
}

/// The inits, _norm and the family's helpers, after the constants.
void write_module_inits(const TorchtitanFamily& family, std::string& o) {
  o += fmt::format(R"(
_LINEAR_INIT = {{"weight": partial(nn.init.{}, std=0.02), "bias": nn.init.zeros_}}
_NORM_INIT = {{"weight": nn.init.ones_}}
_EMBEDDING_INIT = {{"weight": partial(nn.init.normal_, std={})}}
_EXPERTS_INIT = {{
    "w1_EFD": _LINEAR_INIT["weight"],
    "w2_EDF": _LINEAR_INIT["weight"],
    "w3_EFD": _LINEAR_INIT["weight"],
}}


def _norm(dim: int) -> RMSNorm.Config:
    return RMSNorm.Config(normalized_shape=dim, eps=NORM_EPS, param_init=_NORM_INIT)


)",
                   family.linear_init, family.embedding_std);
  o += family.helpers;
}

/// budget_config up to the end of the dense block of the per-layer loop.
void write_dense_layers(const TorchtitanFamily& family, std::string& o) {
  o += fmt::format("def budget_config({}:\n", family.signature);
  o += R"(    if VOCAB_SIZE <= 0:
        raise ValueError("VOCAB_SIZE is 0 in this export (embeddings not modelled): set your tokenizer's")
)";
  o += family.before_rope;
  o += fmt::format("    rope = {}.Config(dim={}, max_context_length=MAX_CONTEXT_LENGTH, theta=ROPE_THETA{})\n",
                   family.rope_format, family.rope_dim, family.rope_keywords);
  o += "    layers = []\n    for layer in range(N_LAYERS):\n";
  o += family.attention;
  o += fmt::format(R"(        if layer < FIRST_DENSE_LAYERS:
            layers.append(
                {}.Config(
{}                    feed_forward=make_ffn_config(
                        dim=DIM,
                        hidden_dim=DENSE_HIDDEN_DIM,
                        w1_param_init=_LINEAR_INIT,
                        w2w3_param_init=_LINEAR_INIT,
                    ),
                )
            )
            continue
)",
                   family.block, block_keywords(family, 20));
}

/// The MoE block of the per-layer loop (none without experts).
void write_moe_layers(const FfnConfig& f, const TorchtitanFamily& family, RouterScore score, bool route_norm,
                      std::string& o) {
  if (!f.is_moe()) return;
  o += fmt::format(R"(        shared_experts = {}
        moe = make_moe_config(
            num_experts=NUM_EXPERTS,
            router=make_router_config(
                dim=DIM,
                num_experts=NUM_EXPERTS,
                gate_param_init=_LINEAR_INIT,
                top_k=TOP_K,
                score_func="{}",
                route_norm={},
{}                bias=False,
            ),
            routed_experts=make_routed_experts_config(
                dim=DIM,
                hidden_dim=MOE_HIDDEN_DIM,
                num_experts=NUM_EXPERTS,
                top_k=TOP_K,
                param_init=_EXPERTS_INIT,
                comm_backend=moe_comm_backend,
{}            ),
            shared_experts=shared_experts,
            load_balance_coeff={},
        )
        layers.append(
            {}.Config(
{}                moe=moe,
            )
        )
)",
                   shared_experts_text(f), to_string(score), py_bool(route_norm), family.router_keywords,
                   family.experts_keywords, f.router_bias ? "1e-3" : "None", family.block,
                   block_keywords(family, 16));
}

/// The end of budget_config: the family's last lines and the model config returned.
void write_model_return(const ArchConfig& c, const TorchtitanFamily& family, std::string& o) {
  o += family.before_return;
  o += fmt::format(R"(    return {}.Config(
        vocab_size=VOCAB_SIZE,
        dim=DIM,
        norm=_norm(DIM),
        enable_weight_tying={},
        tok_embeddings=Embedding.Config(num_embeddings=VOCAB_SIZE, embedding_dim=DIM, param_init=_EMBEDDING_INIT),
        lm_head=Linear.Config(in_features=DIM, out_features=VOCAB_SIZE, param_init=_LINEAR_INIT),
        layers=layers,
{}    )
)",
                   family.model, py_bool(c.tie_embeddings), family.model_keywords);
}

/// The Python module of `family` for `c`, with `not_expressed` as comments and as NOT_EXPRESSED.
std::string write_module(const ArchConfig& c, const ExportOptions& options, const TorchtitanFamily& family,
                         RouterScore score, bool route_norm, const std::vector<std::string>& not_expressed) {
  std::string o;
  write_module_header(c, family, not_expressed, o);
  write_module_constants(c, options, family, o);
  write_module_inits(family, o);
  write_dense_layers(family, o);
  write_moe_layers(c.ffn, family, score, route_norm, o);
  write_model_return(c, family, o);
  return o;
}

// ---------------------------------------------------------------------------------------------
// The two families

/// qwen3's import block (blank lines around it included).
constexpr const char* qwen3_imports = R"(
from functools import partial

import torch.nn as nn

from torchtitan.models.common import ComplexRoPE, CosSinRoPE, Embedding, Linear, SigmoidGatedFeedForward
from torchtitan.models.common.config_utils import (
    get_attention_config,
    make_ffn_config,
    make_gqa_config,
    make_moe_config,
    make_routed_experts_config,
    make_router_config,
)
from torchtitan.models.common.nn_modules import RMSNorm
from torchtitan.models.qwen3.model import Qwen3Model, Qwen3TransformerBlock

)";

/// qwen3's per-layer make_gqa_config up to its qk_norm keyword.
constexpr const char* qwen3_attention_head = R"(        attention = make_gqa_config(
            dim=DIM,
            n_heads=N_HEADS,
            n_kv_heads=N_KV_HEADS,
            head_dim=HEAD_DIM,
            wqkv_param_init=_LINEAR_INIT,
            wo_param_init=_LINEAR_INIT,
            inner_attention=inner_attention,
            fuse_qkv=True,
            rope=rope,
)";

/// deepseek_v3's import block (blank lines around it included).
constexpr const char* deepseek_v3_imports = R"(
import copy
import dataclasses
from functools import partial

import torch.nn as nn

from torchtitan.models.common import ComplexRoPE, Embedding, Linear, SigmoidGatedFeedForward
from torchtitan.models.common.config_utils import (
    make_ffn_config,
    make_moe_config,
    make_routed_experts_config,
    make_router_config,
)
from torchtitan.models.common.nn_modules import RMSNorm
from torchtitan.models.deepseek_v3 import make_mla_attention_config
from torchtitan.models.deepseek_v3.model import DeepSeekV3Model, DeepSeekV3TransformerBlock
from torchtitan.models.deepseek_v3.mtp import MTPTransformerBlock

)";

/// deepseek_v3's _depth_init, for make_mla_attention_config.
constexpr const char* deepseek_v3_helpers = R"(def _depth_init(layer_id: int) -> dict:
    return _LINEAR_INIT


)";

/// budget_config's parameters for deepseek_v3 (deepseekv3_configs' flavors, __init__.py:319-323).
constexpr const char* deepseek_v3_signature = R"(
    attn_backend: str = "flex",
    moe_comm_backend: str = "standard",
    non_blocking_capacity_factor: float | None = None,
    num_mtp_layers: int = MTP_LAYERS,
) -> DeepSeekV3Model.Config)";

/// deepseek_v3's per-layer attention: make_mla_attention_config with the config's latent norms.
constexpr const char* deepseek_v3_attention = R"(        attention = make_mla_attention_config(
            layer_id=layer,
            dim=DIM,
            n_heads=N_HEADS,
            q_lora_rank=Q_LORA_RANK,
            kv_lora_rank=KV_LORA_RANK,
            qk_nope_head_dim=QK_NOPE_HEAD_DIM,
            qk_rope_head_dim=QK_ROPE_HEAD_DIM,
            v_head_dim=V_HEAD_DIM,
            mscale=MSCALE,
            attn_backend=attn_backend,
            linear_init=_LINEAR_INIT,
            norm_init=_NORM_INIT,
            depth_init=_depth_init,
            rope=rope,
        )
        # The latents' norms with the config's epsilon (make_mla_attention_config leaves RMSNorm's).
        attention = dataclasses.replace(
            attention,
            kv_norm=_norm(KV_LORA_RANK),
            q_norm=_norm(Q_LORA_RANK) if Q_LORA_RANK > 0 else attention.q_norm,
        )
)";

/// deepseek_v3's MTP modules, copied from the last layer as _build_mtp_layers does (:291-316).
constexpr const char* deepseek_v3_mtp_layers = R"(    last = layers[-1]
    mtp_layers = [
        MTPTransformerBlock.Config(
            attention=copy.deepcopy(last.attention),
            feed_forward=copy.deepcopy(last.feed_forward),
            moe=copy.deepcopy(last.moe),
            attention_norm=copy.deepcopy(last.attention_norm),
            ffn_norm=copy.deepcopy(last.ffn_norm),
            enorm=_norm(DIM),
            hnorm=_norm(DIM),
            eh_proj=Linear.Config(in_features=DIM * 2, out_features=DIM, bias=False, param_init=_LINEAR_INIT),
            mtp_norm=_norm(DIM),
        )
        for _ in range(num_mtp_layers)
    ]
)";

}  // namespace

/// The qwen3 model (torchtitan/models/qwen3 at b5bcd76c) for a GQA config: make_gqa_config per
/// layer (fused QKV, per-head q/k norms when the config has them), CosSinRoPE over head_dim.
std::string export_torchtitan_qwen3(const ArchConfig& c, const ExportOptions& options,
                                    std::vector<std::string>& not_expressed) {
  const AttentionConfig& a = c.attention;
  const ModelSettings& s = c.settings;
  note_defaults(c, not_expressed);
  const RouterScore score = router_score_of(c);
  const bool route_norm = s.router_normalize_top_k.value_or(true);
  note_router(c, score, route_norm, not_expressed);
  note_router_bias(c, not_expressed);
  if (c.ffn.is_moe() && c.ffn.first_dense_layers > 0) {
    not_expressed.push_back("qwen3's parallelize_qwen3 and state-dict adapter are written for uniform layers; "
                            "check expert parallelism with the leading dense layers");
  }
  note_loop(c, not_expressed);
  const RopeText rope = rope_text(c, false, not_expressed);
  TorchtitanFamily family{
      "qwen3",
      "Qwen3Model",
      "Qwen3TransformerBlock",
      "qwen3_configs",
      "to qwen3_configs in",
      ":",
      qwen3_imports,
      "normal_",
      "0.02",
      false,
      {{"N_KV_HEADS", std::to_string(a.num_kv_heads)}, {"HEAD_DIM", std::to_string(a.head_dim)}},
      {},
      {},
      "",
      R"(attn_backend: str = "flex", moe_comm_backend: str = "standard") -> Qwen3Model.Config)",
      "    inner_attention = get_attention_config(attn_backend)\n",
      rope.format,
      "HEAD_DIM",
      rope.keywords,
      std::string(qwen3_attention_head) +
          (a.qk_norm == QkNorm::per_head ? "            qk_norm=_norm(HEAD_DIM),\n" : "            qk_norm=None,\n") +
          "        )\n",
      "",
      "",
      "",
      ""};
  return write_module(c, options, family, score, route_norm, not_expressed);
}

/// The deepseek_v3 model (torchtitan/models/deepseek_v3 at b5bcd76c) for a config with
/// multi-head latent attention: a function with the signature of deepseekv3_configs' flavors
/// (__init__.py:319-323, called by model_registry with attn_backend, moe_comm_backend,
/// non_blocking_capacity_factor and num_mtp_layers, :616-629), built the way build_mla_moe_layers
/// builds them (__init__.py:168-277): make_mla_attention_config per layer (q_norm and kv_norm are
/// the latents' norms budget counts; with q_lora_rank 0 the query is one wq), a dense feed_forward
/// for the first_dense_layers, an moe after, DeepSeekV3TransformerBlock.Config, ComplexRoPE over
/// qk_rope_head_dim, and MTPTransformerBlock.Config modules copied from the last layer as
/// _build_mtp_layers does (:291-316). Unlike build_mla_moe_layers, the shared experts' width is
/// the config's (not n·moe_hidden_dim), none when the config has none, gated when it says so.
std::string export_torchtitan_deepseek_v3(const ArchConfig& c, const ExportOptions& options,
                                          std::vector<std::string>& not_expressed) {
  const AttentionConfig& a = c.attention;
  const MlaConfig& m = *a.mla;
  const ModelSettings& s = c.settings;
  note_defaults(c, not_expressed);
  const RopeText rope = rope_text(c, true, not_expressed);
  const RouterScore score = router_score_of(c);
  // build_mla_moe_layers' default route_norm is False (__init__.py:189); DeepSeek-V3 sets True.
  const bool route_norm = s.router_normalize_top_k.value_or(score == RouterScore::sigmoid);
  note_deepseek_v3(c, score, route_norm, not_expressed);
  TorchtitanFamily family{
      "deepseek_v3",
      "DeepSeekV3Model",
      "DeepSeekV3TransformerBlock",
      "deepseekv3_configs",
      "at the end of",
      " (after make_mla_attention_config is defined):",
      deepseek_v3_imports,
      "trunc_normal_",
      "1.0",
      true,
      {},
      {{"Q_LORA_RANK", std::to_string(m.q_lora_rank)},
       {"KV_LORA_RANK", std::to_string(m.kv_lora_rank)},
       {"QK_NOPE_HEAD_DIM", std::to_string(m.qk_nope_head_dim)},
       {"QK_ROPE_HEAD_DIM", std::to_string(m.qk_rope_head_dim)},
       {"V_HEAD_DIM", std::to_string(m.v_head_dim)}},
      {{"MSCALE", py_float(rope.attention_mscale)}, {"MTP_LAYERS", std::to_string(c.mtp_layers)}},
      deepseek_v3_helpers,
      deepseek_v3_signature,
      "",
      rope.format,
      "QK_ROPE_HEAD_DIM",
      rope.keywords,
      deepseek_v3_attention,
      "                route_scale=1.0,\n                num_expert_groups=None,\n                num_limited_groups=None,\n",
      "                non_blocking_capacity_factor=non_blocking_capacity_factor,\n",
      deepseek_v3_mtp_layers,
      "        mtp_layers=mtp_layers,\n"};
  return write_module(c, options, family, score, route_norm, not_expressed);
}

}  // namespace budget::detail
