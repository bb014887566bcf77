// ArchConfig → Hugging Face config.json. With a template (the baseline's config.json) every key is
// kept and only the shape keys change; without one, a fresh config of the family that holds the
// config: Llama (dense), Mixtral (routed experts only), Qwen2-MoE (shared experts), DeepSeek-MoE
// (leading dense layers). The key mapping is the inverse of config_hf.cpp's (docs/config.md), so
// parse_hf_config(export) gives back the same budgets (tests/unit/test_export.cpp).

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "budget/export.hpp"
#include "config/config_hf_json.hpp"
#include "config/config_json.hpp"
#include "export/export_targets.hpp"
#include "base/json_reader.hpp"

namespace budget::detail {
namespace {

using Json = nlohmann::ordered_json;

/// How a family spells the MoE fields.
struct HfStyle {
  std::string expert_count_key;  ///< num_local_experts (Mixtral), num_experts (Qwen, OLMoE), n_routed_experts
  std::string expert_width_key;  ///< moe_intermediate_size, or intermediate_size (Mixtral, OLMoE)
  enum class Shared { none, deepseek, qwen } shared = Shared::none;
  bool leading_dense_layers = false;  ///< first_k_dense_replace (DeepSeek)
};

bool present(const Json& doc, const char* key) { return doc.contains(key) && !doc.at(key).is_null(); }

/// The template's model_type for messages: "unknown" when absent, null or not a string (the
/// reader accepts a null model_type when "architectures" names the family).
std::string model_type_of(const Json& doc) {
  const auto it = doc.find("model_type");
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string("unknown");
}

/// The families a fresh export can use, tried in this order; the first whose config.json reads
/// back as the config wins (check_reads_back), so each family's own implied features (biases,
/// norms, ...) decide where the reader and the config disagree.
enum class FreshFamily { llama, mixtral, qwen2_moe, deepseek };

const char* model_type_of(FreshFamily f) {
  switch (f) {
    case FreshFamily::llama: return "llama";
    case FreshFamily::mixtral: return "mixtral";
    case FreshFamily::qwen2_moe: return "qwen2_moe";
    case FreshFamily::deepseek: return "deepseek";
  }
  return "unknown";
}

/// Starts a fresh config.json of family `f` in `doc` and returns how it spells the MoE fields.
HfStyle start_fresh(FreshFamily f, const ArchConfig& c, Json& doc) {
  HfStyle s;
  switch (f) {
    case FreshFamily::llama:
      doc["architectures"] = Json::array({"LlamaForCausalLM"});
      break;
    case FreshFamily::mixtral:
      doc["architectures"] = Json::array({"MixtralForCausalLM"});
      s = {"num_local_experts", "intermediate_size", HfStyle::Shared::none, false};
      break;
    case FreshFamily::qwen2_moe:
      doc["architectures"] = Json::array({"Qwen2MoeForCausalLM"});
      doc["decoder_sparse_step"] = 1;
      doc["mlp_only_layers"] = Json::array();
      s = {"num_experts", "moe_intermediate_size", HfStyle::Shared::qwen, false};
      break;
    case FreshFamily::deepseek:
      doc["architectures"] = Json::array({"DeepseekForCausalLM"});
      doc["moe_layer_freq"] = 1;
      // DeepSeek-MoE's remote code has its own defaults (no transformers class): every key that
      // decides a count is written (write_moe overwrites the expert keys), as the reader requires.
      doc["n_shared_experts"] = nullptr;
      doc["first_k_dense_replace"] = 0;
      doc["attention_bias"] = false;
      s = {"n_routed_experts", "moe_intermediate_size", HfStyle::Shared::deepseek, true};
      break;
  }
  doc["model_type"] = model_type_of(f);
  if (!c.name.empty()) doc["_name_or_path"] = c.name;
  doc["hidden_act"] = "silu";
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
  if (present(doc, "n_shared_experts") || s.expert_count_key == "n_routed_experts") {
    s.shared = HfStyle::Shared::deepseek;
    s.leading_dense_layers = s.expert_width_key == "moe_intermediate_size";
  } else if (present(doc, "shared_expert_intermediate_size")) {
    s.shared = HfStyle::Shared::qwen;
  }
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
                                "shared_expert_dim and expert_dim fixed to one width, or export to megatron",
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
    case HfStyle::Shared::none:
      if (f.num_shared_experts > 0) {
        throw Error(fmt::format("/ffn/num_shared_experts: the config has {} shared experts and the template's family "
                                "(model_type \"{}\") has none; export without a template (a Qwen2-MoE config.json)",
                                f.num_shared_experts, family),
                    source);
      }
      break;
  }
  if (f.first_dense_layers > 0) {
    if (!s.leading_dense_layers) {
      throw Error(fmt::format("/ffn/first_dense_layers: the config has {} leading dense layers and the template's "
                              "family (model_type \"{}\") cannot express them; export without a template (a "
                              "DeepSeek-MoE config.json)", f.first_dense_layers, family),
                  source);
    }
    doc["first_k_dense_replace"] = f.first_dense_layers;
    doc["intermediate_size"] = f.dense_dim;
  } else if (present(doc, "first_k_dense_replace")) {
    doc["first_k_dense_replace"] = 0;
  }
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

/// The config in a canonical native form for comparison: no name, and shared experts as one MLP
/// of their total width (n experts of width w and one of n·w are the same computation, and the
/// families spell them differently).
nlohmann::ordered_json canonical(ArchConfig c) {
  c.name.clear();
  if (c.ffn.num_shared_experts > 0) {
    c.ffn.shared_expert_dim *= c.ffn.num_shared_experts;
    c.ffn.num_shared_experts = 1;
  }
  return arch_config_json(c);
}

/// The export read back by the Hugging Face reader must be the config itself (canonically): a
/// field the reader (or this writer) does not carry through would otherwise be dropped silently.
void check_reads_back(const ArchConfig& c, const std::string& text) {
  ArchConfig back;
  try {
    back = read_hf_config(nlohmann::json::parse(text), "<hf export>");
  } catch (const Error& e) {
    throw Error("the Hugging Face export would not read back (" + e.message() + " at " + e.path() +
                    "); this config cannot be expressed as a config.json of its family",
                c.name.empty() ? "<config>" : c.name, e.path());
  }
  const nlohmann::json want = canonical(c);
  const nlohmann::json got = canonical(back);
  if (want != got) {
    const nlohmann::json patch = nlohmann::json::diff(want, got);
    const std::string field = patch.empty() ? "/" : patch.front().value("path", "/");
    const std::string wanted = want.contains(nlohmann::json::json_pointer(field))
                                   ? want.at(nlohmann::json::json_pointer(field)).dump()
                                   : "absent";
    const std::string read = got.contains(nlohmann::json::json_pointer(field))
                                 ? got.at(nlohmann::json::json_pointer(field)).dump()
                                 : "absent";
    throw Error(fmt::format("cannot be expressed in a Hugging Face config.json of this family: it would read back as "
                            "{} instead of {}", read, wanted),
                c.name.empty() ? "<config>" : c.name, field);
  }
}

/// Writes the shape keys of `c` into `doc` (a template's or a fresh family's start), checks that
/// the result reads back as `c` and returns its text.
std::string write_document(const ArchConfig& c, Json doc, const HfStyle& style, bool fresh, std::int64_t old_layers,
                           const std::string& source, std::vector<std::string>& not_expressed) {
  doc["hidden_size"] = c.hidden_size;
  doc["num_hidden_layers"] = c.num_layers;
  const AttentionConfig& a = c.attention;
  doc["num_attention_heads"] = a.num_heads;
  if (fresh || doc.contains("num_key_value_heads") || a.num_kv_heads != a.num_heads) {
    doc["num_key_value_heads"] = a.num_kv_heads;
  }
  // Without head_dim, transformers (and config_hf.cpp) use hidden_size / num_attention_heads.
  const bool implied = c.hidden_size % a.num_heads == 0 && c.hidden_size / a.num_heads == a.head_dim;
  if (fresh || doc.contains("head_dim") || !implied) doc["head_dim"] = a.head_dim;
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
  if (!fresh) resize_per_layer_lists(doc, old_layers, c.num_layers, source);

  doc.erase(std::string(hf_loop_key));
  if (c.loop) {
    doc[std::string(hf_loop_key)] =
        Json{{"first", c.loop->first}, {"last", c.loop->last}, {"repeats", c.loop->repeats}};
    not_expressed.push_back(fmt::format(
        "the loop ({}) is recorded in the added key \"{}\"; transformers' modeling code ignores it, so a model "
        "implementation must run those layers that many times", describe_loop(c), hf_loop_key));
  }
  std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  check_reads_back(c, text);
  return text;
}

}  // namespace

std::string export_hf(const ArchConfig& c, const ExportOptions& options, std::vector<std::string>& not_expressed) {
  const std::string source = options.hf_template_source.empty() ? "<hf template>" : options.hf_template_source;
  if (!c.ffn.gated) {
    throw Error("/ffn/gated: false (a 2-matrix MLP) cannot be exported to the Hugging Face families read here, which "
                "all use gated MLPs; use --to megatron, or gated: true",
                c.name.empty() ? "<config>" : c.name);
  }
  if (options.hf_template.empty()) {
    const std::vector<FreshFamily> candidates =
        c.ffn.is_moe() ? std::vector<FreshFamily>{FreshFamily::mixtral, FreshFamily::qwen2_moe, FreshFamily::deepseek}
                       : std::vector<FreshFamily>{FreshFamily::llama};
    std::string reasons;
    for (const FreshFamily f : candidates) {
      try {
        Json doc = Json::object();
        const HfStyle style = start_fresh(f, c, doc);
        std::vector<std::string> notes;
        std::string text = write_document(c, std::move(doc), style, true, c.num_layers, source, notes);
        not_expressed.insert(not_expressed.end(), notes.begin(), notes.end());
        return text;
      } catch (const Error& e) {
        reasons += fmt::format("{}{}: {}{}", reasons.empty() ? "" : "; ", model_type_of(f),
                               e.path().empty() ? "" : e.path() + ": ", e.message());
      }
    }
    throw Error("no Hugging Face family written here can express the config (" + reasons + ")",
                c.name.empty() ? "<config>" : c.name);
  }
  // Read strictly (duplicate keys, numbers beyond double, size: json_reader.hpp's errors), in key
  // order, which the export keeps.
  Json doc = detail::parse_ordered_json_text(options.hf_template, source);
  if (!doc.is_object() || !doc.contains("num_hidden_layers") || doc.contains("num_layers")) {
    throw Error("the template is not a Hugging Face config.json (an object with num_hidden_layers)", source);
  }
  const std::int64_t old_layers =
      doc.at("num_hidden_layers").is_number_integer() ? doc.at("num_hidden_layers").get<std::int64_t>() : c.num_layers;
  const HfStyle style = template_style(c, doc, source);
  return write_document(c, std::move(doc), style, false, old_layers, source, not_expressed);
}

}  // namespace budget::detail
