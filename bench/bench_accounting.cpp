// Cost of accounting one config (issue 2): the op list plus its sum, and the validating
// account(config, workload), for the SMELT paper's 200M S95 baseline and its looped config.
// Reference point in the same run: the three budgets (F, N, KV) computed by a hand-inlined closed
// form with no op list and no validation. After the runs the program prints each benchmark's CPU
// time relative to that reference.
//
//   bench_accounting [--benchmark_min_time=0.2] [--benchmark_repetitions=5 ...]

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include <benchmark/benchmark.h>

#include "budget/accounting.hpp"
#include "budget/config.hpp"
#include "budget/config_io.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"

namespace {

/// The paper's 200M cell at S ≈ 95%: the baseline and its looped (SMELT) config, as shipped in
/// examples/configs/ (vocab_size 0: the matched budgets alone).
budget::ArchConfig config_for(const std::string& which) {
  const std::string name = which == "looped" ? "paper-200M-S95-smelt" : "paper-200M-S95-baseline";
  return budget::load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/examples/configs/" + name + ".json");
}

/// The three matched budgets in closed form, for an MoE config without shared experts or dense
/// layers (docs/accounting.md): per layer, attention H(q + 2kv) + qH, router HE, experts m·H·d·E
/// (top_k of them active), norms 2H; F = passes · executed · (2·active weights + 4qA).
struct ClosedForm {
  double training_flops = 0;
  std::int64_t params = 0;
  std::int64_t kv_elements = 0;
};

ClosedForm closed_form(const budget::ArchConfig& c, double attended_keys, std::int64_t passes) {
  const std::int64_t H = c.hidden_size;
  const std::int64_t q = c.attention.num_heads * c.attention.head_dim;
  const std::int64_t kv = c.attention.num_kv_heads * c.attention.head_dim;
  const std::int64_t m = c.ffn.gated ? 3 : 2;
  const std::int64_t executed = c.num_layers + (c.loop ? (c.loop->repeats - 1) * (c.loop->last - c.loop->first + 1) : 0);
  const std::int64_t attention = H * (q + 2 * kv) + q * H;
  const std::int64_t router = H * c.ffn.num_experts;
  const std::int64_t expert = m * H * c.ffn.expert_dim;
  ClosedForm r;
  r.params = c.num_layers * (attention + router + expert * c.ffn.num_experts + 2 * H) + H;
  const double active_weights = static_cast<double>(attention + router + expert * c.ffn.top_k);
  r.training_flops = static_cast<double>(passes) * static_cast<double>(executed) *
                     (2.0 * active_weights + 4.0 * static_cast<double>(q) * attended_keys);
  r.kv_elements = 2 * executed * kv;
  return r;
}

void BM_layer_ops_and_account(benchmark::State& state, const std::string& which) {
  const budget::ArchConfig config = config_for(which);
  const budget::Workload workload = budget::paper_workload();
  for (auto _ : state) {
    const auto ops = budget::layer_ops(config, workload);
    budget::Budgets b = budget::account(ops, config, workload);
    benchmark::DoNotOptimize(b);
  }
}

void BM_account_validated(benchmark::State& state, const std::string& which) {
  const budget::ArchConfig config = config_for(which);
  const budget::Workload workload = budget::paper_workload();
  for (auto _ : state) {
    budget::Budgets b = budget::account(config, workload);
    benchmark::DoNotOptimize(b);
  }
}

void BM_closed_form_reference(benchmark::State& state, const std::string& which) {
  budget::ArchConfig config = config_for(which);
  double attended_keys = 400.0;
  std::int64_t passes = 3;
  for (auto _ : state) {
    // Hide the inputs from the optimiser so the arithmetic is redone every iteration.
    benchmark::DoNotOptimize(config.hidden_size);
    benchmark::DoNotOptimize(config.ffn.num_experts);
    benchmark::DoNotOptimize(attended_keys);
    benchmark::DoNotOptimize(passes);
    ClosedForm r = closed_form(config, attended_keys, passes);
    benchmark::DoNotOptimize(r);
  }
}

BENCHMARK_CAPTURE(BM_closed_form_reference, baseline, std::string("baseline"))->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(BM_closed_form_reference, looped, std::string("looped"))->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(BM_layer_ops_and_account, baseline, std::string("baseline"))->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(BM_layer_ops_and_account, looped, std::string("looped"))->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(BM_account_validated, baseline, std::string("baseline"))->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(BM_account_validated, looped, std::string("looped"))->Unit(benchmark::kNanosecond);

/// The console reporter, also keeping each benchmark's CPU time per iteration (ns): CPU time, not
/// wall time, so that other processes on a shared machine disturb the ratios less.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  // A custom reporter does not get --benchmark_color; colour only on a terminal.
  RecordingReporter() : ConsoleReporter(isatty(fileno(stdout)) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      // With --benchmark_repetitions keep the mean; without, the one iteration run.
      std::string name = run.benchmark_name();
      if (run.run_type == Run::RT_Aggregate) {
        if (run.aggregate_name != "mean") continue;
        name.resize(name.size() - std::string("_mean").size());
      }
      times_ns_[name] = run.GetAdjustedCPUTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const std::map<std::string, double>& times_ns() const { return times_ns_; }

 private:
  std::map<std::string, double> times_ns_;
};

}  // namespace

int main(int argc, char** argv) {
  // The closed form must agree with the library, or the comparison is meaningless.
  for (const char* which : {"baseline", "looped"}) {
    const budget::ArchConfig c = config_for(which);
    const budget::Budgets b = budget::account(c, budget::paper_workload());
    const ClosedForm r = closed_form(c, 400.0, 3);
    if (r.params != b.non_embedding_params_total || r.training_flops != b.training_flops_per_token ||
        r.kv_elements != b.kv_elements_per_token) {
      std::fprintf(stderr, "closed form disagrees with account() for %s\n", which);
      return 1;
    }
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  const auto& t = reporter.times_ns();
  std::printf("\nCPU time per config relative to the hand-inlined closed form (same config):\n");
  for (const char* which : {"baseline", "looped"}) {
    const auto reference = t.find(std::string("BM_closed_form_reference/") + which);
    if (reference == t.end() || reference->second <= 0) continue;
    for (const char* name : {"BM_layer_ops_and_account", "BM_account_validated"}) {
      const auto it = t.find(std::string(name) + "/" + which);
      if (it == t.end()) continue;
      std::printf("  %-26s %-8s %8.1f ns  = %6.1f x closed form (%.2f ns)\n", name, which, it->second,
                  it->second / reference->second, reference->second);
    }
  }
  return 0;
}
