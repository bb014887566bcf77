#include "config/rope_scaling_json.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "budget/error.hpp"
#include "config/config_names.hpp"

namespace budget {

std::string_view to_string(RopeScalingType type) { return detail::name_of(detail::rope_scaling_type_names, type); }

namespace detail {
namespace {

/// The parameter keys transformers' init function of each type reads (modeling_rope_utils.py:
/// _compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters,
/// _compute_yarn_parameters, _compute_llama3_parameters, _compute_longrope_parameters).
std::vector<std::string_view> keys_of(RopeScalingType type) {
  switch (type) {
    case RopeScalingType::linear: return {"factor"};
    case RopeScalingType::dynamic: return {"factor", "original_max_position_embeddings"};
    case RopeScalingType::yarn:
      return {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
              "attention_factor"};
    case RopeScalingType::llama3:
      return {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"};
    case RopeScalingType::longrope:
      return {"original_max_position_embeddings", "short_factor", "long_factor", "attention_factor", "factor"};
  }
  return {};
}

constexpr double max_factor = 1e6;

std::optional<double> number_if(const ObjectReader& r, const char* key, double min, double max) {
  if (!r.has(key) || r.raw(key).is_null()) return std::nullopt;
  return r.number(key, min, max);
}

std::vector<double> numbers_if(const ObjectReader& r, const char* key) {
  std::vector<double> out;
  if (!r.has(key) || r.raw(key).is_null()) return out;
  const nlohmann::json& list = r.raw(key);
  if (!list.is_array() || list.empty()) r.fail(key, "expected a non-empty array of positive numbers");
  for (const auto& v : list) {
    if (!v.is_number() || !(v.get<double>() > 0.0) || v.get<double>() > max_factor) {
      r.fail(key, fmt::format("expected positive numbers up to {}, got {}", max_factor, v.dump()));
    }
    out.push_back(v.get<double>());
  }
  return out;
}

}  // namespace

std::optional<RopeScaling> read_rope_scaling(const ObjectReader& r, std::vector<std::string>* unknown_notes) {
  const char* type_key = r.has("rope_type") ? "rope_type" : "type";
  if (!r.has(type_key) || r.raw(type_key).is_null()) {
    if (unknown_notes == nullptr) r.fail_here("no \"type\" given; allowed: " + names_list(rope_scaling_type_names));
    if (!r.json().empty()) unknown_notes->push_back(fmt::format("{}: no rope type given, read as unscaled RoPE", r.pointer()));
    return std::nullopt;
  }
  const std::string name = r.string(type_key);
  if (name == "default") return std::nullopt;
  const std::optional<RopeScalingType> found = enum_named(rope_scaling_type_names, name);
  if (!found) {
    const std::string why = fmt::format("rope scaling type \"{}\" is not one budget reads (allowed: {})", name,
                                        names_list(rope_scaling_type_names));
    if (unknown_notes == nullptr) r.fail(type_key, why);
    unknown_notes->push_back(fmt::format("{}: {}; no export carries it", r.pointer_to(type_key), why));
    return std::nullopt;
  }
  RopeScaling s;
  s.type = *found;
  const std::vector<std::string_view> keys = keys_of(s.type);
  for (const auto& [key, value] : r.json().items()) {
    if (key == "rope_type" || key == "type" || key == "rope_theta") continue;  // rope_parameters also holds the base
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    const std::string why = fmt::format("\"{}\" is not a parameter of {} rope scaling (allowed: {})", key, name,
                                        fmt::join(keys, ", "));
    if (unknown_notes == nullptr) r.fail(key, why);
    unknown_notes->push_back(fmt::format("{}: {}; not read, and no export carries it", r.pointer_to(key), why));
  }
  s.factor = number_if(r, "factor", 1e-6, max_factor);
  if (r.has("original_max_position_embeddings") && !r.raw("original_max_position_embeddings").is_null()) {
    s.original_max_position_embeddings = r.integer("original_max_position_embeddings", 1, std::int64_t{1} << 40);
  }
  if (s.type == RopeScalingType::yarn) {
    s.beta_fast = number_if(r, "beta_fast", 0.0, max_factor);
    s.beta_slow = number_if(r, "beta_slow", 0.0, max_factor);
    s.mscale = number_if(r, "mscale", 0.0, max_factor);
    s.mscale_all_dim = number_if(r, "mscale_all_dim", 0.0, max_factor);
  }
  if (s.type == RopeScalingType::yarn || s.type == RopeScalingType::longrope) {
    s.attention_factor = number_if(r, "attention_factor", 0.0, max_factor);
  }
  if (s.type == RopeScalingType::llama3) {
    s.low_freq_factor = number_if(r, "low_freq_factor", 1e-6, max_factor);
    s.high_freq_factor = number_if(r, "high_freq_factor", 1e-6, max_factor);
  }
  if (s.type == RopeScalingType::longrope) {
    s.short_factor = numbers_if(r, "short_factor");
    s.long_factor = numbers_if(r, "long_factor");
    if (s.short_factor.empty() || s.long_factor.size() != s.short_factor.size()) {
      r.fail_here("longrope scaling needs short_factor and long_factor, of equal length");
    }
  } else if (!s.factor) {
    r.fail("factor", fmt::format("{} rope scaling needs a factor", name));
  }
  return s;
}

nlohmann::ordered_json rope_scaling_json(const RopeScaling& s, const std::string& type_key) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j[type_key] = std::string(to_string(s.type));
  const auto put = [&](const char* key, const std::optional<double>& v) {
    if (v) j[key] = *v;
  };
  put("factor", s.factor);
  if (s.original_max_position_embeddings) j["original_max_position_embeddings"] = *s.original_max_position_embeddings;
  put("beta_fast", s.beta_fast);
  put("beta_slow", s.beta_slow);
  put("mscale", s.mscale);
  put("mscale_all_dim", s.mscale_all_dim);
  put("attention_factor", s.attention_factor);
  put("low_freq_factor", s.low_freq_factor);
  put("high_freq_factor", s.high_freq_factor);
  if (!s.short_factor.empty()) j["short_factor"] = s.short_factor;
  if (!s.long_factor.empty()) j["long_factor"] = s.long_factor;
  return j;
}

std::string describe_rope_scaling(const RopeScaling& s) {
  std::vector<std::string> parts;
  // Named: a range-for over items() of a temporary would iterate a destroyed object.
  const auto object = rope_scaling_json(s, "type");
  for (const auto& [key, value] : object.items()) {
    if (key == "type") continue;
    parts.push_back(value.is_array() ? fmt::format("{} [{} values]", key, value.size())
                                     : fmt::format("{} {}", key, value.dump()));
  }
  return fmt::format("{} ({})", to_string(s.type), fmt::join(parts, ", "));
}

}  // namespace detail
}  // namespace budget
