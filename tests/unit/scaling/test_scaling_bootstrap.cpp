// Cell-level bootstrap: percentiles, determinism across thread counts, coverage of the truth,
// paired draws, failed resamples, per-domain gains.

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>

#include "budget/error.hpp"
#include "budget/scaling_bootstrap.hpp"
#include "budget/scaling_plan.hpp"
#include "scaling/scaling_synthetic.hpp"

using namespace budget;
using namespace budget::detail;
using Catch::Matchers::Contains;

namespace {

/// E, A, K, a, b, c of each architecture, then γ of each, then the gain of the first over the
/// second at C = 1e21, S = 0.85.
std::vector<double> coefficients_and_gain(const std::vector<budget::ArchLaw>& laws) {
  std::vector<double> out;
  for (const auto& law : laws) {
    const ScalingCoefficients& k = law.overall.coefficients;
    out.insert(out.end(), {k.E, k.A, k.K, k.a, k.b, k.c, budget::frontier_exponent(k)});
  }
  out.push_back(budget::ce_gain(laws[0].overall.coefficients, laws[1].overall.coefficients, 1e21, 0.85).gain);
  return out;
}

std::vector<double> truth_of(const ScalingCoefficients& target, const ScalingCoefficients& reference) {
  budget::ArchLaw t, r;
  t.overall.coefficients = target;
  r.overall.coefficients = reference;
  return coefficients_and_gain({t, r});
}

const budget::GainQuery small_query{{1e20, 1e21}, {0.85, 0.97}};

}  // namespace

TEST_CASE("scaling bootstrap: percentiles interpolate like numpy (type 7)", "[scaling][bootstrap]") {
  const std::vector<double> values{4.0, 1.0, 3.0, 2.0};
  CHECK(budget::percentile(values, 50.0) == Approx(2.5));
  CHECK(budget::percentile(values, 2.5) == Approx(1.075));   // h = 3·0.025
  CHECK(budget::percentile(values, 97.5) == Approx(3.925));  // h = 3·0.975
  CHECK(budget::percentile(values, 0.0) == 1.0);
  CHECK(budget::percentile(values, 100.0) == 4.0);
  CHECK(budget::percentile({7.0}, 2.5) == 7.0);
  CHECK(std::isnan(budget::percentile({}, 50.0)));
}

TEST_CASE("scaling bootstrap: bit-identical for a seed whatever the thread count", "[scaling][bootstrap]") {
  const auto target = synthetic_paper_grid(paper_looped_coefficients(), "looped", 0.005, 21);
  const auto reference = synthetic_paper_grid(paper_baseline_coefficients(), "baseline", 0.005, 22);
  BootstrapOptions options;
  options.resamples = 60;
  options.seed = 7;
  std::vector<budget::BootstrappedGainReport> runs;
  for (unsigned threads : {1u, 2u, 3u}) {
    options.threads = threads;
    runs.push_back(budget::bootstrap_gain_report(target, reference, small_query, options));
  }
  for (std::size_t run = 1; run < runs.size(); ++run) {
    CHECK(runs[run].bootstrap.samples == runs[0].bootstrap.samples);  // exact equality of every double
    REQUIRE(runs[run].report.entries.size() == runs[0].report.entries.size());
    for (std::size_t i = 0; i < runs[0].report.entries.size(); ++i) {
      CHECK(runs[run].report.entries[i].gain.lower == runs[0].report.entries[i].gain.lower);
      CHECK(runs[run].report.entries[i].gain.upper == runs[0].report.entries[i].gain.upper);
    }
  }
  CHECK(runs[0].bootstrap.paired);
  CHECK(runs[0].bootstrap.failed_resamples == 0);
  // A different seed draws different cells.
  options.seed = 8;
  options.threads = 2;
  CHECK(budget::bootstrap_gain_report(target, reference, small_query, options).bootstrap.samples !=
        runs[0].bootstrap.samples);
}

// The acceptance check, on the first seeds tried (1 and 2 for the noise, 1 for the draws).
// It is a statistical statement: over 40 other noise seeds (B = 200) each of the 15 quantities was
// covered in 37–40 cases, and all 15 at once in 29 of 40 (docs/scaling.md).
TEST_CASE("scaling bootstrap: with 0.5% noise the truth lies inside the 95% intervals", "[scaling][bootstrap]") {
  const ScalingCoefficients looped = paper_looped_coefficients(), baseline = paper_baseline_coefficients();
  const auto target = synthetic_paper_grid(looped, "looped", 0.005, 1);
  const auto reference = synthetic_paper_grid(baseline, "baseline", 0.005, 2);
  BootstrapOptions options;
  options.resamples = 200;
  options.seed = 1;
  const BootstrapResult result = budget::bootstrap({target, reference}, coefficients_and_gain, options);
  const std::vector<double> truth = truth_of(looped, baseline);
  const char* names[] = {"E", "A", "K", "a", "b", "c", "gamma"};
  REQUIRE(result.quantities.size() == truth.size());
  CHECK(result.failed_resamples == 0);
  for (std::size_t q = 0; q < truth.size(); ++q) {
    const auto& e = result.quantities[q];
    const std::string name = q + 1 == truth.size() ? "gain" : std::string(q < 7 ? "looped " : "baseline ") + names[q % 7];
    INFO(name << ": truth " << truth[q] << ", estimate " << e.value << ", interval [" << e.lower << ", " << e.upper << "]");
    CHECK(e.lower <= e.value);
    CHECK(e.value <= e.upper);
    CHECK(e.lower <= truth[q]);
    CHECK(truth[q] <= e.upper);
  }
}

TEST_CASE("scaling bootstrap: unpaired when the cells differ, resamples = 0, progress", "[scaling][bootstrap]") {
  const auto target = synthetic_paper_grid(paper_looped_coefficients(), "looped", 0.005, 31);
  auto reference = synthetic_paper_grid(paper_baseline_coefficients(), "baseline", 0.005, 32);
  for (auto& p : reference) p.cell += "-baseline";
  BootstrapOptions options;
  options.resamples = 20;
  std::atomic<std::size_t> last_done{0};
  std::atomic<bool> monotone{true};
  options.progress = [&](std::size_t done, std::size_t total) {
    if (done < last_done.load() || total != 20) monotone = false;
    last_done = done;
  };
  const BootstrapResult result = budget::bootstrap({target, reference}, coefficients_and_gain, options);
  CHECK_FALSE(result.paired);
  CHECK(result.samples.size() == 20);
  CHECK(last_done.load() == 20);
  CHECK(monotone.load());

  options.resamples = 0;
  options.progress = {};
  const BootstrapResult estimates_only = budget::bootstrap({target, reference}, coefficients_and_gain, options);
  CHECK(estimates_only.samples.empty());
  for (const auto& e : estimates_only.quantities) {
    CHECK(std::isfinite(e.value));
    CHECK_FALSE(e.has_interval());
  }
  CHECK(estimates_only.quantities[0].value == result.quantities[0].value);
}

TEST_CASE("scaling bootstrap: resamples whose refit is impossible are counted and left out", "[scaling][bootstrap]") {
  // Three cells: a draw of one cell three times has a single F and cannot be fitted (P = 1/9).
  std::vector<LossPoint> points;
  const ScalingCoefficients k = paper_baseline_coefficients();
  for (double F : {6e8, 2e9, 8e9}) {
    for (double D : {2e10, 4e10, 8e10, 1.6e11}) {
      LossPoint p;
      p.arch = "x";
      p.cell = std::to_string(F);
      p.F = F;
      p.S = 0.9;
      p.D = D;
      p.loss = budget::predict_loss(k, F, 0.9, D);
      points.push_back(p);
    }
  }
  BootstrapOptions options;
  options.resamples = 90;
  const auto statistic = [](const std::vector<budget::ArchLaw>& laws) {
    return std::vector<double>{laws[0].overall.coefficients.E};
  };
  const BootstrapResult result = budget::bootstrap({points}, statistic, options);
  CHECK(result.failed_resamples > 0);
  CHECK(result.failed_resamples < 30);
  CHECK_THAT(result.first_failure, Contains("every point has the same F"));
  std::size_t empty = 0;
  for (const auto& s : result.samples) empty += s.empty();
  CHECK(empty == result.failed_resamples);
  CHECK(result.quantities[0].has_interval());
}

TEST_CASE("scaling bootstrap: an unexpected exception in a worker reaches the caller", "[scaling][bootstrap]") {
  const auto points = synthetic_paper_grid(paper_looped_coefficients(), "looped", 0.005, 41);
  std::atomic<int> calls{0};
  const auto statistic = [&](const std::vector<budget::ArchLaw>& laws) -> std::vector<double> {
    if (calls++ == 5) throw std::logic_error("statistic bug");
    return {laws[0].overall.coefficients.a};
  };
  BootstrapOptions options;
  options.resamples = 40;
  options.threads = 2;
  CHECK_THROWS_WITH(budget::bootstrap({points}, statistic, options), "statistic bug");
}

TEST_CASE("scaling bootstrap: gain report with per-domain gains from the test data", "[scaling][bootstrap]") {
  const auto data = budget::read_loss_csv(std::string(BUDGET_TEST_DATA_DIR) + "/scaling_paired_domains.csv");
  const auto target = budget::points_of_arch(data.points, "looped");
  const auto reference = budget::points_of_arch(data.points, "baseline");
  BootstrapOptions options;
  options.resamples = 40;
  const auto result = budget::bootstrap_gain_report(target, reference, small_query, options);
  const auto& report = result.report;
  CHECK(report.target_arch == "looped");
  CHECK(report.reference_arch == "baseline");
  REQUIRE(report.entries.size() == 4);
  CHECK(report.entries[0].S == 0.85);
  CHECK(report.entries[0].C == 1e20);
  CHECK(report.entries[1].C == 1e21);
  REQUIRE(report.domain_entries.size() == 8);  // web, code × 2 sparsities × 2 budgets
  CHECK(report.domain_entries[0].domain == "web");
  CHECK(report.domain_entries[4].domain == "code");
  for (const auto& e : report.entries) {
    CHECK(e.gain.has_interval());
    CHECK(e.tpp_target.has_interval());
    CHECK(e.gain.lower <= e.gain.upper);
  }
  for (const auto& d : report.domain_entries) CHECK(d.gain.has_interval());
  CHECK(report.gamma_target.has_interval());

  // Point estimates from coefficient files, intervals from the data: layouts must agree.
  budget::GainReport from_files = budget::gain_report(result.bootstrap.full_fits[0], result.bootstrap.full_fits[1], small_query);
  budget::copy_intervals(report, from_files);
  CHECK(from_files.entries[1].gain.lower == report.entries[1].gain.lower);
  budget::GainReport other = budget::gain_report(result.bootstrap.full_fits[0], result.bootstrap.full_fits[1],
                                                 budget::GainQuery{{1e22}, {0.85}});
  CHECK_THROWS_WITH(budget::copy_intervals(report, other), Contains("differ in budgets, sparsities or domains"));
}

TEST_CASE("scaling bootstrap: options are validated up front", "[scaling][bootstrap]") {
  const auto points = synthetic_paper_grid(paper_looped_coefficients(), "looped");
  const auto statistic = [](const std::vector<budget::ArchLaw>&) { return std::vector<double>{0.0}; };
  BootstrapOptions options;
  options.lower_percentile = 97.5;
  options.upper_percentile = 2.5;
  CHECK_THROWS_WITH(budget::bootstrap({points}, statistic, options), Contains("bootstrap options: percentiles 97.5 and 2.5"));
  options = {};
  options.refit.huber_delta = -1.0;
  CHECK_THROWS_WITH(budget::bootstrap({points}, statistic, options), Contains("refit: huber_delta = -1 is not allowed"));
  CHECK_THROWS_WITH(budget::bootstrap({}, statistic, BootstrapOptions{}), Contains("at least one architecture"));
}
