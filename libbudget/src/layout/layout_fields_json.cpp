#include "layout/layout_fields_json.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/checked_math.hpp"

namespace budget::detail {

namespace {

using T = LayoutFieldType;

/// The key `f` is given under in `r` ("" when absent); its name and its alias both: refused.
std::string given_key(const ObjectReader& r, const LayoutField& f) {
  const bool by_name = r.has(f.name), by_alias = !f.alias.empty() && r.has(f.alias);
  if (by_name && by_alias) {
    r.fail(f.alias, fmt::format("\"{}\" and \"{}\" name the same field; give one", f.alias, f.name));
  }
  return by_name ? std::string(f.name) : by_alias ? std::string(f.alias) : std::string();
}

/// A list of `f`'s names at `key` (recompute_modules).
std::vector<std::string> name_list(const ObjectReader& r, const std::string& key, const LayoutField& f) {
  const nlohmann::json& value = r.raw(key);
  const std::vector<std::string_view> allowed = f.choices();
  const auto refuse = [&](const nlohmann::json& item) {
    r.fail(key,
           fmt::format("{} is not allowed; allowed: a list of {}", describe_value(item), fmt::join(allowed, ", ")));
  };
  if (!value.is_array()) refuse(value);
  std::vector<std::string> names;
  for (const nlohmann::json& item : value) {
    if (!item.is_string()) refuse(item);
    const std::string name = item.get<std::string>();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) refuse(item);
    names.push_back(name);
  }
  return names;
}

/// The value at `key`, of `f`'s type and in its range (budget::Error naming the key otherwise).
LayoutFieldValue field_value(const ObjectReader& r, const std::string& key, const LayoutField& f) {
  switch (f.type) {
    case T::integer: return r.integer(key, static_cast<std::int64_t>(f.minimum), static_cast<std::int64_t>(f.maximum));
    case T::number: return r.number(key, f.minimum, f.maximum);
    case T::boolean: return r.boolean_or(key, false);
    case T::choice: return r.choice_or(key, "", f.choices());
    case T::text: return r.string(key);
    case T::names: return name_list(r, key, f);
  }
  return {};
}

/// recompute with its details inline (full:N, full-uniform:N, selective:M,...) excludes the detail keys.
void check_recompute_details(const ObjectReader& r) {
  if (!r.has("recompute") || !r.raw("recompute").is_string()) return;
  const std::string text = r.raw("recompute").get<std::string>();
  if (text.find(':') == std::string::npos) return;
  for (const char* key : {"recompute_full_layers", "recompute_method", "recompute_modules"}) {
    if (r.has(key)) {
      r.fail(key,
             fmt::format("recompute \"{}\" gives the details inline; give them there or in {}, not both", text, key));
    }
  }
}

/// gpus and dp: neither given, DP = 1; both given, gpus = TP·CP·DP·PP (each division exact).
void resolve_gpus_and_dp(const ObjectReader& r, ParallelLayout& l) {
  if (l.gpus == 0 && l.dp == 0) l.dp = 1;
  if (l.gpus == 0 || l.dp == 0) return;
  std::int64_t rest = l.gpus;
  for (const std::int64_t size : {l.tp, l.cp, l.pp}) rest = rest % size == 0 ? rest / size : -1;
  if (rest != l.dp) {
    r.fail("dp", fmt::format("dp = {} with gpus = {} is not gpus / (TP·CP·PP) = {} / ({}·{}·{}); give one of \"gpus\" "
                             "and \"dp\", or both agreeing",
                             l.dp, l.gpus, l.gpus, l.tp, l.cp, l.pp));
  }
}

/// A derived field given at `key` equals what the layout derives.
void check_derived(const ObjectReader& r, const std::string& key, const LayoutField& f, const ParallelLayout& l,
                   const LayoutDerivation& derivation) {
  const LayoutFieldValue given = field_value(r, key, f), derived = f.get(l, derivation);
  if (given != derived) {
    r.fail(key, fmt::format("{} = {} is not what the layout derives, {} ({}); leave it out or make it agree", f.name,
                            layout_field_value_text(given), layout_field_value_text(derived), f.doc));
  }
}

}  // namespace

ParallelLayout read_layout_fields(const ObjectReader& r, std::int64_t vocab_size) {
  r.reject_unknown_keys(layout_field_json_names());
  ParallelLayout l;
  std::vector<std::pair<const LayoutField*, std::string>> derived;
  for (const LayoutField& f : layout_fields()) {
    std::string key = given_key(r, f);
    if (key.empty() && !f.required) continue;
    if (key.empty()) key = f.name;  // reading it reports the missing key
    if (f.role == LayoutFieldRole::derived) {
      derived.emplace_back(&f, key);
      continue;
    }
    f.set(l, field_value(r, key, f), r.pointer_to(key));
  }
  check_recompute_details(r);
  resolve_gpus_and_dp(r, l);
  if (derived.empty()) return l;
  // The GPU count and the groups the derived sizes divide by, formed without overflow (validation_error()
  // refuses sizes above 2^20 and more than 2^40 GPUs too).
  constexpr std::int64_t max_gpus = std::int64_t{1} << 40;
  if (l.gpus == 0 && !product_within({l.tp, l.cp, l.dp, l.pp}, max_gpus)) {
    r.fail("dp", "the GPU count TP·CP·DP·PP is above 2^40");
  }
  if (!product_within({l.expert_tp(), l.ep, l.pp}, max_gpus)) r.fail("ep", "the expert group ETP·EP·PP is above 2^40");
  const LayoutDerivation derivation{l.padded_vocab(vocab_size)};
  for (const auto& [f, key] : derived) check_derived(r, key, *f, l, derivation);
  return l;
}

}  // namespace budget::detail

namespace budget {

std::string layout_field_value_text(const LayoutFieldValue& value) {
  struct Text {
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return fmt::format("{}", v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return fmt::format("\"{}\"", v); }
    std::string operator()(const std::vector<std::string>& v) const {
      std::string out;
      for (const std::string& s : v) out += (out.empty() ? "\"" : ", \"") + s + "\"";
      return "[" + out + "]";
    }
  };
  return std::visit(Text{}, value);
}

}  // namespace budget
