// Hugging Face config.json → ArchConfig, dispatched on the model family (`model_type`, else
// `architectures`). Each family reads the keys its transformers implementation uses to size
// weights; every other key that would change a count in some family is refused by name when it is
// set, so nothing is approximated silently. The table of families and their keys: docs/config.md
// ("Hugging Face configs").

#include "budget/config_hf.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "config/config_hf_json.hpp"
#include "base/json_reader.hpp"

namespace budget {
namespace detail {

bool looks_like_hf_config(const nlohmann::json& document) {
  if (!document.is_object() || document.contains("num_layers")) return false;
  return document.contains("num_hidden_layers") || document.contains("model_type") ||
         document.contains("architectures") || document.contains("text_config");
}

namespace {

enum class Family {
  llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, olmoe, deepseek, deepseek_v2, deepseek_v3,
  phi3, phimoe, granite, granitemoe, gpt_neox,
};

struct FamilyEntry {
  std::string_view model_type;
  std::string_view architecture;  ///< the transformers class in `architectures`
  Family family;
};

/// The supported families. Kimi-K2 ships the DeepSeek-V3 architecture under its own model_type.
constexpr std::array<FamilyEntry, 17> family_table{{
    {"llama", "LlamaForCausalLM", Family::llama},
    {"mistral", "MistralForCausalLM", Family::mistral},
    {"mixtral", "MixtralForCausalLM", Family::mixtral},
    {"qwen2", "Qwen2ForCausalLM", Family::qwen2},
    {"qwen2_moe", "Qwen2MoeForCausalLM", Family::qwen2_moe},
    {"qwen3", "Qwen3ForCausalLM", Family::qwen3},
    {"qwen3_moe", "Qwen3MoeForCausalLM", Family::qwen3_moe},
    {"olmoe", "OlmoeForCausalLM", Family::olmoe},
    {"deepseek", "DeepseekForCausalLM", Family::deepseek},
    {"deepseek_v2", "DeepseekV2ForCausalLM", Family::deepseek_v2},
    {"deepseek_v3", "DeepseekV3ForCausalLM", Family::deepseek_v3},
    {"kimi_k2", "DeepseekV3ForCausalLM", Family::deepseek_v3},
    {"phi3", "Phi3ForCausalLM", Family::phi3},
    {"phimoe", "PhiMoEForCausalLM", Family::phimoe},
    {"granite", "GraniteForCausalLM", Family::granite},
    {"granitemoe", "GraniteMoeForCausalLM", Family::granitemoe},
    {"gpt_neox", "GPTNeoXForCausalLM", Family::gpt_neox},
}};

std::string supported_list() {
  std::string out;
  for (const auto& e : family_table) out += (out.empty() ? "" : ", ") + std::string(e.model_type);
  return out;
}

const FamilyEntry* find_model_type(std::string_view model_type) {
  for (const auto& e : family_table) {
    if (e.model_type == model_type) return &e;
  }
  return nullptr;
}

const FamilyEntry* find_architecture(std::string_view architecture) {
  for (const auto& e : family_table) {
    if (e.architecture == architecture) return &e;
  }
  return nullptr;
}

/// True when `key` is present with a value other than null, false, 0, an empty array or object.
bool is_set(const nlohmann::json& object, std::string_view key) {
  const auto it = object.find(key);
  if (it == object.end()) return false;
  const auto& v = *it;
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0.0;
  if (v.is_array() || v.is_object()) return !v.empty();
  return true;
}

/// Keys that change a count in some family. A family reads its own (traits below); any other one
/// set to a value that would matter is refused. `trivial_one`: the value 1 means "every layer",
/// the default, and is accepted anywhere.
struct CountingKey {
  std::string_view key;
  bool trivial_one;
  std::string_view meaning;
};
constexpr std::array<CountingKey, 33> counting_keys{{
    {"num_local_experts", false, "routed experts"},
    {"num_experts", false, "routed experts"},
    {"n_routed_experts", false, "routed experts"},
    {"num_experts_per_tok", false, "experts per token"},
    {"moe_intermediate_size", false, "expert width"},
    {"shared_expert_intermediate_size", false, "a shared expert"},
    {"shared_intermediate_size", false, "a shared expert"},
    {"n_shared_experts", false, "shared experts"},
    {"first_k_dense_replace", false, "leading dense layers"},
    {"moe_layer_freq", true, "MoE on every k-th layer"},
    {"decoder_sparse_step", true, "MoE on every k-th layer"},
    {"interleave_moe_layer_step", true, "MoE on every k-th layer"},
    {"mlp_only_layers", false, "dense layers at given positions"},
    {"q_lora_rank", false, "multi-head latent attention"},
    {"kv_lora_rank", false, "multi-head latent attention"},
    {"qk_nope_head_dim", false, "multi-head latent attention"},
    {"qk_rope_head_dim", false, "multi-head latent attention"},
    {"v_head_dim", false, "multi-head latent attention"},
    {"num_nextn_predict_layers", false, "multi-token-prediction layers"},
    {"sliding_window", false, "sliding-window attention"},
    {"use_sliding_window", false, "sliding-window attention"},
    {"full_attention_interval", false, "hybrid linear/full attention layers"},
    {"attention_chunk_size", false, "chunked local attention"},
    {"attention_bias", false, "attention biases"},
    {"mlp_bias", false, "MLP biases"},
    {"qkv_bias", false, "attention biases"},
    {"lm_head_bias", false, "an LM-head bias"},
    {"use_qk_norm", false, "query/key norms"},
    {"qk_layernorm", false, "query/key norms"},
    {"kv_channels", false, "mixture of attention heads (JetMoE)"},
    {"moe_num_experts", false, "mixture-of-experts layers of another family"},
    {"moe_topk", false, "mixture-of-experts layers of another family"},
    {"parallel_attn", false, "a parallel attention block"},
}};

struct Traits {
  std::vector<std::string_view> keys;  ///< counting keys this family reads
  bool gated = true;                   ///< SwiGLU-style MLP (false: up, activation, down)
  bool mlp_bias = false;               ///< MLP biases always present (GPT-NeoX)
  NormKind norm = NormKind::rmsnorm;
  QkNorm qk_norm = QkNorm::none;
  bool qkv_bias = false;               ///< always present (Qwen2)
  bool attention_bias_default = false; ///< default of `attention_bias` (q, k, v and o)
  bool mla = false;
  bool sliding_all_layers = false;     ///< `sliding_window` applies to every layer (Mistral style)
  bool qwen_sliding = false;           ///< use_sliding_window + max_window_layers (Qwen style)
  bool router_bias = false;            ///< always present (DeepSeek-V3 e_score_correction_bias)
};

Traits traits_of(Family family) {
  Traits t;
  using K = std::vector<std::string_view>;
  const K qwen_sliding{"sliding_window", "use_sliding_window"};
  switch (family) {
    case Family::llama:
    case Family::granite: t.keys = {"attention_bias", "mlp_bias"}; break;
    case Family::mistral:
    case Family::phi3:
      t.keys = {"sliding_window"};
      t.sliding_all_layers = true;
      break;
    case Family::mixtral:
      t.keys = {"num_local_experts", "num_experts_per_tok", "sliding_window"};
      t.sliding_all_layers = true;
      break;
    case Family::phimoe:
      t.keys = {"num_local_experts", "num_experts_per_tok", "sliding_window", "attention_bias", "lm_head_bias"};
      t.sliding_all_layers = true;
      t.norm = NormKind::layernorm;
      break;
    case Family::granitemoe: t.keys = {"num_local_experts", "num_experts_per_tok", "attention_bias"}; break;
    case Family::qwen2:
      t.keys = qwen_sliding;
      t.qkv_bias = true;
      t.qwen_sliding = true;
      break;
    case Family::qwen2_moe:
      t.keys = {"num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
                "decoder_sparse_step", "mlp_only_layers", "sliding_window", "use_sliding_window"};
      t.qkv_bias = true;
      t.qwen_sliding = true;
      break;
    case Family::qwen3:
      t.keys = {"attention_bias", "sliding_window", "use_sliding_window"};
      t.qk_norm = QkNorm::per_head;
      t.qwen_sliding = true;
      break;
    case Family::qwen3_moe:
      t.keys = {"attention_bias", "sliding_window", "use_sliding_window", "num_experts", "num_experts_per_tok",
                "moe_intermediate_size", "decoder_sparse_step", "mlp_only_layers"};
      t.qk_norm = QkNorm::per_head;
      t.qwen_sliding = true;
      break;
    case Family::olmoe:
      t.keys = {"num_experts", "num_experts_per_tok", "attention_bias"};
      t.qk_norm = QkNorm::full;
      break;
    case Family::deepseek:
      t.keys = {"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
                "first_k_dense_replace", "moe_layer_freq", "attention_bias"};
      break;
    case Family::deepseek_v2:
    case Family::deepseek_v3:
      t.keys = {"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
                "first_k_dense_replace", "moe_layer_freq", "attention_bias", "q_lora_rank", "kv_lora_rank",
                "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};
      if (family == Family::deepseek_v3) t.keys.push_back("num_nextn_predict_layers");
      t.mla = true;
      t.router_bias = family == Family::deepseek_v3;
      break;
    case Family::gpt_neox:
      t.keys = {"attention_bias"};
      t.gated = false;
      t.mlp_bias = true;
      t.norm = NormKind::layernorm;
      t.attention_bias_default = true;  // GPTNeoXConfig: attention_bias = True
      break;
  }
  return t;
}

class FamilyReader {
 public:
  FamilyReader(const nlohmann::json& document, const std::string& source, const std::string& pointer,
               const FamilyEntry& entry)
      : doc_(document), root_(document, source, pointer), entry_(entry), traits_(traits_of(entry.family)) {}

  ArchConfig read() {
    refuse_foreign_keys();
    ArchConfig c;
    c.hidden_size = root_.integer("hidden_size", 1, max_dimension);
    c.num_layers = root_.integer("num_hidden_layers", 1, 1'000'000);
    c.vocab_size = root_.integer_or("vocab_size", 0, 0, max_dimension);
    c.tie_embeddings = root_.boolean_or("tie_word_embeddings", false);
    c.lm_head_bias = reads("lm_head_bias") && root_.boolean_or("lm_head_bias", false);
    c.norm = traits_.norm;
    read_attention(c);
    read_ffn(c);
    read_layer_types(c);
    if (reads("num_nextn_predict_layers")) c.mtp_layers = integer_or("num_nextn_predict_layers", 0, 0, 1024);
    read_settings(c);
    return c;
  }

  /// ArchConfig::settings (no budget depends on them): rope_theta (GPT-NeoX: rotary_emb_base; newer
  /// files: rope_parameters.rope_theta), rms_norm_eps (GPT-NeoX: layer_norm_eps),
  /// max_position_embeddings, and the router: the score function is DeepSeek's scoring_func (default: sigmoid
  /// in DeepSeek-V3, softmax before), softmax in the other MoE families read (PhiMoE's sparsemixer router is left unset);
  /// renormalised top-k weights: norm_topk_prob where the file has it, always in Mixtral and
  /// GraniteMoE (a softmax over the top-k logits).
  void read_settings(ArchConfig& c) const {
    ModelSettings& s = c.settings;
    const auto number_at = [&](const ObjectReader& r, const char* key, double min, double max) -> std::optional<double> {
      if (!r.has(key) || r.raw(key).is_null()) return std::nullopt;
      return r.number(key, min, max);
    };
    s.rope_theta = number_at(root_, entry_.family == Family::gpt_neox ? "rotary_emb_base" : "rope_theta", 1e-6, 1e15);
    if (!s.rope_theta && root_.has("rope_parameters") && root_.raw("rope_parameters").is_object()) {
      s.rope_theta = number_at(root_.object("rope_parameters"), "rope_theta", 1e-6, 1e15);
    }
    s.norm_epsilon = number_at(root_, entry_.family == Family::gpt_neox ? "layer_norm_eps" : "rms_norm_eps", 1e-30, 0.5);
    s.max_position_embeddings = root_.integer_or("max_position_embeddings", 0, 0, std::int64_t{1} << 40);
    if (!c.ffn.is_moe() || entry_.family == Family::phimoe) return;
    const std::string score =
        root_.string_or("scoring_func", entry_.family == Family::deepseek_v3 ? "sigmoid" : "softmax");
    if (score == "softmax" || score == "sigmoid") {
      s.router_score = score == "sigmoid" ? RouterScore::sigmoid : RouterScore::softmax;
    }
    if (entry_.family == Family::mixtral || entry_.family == Family::granitemoe) {
      s.router_normalize_top_k = true;
    } else if (root_.has("norm_topk_prob") && root_.raw("norm_topk_prob").is_boolean()) {
      s.router_normalize_top_k = root_.raw("norm_topk_prob").get<bool>();
    }
  }

 private:
  bool reads(std::string_view key) const {
    return std::find(traits_.keys.begin(), traits_.keys.end(), key) != traits_.keys.end();
  }
  bool set(std::string_view key) const { return is_set(doc_, key); }
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
    return root_.has(key) && !root_.raw(key).is_null() ? root_.integer(key, min, max) : fallback;
  }
  [[noreturn]] void refuse(std::string_view key, const std::string& why) const {
    root_.fail(key, fmt::format("{} (family \"{}\"; docs/config.md lists what each family reads)", why,
                                entry_.model_type));
  }

  void refuse_foreign_keys() const {
    for (const auto& k : counting_keys) {
      if (reads(k.key) || !set(k.key)) continue;
      const auto& v = doc_.at(std::string(k.key));
      if (k.trivial_one && v.is_number() && v.get<double>() == 1.0) continue;
      refuse(k.key, fmt::format("sets {}, which this family's layers do not have; a config mixing families is not "
                                "read",
                                k.meaning));
    }
    for (const auto& [key, value] : doc_.items()) {
      if (key.rfind("linear_", 0) == 0 && !value.is_null()) {
        refuse(key, "linear-attention layers (a hybrid linear/full attention stack) are not modelled: their "
                    "recurrent state is not a KV cache");
      }
    }
  }

  void read_attention(ArchConfig& c) const {
    auto& a = c.attention;
    a.num_heads = root_.integer("num_attention_heads", 1, max_dimension);
    if (traits_.mla) {
      read_mla(c);
      return;
    }
    a.num_kv_heads = integer_or("num_key_value_heads", a.num_heads, 1, max_dimension);
    if (root_.has("head_dim") && !root_.raw("head_dim").is_null()) {
      a.head_dim = root_.integer("head_dim", 1, max_dimension);
    } else {
      if (c.hidden_size % a.num_heads != 0) {
        refuse("num_attention_heads", fmt::format("no head_dim given and hidden_size {} is not a multiple of "
                                                  "num_attention_heads {}",
                                                  c.hidden_size, a.num_heads));
      }
      a.head_dim = c.hidden_size / a.num_heads;
    }
    const bool attention_bias = reads("attention_bias") && root_.boolean_or("attention_bias", traits_.attention_bias_default);
    a.qkv_bias = traits_.qkv_bias || attention_bias;
    a.output_bias = attention_bias;
    a.qk_norm = traits_.qk_norm;
  }

  void read_mla(ArchConfig& c) const {
    auto& a = c.attention;
    if (reads("attention_bias") && root_.boolean_or("attention_bias", false)) {
      refuse("attention_bias", "attention biases with multi-head latent attention are not modelled");
    }
    MlaConfig m;
    m.q_lora_rank = integer_or("q_lora_rank", 0, 0, max_dimension);  // null: no query compression
    m.kv_lora_rank = root_.integer("kv_lora_rank", 1, max_dimension);
    m.qk_nope_head_dim = root_.integer("qk_nope_head_dim", 0, max_dimension);
    m.qk_rope_head_dim = root_.integer("qk_rope_head_dim", 0, max_dimension);
    m.v_head_dim = root_.integer("v_head_dim", 1, max_dimension);
    a.mla = m;
    // num_key_value_heads and head_dim of these configs do not size any weight (transformers sets
    // head_dim = qk_rope_head_dim for the rotary embedding): the MLA dims decide.
    a.head_dim = m.qk_head_dim();
    a.num_kv_heads = 1;
  }

  void read_ffn(ArchConfig& c) const {
    auto& f = c.ffn;
    f.gated = traits_.gated;
    f.bias = traits_.mlp_bias || (reads("mlp_bias") && root_.boolean_or("mlp_bias", false));
    check_activation();
    const char* expert_key = nullptr;
    for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
      if (reads(key) && set(key)) expert_key = key;
    }
    if (expert_key == nullptr) {
      f.dense_dim = root_.integer("intermediate_size", 1, max_dimension);
      return;
    }
    f.num_experts = root_.integer(expert_key, 1, max_dimension);
    f.top_k = root_.integer("num_experts_per_tok", 1, f.num_experts);
    f.expert_dim = reads("moe_intermediate_size") && set("moe_intermediate_size")
                       ? root_.integer("moe_intermediate_size", 1, max_dimension)
                       : root_.integer("intermediate_size", 1, max_dimension);
    if (reads("n_shared_experts") && set("n_shared_experts")) {  // DeepSeek: shared experts as wide as routed ones
      f.num_shared_experts = root_.integer("n_shared_experts", 1, max_dimension);
      f.shared_expert_dim = f.expert_dim;
    } else if (reads("shared_expert_intermediate_size") && set("shared_expert_intermediate_size")) {
      // Qwen-MoE: one shared expert of that width behind an H → 1 sigmoid gate.
      f.num_shared_experts = 1;
      f.shared_expert_dim = root_.integer("shared_expert_intermediate_size", 1, max_dimension);
      f.shared_expert_gate = true;
    }
    if (reads("first_k_dense_replace") && set("first_k_dense_replace")) {
      f.first_dense_layers = root_.integer("first_k_dense_replace", 0, c.num_layers);
      f.dense_dim = root_.integer("intermediate_size", 1, max_dimension);
    }
    for (const char* key : {"decoder_sparse_step", "moe_layer_freq"}) {
      if (reads(key) && root_.has(key) && !root_.raw(key).is_null() && root_.integer(key, 0, 1 << 20) > 1) {
        refuse(key, "MoE on only every k-th layer is not modelled; allowed: 1 (every layer)");
      }
    }
    if (reads("mlp_only_layers") && set("mlp_only_layers")) read_mlp_only_layers(c);
    f.router_bias = traits_.router_bias ||
                    (entry_.family == Family::deepseek_v2 && root_.string_or("topk_method", "") == "noaux_tc");
  }

  /// Qwen-MoE's dense layers (0-based indices, MLP of intermediate_size): modelled when they are
  /// the leading layers 0 … k−1 (first_dense_layers = k), refused otherwise.
  void read_mlp_only_layers(ArchConfig& c) const {
    const auto& list = root_.raw("mlp_only_layers");
    std::vector<std::int64_t> layers;
    if (list.is_array()) {
      for (const auto& v : list) {
        if (!v.is_number_integer()) refuse("mlp_only_layers", "expected an array of layer indices");
        layers.push_back(v.get<std::int64_t>());
      }
    }
    std::sort(layers.begin(), layers.end());
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (layers[i] != static_cast<std::int64_t>(i)) {
        refuse("mlp_only_layers", "dense layers other than the leading ones (0, 1, …, k−1) are not modelled");
      }
    }
    c.ffn.first_dense_layers = std::min<std::int64_t>(static_cast<std::int64_t>(layers.size()), c.num_layers);
    c.ffn.dense_dim = root_.integer("intermediate_size", 1, max_dimension);
  }

  void check_activation() const {
    if (!root_.has("hidden_act")) return;
    const char* key = "hidden_act";
    const std::string act = root_.string(key);
    // The activation does not change a count inside a family; these are the ones the families use.
    static const std::vector<std::string> known{"silu", "swiglu", "gelu", "gelu_new", "gelu_pytorch_tanh",
                                                "gelu_fast", "relu"};
    if (std::find(known.begin(), known.end(), act) == known.end() ||
        (traits_.gated && act == "relu")) {
      refuse(key, fmt::format("activation \"{}\" is not one this family is read with ({})", act,
                              traits_.gated ? "a gated MLP: silu, swiglu, gelu, gelu_new, gelu_pytorch_tanh, gelu_fast"
                                            : "a plain MLP: gelu, gelu_new, gelu_fast, gelu_pytorch_tanh, relu, silu"));
    }
  }

  /// Per-layer attention kinds: `layer_types` (any family; full and sliding attention are modelled,
  /// other kinds refused), else the family's sliding-window keys. A window of at least
  /// max_position_embeddings never bounds anything: such layers count as full.
  void read_layer_types(ArchConfig& c) const {
    auto& a = c.attention;
    std::int64_t window = 0;
    if (set("sliding_window")) window = root_.integer("sliding_window", 1, max_dimension);
    const std::int64_t max_positions = root_.integer_or("max_position_embeddings", 0, 0, std::int64_t{1} << 40);
    const bool window_bounds = window > 0 && (max_positions == 0 || window < max_positions);
    std::vector<LayerAttention> types;
    if (root_.has("layer_types") && !root_.raw("layer_types").is_null()) {
      const auto& list = root_.raw("layer_types");
      if (!list.is_array() || static_cast<std::int64_t>(list.size()) != c.num_layers) {
        refuse("layer_types", fmt::format("expected an array of {} layer kinds (num_hidden_layers)", c.num_layers));
      }
      for (const auto& v : list) {
        const std::string kind = v.is_string() ? v.get<std::string>() : describe_value(v);
        if (kind == "full_attention") {
          types.push_back(LayerAttention::full);
        } else if (kind == "sliding_attention") {
          if (window == 0) refuse("layer_types", "sliding_attention layers but no sliding_window");
          types.push_back(window_bounds ? LayerAttention::sliding : LayerAttention::full);
        } else {
          refuse("layer_types", fmt::format("layer kind \"{}\" is not modelled (only full_attention and "
                                            "sliding_attention are); linear-attention layers keep a recurrent "
                                            "state, not a KV cache",
                                            kind));
        }
      }
    } else if (traits_.sliding_all_layers && window_bounds) {
      types.assign(static_cast<std::size_t>(c.num_layers), LayerAttention::sliding);
    } else if (traits_.qwen_sliding && window_bounds && root_.boolean_or("use_sliding_window", false)) {
      // transformers (Qwen2/3): layers i >= max_window_layers (0-based) use the window.
      const std::int64_t full_layers = root_.integer_or("max_window_layers", c.num_layers, 0, 1'000'000);
      for (std::int64_t i = 0; i < c.num_layers; ++i) {
        types.push_back(i >= full_layers ? LayerAttention::sliding : LayerAttention::full);
      }
    }
    if (std::find(types.begin(), types.end(), LayerAttention::sliding) != types.end()) {
      a.layer_types = std::move(types);
      a.sliding_window = window;
    }
  }

  const nlohmann::json& doc_;
  ObjectReader root_;
  const FamilyEntry& entry_;
  Traits traits_;
};

const FamilyEntry& resolve_family(const nlohmann::json& object, const ObjectReader& root, const std::string& wrapper) {
  if (root.has("model_type") && !root.raw("model_type").is_null()) {
    const std::string model_type = root.string("model_type");
    if (const FamilyEntry* e = find_model_type(model_type)) return *e;
    root.fail("model_type", fmt::format("{}family \"{}\" is not supported; supported families: {} "
                                        "(docs/config.md, \"Hugging Face configs\")",
                                        wrapper, model_type, supported_list()));
  }
  if (object.contains("architectures") && object.at("architectures").is_array() &&
      !object.at("architectures").empty() && object.at("architectures").at(0).is_string()) {
    const std::string architecture = object.at("architectures").at(0).get<std::string>();
    if (const FamilyEntry* e = find_architecture(architecture)) return *e;
    root.fail("architectures", fmt::format("{}architecture \"{}\" is not supported; supported families: {}", wrapper,
                                           architecture, supported_list()));
  }
  root.fail("model_type", fmt::format("required key is missing (the family decides how the config is read); "
                                      "supported families: {}",
                                      supported_list()));
}

}  // namespace

ArchConfig read_hf_config(const nlohmann::json& document, const std::string& source) {
  const ObjectReader root(document, source, "");
  ArchConfig c;
  if (document.contains("text_config") && !document.at("text_config").is_null()) {
    // A multimodal wrapper (Llama-4, Mistral-3, Qwen-VL ...): the text model is counted, the
    // vision tower and projector are not.
    const ObjectReader text = root.object("text_config");
    const std::string wrapper_type = root.string_or("model_type", "?");
    const FamilyEntry& family =
        resolve_family(text.json(), text, fmt::format("multimodal model \"{}\": its text model ", wrapper_type));
    c = FamilyReader(text.json(), source, "/text_config", family).read();
    if (!text.has("tie_word_embeddings")) c.tie_embeddings = root.boolean_or("tie_word_embeddings", false);
    c.name = root.string_or("_name_or_path", wrapper_type + " (text model)");
  } else {
    const FamilyEntry& family = resolve_family(document, root, "");
    c = FamilyReader(document, source, "", family).read();
    c.name = root.string_or("_name_or_path", root.string_or("model_type", "hf-config"));
  }
  // The loop key written by export (config_hf.hpp, hf_loop_key); transformers ignores it.
  if (root.has(hf_loop_key)) {
    const ObjectReader loop = root.object(hf_loop_key);
    loop.reject_unknown_keys({"first", "last", "repeats"});
    LoopConfig l;
    l.first = loop.integer("first", 1, c.num_layers);
    l.last = loop.integer("last", 1, c.num_layers);
    l.repeats = loop.integer("repeats", 1, 1024);
    c.loop = l;
  }
  try {
    validate(c, source);
  } catch (const Error& e) {
    throw Error(e.message() + " (as read from the Hugging Face config; docs/config.md lists the key mapping)",
                source, e.path());
  }
  return c;
}

}  // namespace detail

ArchConfig parse_hf_config(std::string_view json_text, const std::string& source) {
  return detail::read_hf_config(detail::parse_json_text(json_text, source), source);
}

}  // namespace budget
