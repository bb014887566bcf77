#pragma once
// The Megatron-LM arguments the megatron export may write, as NVIDIA/Megatron-LM d98e8a64 defines
// them, each with its source line. A = megatron/training/arguments.py, TC =
// megatron/core/transformer/transformer_config.py (TransformerConfig fields become flags through
// ArgumentGroupFactory: megatron/training/argument_utils.py:95-105 "--" + name with "_" → "-";
// :191 a bool defaulting to False is store_true; argparse_meta "arg_names" renames, e.g. TC:202),
// TOK = megatron/training/config/training_config.py (TokenizerConfig, built at A:3246).
// Read with `git show d98e8a64:<path>` in a clone of NVIDIA/Megatron-LM.

#include <string_view>
#include <vector>

namespace megatron_table {

enum class Kind {
  store_true,  ///< no value
  integer,     ///< type=int: a bare decimal integer
  floating,    ///< type=float: Python float() syntax
  choice,      ///< one of `choices`
  pattern,     ///< moe_freq_type (A:327): an int, or a list expression of ,0-9[]()+* (A:245-253)
};

struct Flag {
  std::string_view name;
  Kind kind;
  std::vector<std::string_view> choices;
  std::string_view source;
};

inline const std::vector<Flag>& flags() {
  static const std::vector<Flag> table{
      {"--num-layers", Kind::integer, {}, "TC:65"},
      {"--hidden-size", Kind::integer, {}, "TC:145"},
      {"--num-attention-heads", Kind::integer, {}, "TC:148"},
      {"--num-query-groups", Kind::integer, {}, "TC:175"},
      {"--ffn-hidden-size", Kind::integer, {}, "TC:180"},
      {"--kv-channels", Kind::integer, {}, "TC:184"},
      {"--norm-epsilon", Kind::floating, {}, "TC:201-202 (layernorm_epsilon, arg_names --norm-epsilon)"},
      {"--disable-bias-linear", Kind::store_true, {}, "TC:212-213 (add_bias_linear, arg_names --disable-bias-linear)"},
      {"--add-qkv-bias", Kind::store_true, {}, "TC:218"},
      {"--normalization", Kind::choice, {"LayerNorm", "RMSNorm"}, "TC:256 (Literal)"},
      {"--qk-layernorm", Kind::store_true, {}, "TC:259"},
      {"--multi-latent-attention", Kind::store_true, {}, "TC:288"},
      {"--mtp-num-layers", Kind::integer, {}, "TC:68"},
      {"--moe-shared-expert-intermediate-size", Kind::integer, {}, "TC:701"},
      {"--moe-shared-expert-gate", Kind::store_true, {}, "TC:713"},
      {"--moe-ffn-hidden-size", Kind::integer, {}, "TC:740"},
      {"--moe-router-topk", Kind::integer, {}, "TC:760"},
      {"--moe-router-num-groups", Kind::integer, {}, "TC:780 (Optional[int])"},
      {"--moe-router-group-topk", Kind::integer, {}, "TC:796 (Optional[int])"},
      {"--moe-router-pre-softmax", Kind::store_true, {}, "TC:799"},
      {"--moe-router-topk-scaling-factor", Kind::floating, {}, "TC:804 (Optional[float])"},
      {"--moe-router-score-function", Kind::choice, {"softmax", "sigmoid", "sqrtsoftplus"}, "TC:808 (Literal)"},
      {"--moe-router-enable-expert-bias", Kind::store_true, {}, "TC:816"},
      {"--group-query-attention", Kind::store_true, {}, "A:2382"},
      {"--max-position-embeddings", Kind::integer, {}, "A:2394"},
      {"--position-embedding-type", Kind::choice, {"learned_absolute", "rope", "yarn", "mrope", "relative", "none"},
       "A:2397-2398"},
      {"--rotary-base", Kind::integer, {}, "A:2418 (type=int)"},
      {"--swiglu", Kind::store_true, {}, "A:2450"},
      {"--untie-embeddings-and-output-weights", Kind::store_true, {}, "A:2460"},
      {"--rope-type", Kind::choice, {"rope", "yarn"}, "A:2906-2907"},
      {"--yarn-original-max-position-embeddings", Kind::integer, {}, "A:2400"},
      {"--yarn-beta-fast", Kind::floating, {}, "A:2402"},
      {"--yarn-beta-slow", Kind::floating, {}, "A:2404"},
      {"--rotary-seq-len-interpolation-factor", Kind::integer, {}, "A:2422 (type=int)"},
      {"--use-rope-scaling", Kind::store_true, {}, "A:2424"},
      {"--rope-scaling-factor", Kind::floating, {}, "A:2426"},
      {"--rotary-scaling-factor", Kind::floating, {}, "A:3558"},
      {"--mscale", Kind::floating, {}, "A:3560"},
      {"--mscale-all-dim", Kind::floating, {}, "A:3562"},
      {"--vocab-size", Kind::integer, {}, "TOK:679 (TokenizerConfig.vocab_size)"},
      {"--seq-length", Kind::integer, {}, "A:3305"},
      {"--num-experts", Kind::integer, {}, "A:3518"},
      {"--moe-layer-freq", Kind::pattern, {}, "A:3520 (type=moe_freq_type)"},
      {"--q-lora-rank", Kind::integer, {}, "A:3548"},
      {"--kv-lora-rank", Kind::integer, {}, "A:3550"},
      {"--qk-head-dim", Kind::integer, {}, "A:3552"},
      {"--qk-pos-emb-head-dim", Kind::integer, {}, "A:3554"},
      {"--v-head-dim", Kind::integer, {}, "A:3556"},
  };
  return table;
}

/// validate_args' required arguments (A:1313-1316: num_layers, hidden_size, num_attention_heads,
/// max_position_embeddings) and the vocabulary gpt_config_from_args asserts
/// (argument_utils.py:478: --vocab-size or --padded-vocab-size).
inline const std::vector<std::string_view>& required() {
  static const std::vector<std::string_view> table{"--num-layers", "--hidden-size", "--num-attention-heads",
                                                   "--max-position-embeddings"};
  return table;
}

/// _eval_pattern (A:245-253): the characters a --moe-layer-freq list expression may contain.
inline constexpr std::string_view pattern_characters = ",0123456789[]()+*";

}  // namespace megatron_table
