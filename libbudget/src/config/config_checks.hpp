#pragma once
// Private: the helpers of ArchConfig's validation (config.cpp, config_layers.cpp). validate() runs on
// every account(config, workload), so a passing check must cost a comparison only: messages are
// formatted when a check fails, never before. Each check returns the first problem of its part of
// docs/config.md, or nothing.

#include <cstdint>
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

/// The per-layer lists (layer_mixers, layer_ffns, layer_types) and the mixers and attention
/// features they use: linear attention, Mamba, chunked attention, sinks, the output gate, the
/// indexer (config_layers.cpp).
ConfigCheck check_layer_kinds(const ArchConfig& c);

/// Parameters of the linear-attention, Mamba and indexer parts of one layer of each, as an upper
/// bound in long double (validate()'s size check, config.cpp).
long double mixer_size_bound(const ArchConfig& c);

}  // namespace budget::detail
