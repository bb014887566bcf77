// Speed of the scaling-law fit and bootstrap (issue: "a fit of 72 points with the default multistart
// grid and a 2000-resample bootstrap of two architectures, under 5 s in total on 2 cores"), and a
// comparison with the SciPy reference fit (bench/reference_fit.py) where /usr/bin/python3 has SciPy.
//
// After the Google Benchmark cases, main() times the acceptance workload once end to end and, if
// SciPy is there, fits the same 72 points with it and prints the time ratio and the agreement.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/scaling.hpp"
#include "scaling/scaling_synthetic.hpp"

namespace {

using budget::detail::paper_baseline_coefficients;
using budget::detail::paper_looped_coefficients;
using budget::detail::synthetic_paper_grid;

constexpr double noise_sigma = 0.005;

std::vector<budget::LossPoint> looped_points() { return synthetic_paper_grid(paper_looped_coefficients(), "looped", noise_sigma, 12); }
std::vector<budget::LossPoint> baseline_points() {
  return synthetic_paper_grid(paper_baseline_coefficients(), "baseline", noise_sigma, 11);
}

const budget::GainQuery paper_query{{1e20, 1e21, 1e22}, {0.85, 0.95, 0.97}};

// /threads:1 the starts one after another; /threads:0 on every core (what `budget-match fit` does:
// the same result bit for bit). CPU is every thread's. /nlopt:1 is the reference in the same run:
// NLopt's L-BFGS, the minimiser before issue 35 (FitMinimizer::nlopt_lbfgs), on the same objective.
void BM_Fit72Points(benchmark::State& state) {
  const auto points = looped_points();
  budget::FitOptions options;
  options.threads = static_cast<unsigned>(state.range(0));
  options.minimizer = state.range(1) != 0 ? budget::FitMinimizer::nlopt_lbfgs : budget::FitMinimizer::newton;
  budget::FitResult fit;
  for (auto _ : state) benchmark::DoNotOptimize(fit = budget::fit_scaling_law(points, options));
  state.counters["evaluations"] = fit.summary.total_evaluations;
  state.SetLabel(state.range(1) != 0 ? "default grid, NLopt L-BFGS (reference)" : "default grid, Newton");
}
BENCHMARK(BM_Fit72Points)
    ->ArgNames({"threads", "nlopt"})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({0, 0})
    ->Args({0, 1})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_Bootstrap2000TwoArchs(benchmark::State& state) {
  const auto target = looped_points();
  const auto reference = baseline_points();
  budget::BootstrapOptions options;
  options.threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(budget::bootstrap_gain_report(target, reference, paper_query, options));
  state.SetLabel(fmt::format("B = 2000, {} threads", options.threads));
}
BENCHMARK(BM_Bootstrap2000TwoArchs)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The acceptance workload once, end to end, on two threads.
void report_acceptance_total() {
  const auto target = looped_points();
  const auto reference = baseline_points();
  const auto start = std::chrono::steady_clock::now();
  const budget::FitResult fit = budget::fit_scaling_law(target);
  const double fit_s = seconds_since(start);
  budget::BootstrapOptions options;
  options.threads = 2;
  const auto report = budget::bootstrap_gain_report(target, reference, paper_query, options);
  const double total_s = seconds_since(start);
  std::printf("\nacceptance: fit of 72 points %.1f ms + 2000-resample bootstrap of two archs (2 threads) = %.2f s total "
              "(limit 5 s on 2 cores: %s); %zu failed resamples; hardware threads here: %u\n",
              1e3 * fit_s, total_s, total_s < 5.0 ? "met" : "NOT met", report.bootstrap.failed_resamples,
              std::thread::hardware_concurrency());
  (void)fit;
}

bool python_has_scipy() { return std::system("/usr/bin/python3 -c 'import scipy' > /dev/null 2>&1") == 0; }

std::string write_csv(const std::vector<budget::LossPoint>& points) {
  const auto path = std::filesystem::temp_directory_path() / fmt::format("bench_scaling_{}.csv", ::getpid());
  std::ofstream out(path);
  out << "arch,cell,F,S,D,loss\n";
  for (const auto& p : points) out << fmt::format("{},{},{:.17g},{:.17g},{:.17g},{:.17g}\n", p.arch, p.cell, p.F, p.S, p.D, p.loss);
  return path.string();
}

std::string run_and_capture(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  pclose(pipe);
  return output;
}

/// Fits the same 72 points with SciPy (bench/reference_fit.py) and compares time and result.
void report_scipy_reference() {
  if (!python_has_scipy()) {
    std::printf("SciPy reference skipped: /usr/bin/python3 cannot import scipy (Debian: apt-get install python3-scipy)\n");
    return;
  }
  const auto points = looped_points();
  const std::string csv = write_csv(points);
  const std::string script = std::string(BUDGET_SOURCE_DIR) + "/bench/reference_fit.py";
  const std::string output = run_and_capture(fmt::format("/usr/bin/python3 '{}' '{}' --repeats 3", script, csv));
  std::filesystem::remove(csv);
  nlohmann::json reference;
  try {
    reference = nlohmann::json::parse(output);
  } catch (const nlohmann::json::exception&) {
    std::printf("SciPy reference failed; its output was:\n%s\n", output.c_str());
    return;
  }
  // Ours the fastest of 20 (SciPy's of 3; each fit is ~50x longer): CPU time on one thread (the
  // ratio a loaded machine does not distort), wall time on every core (what `fit` runs).
  double ours_cpu_s = 1e300, ours_wall_s = 1e300, nlopt_cpu_s = 1e300;
  budget::FitResult ours, nlopt;
  budget::FitOptions one, every, before;
  every.threads = 0;
  before.minimizer = budget::FitMinimizer::nlopt_lbfgs;
  for (int repeat = 0; repeat < 20; ++repeat) {
    const std::clock_t start_cpu = std::clock();
    ours = budget::fit_scaling_law(points, one);
    ours_cpu_s = std::min(ours_cpu_s, static_cast<double>(std::clock() - start_cpu) / CLOCKS_PER_SEC);
    const auto start = std::chrono::steady_clock::now();
    const budget::FitResult parallel = budget::fit_scaling_law(points, every);
    ours_wall_s = std::min(ours_wall_s, seconds_since(start));
    if (parallel.summary.objective != ours.summary.objective) std::printf("threads changed the fit (a bug)\n");
    const std::clock_t start_nlopt = std::clock();
    nlopt = budget::fit_scaling_law(points, before);
    nlopt_cpu_s = std::min(nlopt_cpu_s, static_cast<double>(std::clock() - start_nlopt) / CLOCKS_PER_SEC);
  }
  const double scipy_s = reference["seconds"].get<double>();
  const double scipy_cpu_s = reference["cpu_seconds"].get<double>();
  const auto& k = ours.coefficients;
  const auto& r = reference["coefficients"];
  double coefficient_difference = 0.0;
  for (const auto& [name, value] : {std::pair{"E", k.E}, {"A", k.A}, {"K", k.K}, {"a", k.a}, {"b", k.b}, {"c", k.c}}) {
    coefficient_difference = std::max(coefficient_difference, std::fabs(value / r[name].get<double>() - 1.0));
  }
  std::printf("SciPy %s reference (L-BFGS-B, same objective, grid and bounds), the fastest of 3: CPU %.1f ms, wall %.1f "
              "ms\n  budget, the fastest of 20: CPU %.2f ms on one thread (%.1fx faster), wall %.2f ms on %u threads "
              "(%.1fx faster)\n  objectives %.12g (SciPy) vs %.12g (budget); largest relative coefficient difference "
              "%.2g\n",
              reference["scipy_version"].get<std::string>().c_str(), 1e3 * scipy_cpu_s, 1e3 * scipy_s, 1e3 * ours_cpu_s,
              scipy_cpu_s / ours_cpu_s, 1e3 * ours_wall_s, std::thread::hardware_concurrency(), scipy_s / ours_wall_s,
              reference["objective"].get<double>(), ours.summary.objective, coefficient_difference);
  std::printf("  the minimiser before issue 35 (NLopt's L-BFGS, same objective), the fastest of 20: CPU %.2f ms on one "
              "thread (%.1fx faster than SciPy; Newton %.1fx faster than it); objective %.12g; evaluations %d against "
              "Newton's %d\n",
              1e3 * nlopt_cpu_s, scipy_cpu_s / nlopt_cpu_s, nlopt_cpu_s / ours_cpu_s, nlopt.summary.objective,
              nlopt.summary.total_evaluations, ours.summary.total_evaluations);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  report_acceptance_total();
  report_scipy_reference();
  return 0;
}
