// Issue 42 item 5: each cost line names the runs that validated it (budget::validation_records(),
// cost_line_validation(); docs/calibration.md, "Which runs validated each cost line"). Every record's
// figures are checked against a fit of its runs: the MoE records against calibrate --from-runs on
// data/runs/moe_runs.jsonl with each GPU's published profile, the others against the run_fits shipped
// in those profiles (fitted on data/runs/measured_runs.jsonl).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster_time.hpp"
#include "budget/run_fit.hpp"

using namespace budget;

namespace {

const std::string source_dir = BUDGET_SOURCE_DIR;

std::string profile_of(const std::string& gpu) {
  const std::map<std::string, std::string> files{{"NVIDIA H100", "h100-sxm"}, {"NVIDIA B200", "b200"},
                                                 {"NVIDIA GB200", "gb200"},   {"NVIDIA B300", "b300"},
                                                 {"NVIDIA GB300", "gb300"}};
  return source_dir + "/cuda_profiler/profiles/" + files.at(gpu) + "-published.json";
}

/// The validated Qwen3-30B-A3B H100 layout: 16 GPUs, EP 16, HybridEP.
const StepShape qwen3_h100{16, 1, 1, 1, 16, 2, "flex-hybridep"};

ClusterStepTime priced(const std::string& gpu, const std::string& recipe, bool moe, StepShape shape = qwen3_h100) {
  ClusterStepTime t;
  t.profile_gpu = gpu;
  t.fp8_recipe = parse_fp8_recipe(recipe, "test recipe");
  t.moe = moe;
  if (!moe) shape.dispatcher.clear();
  t.shape = shape;
  t.seconds_per_step = 2.0;
  t.by_component = {{"compute", 1.0, false},     {"ep_all_to_all", 0.5, false}, {"dp_grad_reduce_scatter", 0.2, true},
                    {"optimizer", 0.1, false},   {"bubble", 0.2, false},        {"made_up_collective", 0.1, false}};
  return t;
}

const CostLineValidation& line_named(const std::vector<CostLineValidation>& lines, const std::string& name) {
  for (const CostLineValidation& v : lines) {
    if (v.line == name) return v;
  }
  FAIL("no cost line " << name);
  return lines.front();
}

/// The box of a group of runs: their GPU count, TP, PP, CP and EP ranges and dispatchers.
void check_box_of_runs(const ValidationRecord& r, const std::vector<MeasuredRun>& runs,
                       const std::vector<std::string>& ids) {
  REQUIRE(!ids.empty());
  ValidationRecord box;
  bool first = true;
  for (const std::string& id : ids) {
    const auto run = std::find_if(runs.begin(), runs.end(), [&](const MeasuredRun& m) { return m.id == id; });
    REQUIRE(run != runs.end());
    const StepShape s = step_shape_of(run->layout, run->config.ffn.is_moe(), run->cluster.nvlink_domain());
    for (auto [range, v] : {std::pair{&box.gpus, s.gpus}, {&box.tp, s.tp}, {&box.pp, s.pp}, {&box.cp, s.cp}, {&box.ep, s.ep},
                            {&box.ep_domains, s.ep_domains}}) {
      range->min = first ? v : std::min(range->min, v);
      range->max = first ? v : std::max(range->max, v);
    }
    first = false;
    if (!s.dispatcher.empty() && std::find(box.dispatchers.begin(), box.dispatchers.end(), s.dispatcher) == box.dispatchers.end()) {
      box.dispatchers.push_back(s.dispatcher);
    }
  }
  for (auto [mine, theirs] : {std::pair{r.gpus, box.gpus}, {r.tp, box.tp}, {r.pp, box.pp}, {r.cp, box.cp}, {r.ep, box.ep},
                              {r.ep_domains, box.ep_domains}}) {
    CHECK(mine.min == theirs.min);
    CHECK(mine.max == theirs.max);
  }
  std::vector<std::string> dispatchers = r.dispatchers;
  std::sort(dispatchers.begin(), dispatchers.end());
  std::sort(box.dispatchers.begin(), box.dispatchers.end());
  CHECK(dispatchers == box.dispatchers);
}

}  // namespace

TEST_CASE("cost validation: every record's figures are those of a fit of its runs", "[runs][moe][validation]") {
  std::map<std::string, std::vector<RunFitResult>> moe_fits;
  const std::vector<MeasuredRun> runs = load_measured_runs(source_dir + "/data/runs/moe_runs.jsonl");
  const std::vector<MeasuredRun> dense_runs = load_measured_runs(source_dir + "/data/runs/measured_runs.jsonl");
  for (const ValidationRecord& r : validation_records()) {
    INFO(r.gpu << " " << r.precision << " " << r.models);
    const CalibrationProfile profile = load_calibration_profile(profile_of(r.gpu));
    if (r.runs_file == "data/runs/moe_runs.jsonl") {
      if (moe_fits.count(r.gpu) == 0) moe_fits[r.gpu] = fit_measured_runs(profile, runs, r.runs_file);
      const auto fit = std::find_if(moe_fits[r.gpu].begin(), moe_fits[r.gpu].end(),
                                    [&](const RunFitResult& f) { return to_string(f.fit.precision) == r.precision; });
      REQUIRE(fit != moe_fits[r.gpu].end());
      CHECK(static_cast<int>(fit->fit.fitted_on.size()) == r.fitted);
      CHECK(fit->fit.loo_median_error == Approx(r.median_error).margin(0.0005));
      CHECK(fit->fit.loo_max_error == Approx(r.worst_error).margin(0.0005));
      check_box_of_runs(r, runs, fit->fit.fitted_on);
      if (r.fitted == 1) {
        const auto run = std::find_if(fit->runs.begin(), fit->runs.end(),
                                      [&](const RunPrediction& p) { return p.id == fit->fit.fitted_on.front(); });
        REQUIRE(run != fit->runs.end());
        CHECK(run->before_s / run->measured_s - 1.0 == Approx(r.signed_error).margin(0.0005));
      }
    } else {
      const auto fit = std::find_if(profile.run_fits.begin(), profile.run_fits.end(),
                                    [&](const CalibrationRunFit& f) { return to_string(f.precision) == r.precision; });
      REQUIRE(fit != profile.run_fits.end());
      CHECK(fit->runs == r.runs_file);
      CHECK(static_cast<int>(fit->fitted_on.size()) == r.fitted);
      CHECK(fit->loo_median_error == Approx(r.median_error).margin(0.0005));
      CHECK(fit->loo_max_error == Approx(r.worst_error).margin(0.0005));
      check_box_of_runs(r, dense_runs, fit->fitted_on);
    }
  }
}

TEST_CASE("cost validation: each line names its nearest validated runs and how far the priced step lies",
          "[runs][validation]") {
  // H100, FP8 current scaling, MoE: the Qwen3-30B-A3B run is inside the box for GEMMs, attention,
  // experts, the all-to-all, DP and the optimizer.
  const std::vector<CostLineValidation> h100 = cost_line_validation(priced("NVIDIA H100 SXM5 80GB", "tensorwise", true));
  for (const char* name : {"GEMMs (fp8-tensorwise)", "attention", "expert GEMMs (fp8-tensorwise)", "ep", "dp", "optimizer"}) {
    const CostLineValidation& v = line_named(h100, name);
    REQUIRE(v.nearest != nullptr);
    CHECK(v.nearest->models.find("Qwen3-30B-A3B, 16 GPUs") != std::string::npos);
    CHECK(v.differences.empty());
  }
  // The pipeline (the bubble) at PP 8 on 64 GPUs: no MoE run on an H100 had PP; the nearest is the
  // dense Llama-3 70B at FP8 on H100 (64 GPUs, TP 4, PP 8), one difference away.
  const std::vector<CostLineValidation> h100_pp =
      cost_line_validation(priced("NVIDIA H100 SXM5 80GB", "tensorwise", true, {64, 1, 8, 1, 8, 1, "flex-hybridep"}));
  const CostLineValidation& pp = line_named(h100_pp, "pp");
  REQUIRE(pp.nearest != nullptr);
  CHECK(pp.nearest->models.find("Llama-3 70B") != std::string::npos);
  CHECK(pp.differences == std::vector<std::string>{"model kind (validated dense, priced MoE)"});
  // The same bubble at PP 4 on 16 GPUs: still the Llama-3 record (same GPU and precision; the
  // Mixtral runs at PP 1 to 4 were on B200 and GB200), now outside its layouts too.
  const std::vector<CostLineValidation> h100_pp4 =
      cost_line_validation(priced("NVIDIA H100 SXM5 80GB", "tensorwise", true, {16, 1, 4, 1, 4, 1, "flex-hybridep"}));
  CHECK(line_named(h100_pp4, "pp").differences ==
        std::vector<std::string>{"model kind (validated dense, priced MoE)", "GPU count (validated 64, priced 16)",
                                 "PP size (validated 8, priced 4)"});
  // A component no run speaks of says so.
  CHECK(line_named(h100, "made_up_collective").nearest == nullptr);
  // Dense on H100 at FP8: the Llama-3 runs; no expert line.
  const std::vector<CostLineValidation> dense = cost_line_validation(priced("NVIDIA H100 SXM5 80GB", "tensorwise", false));
  CHECK(line_named(dense, "GEMMs (fp8-tensorwise)").nearest->model_kind == "dense");
  CHECK(line_named(dense, "GEMMs (fp8-tensorwise)").differences.empty());
  CHECK(std::none_of(dense.begin(), dense.end(), [](const CostLineValidation& v) { return v.line.rfind("expert", 0) == 0; }));
  // A GPU no run was measured on (A100): every line differs in its GPU.
  for (const CostLineValidation& v : cost_line_validation(priced("NVIDIA A100-SXM4-80GB", "none", true))) {
    if (v.nearest == nullptr) continue;
    CHECK(v.differences.front().rfind("GPU (validated on", 0) == 0);
  }
  // Qwen3-235B-A22B's recipe on 256 H100 (TP 2, PP 8, EP 32 over 4 nodes of 8, the alltoall
  // dispatcher), BF16: the compute lines are inside the H100 BF16 MoE box, but its all-to-all lies
  // outside it in GPU count, EP size, nodes spanned and dispatcher, and its DP collectives in GPU
  // count: the validated runs were 16 GPUs at EP 16 (2 nodes) on HybridEP.
  const std::vector<CostLineValidation> big =
      cost_line_validation(priced("NVIDIA H100 SXM5 80GB", "none", true, {256, 2, 8, 1, 32, 4, "alltoall"}));
  CHECK(line_named(big, "GEMMs (bf16)").differences.empty());
  CHECK(line_named(big, "expert GEMMs (bf16)").differences.empty());
  CHECK(line_named(big, "optimizer").differences.empty());
  const CostLineValidation& ep = line_named(big, "ep");
  REQUIRE(ep.nearest != nullptr);
  CHECK(ep.nearest->models.find("Qwen3-30B-A3B, 16 GPUs") != std::string::npos);
  CHECK(ep.differences == std::vector<std::string>{"GPU count (validated 16, priced 256)", "EP size (validated 16, priced 32)",
                                                   "NVLink domains an EP group spans (validated 2, priced 4)",
                                                   "dispatcher (validated flex-hybridep, priced alltoall)"});
  // The EP group's placement: Qwen3-235B's EP 32 on 32-GPU NVLink domains spans one.
  ParallelLayout l;
  l.ep = 32;
  l.tp = 2;
  l.etp = 1;
  CHECK(step_shape_of(l, true, 8).ep_domains == 4);
  CHECK(step_shape_of(l, true, 72).ep_domains == 1);
  l.etp = 0;  // ETP = TP 2: the EP group's ranks stride 2, 64 GPUs
  CHECK(step_shape_of(l, true, 8).ep_domains == 8);
  CHECK(line_named(big, "dp").differences == std::vector<std::string>{"GPU count (validated 16, priced 256)"});
  // What the JSON's "validation" prints (render/'s cluster_step_time_json()): the first line's record.
  const std::vector<CostLineValidation> lines = cost_line_validation(priced("NVIDIA H100 SXM5 80GB", "tensorwise", true));
  REQUIRE(!lines.empty());
  CHECK(lines.front().line == "GEMMs (fp8-tensorwise)");
  CHECK(lines.front().differences.empty());
  REQUIRE(lines.front().nearest != nullptr);
  CHECK(lines.front().nearest->fitted == 1);
  CHECK(lines.front().nearest->gpus.min == 16);
  CHECK(lines.front().nearest->gpus.max == 16);
  CHECK(lines.front().nearest->dispatchers == std::vector<std::string>{"flex-hybridep"});
}
