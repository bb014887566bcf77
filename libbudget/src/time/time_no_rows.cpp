// The op kinds of hybrid stacks and sparse attention that no calibration profile measures (the
// depthwise convolution, the Gated DeltaNet and Mamba-2 chunked scans, DeepSeek-V3.2's index
// scores): timed at the profile's peaks and flagged (docs/calibration.md, "Ops without profile rows").

#include "time/time_no_rows.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "budget/kernel_class.hpp"

namespace budget::detail {

void time_without_rows(const Op& op, const Workload& w, const CalibrationPeaks& peaks, OpStepTime& t,
                       double& launches) {
  const double tokens = static_cast<double>(w.tokens_per_step);
  const double flops = op.kernel_training_flops * tokens;
  const double bytes = op.forward_bytes * static_cast<double>(w.training_passes) * tokens;
  const double compute_s = peaks.bf16_gemm_tflops > 0 ? flops / (peaks.bf16_gemm_tflops * 1e12) : 0.0;
  const double memory_s = peaks.copy_gbytes_per_s > 0 ? bytes / (peaks.copy_gbytes_per_s * 1e9) : 0.0;
  t.seconds_per_step = std::max(compute_s, memory_s);
  t.no_rows = true;
  t.note = fmt::format("extrapolated: no profile rows for {} ({}); {} at the profile's peaks ({:.0f} TFLOP/s bf16 GEMM, "
                       "{:.0f} GB/s copy)",
                       to_string(op.kind), to_string(kernel_class(op.kind)),
                       compute_s >= memory_s ? "its FLOPs" : "its bytes", peaks.bf16_gemm_tflops,
                       peaks.copy_gbytes_per_s);
  launches = 1.0 + (w.training_passes >= 2 ? 1.0 : 0.0);
}

}  // namespace budget::detail
