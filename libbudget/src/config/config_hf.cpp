// Hugging Face config.json → ArchConfig, driven by the family table (config/hf_families.cpp).
// Reading is two passes. The key pass (config/hf_key_pass.cpp) makes the object the family reads:
// transformers' own alternative spellings renamed (with a note), every other spelling or near-typo
// of a key the family counts refused with a did-you-mean, keys of other families refused, a
// missing required key refused, and a missing key with a transformers default given that default
// (with a note in ArchConfig::notes). The layer pass then reads that object into the config;
// nothing in it guesses.

#include "budget/config_hf.hpp"

#include <algorithm>
#include <optional>
#include <array>
#include <functional>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "base/json_reader.hpp"
#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "config/config_hf_json.hpp"
#include "config/rope_scaling_json.hpp"
#include "config/config_names.hpp"
#include "config/hf_architecture.hpp"
#include "config/hf_families.hpp"
#include "config/hf_key_pass.hpp"
#include "config/hf_layouts.hpp"

namespace budget {
namespace detail {

bool looks_like_hf_config(const nlohmann::json& document) {
  if (!document.is_object() || document.contains("num_layers")) return false;
  return document.contains("num_hidden_layers") || document.contains("model_type") ||
         document.contains("architectures") || document.contains("text_config");
}

namespace {

/// The layer pass: the key pass's object into an ArchConfig.
class LayerPass {
 public:
  LayerPass(const nlohmann::json& object, const std::string& source, const std::string& pointer, const HfFamily& family)
      : doc_(object), root_(doc_, source, pointer), family_(family), traits_(family.traits) {}

  ArchConfig read() const {
    ArchConfig c;
    c.hidden_size = root_.integer("hidden_size", 1, max_dimension);
    c.num_layers = root_.integer("num_hidden_layers", 1, 1'000'000);
    c.vocab_size = root_.integer_or("vocab_size", 0, 0, max_dimension);  // absent: noted by the key pass
    c.tie_embeddings = root_.boolean_or("tie_word_embeddings", false);
    c.lm_head_bias = reads("lm_head_bias") && root_.boolean_or("lm_head_bias", false);
    c.norm = traits_.norm;
    read_attention(c);
    read_ffn(c);
    if (hf_generic_layer_types(traits_.layout)) read_layer_types(c);
    read_hf_layout(HfLayoutInput{doc_, root_, family_}, c);  // the 2025 families (config/hf_layouts.cpp)
    if (reads("num_nextn_predict_layers") && traits_.layout != HfLayout::nemotron_h) {
      c.mtp_layers = integer_or("num_nextn_predict_layers", 0, 0, 1024);
    }
    read_settings(c);
    return c;
  }

  /// ArchConfig::settings (no budget depends on them): rope_theta (GPT-NeoX: rotary_emb_base; newer
  /// files: rope_parameters.rope_theta), rms_norm_eps (GPT-NeoX: layer_norm_eps),
  /// max_position_embeddings, and the router: the score function is DeepSeek's scoring_func
  /// (default: sigmoid in DeepSeek-V3, softmax before), softmax in the other MoE families read
  /// (PhiMoE's sparsemixer router is left unset); renormalised top-k weights: norm_topk_prob where
  /// the file has it, always in Mixtral and GraniteMoE (a softmax over the top-k logits).
  void read_settings(ArchConfig& c) const {
    ModelSettings& s = c.settings;
    const std::string_view family = family_.model_type;
    const auto number_at = [&](const ObjectReader& r, const char* key, double min, double max) -> std::optional<double> {
      if (!r.has(key) || r.raw(key).is_null()) return std::nullopt;
      return r.number(key, min, max);
    };
    s.rope_theta = number_at(root_, family == "gpt_neox" ? "rotary_emb_base" : "rope_theta", 1e-6, 1e15);
    if (hf_key_present(doc_, "rope_parameters") && !root_.raw("rope_parameters").is_object()) {
      root_.fail("rope_parameters", fmt::format("value {} is not allowed; allowed: an object (rope_type, rope_theta, ...)",
                                                describe_value(root_.raw("rope_parameters"))));
    }
    if (!s.rope_theta && root_.has("rope_parameters") && root_.raw("rope_parameters").is_object()) {
      s.rope_theta = number_at(root_.object("rope_parameters"), "rope_theta", 1e-6, 1e15);
    }
    s.norm_epsilon = number_at(root_, family == "gpt_neox" ? "layer_norm_eps" : "rms_norm_eps", 1e-30, 0.5);
    s.max_position_embeddings = root_.integer_or("max_position_embeddings", 0, 0, std::int64_t{1} << 40);
    read_rope_scaling_setting(c);
    if (!c.ffn.is_moe() || family == "phimoe") return;
    // DeepSeek's scoring_func values are budget's RouterScore names; any other value is refused.
    const RouterScore fallback =
        family == "deepseek_v3" || traits_.sigmoid_router ? RouterScore::sigmoid : RouterScore::softmax;
    s.router_score = root_.enum_or("scoring_func", fallback, router_score_names);
    if (family == "mixtral" || family == "granitemoe") {
      s.router_normalize_top_k = true;
    } else if (hf_key_present(doc_, "norm_topk_prob")) {
      if (!root_.raw("norm_topk_prob").is_boolean()) {
        root_.fail("norm_topk_prob", fmt::format("value {} is not allowed; allowed: true or false",
                                                 describe_value(root_.raw("norm_topk_prob"))));
      }
      s.router_normalize_top_k = root_.raw("norm_topk_prob").get<bool>();
    }
    if (family == "deepseek_v2" || family == "deepseek_v3") read_deepseek_router(s);
  }

  /// DeepSeek's routed_scaling_factor (1: none) and expert groups (n_group > 1, topk_group of them
  /// per token), scored as transformers' routers do: DeepSeek-V3 (and Kimi-K2) by the sum of a
  /// group's two highest scores; DeepSeek-V2 by topk_method: "group_limited_greedy" its highest,
  /// "noaux_tc" the sum of two, "greedy" (the default) not at all (the groups are ignored).
  void read_deepseek_router(ModelSettings& s) const {
    const bool v3 = family_.model_type == "deepseek_v3";
    if (root_.has("routed_scaling_factor") && !root_.raw("routed_scaling_factor").is_null()) {
      const double factor = root_.number("routed_scaling_factor", 1e-6, 1e6);
      if (factor != 1.0) s.router_scaling_factor = factor;
    }
    const std::int64_t groups = root_.integer_or("n_group", 1, 1, max_dimension);
    if (groups <= 1) return;
    std::int64_t score_top = 2;
    if (!v3) {
      const std::string method = root_.string_or("topk_method", "greedy");
      if (method == "greedy") return;
      score_top = method == "group_limited_greedy" ? 1 : 2;
    }
    s.router_groups = RouterGroups{groups, root_.integer_or("topk_group", 1, 1, max_dimension), score_top};
  }

  /// settings.rope_scaling: `rope_scaling` (null: unscaled), else the scaling inside newer files'
  /// `rope_parameters` (rope_type other than "default"). An unknown type or parameter is a note
  /// (config_hf_json: settings change no budget), never a silent drop.
  void read_rope_scaling_setting(ArchConfig& c) const {
    const char* key = nullptr;
    if (root_.has("rope_scaling") && !root_.raw("rope_scaling").is_null()) {
      key = "rope_scaling";
    } else if (root_.has("rope_parameters") && root_.raw("rope_parameters").is_object()) {
      key = "rope_parameters";
    }
    if (key == nullptr) return;
    if (!root_.raw(key).is_object()) root_.fail(key, "expected an object or null");
    c.settings.rope_scaling = read_rope_scaling(root_.object(key), &c.notes);
  }

 private:
  bool reads(std::string_view key) const {
    return std::any_of(family_.keys.begin(), family_.keys.end(), [&](const HfKey& k) { return k.key == key; });
  }
  bool set(std::string_view key) const { return hf_key_set(doc_, key); }
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
    return hf_key_present(doc_, key) ? root_.integer(key, min, max) : fallback;
  }
  [[noreturn]] void refuse(std::string_view key, const std::string& why) const {
    root_.fail(key, fmt::format("{} (family \"{}\"; docs/config.md lists what each family reads)", why,
                                family_.model_type));
  }

  void read_attention(ArchConfig& c) const {
    auto& a = c.attention;
    a.num_heads = root_.integer("num_attention_heads", 1, max_dimension);
    if (traits_.mla) {
      read_mla(c);
      return;
    }
    a.num_kv_heads = reads("num_key_value_heads") ? integer_or("num_key_value_heads", a.num_heads, 1, max_dimension)
                                                  : a.num_heads;
    if (reads("head_dim") && hf_key_present(doc_, "head_dim")) {
      a.head_dim = root_.integer("head_dim", 1, max_dimension);
    } else {
      if (c.hidden_size % a.num_heads != 0) {
        refuse("num_attention_heads", fmt::format("no head_dim given and hidden_size {} is not a multiple of "
                                                  "num_attention_heads {}",
                                                  c.hidden_size, a.num_heads));
      }
      a.head_dim = c.hidden_size / a.num_heads;
    }
    const bool attention_bias = reads("attention_bias") && root_.boolean_or("attention_bias", false);
    const bool qkv_bias = traits_.qkv_bias_key && root_.boolean_or("qkv_bias", false);
    a.qkv_bias = traits_.qkv_bias_always || qkv_bias || attention_bias;
    a.output_bias = attention_bias;
    a.qk_norm = traits_.qk_norm;
  }

  void read_mla(ArchConfig& c) const {
    auto& a = c.attention;
    if (root_.boolean_or("attention_bias", false)) {
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
    if (!traits_.moe) {
      f.dense_dim = root_.integer("intermediate_size", 1, max_dimension);
      return;
    }
    // An MoE family: the expert count is required (the key pass refused its absence), never taken
    // as "dense" from a missing key.
    f.num_experts = root_.integer(traits_.expert_count_key, 1, max_dimension);
    f.top_k = root_.integer("num_experts_per_tok", 1, f.num_experts);
    f.expert_dim = root_.integer(traits_.expert_width_key ? "moe_intermediate_size" : "intermediate_size", 1,
                                 max_dimension);
    read_shared_experts(c);
    if (reads("first_k_dense_replace") && set("first_k_dense_replace")) {
      f.first_dense_layers = root_.integer("first_k_dense_replace", 0, c.num_layers);
      f.dense_dim = root_.integer("intermediate_size", 1, max_dimension);
    }
    for (const char* key : {"decoder_sparse_step", "moe_layer_freq"}) {
      // transformers divides by it ((layer_idx + 1) % decoder_sparse_step, layer_idx % moe_layer_freq): 0 fails.
      if (reads(key) && hf_key_present(doc_, key) && root_.integer(key, 1, 1 << 20) > 1) {
        refuse(key, "MoE on only every k-th layer is not modelled; allowed: 1 (every layer)");
      }
    }
    if (reads("mlp_only_layers") && set("mlp_only_layers")) read_mlp_only_layers(c);
    f.router_bias = traits_.router_bias || (traits_.router_bias_from_topk_method && noaux_tc_routing());
  }

  /// DeepseekV2's topk_method: "noaux_tc" adds the router's e_score_correction_bias (E parameters a
  /// layer); "greedy" and "group_limited_greedy" add none. Any other value is refused, as
  /// DeepseekV2Moe refuses it, rather than read as no bias.
  bool noaux_tc_routing() const {
    if (!hf_key_present(doc_, "topk_method")) return false;
    const std::string method = root_.string("topk_method");
    if (method != "greedy" && method != "group_limited_greedy" && method != "noaux_tc") {
      refuse("topk_method", fmt::format("routing method \"{}\" is not one DeepSeek-V2 runs; allowed: greedy, "
                                        "group_limited_greedy, noaux_tc",
                                        printable_text(method, 60)));
    }
    return method == "noaux_tc";
  }

  void read_shared_experts(ArchConfig& c) const {
    auto& f = c.ffn;
    if (traits_.deepseek_shared && set("n_shared_experts")) {  // DeepSeek: shared experts as wide as routed ones
      f.num_shared_experts = root_.integer("n_shared_experts", 1, max_dimension);
      f.shared_expert_dim = f.expert_dim;
    } else if (traits_.qwen_shared && set("shared_expert_intermediate_size")) {
      // Qwen-MoE: one shared expert of that width behind an H → 1 sigmoid gate.
      f.num_shared_experts = 1;
      f.shared_expert_dim = root_.integer("shared_expert_intermediate_size", 1, max_dimension);
      f.shared_expert_gate = true;
    }
  }

  /// Qwen-MoE's dense layers (0-based indices, MLP of intermediate_size): modelled when they are
  /// the leading layers 0 … k−1 (first_dense_layers = k), refused otherwise.
  void read_mlp_only_layers(ArchConfig& c) const {
    const auto& list = root_.raw("mlp_only_layers");
    std::vector<std::int64_t> indices;
    if (list.is_array()) {
      for (const auto& v : list) {
        if (!v.is_number_integer()) refuse("mlp_only_layers", "expected an array of layer indices");
        indices.push_back(v.get<std::int64_t>());
      }
    }
    std::sort(indices.begin(), indices.end());
    for (std::size_t i = 0; i < indices.size(); ++i) {
      if (indices[i] != static_cast<std::int64_t>(i)) {
        refuse("mlp_only_layers", "dense layers other than the leading ones (0, 1, …, k−1) are not modelled");
      }
    }
    c.ffn.first_dense_layers = std::min<std::int64_t>(static_cast<std::int64_t>(indices.size()), c.num_layers);
    c.ffn.dense_dim = root_.integer("intermediate_size", 1, max_dimension);
  }

  void check_activation() const {
    if (!root_.has("hidden_act")) return;
    const char* key = "hidden_act";
    const std::string act = root_.string(key);
    // The activation does not change a count inside a family; these are the ones the families use.
    static const std::vector<std::string> known{"silu", "swiglu", "gelu", "gelu_new", "gelu_pytorch_tanh",
                                                "gelu_fast", "relu"};
    if (std::find(known.begin(), known.end(), act) == known.end() || (traits_.gated && act == "relu")) {
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
    const bool use_sliding = traits_.qwen_sliding && root_.boolean_or("use_sliding_window", false);
    if (use_sliding && traits_.refuse_use_sliding_window) {
      refuse("use_sliding_window", "use_sliding_window: true is not read for this family (the layers it applies "
                                   "to differ between transformers versions); give layer_types instead");
    }
    std::int64_t window = 0;
    if (use_sliding) {
      if (!hf_key_present(doc_, "sliding_window")) {
        root_.fail("sliding_window", "required key is missing: use_sliding_window is true and the window decides "
                                     "the KV cache of the sliding layers");
      }
      window = root_.integer("sliding_window", 1, max_dimension);
    } else if (set("sliding_window") && (!traits_.qwen_sliding || root_.has("layer_types"))) {
      window = root_.integer("sliding_window", 1, max_dimension);
    }
    // Whether a window bounds anything depends on max_position_embeddings: required with a window
    // (its transformers default differs between families).
    if (window > 0 && !hf_key_present(doc_, "max_position_embeddings")) {
      root_.fail("max_position_embeddings", fmt::format("required key is missing: with sliding_window {} it decides "
                                                        "whether the window bounds any layer's KV cache",
                                                        window));
    }
    const std::int64_t max_positions =
        window > 0 ? root_.integer("max_position_embeddings", 1, std::int64_t{1} << 40) : 0;
    const bool window_bounds = window > 0 && (max_positions == 0 || window < max_positions);
    std::vector<LayerAttention> types;
    if (hf_key_present(doc_, "layer_types")) {
      types = read_layer_type_list(c.num_layers, window, window_bounds);
    } else if (traits_.sliding_all_layers && window_bounds) {
      types.assign(static_cast<std::size_t>(c.num_layers), LayerAttention::sliding);
    } else if (use_sliding && window_bounds) {
      // transformers (Qwen2/3): layers i >= max_window_layers (0-based) use the window.
      if (!hf_key_present(doc_, "max_window_layers")) {
        root_.fail("max_window_layers", "required key is missing: use_sliding_window is true and it decides which "
                                        "layers slide");
      }
      const std::int64_t full_layers = root_.integer("max_window_layers", 0, 1'000'000);
      for (std::int64_t i = 0; i < c.num_layers; ++i) {
        types.push_back(i >= full_layers ? LayerAttention::sliding : LayerAttention::full);
      }
    }
    if (std::find(types.begin(), types.end(), LayerAttention::sliding) != types.end()) {
      a.layer_types = std::move(types);
      a.sliding_window = window;
    }
  }

  std::vector<LayerAttention> read_layer_type_list(std::int64_t num_layers, std::int64_t window,
                                                   bool window_bounds) const {
    const auto& list = root_.raw("layer_types");
    if (!list.is_array() || static_cast<std::int64_t>(list.size()) != num_layers) {
      refuse("layer_types", fmt::format("expected an array of {} layer kinds (num_hidden_layers)", num_layers));
    }
    std::vector<LayerAttention> types;
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
    return types;
  }

  const nlohmann::json& doc_;
  ObjectReader root_;
  const HfFamily& family_;
  const HfTraits& traits_;
};

const HfFamily& resolve_family(const nlohmann::json& object, const ObjectReader& root, const std::string& wrapper) {
  if (root.has("model_type") && !root.raw("model_type").is_null()) {
    const std::string model_type = root.string("model_type");
    if (const HfFamily* f = find_hf_family_by_model_type(model_type)) {
      check_architecture_agrees(object, root, *f);
      return *f;
    }
    root.fail("model_type", fmt::format("{}family \"{}\" is not supported; supported families: {} "
                                        "(docs/config.md, \"Hugging Face configs\")",
                                        wrapper, model_type, supported_hf_families()));
  }
  if (object.contains("architectures") && object.at("architectures").is_array() &&
      !object.at("architectures").empty() && object.at("architectures").at(0).is_string()) {
    const std::string architecture = object.at("architectures").at(0).get<std::string>();
    if (const HfFamily* f = find_hf_family_by_architecture(architecture)) return *f;
    root.fail("architectures", fmt::format("{}architecture \"{}\" is not supported; supported families: {}", wrapper,
                                           architecture, supported_hf_families()));
  }
  root.fail("model_type", fmt::format("required key is missing (the family decides how the config is read); "
                                      "supported families: {}",
                                      supported_hf_families()));
}

/// One model object (the document, or its text_config) read through its family.
ArchConfig read_model_object(const ObjectReader& where, const std::string& wrapper,
                             const std::function<void(nlohmann::json&)>& complete) {
  const HfFamily& family = resolve_family(where.json(), where, wrapper);
  std::vector<std::string> notes;
  nlohmann::json object = where.json();
  complete(object);
  object = run_hf_key_pass(object, where, family, notes);
  ArchConfig c = LayerPass(object, where.source(), where.pointer(), family).read();
  notes.insert(notes.end(), c.notes.begin(), c.notes.end());  // the layer pass's notes (rope scaling)
  c.notes = std::move(notes);
  return c;
}

}  // namespace

ArchConfig read_hf_config(const nlohmann::json& document, const std::string& source) {
  const ObjectReader root(document, source, "");
  ArchConfig c;
  if (document.contains("text_config") && !document.at("text_config").is_null()) {
    // A multimodal wrapper (Llama-4, Mistral-3, Qwen-VL ...): the text model is counted, the
    // vision tower and projector are not. tie_word_embeddings of the wrapper holds for the text
    // model when the text config does not give it.
    const ObjectReader text = root.object("text_config");
    const std::string wrapper_type = root.string_or("model_type", "?");
    c = read_model_object(text, fmt::format("multimodal model \"{}\": its text model ", wrapper_type),
                          [&](nlohmann::json& object) {
                            if (!object.contains("tie_word_embeddings") && document.contains("tie_word_embeddings")) {
                              object["tie_word_embeddings"] = document.at("tie_word_embeddings");
                            }
                          });
    c.name = root.string_or("_name_or_path", wrapper_type + " (text model)");
  } else {
    c = read_model_object(root, "", [](nlohmann::json&) {});
    c.name = root.string_or("_name_or_path", root.string_or("model_type", "hf-config"));
  }
  // quantization_config says how the released weights are stored (FP8, MXFP4, NVFP4), not the
  // architecture trained: ignored, and said so.
  for (const nlohmann::json* object : {&document, document.contains("text_config") ? &document.at("text_config") : nullptr}) {
    if (object == nullptr || !object->is_object() || !hf_key_present(*object, "quantization_config")) continue;
    const auto& q = object->at("quantization_config");
    const std::string method = q.is_object() && q.contains("quant_method") && q.at("quant_method").is_string()
                                   ? " (" + printable_text(q.at("quant_method").get<std::string>(), 40) + ")"
                                   : std::string();
    c.notes.push_back("quantization_config" + method + ": ignored; it says how the released weights are stored, "
                      "not the architecture trained (budgets count parameters and FLOPs, not their bytes)");
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
    std::string taken;
    for (const auto& note : c.notes) taken += (taken.empty() ? "; taken for keys the file does not give: " : "; ") + note;
    throw Error(e.message() + " (as read from the Hugging Face config; docs/config.md lists the key mapping" + taken +
                    ")",
                source, e.path());
  }
  return c;
}

}  // namespace detail

ArchConfig parse_hf_config(std::string_view json_text, const std::string& source) {
  nlohmann::json document;
  try {
    document = detail::parse_json_text(json_text, source);
  } catch (const Error&) {
    if (auto hf = detail::read_hf_config_with_python_nonfinite(json_text, source)) return *std::move(hf);
    throw;
  }
  return detail::read_hf_config(document, source);
}

}  // namespace budget
