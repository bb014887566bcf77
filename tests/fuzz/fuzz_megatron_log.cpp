// Megatron-LM training logs and run files (calibrate --from-runs, docs/calibration.md "Run files"
// and "Megatron-LM logs"): the first byte chooses the reader, the rest is its text.
//  - even: parse_megatron_log(). An accepted log has iterations, each elapsed time finite and
//    non-negative; its step time is −1 (fewer than two iterations) or finite and positive; its
//    peak memory −1 or finite and non-negative; every argument word non-empty.
//  - odd: parse_measured_runs() (a "megatron_log" path names a file relative to "<fuzz>/", which
//    does not exist: refused by name). An accepted run has a finite positive step time, a layout of
//    at least one GPU, and a memory of −1 or finite and non-negative.
#include <cmath>
#include <string>

#include "budget/run_fit.hpp"
#include "fuzz_harness.hpp"

namespace {

constexpr const char* target = "fuzz_megatron_log";

bool finite_non_negative(double x) { return std::isfinite(x) && x >= 0; }

void check_log(std::string_view text) {
  const budget::MegatronLog log = budget::parse_megatron_log(text, "<fuzz>");
  for (const budget::MegatronLog::Iteration& it : log.iterations) {
    budget::fuzz::require(finite_non_negative(it.elapsed_ms), target, "an iteration's elapsed time is not finite and non-negative");
  }
  const double step = log.step_time_s();
  budget::fuzz::require(step == -1 || (std::isfinite(step) && step > 0), target, "the step time is neither -1 nor finite and positive");
  budget::fuzz::require(log.max_allocated_mib == -1 || finite_non_negative(log.max_allocated_mib), target,
                        "the peak memory is neither -1 nor finite and non-negative");
  for (const std::string& word : log.arguments) budget::fuzz::require(!word.empty(), target, "an empty argument word");
}

void check_runs(std::string_view text) {
  for (const budget::MeasuredRun& run : budget::parse_measured_runs(text, "<fuzz>/runs.jsonl")) {
    budget::fuzz::require(std::isfinite(run.step_time_s) && run.step_time_s > 0, target,
                          "a run's step time is not finite and positive");
    budget::fuzz::require(run.layout.gpus >= 1, target, "a run's layout has no GPU");
    budget::fuzz::require(run.memory_gib == -1 || finite_non_negative(run.memory_gib), target,
                          "a run's memory is neither -1 nor finite and non-negative");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = budget::fuzz::as_text(data + 1, size - 1);
  budget::fuzz::expect_value_or_error(target, [&] {
    if (data[0] % 2 == 0) {
      check_log(text);
    } else {
      check_runs(text);
    }
  });
  return 0;
}
