#pragma once
// The torchtitan symbols and keyword parameters the torchtitan export may write, as
// pytorch/torchtitan b5bcd76c defines them, each with its source line (paths under
// torchtitan/models/; read with `git show b5bcd76c:<path>` in a clone of pytorch/torchtitan).
// Inherited Config fields: every Module.Config has param_init (torchtitan/protocols/module.py:58).

#include <string_view>
#include <vector>

namespace torchtitan_table {

/// The model an export is written for: qwen3 (GQA) or deepseek_v3 (multi-head latent attention).
enum class Model { qwen3, deepseek_v3, both };

/// `from <module> import <name>`.
struct Import {
  std::string_view module;
  std::string_view name;
  std::string_view source;
  Model model = Model::both;  ///< the exports that import it
};

inline const std::vector<Import>& imports() {
  static const std::vector<Import> table{
      {"torchtitan.models.common", "ComplexRoPE", "common/__init__.py:39 (rope.py:179)"},
      {"torchtitan.models.common", "CosSinRoPE", "common/__init__.py:39 (rope.py:267)", Model::qwen3},
      {"torchtitan.models.common", "Embedding", "common/__init__.py:25 (embedding.py:24)"},
      {"torchtitan.models.common", "Linear", "common/__init__.py:27 (linear.py:26)"},
      {"torchtitan.models.common", "SigmoidGatedFeedForward", "common/__init__.py:26 (feed_forward.py:57)"},
      {"torchtitan.models.common.config_utils", "get_attention_config", "common/config_utils.py:71", Model::qwen3},
      {"torchtitan.models.common.config_utils", "make_ffn_config", "common/config_utils.py:281"},
      {"torchtitan.models.common.config_utils", "make_gqa_config", "common/config_utils.py:187", Model::qwen3},
      {"torchtitan.models.common.config_utils", "make_moe_config", "common/config_utils.py:311"},
      {"torchtitan.models.common.config_utils", "make_routed_experts_config", "common/config_utils.py:428"},
      {"torchtitan.models.common.config_utils", "make_router_config", "common/config_utils.py:329"},
      {"torchtitan.models.common.nn_modules", "RMSNorm", "common/nn_modules.py:134"},
      {"torchtitan.models.qwen3.model", "Qwen3Model", "qwen3/model.py:69", Model::qwen3},
      {"torchtitan.models.qwen3.model", "Qwen3TransformerBlock", "qwen3/model.py:23", Model::qwen3},
      {"torchtitan.models.deepseek_v3", "make_mla_attention_config", "deepseek_v3/__init__.py:83",
       Model::deepseek_v3},
      {"torchtitan.models.deepseek_v3.model", "DeepSeekV3Model", "deepseek_v3/model.py:191", Model::deepseek_v3},
      {"torchtitan.models.deepseek_v3.model", "DeepSeekV3TransformerBlock", "deepseek_v3/model.py:154",
       Model::deepseek_v3},
      {"torchtitan.models.deepseek_v3.mtp", "MTPTransformerBlock", "deepseek_v3/mtp.py:106", Model::deepseek_v3},
  };
  return table;
}

/// A callable and the keyword parameters it accepts.
struct Callable {
  std::string_view name;  ///< as written in the export: "make_gqa_config", "RMSNorm.Config"
  std::vector<std::string_view> keywords;
  std::string_view source;
};

inline const std::vector<Callable>& callables() {
  static const std::vector<Callable> table{
      {"get_attention_config", {}, "common/config_utils.py:71-73 (backend: str, positional)"},
      {"make_gqa_config",
       {"dim", "n_heads", "wqkv_param_init", "wo_param_init", "inner_attention", "rope", "n_kv_heads", "head_dim",
        "fuse_qkv", "qk_norm", "tp_gemm_backend"},
       "common/config_utils.py:187-199"},
      {"make_ffn_config", {"dim", "hidden_dim", "w1_param_init", "w2w3_param_init", "tp_gemm_backend"},
       "common/config_utils.py:281-288"},
      {"make_moe_config", {"num_experts", "router", "routed_experts", "shared_experts", "load_balance_coeff"},
       "common/config_utils.py:311-317"},
      {"make_router_config",
       {"dim", "num_experts", "gate_param_init", "top_k", "score_func", "route_norm", "route_scale",
        "num_expert_groups", "num_limited_groups", "bias"},
       "common/config_utils.py:329-340"},
      {"make_routed_experts_config",
       {"dim", "hidden_dim", "num_experts", "top_k", "param_init", "comm_backend", "non_blocking_capacity_factor",
        "num_max_tokens_per_rank", "cudagraphable"},
       "common/config_utils.py:428-438"},
      {"RMSNorm.Config", {"normalized_shape", "eps", "elementwise_affine", "param_init"},
       "common/nn_modules.py:138-141"},
      {"CosSinRoPE.Config",
       {"dim", "max_context_length", "theta", "scaling", "scaling_factor", "low_freq_factor", "high_freq_factor",
        "original_max_position_embeddings", "rope_factor", "beta_fast", "beta_slow", "original_seq_len", "truncate",
        "param_init"},
       "common/rope.py:93-108 (RoPE.Config; CosSinRoPE.Config adds none, :269)"},
      {"ComplexRoPE.Config",
       {"dim", "max_context_length", "theta", "scaling", "scaling_factor", "low_freq_factor", "high_freq_factor",
        "original_max_position_embeddings", "rope_factor", "beta_fast", "beta_slow", "original_seq_len", "truncate",
        "param_init"},
       "common/rope.py:93-108 (RoPE.Config; ComplexRoPE.Config adds none, :181)"},
      {"make_mla_attention_config",
       {"layer_id", "dim", "n_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
        "v_head_dim", "mscale", "attn_backend", "linear_init", "norm_init", "depth_init", "rope"},
       "deepseek_v3/__init__.py:83-99"},
      {"DeepSeekV3TransformerBlock.Config",
       {"attention", "feed_forward", "moe", "attention_norm", "ffn_norm", "param_init"},
       "common/decoder.py:54-59 (deepseek_v3/model.py:160 adds none)"},
      {"MTPTransformerBlock.Config",
       {"attention", "feed_forward", "moe", "attention_norm", "ffn_norm", "enorm", "hnorm", "eh_proj", "mtp_norm",
        "param_init"},
       "common/decoder.py:54-59, deepseek_v3/mtp.py:117-121"},
      {"DeepSeekV3Model.Config",
       {"dim", "vocab_size", "lm_head", "tok_embeddings", "norm", "layers", "enable_weight_tying", "mtp_layers",
        "param_init"},
       "common/decoder.py:70-83, deepseek_v3/mtp.py:174 (MTPDecoder.Config), deepseek_v3/model.py:197-199"},
      {"Linear.Config", {"in_features", "out_features", "bias", "param_init"}, "common/linear.py:30-33"},
      {"Embedding.Config", {"num_embeddings", "embedding_dim", "param_init"}, "common/embedding.py:31-33"},
      {"SigmoidGatedFeedForward.Config", {"w1", "w2", "w3", "gate", "param_init"},
       "common/feed_forward.py:42-45 and :66-67"},
      {"Qwen3TransformerBlock.Config", {"attention", "feed_forward", "moe", "attention_norm", "ffn_norm", "param_init"},
       "common/decoder.py:54-59 (qwen3/model.py:35 adds none)"},
      {"Qwen3Model.Config",
       {"dim", "vocab_size", "lm_head", "tok_embeddings", "norm", "layers", "enable_weight_tying", "param_init"},
       "common/decoder.py:70-83, qwen3/model.py:78-80"},
  };
  return table;
}

/// Choices of the string-valued keywords the export writes.
inline const std::vector<std::string_view> score_func_choices{"softmax", "sigmoid"};  // common/moe.py:199

/// The registry the module is meant for: qwen3_configs (qwen3/__init__.py:598), whose functions
/// model_registry calls with attn_backend and moe_comm_backend as keywords (qwen3/__init__.py:613-622).
inline constexpr std::string_view registry = "qwen3_configs";

/// The fields of deepseek_v3's Attention.Config the export replaces with dataclasses.replace
/// (deepseek_v3/model.py:47-48): the latents' norms, given the config's epsilon.
inline const std::vector<std::string_view> mla_attention_replaced{"q_norm", "kv_norm"};

/// deepseek_v3's registry: deepseekv3_configs (deepseek_v3/__init__.py:608), whose functions
/// model_registry calls with attn_backend, moe_comm_backend, non_blocking_capacity_factor and
/// num_mtp_layers as keywords (deepseek_v3/__init__.py:616-629).
inline constexpr std::string_view deepseek_v3_registry = "deepseekv3_configs";
inline const std::vector<std::string_view> deepseek_v3_signature{"attn_backend", "moe_comm_backend",
                                                                 "non_blocking_capacity_factor", "num_mtp_layers"};

}  // namespace torchtitan_table
