#pragma once
// Private: the Hugging Face family table (hf_families.cpp) that the reader (config_hf.cpp) is
// driven by. One HfFamily per supported `model_type`: how its layers are built (traits), which
// keys it reads, and for each key that decides a count whether it is required or what the
// family's transformers config class defaults it to. To add a family: add an entry to
// hf_families.cpp (and its row in docs/config.md) and a test in tests/unit/config/.

#include <span>
#include <string_view>

#include "budget/config.hpp"

namespace budget::detail {

/// What an absent key means.
enum class Absent {
  /// An error: the key decides a count the family's architecture needs (the expert count of an
  /// MoE family, a width, an MLA rank), so a missing one is a misread waiting to happen.
  required,
  /// The transformers default (`default_json`) is taken and said so: a note in ArchConfig::notes.
  noted_default,
  /// Absent switches a feature off, as in transformers (no sliding window, no dense-only layers,
  /// MoE on every layer), or the key sizes nothing here (MLA's head_dim): nothing is taken.
  derived,
};

/// One key a family reads. `default_json` is the transformers default as JSON text ("false",
/// "4096"), or "=<rule>" for a value the class computes from other keys ("=num_attention_heads");
/// empty where the family has no transformers class.
struct HfKey {
  std::string_view key;
  Absent absent;
  std::string_view default_json;  ///< the transformers default (shown in errors for required keys too)
  std::string_view meaning;       ///< what the key counts, for messages
};

/// A second spelling transformers itself accepts for a key (the config class's attribute_map):
/// read as `key`, with a note; both given is an error.
struct HfAlias {
  std::string_view alias;
  std::string_view key;
};

/// The families of 2025 whose layers need a reader of their own beyond the traits below
/// (config/hf_layouts.cpp): hybrid stacks, per-layer FFNs, attention features, their own key names.
enum class HfLayout {
  standard,      ///< every layer alike but for the traits (and layer_types / sliding keys)
  gpt_oss,       ///< attention sinks; openai's experts_per_token checked against num_experts_per_tok
  llama4,        ///< chunked and no-RoPE layers, MoE every k-th layer, a shared expert, dense MLPs
  qwen3_next,    ///< Gated DeltaNet and gated full attention (layer_types / full_attention_interval)
  nemotron_h,    ///< Mamba-2, attention, MLP and MoE blocks from hybrid_override_pattern
  glm4_moe,      ///< q/k/v biases only, use_qk_norm, partial RoPE
  deepseek_v32,  ///< DeepSeek-V3 plus the lightning indexer
  minimax_m2,    ///< routing bias, q/k norms per layer or head, rotary_dim, MTP said not counted
  ernie4_5_moe,  ///< moe_* keys, MoE on layers start..end every interval, shared experts
};

/// How a family's layers are built (what no key of the config changes).
struct HfTraits {
  HfLayout layout = HfLayout::standard;
  bool moe = false;                     ///< every layer (after the dense ones) is a mixture of experts
  std::string_view expert_count_key;    ///< the key of the routed-expert count (MoE families)
  bool expert_width_key = false;        ///< experts sized by moe_intermediate_size (else intermediate_size)
  bool deepseek_shared = false;         ///< n_shared_experts shared experts as wide as routed ones
  bool qwen_shared = false;             ///< one gated shared expert of shared_expert_intermediate_size
  bool gated = true;                    ///< SwiGLU-style MLP (false: up, activation, down)
  bool mlp_bias = false;                ///< MLP biases always present (GPT-NeoX)
  NormKind norm = NormKind::rmsnorm;
  QkNorm qk_norm = QkNorm::none;
  bool qkv_bias_key = false;            ///< q/k/v biases decided by `qkv_bias` (Qwen2-MoE)
  bool qkv_bias_always = false;         ///< q/k/v biases always present (Qwen2)
  bool mla = false;
  bool sliding_all_layers = false;      ///< `sliding_window` applies to every layer (Mistral style)
  bool qwen_sliding = false;            ///< use_sliding_window + max_window_layers (Qwen2/3 style)
  /// use_sliding_window: true is refused (the layer pattern differs between transformers versions).
  bool refuse_use_sliding_window = false;
  bool router_bias = false;             ///< always present (DeepSeek-V3 e_score_correction_bias)
  bool router_bias_from_topk_method = false;  ///< `topk_method: noaux_tc` adds it (DeepSeek-V2)
  bool sigmoid_router = false;          ///< scoring_func absent means sigmoid (DeepSeek-V3 style routers)
};

struct HfFamily {
  std::string_view model_type;
  std::string_view architecture;        ///< the transformers class named in `architectures`
  /// Where the defaults come from: a transformers file (at the commit docs/config.md names), or
  /// the model's own remote code when transformers has no class (then no key has a default).
  std::string_view defaults_source;
  HfTraits traits;
  std::span<const HfKey> keys;          ///< every key the family reads, beyond the common ones
  std::span<const HfAlias> aliases = {};
};

/// The families of 2025 (hf_families_2025.cpp), appended to the table by hf_families().
std::span<const HfFamily> hf_families_2025();

/// Every supported family, in the order docs/config.md lists them.
std::span<const HfFamily> hf_families();
const HfFamily* find_hf_family_by_model_type(std::string_view model_type);
const HfFamily* find_hf_family_by_architecture(std::string_view architecture);
/// "llama, mistral, ..." for error messages.
std::string supported_hf_families();

/// A key that changes a count in some family, with what it means. Any such key a family does not
/// read, set to a value that matters, is refused (a config mixing families is not read).
struct HfCountingKey {
  std::string_view key;
  bool trivial_one;  ///< the value 1 ("every layer") is the default and accepted anywhere
  std::string_view meaning;
};
std::span<const HfCountingKey> hf_counting_keys();

/// Spellings of one counted quantity across families, tools and typos. When a family reads one
/// spelling of the group, any other spelling in its config is an error naming the family's key.
std::span<const std::span<const std::string_view>> hf_spelling_groups();

/// Keys no family counts (dropout, token ids, rope, router losses, ...): never taken for a typo.
bool is_hf_non_counting_key(std::string_view key);

}  // namespace budget::detail
