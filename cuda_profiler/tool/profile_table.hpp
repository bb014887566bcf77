#pragma once
// Plain-text tables of budget-profile (private to the tool).

#include <string>
#include <vector>

#include "budget/profiler/run.hpp"

namespace budget::profiler::tool {

/// One line per row: op, pass, shape, backend, ms, achieved TFLOP/s (FLOP ops) or GB/s
/// (memory-bound), and that rate as a percentage of the run's peaks.
std::string rows_table(const std::vector<MeasuredRow>& rows, const Peaks& peaks);

/// One line per (op, pass, backend): rows, refused rows, median achieved rate and % of peak.
std::string summary_table(const std::vector<MeasuredRow>& rows, const Peaks& peaks);

/// Correctness checks: name, relative error, tolerance, PASS/FAIL, note.
std::string checks_table(const std::vector<CheckResult>& checks);

/// Right-aligns columns of a table given as rows of cells (the first row is the header).
std::string render(const std::vector<std::vector<std::string>>& cells);

}  // namespace budget::profiler::tool
