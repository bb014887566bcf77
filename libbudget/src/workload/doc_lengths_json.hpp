#pragma once
// Private: histograms embedded in JSON documents (workload files), read with full JSON pointers.

#include <nlohmann/json.hpp>
#include <string>

#include "budget/doc_lengths.hpp"

namespace budget::detail {

/// A histogram at JSON pointer `pointer` of `source`: an object {"<length>": count, ...} or an
/// array [[length, count], ...]. Errors carry the pointer of the offending entry.
LengthDistribution histogram_from_json(const nlohmann::json& value, const std::string& source,
                                       const std::string& pointer);

}  // namespace budget::detail
