// Regression tests of the third audit (issue 23, docs/reliability.md) in the time domain: MFU of a
// forward-only workload, routed-token overflow, a profile's physical plausibility.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"
#include "support/error_text.hpp"

using namespace budget;

namespace {

const std::string shipped_profile = std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/h200-torch-eager.json";
const std::string paper_baseline = std::string(BUDGET_SOURCE_DIR) + "/examples/configs/paper-200M-S95-baseline.json";

std::string error_of(const std::function<void()>& f) { return test::error_text_of(f); }

}  // namespace

TEST_CASE("MFU counts min(training_passes, 3) forwards: a forward-only step is not credited three") {
  const TimeModel model(load_calibration_profile(shipped_profile));
  const ArchConfig config = load_arch_config(paper_baseline);
  for (const std::int64_t passes : {1, 3, 4}) {
    Workload w = paper_workload();
    w.training_passes = passes;
    const StepTime st = predict_step_time(model, config, w);
    double budgeted_flops = 0;  // passes × forward FLOPs × tokens, summed over the timed ops
    for (const OpStepTime& op : st.by_op) budgeted_flops += op.flops_per_step;
    const double useful = budgeted_flops * static_cast<double>(std::min<std::int64_t>(passes, 3)) /
                          static_cast<double>(passes);
    const double expected = useful / (st.seconds_per_step * model.profile().peaks.bf16_gemm_tflops * 1e12);
    INFO("training_passes " << passes);
    CHECK(st.mfu == Approx(expected).epsilon(1e-6));
    CHECK(st.mfu > 0);
    CHECK(st.mfu < 1);
  }
}

TEST_CASE("routed tokens per step beyond int64 are refused, not wrapped") {
  const TimeModel model(load_calibration_profile(shipped_profile));
  ArchConfig config = load_arch_config(paper_baseline);
  Workload w = paper_workload();
  w.tokens_per_step = std::int64_t{1} << 40;
  config.ffn.top_k = std::int64_t{1} << 23;
  config.ffn.num_experts = std::int64_t{1} << 23;
  CHECK_THAT(error_of([&] { (void)predict_step_time(model, config, w); }),
             Catch::Contains("routed tokens per step (tokens x top_k) = 1099511627776 * 8388608 is outside the 64-bit"));
}

TEST_CASE("a profile is physically plausible: peaks and row rates within what a device can have") {
  const std::string peak = calibration_profile_to_json(load_calibration_profile(shipped_profile));
  const auto at = peak.find("\"bf16_gemm_tflops\": ");
  REQUIRE(at != std::string::npos);
  const auto end = peak.find_first_of(",}", at);
  for (const char* value : {"1e-300", "4.9e-324", "1e-4", "1e6"}) {
    std::string text = peak;
    text.replace(at, end - at, std::string("\"bf16_gemm_tflops\": ") + value);
    INFO(value);
    CHECK_THAT(error_of([&] { parse_calibration_profile(text, "p.json"); }),
               Catch::Contains("p.json: /peaks/bf16_gemm_tflops: value") && Catch::Contains("is out of range"));
  }
  // A row measured at 1e-160 ms (and one whose FLOP rate is beyond any device) is refused.
  const auto ms = peak.find("\"ms\":");
  REQUIRE(ms != std::string::npos);
  const auto ms_end = peak.find_first_of(",}", ms);
  std::string fast = peak;
  fast.replace(ms, ms_end - ms, "\"ms\":1e-160");
  CHECK_THAT(error_of([&] { parse_calibration_profile(fast, "p.json"); }),
             Catch::Contains("/ms: value 1e-160 is out of range"));
  std::string too_fast = peak;
  too_fast.replace(ms, ms_end - ms, "\"ms\":1e-6");
  CHECK_THAT(error_of([&] { parse_calibration_profile(too_fast, "p.json"); }),
             Catch::Contains("more than any device"));
}

TEST_CASE("a profile's device name must be printable text") {
  const std::string text = calibration_profile_to_json(load_calibration_profile(shipped_profile));
  const auto at = text.find("NVIDIA H200");
  REQUIRE(at != std::string::npos);
  std::string escaped = text;
  escaped.replace(at, 11, "NVIDIA \\u001b[2J H200");
  CHECK_THAT(error_of([&] { parse_calibration_profile(escaped, "p.json"); }),
             Catch::Contains("/device/name: the device name \"NVIDIA \\x1b[2J H200\" holds control characters"));
}
