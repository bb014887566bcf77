#pragma once
// Private: reading one calibration row (shared by the profile JSON reader and the PyTorch .jsonl
// reader, so both apply the same rules; docs/calibration.md).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "budget/calibration.hpp"
#include <nlohmann/json.hpp>

#include "base/json_reader.hpp"

namespace budget::detail {

/// Largest shape field accepted (2⁴⁰: far above any real dimension, far below overflow of products
/// formed in doubles).
inline constexpr std::int64_t max_calibration_dim = std::int64_t{1} << 40;

/// Reads and checks one row object (keys, op, pass, shape fields, backend, refused, ms, flops,
/// bytes). Errors name the reader's source and pointer.
CalibrationRow read_calibration_row(const ObjectReader& row);

}  // namespace budget::detail

namespace budget::detail {

/// Reads and checks one whole-layer row object (CalibrationLayerRow; docs/calibration.md, "Layer
/// rows"). Errors name the reader's source and pointer ("/layers/3/config/hidden_size").
CalibrationLayerRow read_calibration_layer_row(const ObjectReader& row);

/// Calls `on_line` with a reader of each non-blank line of `jsonl` parsed as one JSON value
/// (pointer "line <n>"); a line that is not JSON is a budget::Error naming `source` and the line.
void for_each_jsonl_line(std::string_view jsonl, const std::string& source,
                         const std::function<void(const ObjectReader&)>& on_line);

/// The row as a JSON object in the form read_calibration_layer_row() reads (key order fixed).
nlohmann::ordered_json calibration_layer_row_to_json(const CalibrationLayerRow& row);

}  // namespace budget::detail
