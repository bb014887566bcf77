// The key pass of the Hugging Face reader (config/config_hf.cpp): the object the family reads.
// transformers' own alternative spellings renamed (with a note), every other spelling or near-typo
// of a key the family counts refused with a did-you-mean, keys of other families refused, a missing
// required key refused, and a missing key with a transformers default given that default (noted).

#include "config/hf_key_pass.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "budget/config_hf.hpp"
#include "budget/edit_distance.hpp"
#include "budget/error.hpp"
#include "config/config_hf_json.hpp"

namespace budget {
namespace detail {

bool hf_key_set(const nlohmann::json& object, std::string_view key) {
  const auto it = object.find(key);
  if (it == object.end()) return false;
  const auto& v = *it;
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0.0;
  if (v.is_array() || v.is_object()) return !v.empty();
  return true;
}

bool hf_key_present(const nlohmann::json& object, std::string_view key) {
  const auto it = object.find(key);
  return it != object.end() && !it->is_null();
}

namespace {

/// Keys every family reads (each required where it is used).
constexpr std::array<std::string_view, 7> common_counting_keys{
    "hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size", "intermediate_size", "layer_types",
    "max_position_embeddings"};  // the last decides whether a sliding window bounds anything
/// Keys of the file's own structure.
constexpr std::array<std::string_view, 3> structural_keys{"text_config", hf_loop_key, "_name_or_path"};

template <typename Range>
bool contains(const Range& range, std::string_view key) {
  return std::find(range.begin(), range.end(), key) != range.end();
}

/// A slip of the pen: at most two edits (one for keys under 6 characters), or a truncation of at
/// least 8 characters ("moe_intermediate" for "moe_intermediate_size").
bool is_near_typo(std::string_view key, std::string_view target) {
  if (key == target) return false;
  const std::size_t allowed = key.size() < 6 ? 1 : 2;
  const std::size_t gap = key.size() > target.size() ? key.size() - target.size() : target.size() - key.size();
  if (gap <= allowed && edit_distance(key, target) <= allowed) return true;
  const auto& shorter = key.size() < target.size() ? key : target;
  const auto& longer = key.size() < target.size() ? target : key;
  return shorter.size() >= 8 && longer.substr(0, shorter.size()) == shorter;
}

/// The key pass: the object the family reads, and the notes of what was taken for it.
class KeyPass {
 public:
  KeyPass(const nlohmann::json& document, const ObjectReader& where, const HfFamily& family)
      : doc_(document), where_(where), family_(family) {}

  nlohmann::json run(std::vector<std::string>& notes) {
    resolve_aliases(notes);
    refuse_misspellings();
    refuse_foreign_keys();
    apply_absent_rules(notes);
    return doc_;
  }

 private:
  bool reads(std::string_view key) const {
    return contains(common_counting_keys, key) ||
           std::any_of(family_.keys.begin(), family_.keys.end(), [&](const HfKey& k) { return k.key == key; });
  }

  [[noreturn]] void refuse(std::string_view key, const std::string& why) const {
    where_.fail(key, fmt::format("{} (family \"{}\"; docs/config.md lists what each family reads)", why,
                                 family_.model_type));
  }

  void resolve_aliases(std::vector<std::string>& notes) {
    for (const auto& a : family_.aliases) {
      if (!hf_key_present(doc_, a.alias)) continue;
      if (hf_key_present(doc_, a.key)) {
        refuse(a.alias, fmt::format("both \"{}\" and \"{}\" are given; transformers reads \"{}\" as \"{}\": give one",
                                    a.alias, a.key, a.alias, a.key));
      }
      const std::string alias(a.alias);
      doc_[std::string(a.key)] = doc_.at(alias);
      doc_.erase(alias);
      notes.push_back(fmt::format("\"{}\" read as \"{}\" (the alias of {})", a.alias, a.key, family_.defaults_source));
    }
  }

  /// Another spelling of a quantity the family counts, or a near-typo of one of its keys: an error
  /// naming the family's key, never a silently different model.
  void refuse_misspellings() const {
    for (const auto& item : doc_.items()) {
      // Named, not a structured binding: the lambdas below capture it (clang 14 cannot capture
      // structured bindings).
      const std::string& key = item.key();
      const nlohmann::json& value = item.value();
      if (value.is_null() || reads(key) || is_hf_non_counting_key(key) || contains(structural_keys, key)) continue;
      for (const auto& group : hf_spelling_groups()) {
        if (!contains(group, key)) continue;
        for (const auto spelling : group) {
          if (reads(spelling)) refuse_spelling(key, spelling, "is another spelling of");
        }
      }
      // A counting key of another family is refused as such (refuse_foreign_keys), not as a typo.
      if (std::any_of(hf_counting_keys().begin(), hf_counting_keys().end(),
                      [&](const HfCountingKey& k) { return k.key == key; })) {
        continue;
      }
      // The nearest of the family's keys (qk_rope_head_di is qk_rope_head_dim, not qk_nope_head_dim).
      std::string_view nearest;
      std::size_t nearest_distance = std::numeric_limits<std::size_t>::max();
      const auto consider = [&](std::string_view target) {
        if (!is_near_typo(key, target)) return;
        const std::size_t d = edit_distance(key, target);
        if (d < nearest_distance) {
          nearest_distance = d;
          nearest = target;
        }
      };
      for (const auto target : common_counting_keys) consider(target);
      for (const auto& k : family_.keys) consider(k.key);
      if (!nearest.empty()) refuse_spelling(key, nearest, "looks like a misspelling of");
    }
  }

  [[noreturn]] void refuse_spelling(std::string_view key, std::string_view family_key, std::string_view how) const {
    refuse(key, fmt::format("unknown key \"{}\" {} \"{}\", a key this family counts with (did you mean \"{}\"?); "
                            "read as it is, the file would describe a different model",
                            key, how, family_key, family_key));
  }

  void refuse_foreign_keys() const {
    for (const auto& k : hf_counting_keys()) {
      if (reads(k.key) || !hf_key_set(doc_, k.key)) continue;
      const auto& v = doc_.at(std::string(k.key));
      if (k.trivial_one && v.is_number() && v.get<double>() == 1.0) continue;
      refuse(k.key, fmt::format("sets {}, which this family's layers do not have; a config mixing families is not "
                                "read",
                                k.meaning));
    }
    for (const auto& [key, value] : doc_.items()) {
      if (key.rfind("linear_", 0) == 0 && !value.is_null() && !reads(key)) {
        refuse(key, "linear-attention layers (a hybrid linear/full attention stack) are not modelled: their "
                    "recurrent state is not a KV cache");
      }
    }
  }

  void apply_absent_rules(std::vector<std::string>& notes) {
    // vocab_size absent: the embedding and LM head are not modelled (vocab_size 0), as a native
    // config says it and as an export of such a config writes it; said, never a class default.
    if (!hf_key_present(doc_, "vocab_size")) {
      notes.push_back("vocab_size: absent, so the embedding and LM head are not counted (vocab_size 0); give the "
                      "tokenizer's vocabulary size to count them");
    }
    for (const auto& k : family_.keys) {
      if (doc_.contains(k.key)) continue;  // null is given, and means what the family says it means
      if (k.absent == Absent::required) {
        where_.fail(k.key, fmt::format("required key is missing: the family \"{}\" counts {} with it{}", family_.model_type,
                                       k.meaning,
                                       k.default_json.empty()
                                           ? fmt::format(" ({}: no default to take)", family_.defaults_source)
                                           : fmt::format(" ({} would take {}, which is not read from a file "
                                                         "that does not say it)",
                                                         family_.defaults_source, k.default_json)));
      }
      if (k.absent != Absent::noted_default) continue;
      if (!k.default_json.empty() && k.default_json.front() == '=') {  // a rule the layer pass applies (head_dim, KV heads)
        const std::string_view rule_key = k.default_json.substr(1);
        const auto value = doc_.find(rule_key);
        notes.push_back(fmt::format("{}: absent, taken as {}{} (the rule of {}) for {}", k.key, rule_key,
                                    value != doc_.end() ? " = " + describe_value(*value) : std::string{},
                                    family_.defaults_source, k.meaning));
      } else {
        doc_[std::string(k.key)] = nlohmann::json::parse(k.default_json);
        notes.push_back(fmt::format("{}: absent, taken as {} (the default of {}) for {}", k.key, k.default_json,
                                    family_.defaults_source, k.meaning));
      }
    }
  }

  nlohmann::json doc_;
  const ObjectReader& where_;
  const HfFamily& family_;
};

}  // namespace

nlohmann::json run_hf_key_pass(const nlohmann::json& document, const ObjectReader& where, const HfFamily& family,
                                std::vector<std::string>& notes) {
  return KeyPass(document, where, family).run(notes);
}

}  // namespace detail
}  // namespace budget
