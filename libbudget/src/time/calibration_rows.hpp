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

/// Physical plausibility of a profile (docs/calibration.md, "Plausible values"): what a real
/// device can measure, with wide margins (an H200 does 0.76 PFLOP/s bf16 and 4.2 TB/s copy).
/// The 8192³ bf16 GEMM peak in TFLOP/s and the copy bandwidth in GB/s:
inline constexpr double min_gemm_tflops = 1e-3, max_gemm_tflops = 1e5;
inline constexpr double min_copy_gbytes_per_s = 1e-3, max_copy_gbytes_per_s = 1e6;
/// A measured row takes at least 1 ns (1e-6 ms) and at most 1e9 ms, and its FLOP and byte rates
/// (flops / time, bytes / time) stay below 1e18 FLOP/s and 1e16 B/s.
inline constexpr double min_row_ms = 1e-6, max_row_ms = 1e9;
inline constexpr double max_row_flops_per_s = 1e18, max_row_bytes_per_s = 1e16;

/// A device name from a profile: non-empty and without control characters (it is printed).
std::string read_device_name(const ObjectReader& r, std::string_view key);

/// The source's optional keys of issue 32: "stack", "kind", "references" (calibration_extras.cpp).
void read_source_extras(const ObjectReader& r, CalibrationSource& source);
/// A row's optional "dtype" (gemm, expert_gemms, attention) and "carried_from".
void read_row_provenance(const ObjectReader& r, CalibrationRow& row);
/// The optional "run_fits" array of a profile.
std::vector<CalibrationRunFit> read_run_fits(const ObjectReader& root);
/// The "run_fits" array as written (key order fixed).
nlohmann::ordered_json run_fits_to_json(const std::vector<CalibrationRunFit>& fits);

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
