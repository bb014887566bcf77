// Issue 44 §2-§3 and issue 42 item 5: a measured run is checked against its own FLOPs and the GPU's
// peaks before it is fitted (run_plausibility.cpp); the fit is bounded in time; a fit on no runs
// has no error figures.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster_time.hpp"
#include "budget/error.hpp"
#include "budget/progress.hpp"
#include "budget/run_fit.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"

using namespace budget;

namespace {

const std::string plausibility_source_dir = BUDGET_SOURCE_DIR;

CalibrationProfile b200_profile() {
  return load_calibration_profile(plausibility_source_dir + "/cuda_profiler/profiles/b200-published.json");
}

/// The first runs of the handed-over file (B200, BF16, Llama-3-70B's shape on 12 layers, role "fit").
std::vector<MeasuredRun> llama_runs() {
  std::vector<MeasuredRun> runs = load_measured_runs(plausibility_source_dir + "/data/runs/measured_runs.jsonl");
  runs.resize(4);
  for (const MeasuredRun& r : runs) REQUIRE(r.role == "fit");
  return runs;
}

const RunPrediction& prediction_of(const std::vector<RunFitResult>& fits, const std::string& id) {
  for (const RunFitResult& f : fits) {
    for (const RunPrediction& p : f.runs) {
      if (p.id == id) return p;
    }
  }
  FAIL("no prediction of " << id);
  return fits.front().runs.front();
}

}  // namespace

TEST_CASE("run plausibility: a step above the dense peak is skipped by name, the other runs still fitted",
          "[runs][plausibility]") {
  const CalibrationProfile profile = b200_profile();
  std::vector<MeasuredRun> runs = llama_runs();
  // The audit's 1 µs step: the first run's 12 layers of Llama-3-70B at 4 micro-batches of 4096
  // tokens a GPU pair is about 6 · 5·10⁹ params · 16,384 tokens ≈ 5·10¹⁴ FLOPs a GPU, so 1 µs is
  // 5·10²⁰ FLOP/s, some 10⁵ times B200's 2250 TFLOP/s dense BF16 peak. Before: fitted, factors 0.
  runs[0].id = "one-microsecond";
  runs[0].step_time_s = 1e-6;
  const std::vector<RunFitResult> fits = fit_measured_runs(profile, runs, "runs");
  REQUIRE(fits.size() == 1);
  const RunPrediction& skipped = prediction_of(fits, "one-microsecond");
  CHECK_THAT(skipped.skipped, Catch::Contains("implausible") && Catch::Contains("above the GPU's dense BF16 peak of 2250") &&
                                  Catch::Contains("MFU"));
  CHECK(fits.front().fit.fitted_on.size() == 3);
  for (const std::string& id : fits.front().fit.fitted_on) CHECK(id != "one-microsecond");
  // The factors fitted on the three real runs: none driven to 0 by the absurd one.
  CHECK(fits.front().fit.gemm > 0.3);
  // Every run of the handed-over file is plausible: none skipped as such.
  for (const RunFitResult& f : fit_measured_runs(profile, load_measured_runs(plausibility_source_dir + "/data/runs/measured_runs.jsonl"), "runs")) {
    for (const RunPrediction& p : f.runs) {
      CAPTURE(p.id);
      CHECK(p.skipped.find("implausible") == std::string::npos);
    }
  }
}

TEST_CASE("run plausibility: a step shorter than one read of the weights and optimizer states is skipped",
          "[runs][plausibility]") {
  std::vector<MeasuredRun> runs = llama_runs();
  // 16 tokens a micro-batch, one micro-batch: about 6 · 5·10⁹ · 16 ≈ 5·10¹¹ FLOPs a GPU, 0.2 ms at
  // the 2250 TFLOP/s peak; but the GPU holds its stage's 6 layers of about 0.9·10⁹ parameters each
  // (bf16 weights 2 bytes a parameter, at least 10 GB) and their optimizer states, more than 1 ms
  // at B200's memory bandwidth (8 TB/s datasheet). A step of 0.5 ms passes the FLOPs check and
  // fails the memory one.
  runs[0].id = "half-a-millisecond";
  runs[0].layout.seq_len = 16;
  runs[0].layout.micro_batches = 1;
  runs[0].step_time_s = 5e-4;
  const std::vector<RunFitResult> fits = fit_measured_runs(b200_profile(), runs, "runs");  // outlives p
  const RunPrediction& p = prediction_of(fits, "half-a-millisecond");
  CHECK_THAT(p.skipped, Catch::Contains("implausible") && Catch::Contains("shorter than one read of the") &&
                            Catch::Contains("weights and optimizer states"));
}

TEST_CASE("run plausibility: the audit's 1e-300 ms Megatron-LM log line is refused, a 1e-303 s run skipped and the "
          "factors still fitted",
          "[runs][plausibility]") {
  // Megatron-LM prints the time with {:.1f}: the log reader refuses a line under 0.1 ms with the
  // file and the line (tiny_step.log's line 101 is its first "1e-300").
  REQUIRE_THROWS_WITH(load_measured_runs(plausibility_source_dir + "/tests/data/runs/tiny_step_log_runs.jsonl"),
                      Catch::Contains("tiny_step.log") && Catch::Contains("line 101") &&
                          Catch::Contains("at least 0.1 ms"));
  // The same step given as a run's step_time_s (1e-300 ms = 1e-303 s) is skipped as implausible.
  std::vector<MeasuredRun> runs = llama_runs();
  MeasuredRun tiny = runs.front();
  tiny.id = "tiny-step";
  tiny.step_time_s = 1e-303;
  runs.push_back(tiny);
  const std::vector<RunFitResult> fits = fit_measured_runs(b200_profile(), runs, "runs");
  CHECK_THAT(prediction_of(fits, "tiny-step").skipped, Catch::Contains("implausible"));
  // Before: its weight 1/(1e-303)² overflowed and every factor came back 1.000.
  CHECK(fits.front().fit.fitted_on.size() == 4);
  CHECK(fits.front().fit.gemm != 1.0);
  CHECK(fits.front().fit.loo_max_error < 1.0);
}

TEST_CASE("run plausibility: every run skipped is an error naming each run and why", "[runs][plausibility]") {
  std::vector<MeasuredRun> runs = llama_runs();
  for (MeasuredRun& r : runs) r.step_time_s = 1e-303;  // the audit's 1e-300 ms log line
  REQUIRE_THROWS_WITH(fit_measured_runs(b200_profile(), runs, "runs.jsonl"),
                      Catch::Contains("runs.jsonl") && Catch::Contains("every one of the 4 runs") &&
                          Catch::Contains(runs[0].id) && Catch::Contains("implausible"));
}

TEST_CASE("run fit: bounded by the time limit, which is not taken for a run that cannot be priced",
          "[runs][progress]") {
  const std::vector<MeasuredRun> runs = llama_runs();
  set_work_time_limit(1e-9, "raise it");
  std::string error;
  try {
    fit_measured_runs(b200_profile(), runs, "runs");
  } catch (const Error& e) {
    error = e.what();
  }
  set_work_time_limit(0);
  // Before: no check in the fit (4,000 runs ran 199 s under a 5 s limit); a limit reached inside a
  // run's pricing would have been read as that run's own error and the run skipped.
  CHECK_THAT(error, Catch::Contains("calibrate --from-runs") && Catch::Contains("time limit") &&
                        Catch::Contains("raise it"));
}

TEST_CASE("run fit: a precision fitted on no runs has no fitted runs and says so in the step's notes",
          "[runs][honesty]") {
  // The H100 profile's BF16 fit validates two runs and fits none (test_run_fit.cpp): the step
  // priced with it prints no leave-one-run-out figure (before: "median |error| 0.0%, worst 0.0%").
  const CalibrationProfile h100 =
      load_calibration_profile(plausibility_source_dir + "/cuda_profiler/profiles/h100-sxm-published.json");
  const std::vector<MeasuredRun> all = load_measured_runs(plausibility_source_dir + "/data/runs/measured_runs.jsonl");
  const MeasuredRun* validated = nullptr;
  for (const MeasuredRun& r : all) {
    if (r.gpu == h100.device.name && r.layout.fp8 == Fp8Recipe::none) validated = &r;
  }
  REQUIRE(validated != nullptr);
  TimeModelOptions options;
  options.recipe = validated->layout;
  const TimeModel model(h100, options);
  REQUIRE(model.run_fit() != nullptr);
  CHECK(model.run_fit()->fitted_on.empty());
  const TrainingMemory memory = training_memory(validated->config, validated->layout, validated->cluster, validated->id);
  const std::vector<std::string> notes = cluster_step_time(model, validated->config, memory, validated->cluster).notes;
  bool said = false;
  for (const std::string& note : notes) {
    CHECK(note.find("leave-one-run-out median") == std::string::npos);
    said = said || note.find("fitted on no runs: no leave-one-run-out figures") != std::string::npos;
  }
  CHECK(said);
}

TEST_CASE("run fit: a profile's fit on no runs holds no leave-one-run-out figure, written or read", "[runs][honesty]") {
  CalibrationProfile h100 =
      load_calibration_profile(plausibility_source_dir + "/cuda_profiler/profiles/h100-sxm-published.json");
  REQUIRE_FALSE(h100.run_fits.empty());
  REQUIRE(h100.run_fits.front().fitted_on.empty());
  // Written: the fit on no runs without loo_* keys (before: "loo_median_error": 0.0), the fitted one with.
  const std::string text = calibration_profile_to_json(h100);
  const std::size_t first = text.find("\"run_fits\"");
  const std::size_t second = text.find("\"precision\": \"fp8-tensorwise\"", first);
  REQUIRE(second != std::string::npos);
  CHECK(text.substr(first, second - first).find("loo_median_error") == std::string::npos);
  CHECK(text.find("loo_median_error", second) != std::string::npos);
  CHECK(parse_calibration_profile(text, "h100.json") == h100);
  // Read: such a figure beside an empty fitted_on is refused by key.
  std::string with_figure = text;
  const std::size_t validated = with_figure.find("\"validated_on\"", first);
  with_figure.insert(validated, "\"loo_median_error\": 0.0, ");
  REQUIRE_THROWS_WITH(parse_calibration_profile(with_figure, "h100.json"),
                      Catch::Contains("/run_fits/0/loo_median_error") && Catch::Contains("fit on no runs"));
}
