// ArchConfig → Hugging Face config.json. With a template (the baseline's config.json, or a
// multimodal wrapper whose text_config is the language model) every key is kept and only the shape
// keys change; without one, a fresh config of the first family, in this order, whose file reads
// back as the config: Llama, Qwen2, Qwen3 (dense); Mixtral, Qwen2-MoE, Qwen3-MoE, OLMoE,
// DeepSeek-MoE (experts); DeepSeek-V3, DeepSeek-V2 (multi-head latent attention). The key mapping
// is the inverse of config_hf.cpp's (docs/config.md), and every export is read back and compared
// (check_hf_reads_back, export_hf_read_back.cpp), so parse_hf_config(export) gives back the same budgets.

#include <cmath>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "budget/export.hpp"
#include "config/config_hf_json.hpp"
#include "config/config_json.hpp"
#include "config/rope_scaling_json.hpp"
#include "export/export_targets.hpp"
#include "base/checked_math.hpp"
#include "base/json_reader.hpp"

namespace budget::detail {
namespace {

using Json = nlohmann::ordered_json;

/// How a family spells the MoE fields.
struct HfStyle {
  std::string expert_count_key;  ///< num_local_experts (Mixtral), num_experts (Qwen, OLMoE), n_routed_experts
  std::string expert_width_key;  ///< moe_intermediate_size, or intermediate_size (Mixtral, OLMoE)
  /// llama4: one shared expert of the routed width, implied by the family (Llama4TextMoe);
  /// nemotron: one shared MLP of moe_shared_expert_intermediate_size (NemotronHMoE).
  enum class Shared { none, deepseek, qwen, llama4, nemotron } shared = Shared::none;
  /// How leading dense layers are spelled: first_k_dense_replace (DeepSeek), mlp_only_layers
  /// [0, …, k−1] (Qwen-MoE), or not at all.
  /// template_layers: the template's own per-layer keys (Llama-4's moe_layers or
  /// interleave_moe_layer_step, Nemotron-H's pattern) say which layers are dense, of width
  /// dense_width_key (the read-back check proves the layers are the config's).
  enum class Dense { none, first_k_dense_replace, mlp_only_layers, template_layers } leading_dense = Dense::none;
  std::string dense_width_key = "intermediate_size";
  bool mla = false;               ///< q_lora_rank, kv_lora_rank, qk_nope/qk_rope/v_head_dim (DeepSeek-V2/V3)
  bool scoring_func = false;      ///< the router's score function key (DeepSeek)
  bool norm_topk_prob = false;    ///< the top-k renormalisation key (Qwen-MoE, OLMoE, DeepSeek)
  bool attention_bias = false;    ///< attention_bias: q/k/v and output biases (Llama, Qwen3, OLMoE, DeepSeek)
  bool mlp_bias = false;          ///< mlp_bias (Llama)
};

bool present(const Json& doc, const char* key) { return doc.contains(key) && !doc.at(key).is_null(); }

/// The template's model_type for messages: "unknown" when absent, null or not a string (the
/// reader accepts a null model_type when "architectures" names the family).
std::string model_type_of(const Json& doc) {
  const auto it = doc.find("model_type");
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string("unknown");
}

/// The families a fresh export can use, tried in this order; the first whose config.json reads
/// back as the config wins (check_hf_reads_back, export_hf_read_back.cpp), so each family's own implied features (biases,
/// norms, router, ...) decide where the reader and the config disagree.
enum class FreshFamily {
  llama, qwen2, qwen3, mixtral, qwen2_moe, qwen3_moe, olmoe, deepseek, deepseek_v3, deepseek_v2,
};

struct FreshEntry {
  FreshFamily family;
  const char* model_type;
  const char* architecture;
};
constexpr FreshEntry fresh_families[] = {
    {FreshFamily::llama, "llama", "LlamaForCausalLM"},
    {FreshFamily::qwen2, "qwen2", "Qwen2ForCausalLM"},
    {FreshFamily::qwen3, "qwen3", "Qwen3ForCausalLM"},
    {FreshFamily::mixtral, "mixtral", "MixtralForCausalLM"},
    {FreshFamily::qwen2_moe, "qwen2_moe", "Qwen2MoeForCausalLM"},
    {FreshFamily::qwen3_moe, "qwen3_moe", "Qwen3MoeForCausalLM"},
    {FreshFamily::olmoe, "olmoe", "OlmoeForCausalLM"},
    {FreshFamily::deepseek, "deepseek", "DeepseekForCausalLM"},
    {FreshFamily::deepseek_v3, "deepseek_v3", "DeepseekV3ForCausalLM"},
    {FreshFamily::deepseek_v2, "deepseek_v2", "DeepseekV2ForCausalLM"},
};

/// The fresh families that can hold a config of this kind (dense or MoE, GQA or MLA).
std::vector<FreshEntry> fresh_candidates(const ArchConfig& c) {
  std::vector<FreshEntry> out;
  for (const FreshEntry& e : fresh_families) {
    const bool mla_family = e.family == FreshFamily::deepseek_v2 || e.family == FreshFamily::deepseek_v3;
    const bool moe_family = e.family != FreshFamily::llama && e.family != FreshFamily::qwen2 &&
                            e.family != FreshFamily::qwen3;
    if (mla_family != c.attention.mla.has_value()) continue;
    if (!mla_family && moe_family != c.ffn.is_moe()) continue;
    out.push_back(e);
  }
  return out;
}

/// Starts a fresh config.json of family `e` in `doc` and returns how it spells the fields.
HfStyle start_fresh(const FreshEntry& e, const ArchConfig& c, Json& doc) {
  HfStyle s;
  using Shared = HfStyle::Shared;
  using Dense = HfStyle::Dense;
  doc["architectures"] = Json::array({e.architecture});
  doc["model_type"] = e.model_type;
  if (!c.name.empty()) doc["_name_or_path"] = c.name;
  doc["hidden_act"] = "silu";
  switch (e.family) {
    case FreshFamily::llama:
      s.attention_bias = true;
      s.mlp_bias = true;
      break;
    case FreshFamily::qwen2:
    case FreshFamily::qwen3:
      doc["use_sliding_window"] = false;
      s.attention_bias = e.family == FreshFamily::qwen3;
      break;
    case FreshFamily::mixtral:
      s.expert_count_key = "num_local_experts";
      s.expert_width_key = "intermediate_size";
      break;
    case FreshFamily::qwen2_moe:
    case FreshFamily::qwen3_moe:
      doc["use_sliding_window"] = false;
      doc["decoder_sparse_step"] = 1;
      doc["mlp_only_layers"] = Json::array();
      s.expert_count_key = "num_experts";
      s.expert_width_key = "moe_intermediate_size";
      s.shared = e.family == FreshFamily::qwen2_moe ? Shared::qwen : Shared::none;
      s.leading_dense = Dense::mlp_only_layers;
      s.norm_topk_prob = true;
      s.attention_bias = e.family == FreshFamily::qwen3_moe;
      break;
    case FreshFamily::olmoe:
      s.expert_count_key = "num_experts";
      s.expert_width_key = "intermediate_size";
      s.norm_topk_prob = true;
      s.attention_bias = true;
      break;
    case FreshFamily::deepseek:
    case FreshFamily::deepseek_v2:
    case FreshFamily::deepseek_v3:
      doc["moe_layer_freq"] = 1;
      s.expert_count_key = "n_routed_experts";
      s.expert_width_key = "moe_intermediate_size";
      s.shared = Shared::deepseek;
      s.leading_dense = Dense::first_k_dense_replace;
      s.mla = e.family != FreshFamily::deepseek;
      s.scoring_func = true;
      s.norm_topk_prob = true;
      s.attention_bias = true;
      if (e.family == FreshFamily::deepseek_v2) doc["topk_method"] = c.ffn.router_bias ? "noaux_tc" : "greedy";
      if (e.family == FreshFamily::deepseek_v3) doc["num_nextn_predict_layers"] = c.mtp_layers;
      break;
  }
  return s;
}

/// The style of a template, or budget::Error if it cannot hold `c`.
HfStyle template_style(const ArchConfig& c, const Json& doc, const std::string& source) {
  HfStyle s;
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (present(doc, key) && !(doc.at(key).is_number() && doc.at(key).get<double>() == 0.0)) {
      s.expert_count_key = key;
      break;
    }
  }
  const std::string family = model_type_of(doc);
  s.mla = present(doc, "kv_lora_rank");
  if (s.mla != c.attention.mla.has_value()) {
    throw Error(fmt::format("the template (model_type \"{}\") {} multi-head latent attention and the config {}; "
                            "export without a template for a fresh config.json",
                            family, s.mla ? "has" : "has no", s.mla ? "does not" : "does"),
                source);
  }
  s.attention_bias = doc.contains("attention_bias");
  s.mlp_bias = doc.contains("mlp_bias");
  if (s.expert_count_key.empty()) {
    if (c.ffn.is_moe()) {
      throw Error(fmt::format("the template is a dense model (model_type \"{}\") and the config has experts; "
                              "export without a template for a fresh MoE config.json", family), source);
    }
    return s;
  }
  if (!c.ffn.is_moe()) {
    throw Error(fmt::format("the template is an MoE model (model_type \"{}\") and the config is dense; export "
                            "without a template for a fresh dense config.json", family), source);
  }
  s.expert_width_key = present(doc, "moe_intermediate_size") ? "moe_intermediate_size" : "intermediate_size";
  if (family == "nemotron_h") {
    s.shared = HfStyle::Shared::nemotron;
    s.leading_dense = HfStyle::Dense::template_layers;
  } else if (present(doc, "n_shared_experts") || s.expert_count_key == "n_routed_experts") {
    s.shared = HfStyle::Shared::deepseek;
    if (s.expert_width_key == "moe_intermediate_size") s.leading_dense = HfStyle::Dense::first_k_dense_replace;
    s.scoring_func = true;
  } else if (present(doc, "shared_expert_intermediate_size")) {
    s.shared = HfStyle::Shared::qwen;
  } else if (family == "llama4_text" || family == "llama4") {
    s.shared = HfStyle::Shared::llama4;
    s.leading_dense = HfStyle::Dense::template_layers;
    s.dense_width_key = "intermediate_size_mlp";
  }
  if (s.expert_count_key == "num_experts" && doc.contains("mlp_only_layers")) {
    s.leading_dense = HfStyle::Dense::mlp_only_layers;
  }
  s.norm_topk_prob = s.expert_count_key != "num_local_experts";
  return s;
}

void write_moe(const ArchConfig& c, const HfStyle& s, Json& doc, const std::string& source) {
  const FfnConfig& f = c.ffn;
  const std::string family = model_type_of(doc);
  doc[s.expert_count_key] = f.num_experts;
  doc["num_experts_per_tok"] = f.top_k;
  doc[s.expert_width_key] = f.expert_dim;
  switch (s.shared) {
    case HfStyle::Shared::deepseek: {
      const std::int64_t n = shared_experts_in_routed_widths(f);
      if (n < 0) {
        throw Error(fmt::format("/ffn: {} shared experts of width {} are not a whole number of routed-width ({}) "
                                "experts, which is how {} spells shared experts (n_shared_experts); match with "
                                "shared_expert_dim and expert_dim fixed to one width (constraints "
                                "{{\"expert_dim\": {{\"fixed\": W}}, \"shared_expert_dim\": {{\"fixed\": W}}}}, "
                                "docs/matching.md), or export to megatron",
                                f.num_shared_experts, f.shared_expert_dim, f.expert_dim, family),
                    source);
      }
      if (n > 0) {
        doc["n_shared_experts"] = n;
      } else if (doc.contains("n_shared_experts")) {
        doc["n_shared_experts"] = nullptr;
      }
      break;
    }
    case HfStyle::Shared::qwen:
      doc["shared_expert_intermediate_size"] = f.num_shared_experts * f.shared_expert_dim;
      break;
    case HfStyle::Shared::llama4:
      // Llama4TextMoe.shared_expert = Llama4TextMLP(config): one MLP of intermediate_size, the routed
      // experts' width; a dense layer is Llama4TextMLP(config, intermediate_size=config.
      // intermediate_size_mlp) (modeling_llama4.py at transformers 000c33fd): nothing to write here.
      if (checked_mul(f.num_shared_experts, f.shared_expert_dim, "shared expert width") != f.expert_dim) {
        throw Error(fmt::format("/ffn/shared_expert_dim: {} shared experts of width {} are not Llama-4's one shared "
                                "expert of the routed width {}; match with shared_expert_dim tied to expert_dim "
                                "(constraints key \"tie_shared_expert_dim\", docs/matching.md)",
                                f.num_shared_experts, f.shared_expert_dim, f.expert_dim),
                    source);
      }
      break;
    case HfStyle::Shared::nemotron:
      doc["moe_shared_expert_intermediate_size"] = checked_mul(f.num_shared_experts, f.shared_expert_dim, "shared expert width");
      break;
    case HfStyle::Shared::none:
      if (f.num_shared_experts > 0) {
        throw Error(fmt::format("/ffn/num_shared_experts: the config has {} shared experts and the template's family "
                                "(model_type \"{}\") has none; export without a template (a Qwen2-MoE config.json)",
                                f.num_shared_experts, family),
                    source);
      }
      break;
  }
  if (s.leading_dense == HfStyle::Dense::template_layers) {
    if (f.first_dense_layers > 0 || !c.layer_ffns.empty()) doc[s.dense_width_key] = f.dense_dim;
  } else if (f.first_dense_layers > 0) {
    switch (s.leading_dense) {
      case HfStyle::Dense::none:
        throw Error(fmt::format("/ffn/first_dense_layers: the config has {} leading dense layers and the template's "
                                "family (model_type \"{}\") cannot express them; export without a template (a "
                                "DeepSeek-MoE or Qwen-MoE config.json)", f.first_dense_layers, family),
                    source);
      case HfStyle::Dense::template_layers: break;  // written above
      case HfStyle::Dense::first_k_dense_replace: doc["first_k_dense_replace"] = f.first_dense_layers; break;
      case HfStyle::Dense::mlp_only_layers: {
        Json layers = Json::array();
        for (std::int64_t i = 0; i < f.first_dense_layers; ++i) layers.push_back(i);
        doc["mlp_only_layers"] = layers;
        break;
      }
    }
    doc["intermediate_size"] = f.dense_dim;
  } else if (present(doc, "first_k_dense_replace")) {
    doc["first_k_dense_replace"] = 0;
  } else if (s.leading_dense == HfStyle::Dense::mlp_only_layers && present(doc, "mlp_only_layers")) {
    doc["mlp_only_layers"] = Json::array();
  }
}

/// The MLA keys (DeepseekV2Config / DeepseekV3Config arguments). num_key_value_heads sizes no
/// weight there but transformers divides the heads by it (num_key_value_groups): it follows the
/// heads; head_dim, where the file has it, is the rotary dim (as DeepseekV3Config sets it).
void write_mla(const MlaConfig& m, std::int64_t num_heads, bool fresh, Json& doc) {
  doc["q_lora_rank"] = m.q_lora_rank > 0 ? Json(m.q_lora_rank) : Json(nullptr);
  doc["kv_lora_rank"] = m.kv_lora_rank;
  doc["qk_nope_head_dim"] = m.qk_nope_head_dim;
  doc["qk_rope_head_dim"] = m.qk_rope_head_dim;
  doc["v_head_dim"] = m.v_head_dim;
  if (fresh || doc.contains("num_key_value_heads")) doc["num_key_value_heads"] = num_heads;
  if (doc.contains("head_dim")) doc["head_dim"] = m.qk_rope_head_dim;
}

/// settings.rope_scaling as transformers reads it (modeling_rope_utils.py): a template's own
/// object is kept as written when it reads back as the same scaling; otherwise `rope_scaling` is
/// written with the file's type key ("type" in the DeepSeek and Kimi releases, else "rope_type"),
/// or, in a file that keeps its rope settings in `rope_parameters` (and no `rope_scaling`), that
/// object is rewritten with its rope_theta kept.
void write_rope_scaling(const RopeScaling& scaling, Json& doc) {
  const bool in_parameters = !doc.contains("rope_scaling") && doc.contains("rope_parameters") &&
                             doc.at("rope_parameters").is_object();
  const char* key = in_parameters ? "rope_parameters" : "rope_scaling";
  if (doc.contains(key) && doc.at(key).is_object()) {
    std::vector<std::string> ignored_notes;
    const nlohmann::json existing = doc.at(key);
    const auto read = read_rope_scaling(ObjectReader(existing, "<template>", std::string("/") + key), &ignored_notes);
    if (read && *read == scaling) return;
  }
  const bool old_spelling = doc.contains(key) && doc.at(key).is_object() && doc.at(key).contains("type") &&
                            !doc.at(key).contains("rope_type");
  Json object = rope_scaling_json(scaling, old_spelling ? "type" : "rope_type");
  if (in_parameters && doc.at(key).contains("rope_theta")) object["rope_theta"] = doc.at(key).at("rope_theta");
  doc[key] = object;
}

/// ArchConfig::settings in the family's keys, where the config gives them (a template keeps its own
/// otherwise): rope_theta (inside rope_parameters when the file keeps it there), rms_norm_eps
/// (layer_norm_eps in a file that spells it so), max_position_embeddings, scoring_func and
/// norm_topk_prob where the family has them.
void write_settings(const ModelSettings& m, const HfStyle& s, bool moe, Json& doc) {
  // A template's value that is already the number is kept as written (10000 stays 10000).
  const auto set_number = [](Json& object, const char* key, double value) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_number() && it->get<double>() == value) return;
    object[key] = value;
  };
  if (m.rope_theta) {
    if (doc.contains("rope_parameters") && doc.at("rope_parameters").is_object() && !doc.contains("rope_theta")) {
      set_number(doc["rope_parameters"], "rope_theta", *m.rope_theta);
    } else {
      set_number(doc, "rope_theta", *m.rope_theta);
    }
  }
  if (m.norm_epsilon) {
    set_number(doc, doc.contains("layer_norm_eps") && !doc.contains("rms_norm_eps") ? "layer_norm_eps" : "rms_norm_eps",
               *m.norm_epsilon);
  }
  if (m.max_position_embeddings > 0) doc["max_position_embeddings"] = m.max_position_embeddings;
  if (m.rope_scaling) write_rope_scaling(*m.rope_scaling, doc);
  if (!moe) return;
  if (m.router_score && s.scoring_func) doc["scoring_func"] = std::string(to_string(*m.router_score));
  if (m.router_normalize_top_k && s.norm_topk_prob) doc["norm_topk_prob"] = *m.router_normalize_top_k;
}

/// Per-layer lists (e.g. "layer_types") of a template whose depth changes: resized when every entry
/// is the same, refused otherwise (which layer would get which entry is not ours to guess).
void resize_per_layer_lists(Json& doc, std::int64_t old_layers, std::int64_t new_layers, const std::string& source) {
  if (old_layers == new_layers) return;
  for (auto& [key, value] : doc.items()) {
    if (!value.is_array() || static_cast<std::int64_t>(value.size()) != old_layers || value.empty()) continue;
    const Json first = value.front();
    for (const auto& entry : value) {
      if (entry != first) {
        throw Error(fmt::format("/{}: a per-layer list of {} different entries cannot be mapped onto {} layers; edit "
                                "it by hand or export without a template", key, old_layers, new_layers),
                    source);
      }
    }
    value = Json::array();
    for (std::int64_t i = 0; i < new_layers; ++i) value.push_back(first);
  }
}

/// Writes the shape keys of `c` into `doc` (a template's language model or a fresh family's start).
void write_shape(const ArchConfig& c, Json& doc, const HfStyle& style, bool fresh, std::int64_t old_layers,
                 const std::string& source, std::vector<std::string>& not_expressed) {
  doc["hidden_size"] = c.hidden_size;
  doc["num_hidden_layers"] = c.num_layers;
  const AttentionConfig& a = c.attention;
  doc["num_attention_heads"] = a.num_heads;
  if (a.mla) {
    write_mla(*a.mla, a.num_heads, fresh, doc);
  } else {
    if (fresh || doc.contains("num_key_value_heads") || a.num_kv_heads != a.num_heads) {
      doc["num_key_value_heads"] = a.num_kv_heads;
    }
    // Without head_dim, transformers (and config_hf.cpp) use hidden_size / num_attention_heads.
    const bool implied = c.hidden_size % a.num_heads == 0 && c.hidden_size / a.num_heads == a.head_dim;
    if (fresh || doc.contains("head_dim") || !implied) doc["head_dim"] = a.head_dim;
    // MiniMax-M2 spells partial RoPE as rotary_dim, the rotated width of a head (the reader's factor
    // is rotary_dim / head_dim): it follows the head dim; the read-back check refuses a factor whose
    // product with the head dim is not a whole width.
    if (doc.contains("rotary_dim") && c.settings.partial_rotary_factor) {
      doc["rotary_dim"] = std::llround(*c.settings.partial_rotary_factor * static_cast<double>(a.head_dim));
    }
  }
  if (style.attention_bias && (fresh || a.output_bias || doc.contains("attention_bias"))) {
    doc["attention_bias"] = a.output_bias;
  }
  if (style.mlp_bias && (fresh || c.ffn.bias || doc.contains("mlp_bias"))) doc["mlp_bias"] = c.ffn.bias;
  if (c.ffn.is_moe()) {
    write_moe(c, style, doc, source);
  } else {
    doc["intermediate_size"] = c.ffn.dense_dim;
  }
  if (c.vocab_size > 0) {
    doc["vocab_size"] = c.vocab_size;
  } else {
    doc.erase("vocab_size");
    not_expressed.push_back("vocab_size is 0 (embeddings not modelled): set vocab_size to your tokenizer's");
  }
  doc["tie_word_embeddings"] = c.tie_embeddings;
  if (c.mtp_layers > 0 || doc.contains("num_nextn_predict_layers")) doc["num_nextn_predict_layers"] = c.mtp_layers;
  write_settings(c.settings, style, c.ffn.is_moe(), doc);
  write_hf_router_settings(c, style.scoring_func, doc);  // DeepSeek's families (export_hf_router.cpp)
  if (!fresh) resize_per_layer_lists(doc, old_layers, c.num_layers, source);
}

/// Adds the loop key to `root` (the file's top level), checks that the result reads back as `c`
/// and returns its text.
std::string finish_document(const ArchConfig& c, Json root, std::vector<std::string>& not_expressed) {
  root.erase(std::string(hf_loop_key));
  if (c.loop) {
    root[std::string(hf_loop_key)] =
        Json{{"first", c.loop->first}, {"last", c.loop->last}, {"repeats", c.loop->repeats}};
    not_expressed.push_back(fmt::format(
        "the loop ({}) is recorded in the added key \"{}\"; transformers' modeling code ignores it, so a model "
        "implementation must run those layers that many times", describe_loop(c), hf_loop_key));
  }
  std::string text = root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  check_hf_reads_back(c, text);
  return text;
}

}  // namespace

std::string export_hf(const ArchConfig& c, const ExportOptions& options, std::vector<std::string>& not_expressed) {
  const std::string source = options.hf_template_source.empty() ? "<hf template>" : options.hf_template_source;
  if (options.hf_template.empty()) {
    if (!c.ffn.gated) {
      // A template's family may have 2-matrix MLPs (Nemotron-H's relu²): the read-back check decides.
      throw Error("/ffn/gated: false (a 2-matrix MLP) cannot be exported to the Hugging Face families a fresh "
                  "config.json is written in, which all use gated MLPs; give the family's config.json as the "
                  "template, export to megatron, or gated: true",
                  c.name.empty() ? "<config>" : c.name);
    }
    std::string reasons;
    for (const FreshEntry& e : fresh_candidates(c)) {
      try {
        Json doc = Json::object();
        const HfStyle style = start_fresh(e, c, doc);
        std::vector<std::string> notes;
        write_shape(c, doc, style, true, c.num_layers, source, notes);
        std::string text = finish_document(c, std::move(doc), notes);
        not_expressed.insert(not_expressed.end(), notes.begin(), notes.end());
        return text;
      } catch (const Error& err) {
        reasons += fmt::format("{}{}: {}{}", reasons.empty() ? "" : "; ", e.model_type,
                               err.path().empty() ? "" : err.path() + ": ", err.message());
      }
    }
    throw Error("no Hugging Face family written here can express the config (" + reasons + ")",
                c.name.empty() ? "<config>" : c.name);
  }
  // Read strictly (duplicate keys, numbers beyond double, size: json_reader.hpp's errors), in key
  // order, which the export keeps.
  Json root = read_hf_template(options.hf_template, source);
  // A multimodal wrapper (Mistral-3, Llama-4, Qwen-VL ...) keeps its language model in text_config,
  // which is what the reader counts; everything else of the wrapper is kept as it is.
  const bool wrapper = root.is_object() && root.contains("text_config") && root.at("text_config").is_object();
  Json& doc = wrapper ? root["text_config"] : root;
  if (!doc.is_object() || !doc.contains("num_hidden_layers") || doc.contains("num_layers")) {
    throw Error(wrapper ? "the template's text_config is not a Hugging Face language-model config (an object with "
                          "num_hidden_layers)"
                        : "the template is not a Hugging Face config.json (an object with num_hidden_layers, or a "
                          "multimodal wrapper with such a text_config)",
                source);
  }
  const std::int64_t old_layers =
      doc.at("num_hidden_layers").is_number_integer() ? doc.at("num_hidden_layers").get<std::int64_t>() : c.num_layers;
  const HfStyle style = template_style(c, doc, source);
  write_shape(c, doc, style, false, old_layers, source, not_expressed);
  if (wrapper && root.contains("tie_word_embeddings")) root["tie_word_embeddings"] = c.tie_embeddings;
  return finish_document(c, std::move(root), not_expressed);
}

}  // namespace budget::detail
