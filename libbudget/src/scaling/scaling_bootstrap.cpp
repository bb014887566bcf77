#include "budget/scaling_bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/progress.hpp"
#include "budget/scaling_plan.hpp"
#include "base/parallel_for.hpp"

namespace budget {

// ---------------------------------------------------------------------------------------------
// Options, estimates, percentiles

FitOptions BootstrapOptions::default_refit_options() {
  FitOptions options;
  options.grid.a = {0.3, 0.7};
  options.grid.b = {0.3};
  options.grid.c = {0.5};
  options.grid.e_fraction = {0.7};
  return options;
}

std::string BootstrapOptions::validation_error() const {
  if (!(lower_percentile >= 0.0 && lower_percentile < upper_percentile && upper_percentile <= 100.0)) {
    return fmt::format("percentiles {} and {} are not allowed; allowed: 0 ≤ lower < upper ≤ 100", lower_percentile,
                       upper_percentile);
  }
  if (std::string m = full_fit.validation_error(); !m.empty()) return "full_fit: " + m;
  if (std::string m = refit.validation_error(); !m.empty()) return "refit: " + m;
  return {};
}

bool Estimate::has_interval() const { return !std::isnan(lower) && !std::isnan(upper); }

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  // Type 7: h = (n − 1)·p/100, interpolate between the order statistics around h.
  const double h = (static_cast<double>(values.size()) - 1.0) * std::clamp(p, 0.0, 100.0) / 100.0;
  const auto below = static_cast<std::size_t>(std::floor(h));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (h - static_cast<double>(below)) * (values[above] - values[below]);
}

namespace {

// ---------------------------------------------------------------------------------------------
// Random draws

/// splitmix64's output function (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// The seed of resample `index`: independent of any other resample and of the thread count.
std::uint64_t resample_seed(std::uint64_t seed, std::uint64_t index) { return splitmix64(splitmix64(seed) ^ index); }

/// A uniform integer in [0, n) by rejection (no modulo bias, same on every platform, unlike
/// std::uniform_int_distribution whose algorithm the standard leaves open).
std::size_t uniform_index(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t range = n;
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t draw;
  do {
    draw = rng();
  } while (draw >= limit);
  return static_cast<std::size_t>(draw % range);
}

// ---------------------------------------------------------------------------------------------
// Cells

/// One architecture's rows grouped by cell.
struct CellIndex {
  std::vector<std::string> names;
  std::vector<std::vector<std::size_t>> rows;  // rows[k]: indices of cell names[k]'s points

  explicit CellIndex(const std::vector<LossPoint>& points) {
    names = cells(points);
    rows.resize(names.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      const auto k = static_cast<std::size_t>(std::find(names.begin(), names.end(), points[i].cell) - names.begin());
      rows[k].push_back(i);
    }
  }

  std::size_t position(const std::string& name) const {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  }
};

bool same_cells(const std::vector<CellIndex>& indices) {
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto first = sorted(indices.front().names);
  return std::all_of(indices.begin(), indices.end(), [&](const CellIndex& c) { return sorted(c.names) == first; });
}

/// The resampled rows of every architecture for one draw.
std::vector<std::vector<LossPoint>> draw_resample(const std::vector<std::vector<LossPoint>>& arch_points,
                                                  const std::vector<CellIndex>& indices, bool paired,
                                                  std::mt19937_64& rng) {
  std::vector<std::vector<LossPoint>> out(arch_points.size());
  const auto append_cell = [&](std::size_t arch, std::size_t cell) {
    for (std::size_t row : indices[arch].rows[cell]) out[arch].push_back(arch_points[arch][row]);
  };
  if (paired) {
    const CellIndex& first = indices.front();
    for (std::size_t draw = 0; draw < first.names.size(); ++draw) {
      const std::string& name = first.names[uniform_index(rng, first.names.size())];
      for (std::size_t arch = 0; arch < indices.size(); ++arch) append_cell(arch, indices[arch].position(name));
    }
  } else {
    for (std::size_t arch = 0; arch < indices.size(); ++arch) {
      for (std::size_t draw = 0; draw < indices[arch].names.size(); ++draw) {
        append_cell(arch, uniform_index(rng, indices[arch].names.size()));
      }
    }
  }
  return out;
}

FitOptions with_warm_start(FitOptions options, const ScalingCoefficients& start) {
  options.extra_starts.insert(options.extra_starts.begin(), start);
  return options;
}

std::vector<Estimate> summarise(const std::vector<double>& estimates, const std::vector<std::vector<double>>& samples,
                                const BootstrapOptions& options) {
  std::vector<Estimate> out(estimates.size());
  for (std::size_t q = 0; q < estimates.size(); ++q) {
    std::vector<double> values;
    for (const auto& sample : samples) {
      if (!sample.empty()) values.push_back(sample[q]);
    }
    out[q].value = estimates[q];
    out[q].lower = percentile(values, options.lower_percentile);
    out[q].upper = percentile(std::move(values), options.upper_percentile);
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The bootstrap

BootstrapResult bootstrap(const std::vector<std::vector<LossPoint>>& arch_points, const BootstrapStatistic& statistic,
                          const BootstrapOptions& options) {
  if (const std::string message = options.validation_error(); !message.empty()) {
    throw Error(message, "bootstrap options");
  }
  if (arch_points.empty()) throw Error("the bootstrap needs at least one architecture");
  BootstrapResult result;
  std::vector<CellIndex> indices;
  std::vector<FitOptions> refit_options;
  for (const auto& points : arch_points) {
    if (points.empty()) throw Error("an architecture given to the bootstrap has no points");
    result.full_fits.push_back(fit_arch_law(points, options.full_fit));
    indices.emplace_back(points);
    refit_options.push_back(with_warm_start(options.refit, result.full_fits.back().overall.coefficients));
  }
  const std::vector<double> estimates = statistic(result.full_fits);
  result.paired = same_cells(indices);

  std::vector<std::string> failures(options.resamples);
  result.samples.resize(options.resamples);
  const auto run_resample = [&](std::size_t i) {
    std::mt19937_64 rng(resample_seed(options.seed, i));
    const auto resampled = draw_resample(arch_points, indices, result.paired, rng);
    try {
      std::vector<ArchLaw> laws;
      for (std::size_t arch = 0; arch < resampled.size(); ++arch) {
        laws.push_back(fit_arch_law(resampled[arch], refit_options[arch]));
      }
      std::vector<double> sample = statistic(laws);
      if (sample.size() != estimates.size()) {
        throw Error(fmt::format("the resample gave {} quantities instead of {} (a domain missing from the drawn cells?)",
                                sample.size(), estimates.size()));
      }
      result.samples[i] = std::move(sample);
    } catch (const Error& e) {
      failures[i] = e.what();
    }
  };
  detail::parallel_for(options.resamples, detail::thread_count(options.threads, options.resamples), "bootstrap resamples",
                       run_resample, options.progress);

  for (const auto& failure : failures) {
    if (failure.empty()) continue;
    if (result.failed_resamples++ == 0) result.first_failure = failure;
  }
  result.quantities = summarise(estimates, result.samples, options);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Gain reports

namespace {

/// Every estimate of a report, in one fixed order (the layout of the bootstrap's quantities).
template <typename Report, typename Visit>
void for_each_estimate(Report& report, Visit visit) {
  visit(report.gamma_target);
  visit(report.gamma_reference);
  for (auto& e : report.entries) {
    visit(e.gain);
    visit(e.C_reference);
    visit(e.loss);
    visit(e.tpp_target);
    visit(e.tpp_reference);
  }
  for (auto& d : report.domain_entries) visit(d.gain);
}

std::vector<double> flatten(const GainReport& report) {
  std::vector<double> values;
  for_each_estimate(report, [&](const Estimate& e) { values.push_back(e.value); });
  return values;
}

const ScalingCoefficients* domain_coefficients(const ArchLaw& law, const std::string& domain) {
  for (const auto& d : law.domains) {
    if (d.domain == domain) return &d.fit.coefficients;
  }
  return nullptr;
}

bool same_layout(const GainReport& a, const GainReport& b) {
  if (a.entries.size() != b.entries.size() || a.domain_entries.size() != b.domain_entries.size()) return false;
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    if (a.entries[i].C != b.entries[i].C || a.entries[i].S != b.entries[i].S) return false;
  }
  for (std::size_t i = 0; i < a.domain_entries.size(); ++i) {
    const auto& x = a.domain_entries[i];
    const auto& y = b.domain_entries[i];
    if (x.domain != y.domain || x.C != y.C || x.S != y.S) return false;
  }
  return true;
}

}  // namespace

GainReport gain_report(const ArchLaw& target, const ArchLaw& reference, const GainQuery& query) {
  const ScalingCoefficients& t = target.overall.coefficients;
  const ScalingCoefficients& r = reference.overall.coefficients;
  GainReport report;
  report.target_arch = target.arch;
  report.reference_arch = reference.arch;
  report.gamma_target.value = frontier_exponent(t);
  report.gamma_reference.value = frontier_exponent(r);
  for (double S : query.sparsities) {
    for (double C : query.budgets) {
      const Gain gain = ce_gain(t, r, C, S);
      GainReport::Entry entry;
      entry.C = C;
      entry.S = S;
      entry.gain.value = gain.gain;
      entry.C_reference.value = gain.C_reference;
      entry.loss.value = gain.loss;
      entry.tpp_target.value = compute_optimal(t, C, S).tokens_per_parameter;
      entry.tpp_reference.value = compute_optimal(r, C, S).tokens_per_parameter;
      report.entries.push_back(entry);
    }
  }
  for (const auto& d : target.domains) {
    const ScalingCoefficients* reference_domain = domain_coefficients(reference, d.domain);
    if (reference_domain == nullptr) continue;
    for (double S : query.sparsities) {
      for (double C : query.budgets) {
        GainReport::DomainEntry entry;
        entry.domain = d.domain;
        entry.C = C;
        entry.S = S;
        entry.gain.value = ce_gain(d.fit.coefficients, *reference_domain, C, S).gain;
        report.domain_entries.push_back(entry);
      }
    }
  }
  return report;
}

void copy_intervals(const GainReport& from, GainReport& to) {
  if (!same_layout(from, to)) {
    throw Error("cannot copy bootstrap intervals: the two reports differ in budgets, sparsities or domains");
  }
  std::vector<const Estimate*> sources;
  for_each_estimate(from, [&](const Estimate& e) { sources.push_back(&e); });
  std::size_t i = 0;
  for_each_estimate(to, [&](Estimate& e) {
    e.lower = sources[i]->lower;
    e.upper = sources[i]->upper;
    ++i;
  });
}

BootstrappedGainReport bootstrap_gain_report(const std::vector<LossPoint>& target_points,
                                             const std::vector<LossPoint>& reference_points, const GainQuery& query,
                                             const BootstrapOptions& options) {
  const BootstrapStatistic statistic = [&](const std::vector<ArchLaw>& laws) {
    return flatten(gain_report(laws[0], laws[1], query));
  };
  BootstrappedGainReport out;
  out.bootstrap = bootstrap({target_points, reference_points}, statistic, options);
  out.report = gain_report(out.bootstrap.full_fits[0], out.bootstrap.full_fits[1], query);
  std::size_t i = 0;
  for_each_estimate(out.report, [&](Estimate& e) {
    e.lower = out.bootstrap.quantities[i].lower;
    e.upper = out.bootstrap.quantities[i].upper;
    ++i;
  });
  return out;
}

}  // namespace budget
