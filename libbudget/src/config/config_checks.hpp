#pragma once
// Private: the helpers of ArchConfig's validation (config.cpp, config_layers.cpp). validate() runs on
// every account(config, workload), so a passing check must cost a comparison only: messages are
// formatted when a check fails, never before. Each check returns the first problem of its part of
// docs/config.md, or nothing.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "budget/config.hpp"

namespace budget::detail {

struct ConfigProblem {
  const char* path;
  std::string message;
};
using ConfigCheck = std::optional<ConfigProblem>;

template <typename MakeMessage>
ConfigCheck unless(bool ok, const char* path, MakeMessage&& make_message) {
  if (ok) return std::nullopt;
  return ConfigProblem{path, make_message()};
}

inline ConfigCheck range(std::int64_t value, std::int64_t min, std::int64_t max, const char* path) {
  return unless(value >= min && value <= max, path, [&] {
    return fmt::format("value {} is out of range; allowed: an integer in [{}, {}]", value, min, max);
  });
}

/// One integer field and its allowed range, as range() checks it.
struct RangeCheck {
  std::int64_t value, min, max;
  const char* path;
};
/// The first of `checks` out of its range (in order), or nothing.
inline ConfigCheck first_out_of_range(std::initializer_list<RangeCheck> checks) {
  for (const RangeCheck& r : checks) {
    if (ConfigCheck p = range(r.value, r.min, r.max, r.path)) return p;
  }
  return std::nullopt;
}

/// The per-layer lists (layer_mixers, layer_ffns, layer_types) and the mixers and attention
/// features they use: linear attention, Mamba, chunked attention, sinks, the output gate, the
/// indexer (config_layers.cpp).
ConfigCheck check_layer_kinds(const ArchConfig& c);

/// Parameters of the linear-attention, Mamba and indexer parts of one layer of each, as an upper
/// bound in long double (validate()'s size check, config.cpp).
long double mixer_size_bound(const ArchConfig& c);

}  // namespace budget::detail
