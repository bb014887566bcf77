#pragma once
// Private: the time of the op kinds no calibration profile measures (time_no_rows.cpp).

#include "budget/calibration.hpp"
#include "budget/ops.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"

namespace budget::detail {

/// One execution of an op of kernel class short_convolution, recurrent_scan or indexer_scores
/// (linear attention's and Mamba-2's convolution and chunked scans, DeepSeek-V3.2's index scores),
/// which no profile has rows for: the roofline at the profile's measured peaks, max(training FLOPs
/// as executed / bf16 GEMM peak, bytes / copy bandwidth), over tokens_per_step tokens; the bytes are
/// the forward's (Op::forward_bytes) once per training pass. An extrapolation, flagged: `t.no_rows`
/// and a note say so. `launches`: one kernel a pass (forward; one more for the backward).
void time_without_rows(const Op& op, const Workload& w, const CalibrationPeaks& peaks, OpStepTime& t,
                       double& launches);

}  // namespace budget::detail
