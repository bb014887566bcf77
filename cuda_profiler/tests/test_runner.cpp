// The runner, the profile written through libbudget's writer, and a config's step plan, all
// through the fake timer (no GPU).

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/ops.hpp"
#include "budget/profiler/config_cases.hpp"
#include "budget/profiler/run.hpp"
#include "budget/profiler/sweep.hpp"

using namespace budget::profiler;
using budget::ProfileOp;

namespace {
const std::string configs_dir = std::string(BUDGET_SOURCE_DIR) + "/examples/configs/";
}

TEST_CASE("refused cuDNN head_dim yields a refused row and the padded fallback", "[profiler][runner]") {
  FakeTimer timer;
  const std::vector<OpCase> cases{attention_case(4, 512, 12, 4, 100, "forward"), gemm_case(64, 64, 64, "forward")};
  const auto rows = time_cases(cases, timer);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].timing.refused);
  CHECK(rows[0].timing.backend == "cudnn");
  CHECK_FALSE(rows[1].timing.refused);
  CHECK(rows[1].timing.backend == "fallback-pad8");
  CHECK(rows[1].op.at("head_dim") == 100);  // the row keeps the model's shape
  // The fallback was timed at head_dim 104: its roofline time is that of the padded case.
  CHECK(rows[1].timing.ms == Approx(RooflineRates{}.ms(attention_case(4, 512, 12, 4, 104, "forward"))));
  CHECK(rows[2].op.op == ProfileOp::gemm);
  CHECK(timer.timed_cases() == 3);
}

TEST_CASE("a simulated sweep writes a profile libbudget reads back unchanged", "[profiler][runner]") {
  FakeTimer timer;
  SweepOptions o;
  o.tokens = {4096};
  RunResult run;
  run.device = timer.device();
  run.method = timer.method();
  run.simulated = timer.simulated();
  run.peaks = timer.measure_peaks();
  run.rows = time_cases(sweep_cases(o), timer);
  const budget::CalibrationProfile p = to_profile(run, "budget-profile test", "2026-11-30T18:00:00Z");
  CHECK(p.source.tool.find("simulated") != std::string::npos);
  CHECK(p.source.notes.find("SIMULATED") != std::string::npos);
  CHECK(p.peaks.bf16_gemm_tflops == 760.0);
  REQUIRE(p.rows.size() == run.rows.size());
  std::size_t refused = 0;
  for (const auto& r : p.rows) refused += r.refused ? 1 : 0;
  CHECK(refused > 0);  // the head_dim-100 shapes
  const auto path = (std::filesystem::temp_directory_path() / "budget_profiler_roundtrip.json").string();
  budget::write_calibration_profile(p, path);
  const budget::CalibrationProfile back = budget::load_calibration_profile(path);
  std::remove(path.c_str());
  CHECK(back == p);
}

TEST_CASE("step plan of the paper's 200M baseline: FLOPs agree with libbudget's op list", "[profiler][configs]") {
  const budget::ArchConfig c = budget::load_arch_config(configs_dir + "paper-200M-S95-baseline.json");
  const budget::Workload w = budget::paper_workload();
  const std::int64_t T = 4 * w.seq_len;
  const StepPlan plan = step_plan(c, w, T);
  CHECK(plan.executed_layers == 12);
  // Σ forward matmul FLOPs per token (GEMMs and expert GEMMs, forward pass) against layer_ops().
  double plan_forward = 0, plan_attention = 0;
  std::map<std::string, int> ops;
  for (const StepOp& s : plan.ops) {
    ++ops[std::string(to_string(s.op.op))];
    if (s.op.pass != "forward") continue;
    const bool gemm_like = s.op.op == ProfileOp::gemm || s.op.op == ProfileOp::expert_gemms;
    if (gemm_like) plan_forward += s.op.flops * static_cast<double>(s.count);
    if (s.op.op == ProfileOp::attention) plan_attention += s.op.flops * static_cast<double>(s.count);
  }
  double ops_forward = 0, ops_attention = 0;
  for (const budget::Op& op : budget::layer_ops(c, w)) {
    if (op.kind == budget::OpKind::attention_scores)
      ops_attention += op.total_forward_flops();
    else
      ops_forward += op.total_forward_flops();
  }
  // Expert rows are floor(T·top_k/E) per expert: 682 of 682.67 here, 0.1% fewer.
  CHECK(plan_forward / static_cast<double>(T) == Approx(ops_forward).epsilon(2e-3));
  // Documents of round(2·400 − 1) = 799 tokens reproduce A = 400; the leftover document is shorter.
  CHECK(plan_attention / static_cast<double>(T) == Approx(ops_attention).epsilon(2e-2));
  bool found = false;
  for (const StepOp& s : plan.ops)
    if (s.op.op == ProfileOp::attention && s.op.at("doc_len") == 799) found = true;
  CHECK(found);
  CHECK(ops["rms_norm"] == 4);             // layers' norms and the final norm, forward and backward
  CHECK(ops["router_softmax_topk"] == 2);
  CHECK(ops["expert_gemms"] == 6);         // up_gate and down, three passes
  CHECK(ops["gemm"] == 9);                 // qkv, output projection, router; three passes
  CHECK_THROWS_AS(step_plan(c, w, 1000), budget::Error);
  budget::ArchConfig sliding = c;
  sliding.attention.sliding_window = 512;
  CHECK_THROWS_WITH(step_plan(sliding, w, T), Catch::Contains("sliding-window attention (not measured)"));
}

TEST_CASE("step time sums count × ms over the plan", "[profiler][configs]") {
  const budget::ArchConfig c = budget::load_arch_config(configs_dir + "paper-200M-S95-smelt.json");
  const budget::Workload w = budget::paper_workload();
  const StepPlan plan = step_plan(c, w, w.seq_len);
  const StepTime t = step_time(plan, [](const StepOp&) { return 1.0; });
  std::int64_t launches = 0;
  for (const StepOp& s : plan.ops) launches += s.count;
  CHECK(t.step_ms == Approx(static_cast<double>(launches)));
  CHECK(t.layer_ms == Approx(t.step_ms / static_cast<double>(c.executed_layers())));
  CHECK(t.per_token_us == Approx(t.step_ms * 1e3 / static_cast<double>(w.seq_len)));
  CHECK(c.executed_layers() > c.num_layers);  // a looped config: executions, not layers, count
}

namespace {
/// Refuses every attention shape (as cuDNN would refuse a graph it has no engine for).
class RefusingTimer final : public Timer {
 public:
  DeviceInfo device() const override { return {}; }
  std::string method() const override { return "test"; }
  bool simulated() const override { return true; }
  Peaks measure_peaks() override { return {1, 1}; }
  std::vector<CheckResult> check_correctness() override {
    return {CheckResult{"gemm", "gemm ok", 0, 1, true, {}}, CheckResult{"attention", "attention bad", 1, 0.02, false, {}}};
  }
  Timing time(const OpCase& c) override {
    if (c.op == ProfileOp::attention) return Timing{true, 0.0, "cudnn", "no engine"};
    return Timing{false, 1.0, "test", {}};
  }
};
}  // namespace

TEST_CASE("a refused fallback adds no second row and failed checks drop their op", "[profiler][runner]") {
  RefusingTimer timer;
  const auto rows = time_cases({attention_case(2, 64, 4, 4, 100, "forward")}, timer);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].timing.refused);
  const auto failed = failed_ops(timer.check_correctness());
  CHECK(failed == std::set<std::string>{"attention"});
  const auto kept = without_ops({gemm_case(8, 8, 8, "forward"), attention_case(2, 64, 4, 4, 64, "forward")}, failed);
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].op == ProfileOp::gemm);
}

TEST_CASE("a case that fails is listed and the others are still timed", "[profiler][runner]") {
  class FailingGemmTimer final : public Timer {
   public:
    DeviceInfo device() const override { return {}; }
    std::string method() const override { return "test"; }
    bool simulated() const override { return true; }
    Peaks measure_peaks() override { return {1, 1}; }
    std::vector<CheckResult> check_correctness() override { return {}; }
    Timing time(const OpCase& c) override {
      if (c.op == ProfileOp::gemm && c.at("K") == 7) throw CaseFailed("CUBLAS_STATUS_NOT_SUPPORTED");
      return Timing{false, 2.0, "test", {}};
    }
  } timer;
  const std::vector<OpCase> cases{gemm_case(8, 8, 8, "forward"), gemm_case(8, 7, 8, "forward"),
                                  rms_norm_case(8, 8, "forward")};
  std::vector<MeasuredRow> rows;
  std::vector<std::string> failures;
  time_cases_into(cases, timer, rows, {}, &failures);
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].op.op == ProfileOp::rms_norm);
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].find("K=7") != std::string::npos);
  CHECK(failures[0].find("NOT_SUPPORTED") != std::string::npos);
  CHECK_THROWS_AS(time_cases(cases, timer), CaseFailed);
}
