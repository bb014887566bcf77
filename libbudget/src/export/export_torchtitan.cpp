// ArchConfig → a Python module for torchtitan at commit b5bcd76c (torchtitan_target_commit), where
// a model is a Python config built from per-layer configs (torchtitan/models/qwen3/__init__.py:
// qwen3_configs, a dict of flavor → function returning Qwen3Model.Config). The module defines
//
//   def budget_config(attn_backend="flex", moe_comm_backend="standard") -> Qwen3Model.Config
//
// with the signature of qwen3_configs' functions (model_registry calls them with attn_backend and
// moe_comm_backend), built through torchtitan's own constructors the way qwen3's flavors are:
// make_gqa_config, make_ffn_config, make_moe_config, make_router_config,
// make_routed_experts_config (torchtitan/models/common/config_utils.py), Qwen3TransformerBlock.Config
// per layer (a dense feed_forward for the first_dense_layers, an moe otherwise: model.py:41-49),
// RMSNorm.Config, CosSinRoPE.Config, Embedding.Config, Linear.Config, and SigmoidGatedFeedForward
// for a gated shared expert (feed_forward.py:57). Every symbol and keyword written is in the test
// table tests/unit/export/torchtitan_symbols.hpp, with its source line.
//
// Written explicitly: the router (score_func, route_norm, and the expert bias as torchtitan's
// aux-loss-free load_balance_coeff, moe.py:362), q/k norms (per head, qk_norm=RMSNorm over head_dim),
// shared experts (one MLP of num_shared_experts·shared_expert_dim), rope theta, context and
// scaling (rope_text), norm epsilon, dense-first layers and weight tying.
//
// A config with multi-head latent attention is written for torchtitan's deepseek_v3 model instead
// (export_torchtitan_deepseek_v3: DeepSeekV3Model.Config, deepseekv3_configs). Both modules come
// from one writer (write_module, export_torchtitan_modules.cpp); what the two families do not
// share is a TorchtitanFamily. This file holds the refusals, the Python text helpers, the RoPE
// text and the notes both families share (declared in export/torchtitan_text.hpp), and the dispatch.

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "export/export_targets.hpp"
#include "export/torchtitan_text.hpp"

namespace budget::detail {

[[noreturn]] void refuse_in_torchtitan(const ArchConfig& c, const char* field, const std::string& what) {
  throw Error(fmt::format("{} cannot be expressed in torchtitan's qwen3 or deepseek_v3 model configs ({}); export "
                          "to native or hf instead",
                          what, torchtitan_target_commit),
              c.name.empty() ? "<config>" : c.name, field);
}

namespace {

void refuse_unexpressed_in_torchtitan(const ArchConfig& c) {
  const AttentionConfig& a = c.attention;
  const FfnConfig& f = c.ffn;
  // make_gqa_config and make_ffn_config build Linear.Config without bias (config_utils.py:187-308).
  if (a.qkv_bias) refuse_in_torchtitan(c, "/attention/qkv_bias", "query/key/value biases");
  if (a.output_bias) refuse_in_torchtitan(c, "/attention/output_bias", "an output-projection bias");
  if (f.bias) refuse_in_torchtitan(c, "/ffn/bias", "MLP biases");
  if (a.qk_norm == QkNorm::full) refuse_in_torchtitan(c, "/attention/qk_norm", "q/k norms over the whole query/KV width (full)");
  if (a.mla && a.qk_norm != QkNorm::none) {
    refuse_in_torchtitan(c, "/attention/qk_norm", "per-head q/k norms with multi-head latent attention (deepseek_v3's Attention "
                                    "has only the latents' q_norm and kv_norm, model.py:47-48)");
  }
  if (c.sliding_attention_layers() > 0) refuse_in_torchtitan(c, "/attention/layer_types", "sliding-window attention layers");
  if (c.norm != NormKind::rmsnorm) refuse_in_torchtitan(c, "/norm", "LayerNorm (TransformerBlock's norms are RMSNorm.Config)");
  if (c.lm_head_bias) refuse_in_torchtitan(c, "/lm_head_bias", "an LM-head bias");
  if (c.mtp_layers > 0 && !a.mla) {
    refuse_in_torchtitan(c, "/mtp_layers", "multi-token-prediction modules without multi-head latent attention (torchtitan has "
                             "MTP in its deepseek_v3 model only, deepseek_v3/mtp.py)");
  }
  if (!f.gated) refuse_in_torchtitan(c, "/ffn/gated", "a 2-matrix MLP (torchtitan's FeedForward is always SwiGLU)");
}

}  // namespace

/// A Python float literal: "1e-06", "1000000.0".
std::string py_float(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

/// A flavor name for qwen3_configs: the config's name in [A-Za-z0-9._-].
std::string flavor_of(const ArchConfig& c) {
  std::string out = "budget-";
  for (const char ch : c.name.empty() ? std::string("config") : c.name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                    ch == '-' || ch == '_';
    out += ok ? ch : '-';
  }
  return out;
}

const char* py_bool(bool value) { return value ? "True" : "False"; }

// ---------------------------------------------------------------------------------------------
// RoPE

namespace {

/// Notes that RoPE.Config's default `value` of the rope scaling parameter `name` is written where
/// the config gives none (`given` false).
void note_rope_default(const char* name, bool given, const char* value, std::vector<std::string>& not_expressed) {
  if (!given) not_expressed.push_back(fmt::format("rope scaling {}: the config gives none, RoPE.Config's {} is "
                                                  "written", name, value));
}

/// llama3 scaling → scaling="llama" with ComplexRoPE; refused with multi-head latent attention.
RopeText llama3_rope_text(const ArchConfig& c, const RopeScaling& r, bool deepseek,
                          std::vector<std::string>& not_expressed) {
  if (deepseek) {
    refuse_in_torchtitan(c, "/settings/rope_scaling", "llama3 rope scaling with multi-head latent attention");
  }
  RopeText out{"ComplexRoPE", "", 1.0};
  not_expressed.push_back("llama3 rope scaling: written with ComplexRoPE (CosSinRoPE refuses llama scaling, "
                          "rope.py:283-284), which rotates adjacent pairs instead of half-split ones; the same "
                          "model trained from scratch, but qwen3's state-dict adapter expects CosSinRoPE's layout");
  note_rope_default("low_freq_factor", r.low_freq_factor.has_value(), "1.0", not_expressed);
  note_rope_default("high_freq_factor", r.high_freq_factor.has_value(), "4.0", not_expressed);
  note_rope_default("original_max_position_embeddings", r.original_max_position_embeddings.has_value(), "8192",
                    not_expressed);
  out.keywords = fmt::format(", scaling=\"llama\", scaling_factor={}, low_freq_factor={}, high_freq_factor={}, "
                             "original_max_position_embeddings={}",
                             py_float(*r.factor), py_float(r.low_freq_factor.value_or(1.0)),
                             py_float(r.high_freq_factor.value_or(4.0)),
                             r.original_max_position_embeddings.value_or(8192));
  return out;
}

/// yarn scaling → scaling="yarn"; refused unless its attention factor is 1, and in deepseek_v3
/// without mscale_all_dim (which becomes `attention_mscale`).
RopeText yarn_rope_text(const ArchConfig& c, const RopeScaling& r, bool deepseek,
                        std::vector<std::string>& not_expressed) {
  const char* field = "/settings/rope_scaling";
  RopeText out{deepseek ? "ComplexRoPE" : "CosSinRoPE", "", 1.0};
  // transformers' yarn attention factor (modeling_rope_utils.py, _compute_yarn_parameters):
  // attention_factor if given, else mscale(factor, mscale)/mscale(factor, mscale_all_dim) when both
  // are given, else 0.1·ln(factor) + 1.
  const bool unit_rotary_factor = r.attention_factor ? *r.attention_factor == 1.0
                                                     : (r.mscale && r.mscale_all_dim && *r.mscale == *r.mscale_all_dim);
  if (!unit_rotary_factor) {
    refuse_in_torchtitan(c, field, deepseek ? "yarn rope scaling whose attention factor is not 1 (mscale differs from "
                                "mscale_all_dim, or attention_factor is given): torchtitan's yarn RoPE is a pure "
                                "rotation (rope.py:57-60)"
                              : "yarn rope scaling with an attention factor other than 1 in a GQA model: torchtitan's "
                                "yarn RoPE is a pure rotation (rope.py:57-60) and qwen3's attention has no mscale");
  }
  if (deepseek) out.attention_mscale = r.mscale_all_dim.value_or(0.0);
  if (deepseek && out.attention_mscale == 0.0) {
    refuse_in_torchtitan(c, field, "yarn rope scaling without mscale_all_dim in multi-head latent attention (deepseek_v3's "
                     "Attention always scales the softmax by (0.1 mscale ln(factor) + 1)^2, model.py:86-88)");
  }
  note_rope_default("beta_fast", r.beta_fast.has_value(), "32.0", not_expressed);
  note_rope_default("beta_slow", r.beta_slow.has_value(), "1.0", not_expressed);
  note_rope_default("original_max_position_embeddings (original_seq_len)",
                    r.original_max_position_embeddings.has_value(), "4096", not_expressed);
  out.keywords = fmt::format(", scaling=\"yarn\", rope_factor={}, beta_fast={}, beta_slow={}, original_seq_len={}",
                             py_float(*r.factor), py_float(r.beta_fast.value_or(32.0)),
                             py_float(r.beta_slow.value_or(1.0)), r.original_max_position_embeddings.value_or(4096));
  return out;
}

}  // namespace

/// The RoPE config of the export (common/rope.py:92-108 at b5bcd76c): `format` is "CosSinRoPE"
/// (qwen3's, rotate-half pairs) or "ComplexRoPE" (deepseek_v3's and llama3's, adjacent pairs).
/// settings.rope_scaling maps onto RoPE.Config's scaling:
/// - yarn → scaling="yarn", rope_factor, beta_fast, beta_slow, original_seq_len (transformers'
///   original_max_position_embeddings), truncate=True (transformers' default). torchtitan's yarn is
///   a pure rotation (rope.py:57-60): an attention scale must come from elsewhere. deepseek_v3's
///   Attention scales the softmax by (0.1·mscale·ln(factor) + 1)² (model.py:86-88), which is
///   transformers' DeepSeek yarn exactly when mscale = mscale_all_dim (the rotary factor is then 1):
///   `attention_mscale` receives mscale_all_dim. qwen3's attention has no such scale, so yarn is
///   refused there unless its attention factor is 1 (mscale = mscale_all_dim given, or
///   attention_factor 1).
/// - llama3 → scaling="llama", scaling_factor, low_freq_factor, high_freq_factor,
///   original_max_position_embeddings; CosSinRoPE refuses llama scaling (rope.py:283-284), so
///   `format` becomes ComplexRoPE (the same rotation of adjacent instead of half-split pairs: a
///   fixed permutation of each head's q/k dims, the same model for training from scratch, stated).
/// - linear, dynamic, longrope: RoPE.Config has no such scaling; refused.
/// Absent parameters take RoPE.Config's defaults, each stated.
RopeText rope_text(const ArchConfig& c, bool deepseek, std::vector<std::string>& not_expressed) {
  const std::optional<RopeScaling>& scaling = c.settings.rope_scaling;
  if (!scaling) return RopeText{deepseek ? "ComplexRoPE" : "CosSinRoPE", "", 1.0};
  const RopeScaling& r = *scaling;
  if (r.type == RopeScalingType::llama3) return llama3_rope_text(c, r, deepseek, not_expressed);
  if (r.type != RopeScalingType::yarn) {
    refuse_in_torchtitan(c, "/settings/rope_scaling",
                         fmt::format("{} rope scaling (RoPE.Config's scaling is none, llama or yarn, rope.py:97)",
                                     to_string(r.type)));
  }
  return yarn_rope_text(c, r, deepseek, not_expressed);
}

// ---------------------------------------------------------------------------------------------
// What both models cannot express, noted the same way.

void note_defaults(const ArchConfig& c, std::vector<std::string>& not_expressed) {
  const ModelSettings& s = c.settings;
  if (c.vocab_size == 0) {
    not_expressed.push_back("vocab_size is 0 (embeddings not modelled): set VOCAB_SIZE to your tokenizer's");
  }
  if (!s.rope_theta) not_expressed.push_back("the config gives no rope_theta: RoPE.Config's default 10000.0 is written");
  if (!s.norm_epsilon) not_expressed.push_back("the config gives no norm epsilon: RMSNorm.Config's default 1e-05 is written");
}

/// The router's score function and top-k renormalisation where the config does not give them.
void note_router(const ArchConfig& c, RouterScore score, bool route_norm, std::vector<std::string>& not_expressed) {
  if (c.ffn.is_moe() && !c.settings.router_score) {
    not_expressed.push_back(fmt::format("the config gives no router score function: {} is written", to_string(score)));
  }
  if (c.ffn.is_moe() && !c.settings.router_normalize_top_k) {
    not_expressed.push_back(fmt::format("the config does not say whether the top-k weights are renormalised: "
                                        "route_norm={} is written",
                                        py_bool(route_norm)));
  }
}

void note_router_bias(const ArchConfig& c, std::vector<std::string>& not_expressed) {
  if (c.ffn.router_bias) {
    not_expressed.push_back("the router's expert bias is torchtitan's aux-loss-free expert_bias_E (load_balance_coeff"
                            "=1e-3), a buffer updated outside the optimizer, not a parameter");
  }
}

void note_loop(const ArchConfig& c, std::vector<std::string>& not_expressed) {
  if (c.loop) {
    not_expressed.push_back(fmt::format(
        "the loop ({}): torchtitan's models have no weight-shared layer loop; this config builds the {} stored "
        "layers unlooped", describe_loop(c), c.num_layers));
  }
}

void note_deepseek_v3(const ArchConfig& c, RouterScore score, bool route_norm,
                      std::vector<std::string>& not_expressed) {
  note_router(c, score, route_norm, not_expressed);
  const ModelSettings& s = c.settings;
  if (c.ffn.is_moe() && (s.router_scaling_factor || s.router_groups)) {
    // Not written: torchtitan's route_scale and group routing were not checked against its source.
    not_expressed.push_back(fmt::format(
        "DeepSeek's router scaling ({}) and expert groups ({}): route_scale=1.0 and ungrouped routing are written; "
        "set route_scale, num_expert_groups and num_limited_groups of make_router_config by hand",
        s.router_scaling_factor ? fmt::format("routed_scaling_factor {:g}", *s.router_scaling_factor) : "none",
        s.router_groups ? fmt::format("n_group {}, topk_group {}", s.router_groups->groups, s.router_groups->top_groups)
                        : "none"));
  }
  note_router_bias(c, not_expressed);
  if (c.mtp_layers > 0) {
    not_expressed.push_back(fmt::format("model_registry passes its own num_mtp_layers (default 0, deepseek_v3/"
                                        "__init__.py:622) to this function: call it with num_mtp_layers={} to build "
                                        "the config's multi-token-prediction modules",
                                        c.mtp_layers));
  }
  note_loop(c, not_expressed);
}

std::string export_torchtitan(const ArchConfig& c, const ExportOptions& options,
                              std::vector<std::string>& not_expressed) {
  refuse_unexpressed_in_torchtitan(c);
  if (c.attention.mla) return export_torchtitan_deepseek_v3(c, options, not_expressed);
  return export_torchtitan_qwen3(c, options, not_expressed);
}

}  // namespace budget::detail
