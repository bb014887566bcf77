#pragma once
/// \file
/// Timing a list of cases through a Timer and turning the results into a calibration profile
/// (written only through libbudget's writer, budget/calibration.hpp).

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "budget/calibration.hpp"
#include "budget/profiler/op_case.hpp"
#include "budget/profiler/timer.hpp"

namespace budget::profiler {

struct MeasuredRow {
  OpCase op;
  Timing timing;
};

/// Times every case in order. Attention that the cuDNN path refuses (head_dim not a multiple of
/// 8) yields two rows: the refused one (backend "cudnn", refused) and the documented fallback,
/// cuDNN at head_dim padded to the next multiple of 8 (padded_head_dim(); what trainers do), with
/// the original shape, backend "fallback-pad8" and the original (unpadded) FLOPs and bytes.
/// `progress` (optional) is called after each case with (index, count, row).
std::vector<MeasuredRow> time_cases(const std::vector<OpCase>& cases, Timer& timer,
                                    const std::function<void(std::size_t, std::size_t, const MeasuredRow&)>& progress = {});
/// The same, appending to `rows` as it goes, so that what was measured before an exception is kept.
/// A case whose timing throws CaseFailed is left out and described in `failures` ("label: why")
/// when given (else the exception propagates).
void time_cases_into(const std::vector<OpCase>& cases, Timer& timer, std::vector<MeasuredRow>& rows,
                     const std::function<void(std::size_t, std::size_t, const MeasuredRow&)>& progress = {},
                     std::vector<std::string>* failures = nullptr);

/// The ops whose correctness checks failed (their cases must not be timed).
std::set<std::string> failed_ops(const std::vector<CheckResult>& checks);

/// `cases` without those of the given ops.
std::vector<OpCase> without_ops(const std::vector<OpCase>& cases, const std::set<std::string>& ops);

/// Everything one run produced.
struct RunResult {
  DeviceInfo device;
  Peaks peaks;
  std::vector<CheckResult> checks;
  std::vector<MeasuredRow> rows;
  std::string method;
  bool simulated = false;
};

/// The calibration profile of a run. `tool` is e.g. "budget-profile 0.1.0"; `created` an ISO 8601
/// UTC time. A simulated run says so in source.tool and source.notes. Validates (throws
/// budget::Error on a row the format does not accept).
CalibrationProfile to_profile(const RunResult& run, const std::string& tool, const std::string& created,
                              const std::string& notes = {});

/// The current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now();

}  // namespace budget::profiler
