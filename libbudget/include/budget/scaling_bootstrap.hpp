#pragma once
/// \file
/// Uncertainty of scaling-law results by a cell-level bootstrap (docs/scaling.md, "Bootstrap"),
/// and the paper's gain tables (gains for budgets × sparsities, tokens per parameter, γ).
///
/// One resample draws as many cells as the data has, with replacement, takes every row of every
/// drawn cell (as often as it was drawn), refits every architecture (overall law, then the
/// per-domain intercepts) and recomputes every reported quantity. Intervals are the 2.5 and 97.5
/// percentiles of the resampled quantities. When all architectures have the same cell names the
/// draw is paired (the same cells for each, as the paper's paired runs see the same tokens);
/// otherwise each architecture's cells are drawn independently.
///
/// Resample i draws from std::mt19937_64 seeded with splitmix64(seed, i) and writes only its own
/// slot, so results are bit-identical for a seed whatever the thread count.
///
/// Thread safety: every function here is reentrant; bootstrap() runs its own worker threads and
/// calls the statistic from them concurrently (see BootstrapStatistic).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "budget/scaling_data.hpp"
#include "budget/scaling_fit.hpp"

namespace budget {

struct BootstrapOptions {
  std::size_t resamples = 2000;  ///< B
  std::uint64_t seed = 1;
  unsigned threads = 0;          ///< 0: std::thread::hardware_concurrency()
  /// Options of the fit on all the data (the estimates, and the warm start of every refit).
  FitOptions full_fit;
  /// Options of every refit. Each refit also starts from the full-data fit (a warm start, tried
  /// first); the default adds a reduced grid as a guard against resamples whose optimum lies far
  /// from it.
  FitOptions refit = default_refit_options();
  double lower_percentile = 2.5;
  double upper_percentile = 97.5;
  /// Called from the calling thread about five times a second and once at the end with the
  /// number of finished resamples; may be empty.
  std::function<void(std::size_t done, std::size_t total)> progress;

  /// The refit options used by default: FitOptions{} with the reduced grid a ∈ {0.3, 0.7},
  /// b = 0.3, c = 0.5, e_fraction = 0.7 (two starts besides the warm start; on the paper-like
  /// grid they reach the full grid's optimum, see docs/scaling.md).
  static FitOptions default_refit_options();
  /// Empty when usable, else a message naming the bad field and what is allowed.
  std::string validation_error() const;
};

/// Quantities computed from the laws of all architectures (in the order they were given). Called
/// concurrently from the worker threads: it must be safe to call from several threads at once.
/// budget::Error thrown by it marks the resample as failed; any other exception stops the run.
using BootstrapStatistic = std::function<std::vector<double>(const std::vector<ArchLaw>& laws)>;

/// An estimate and its bootstrap interval (NaN where there is none).
struct Estimate {
  double value = std::numeric_limits<double>::quiet_NaN();
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
  bool has_interval() const;
};

struct BootstrapResult {
  std::vector<ArchLaw> full_fits;      ///< each architecture fitted on all its data
  std::vector<Estimate> quantities;    ///< statistic(full_fits) with the percentile intervals
  /// samples[i] = statistic of resample i; empty for a failed resample.
  std::vector<std::vector<double>> samples;
  std::size_t failed_resamples = 0;    ///< refits rejected (e.g. a draw with a single F value)
  std::string first_failure;           ///< the message of the first failed resample, if any
  bool paired = false;                 ///< the same cells were drawn for every architecture
};

/// Runs the bootstrap. `arch_points[k]` holds every row (overall and per-domain) of one
/// architecture. Throws budget::Error for invalid options, an empty architecture, or data the
/// full fit rejects. Intervals need at least one successful resample; with resamples = 0 only the
/// estimates are computed.
BootstrapResult bootstrap(const std::vector<std::vector<LossPoint>>& arch_points,
                          const BootstrapStatistic& statistic, const BootstrapOptions& options = {});

/// The p-th percentile (0 ≤ p ≤ 100) of `values`, linearly interpolated between order statistics
/// (numpy's default, R's type 7). NaN for an empty list.
double percentile(std::vector<double> values, double p);

/// Budgets × sparsities at which gains are reported.
struct GainQuery {
  std::vector<double> budgets;
  std::vector<double> sparsities;
};

/// The paper's tables for a target over a reference architecture.
struct GainReport {
  struct Entry {
    double C = 0.0;
    double S = 0.0;
    Estimate gain;            ///< 1 − C / C_ref
    Estimate C_reference;     ///< budget the reference needs for the target's loss
    Estimate loss;            ///< L*_tgt(C, S)
    Estimate tpp_target;      ///< 6·D*/F* of the target at C
    Estimate tpp_reference;   ///< 6·D*/F* of the reference at C
  };
  struct DomainEntry {
    std::string domain;
    double C = 0.0;
    double S = 0.0;
    Estimate gain;
  };
  std::string target_arch;
  std::string reference_arch;
  Estimate gamma_target;
  Estimate gamma_reference;
  std::vector<Entry> entries;               ///< for each S, for each C (query order)
  std::vector<DomainEntry> domain_entries;  ///< for each domain of both laws, each S, each C
};

/// The report's values (no intervals). Domains are those present in both laws (target order).
/// Throws budget::Error where a gain does not exist (see ce_gain).
GainReport gain_report(const ArchLaw& target, const ArchLaw& reference, const GainQuery& query);

/// The report with values from the full-data fits and bootstrap intervals for every quantity.
struct BootstrappedGainReport {
  GainReport report;
  BootstrapResult bootstrap;
};
BootstrappedGainReport bootstrap_gain_report(const std::vector<LossPoint>& target_points,
                                             const std::vector<LossPoint>& reference_points,
                                             const GainQuery& query, const BootstrapOptions& options = {});

/// Copies the intervals of `from` into `to` (same query and domains; budget::Error otherwise),
/// keeping the values of `to`: point estimates from coefficient files, intervals from data.
void copy_intervals(const GainReport& from, GainReport& to);

}  // namespace budget
