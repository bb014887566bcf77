#pragma once
// Private: ArchConfig <-> nlohmann::json, for parsers of files that embed configs (grids).

#include <string>

#include <nlohmann/json.hpp>

#include "budget/config.hpp"

namespace budget::detail {

/// Reads and validates the config object `object` found at JSON pointer `pointer` of `source`.
/// Errors carry the full pointer ("/cells/3/baseline/ffn/top_k").
ArchConfig read_arch_config(const nlohmann::json& object, const std::string& source,
                            const std::string& pointer);

/// The native JSON form (keys in schema order).
nlohmann::ordered_json arch_config_json(const ArchConfig& config);

}  // namespace budget::detail
