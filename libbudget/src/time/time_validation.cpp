// Held-out validation of the time model: per-op rows split in halves (validate_time_model()) and
// the accuracy a ranking quotes (time_accuracy()).

#include "budget/time_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "budget/calibration.hpp"
#include "budget/error.hpp"

namespace budget {

namespace {

/// The held-out errors `e` (not empty) of `op`'s rows (nothing: all rows) summarised.
TimeValidation summarise_errors(std::optional<ProfileOp> op, std::size_t fit_rows, std::vector<double> e) {
  std::sort(e.begin(), e.end());
  // Percentiles by the nearest-rank rule: the ⌈q·n⌉-th smallest.
  const auto rank = [&](double q) {
    const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(e.size())));
    return e[std::max<std::size_t>(k, 1) - 1];
  };
  const double median = e.size() % 2 == 1 ? e[e.size() / 2] : 0.5 * (e[e.size() / 2 - 1] + e[e.size() / 2]);
  return {op, fit_rows, e.size(), median, rank(0.9), e.back()};
}

}  // namespace

std::vector<TimeValidation> validate_time_model(const CalibrationProfile& profile, std::uint64_t seed,
                                                TimeModelOptions options) {
  validate(profile);
  // A shape: op, matrix, routing and the shape fields — all its passes and backends go together.
  const auto shape_key = [](const CalibrationRow& r) {
    std::string key = std::string(to_string(r.op)) + "|" + r.matrix + "|" + r.routing;
    for (const auto& [name, value] : r.shape) key += fmt::format("|{}={}", name, value);
    return key;
  };
  std::vector<std::string> keys;
  for (const auto& r : profile.rows) keys.push_back(shape_key(r));
  std::vector<std::string> unique = keys;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  // Fisher–Yates with mt19937_64 and an explicit modulo draw: the same split on every platform
  // (std::shuffle's and the distributions' algorithms are implementation-defined).
  std::mt19937_64 rng(seed);
  for (std::size_t i = unique.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng() % i);
    std::swap(unique[i - 1], unique[j]);
  }
  std::map<std::string, bool> in_fit;
  for (std::size_t i = 0; i < unique.size(); ++i) in_fit[unique[i]] = i < unique.size() / 2;

  CalibrationProfile fit_profile = profile;
  fit_profile.rows.clear();
  std::vector<const CalibrationRow*> test;
  for (std::size_t i = 0; i < profile.rows.size(); ++i) {
    if (in_fit[keys[i]]) {
      fit_profile.rows.push_back(profile.rows[i]);
    } else if (!profile.rows[i].refused) {
      test.push_back(&profile.rows[i]);
    }
  }
  if (fit_profile.rows.empty() || test.empty()) {
    throw Error("the profile has too few distinct shapes to split into halves", "<validation>");
  }
  const TimeModel model(fit_profile, options);
  // Per op (indexed by ProfileOp), then all rows: the fitted row count and the held-out errors.
  std::array<std::size_t, profile_op_count> fitted{};
  std::array<std::vector<double>, profile_op_count> errors;
  std::vector<double> all_errors;
  for (const auto& r : fit_profile.rows) {
    const auto k = static_cast<std::size_t>(r.op);  // an op outside the enum: predict() refuses its test rows
    if (!r.refused && k < profile_op_count) ++fitted[k];
  }
  for (const CalibrationRow* r : test) {
    const TimePrediction p = model.predict(*r);
    const double e = std::abs(p.ms / r->ms - 1.0);
    errors[static_cast<std::size_t>(r->op)].push_back(e);
    all_errors.push_back(e);
  }
  std::vector<TimeValidation> out;
  // ProfileOp's order is calibration_ops()'s (its name table, time/profile_ops.hpp).
  for (std::size_t k = 0; k < profile_op_count; ++k) {
    if (!errors[k].empty()) out.push_back(summarise_errors(static_cast<ProfileOp>(k), fitted[k], errors[k]));
  }
  std::size_t fitted_all = 0;
  for (const std::size_t n : fitted) fitted_all += n;
  out.push_back(summarise_errors(std::nullopt, fitted_all, std::move(all_errors)));
  return out;
}

TimeAccuracy time_accuracy(const CalibrationProfile& profile, TimeModelOptions options) {
  TimeAccuracy a;
  if (!profile.layers.empty()) {
    const LayerValidation v = validate_layers_leave_one_cell_out(profile, options);
    const bool any_ratio = std::any_of(v.entries.begin(), v.entries.end(),
                                       [](const LayerValidationEntry& e) { return e.measured_ratio > 0 && e.tag != "baseline"; });
    if (any_ratio) {
      a.from_layers = true;
      a.ratio_error = v.max_ratio_error;
      a.step_relative_error = v.max_layer_error;
      a.validated = v.cells;
      a.source = fmt::format("leave-one-cell-out layer validation of the profile ({} cells): worst time-ratio error "
                             "{:.3f}, worst layer-time error {:.1f}%",
                             v.cells, v.max_ratio_error, 100 * v.max_layer_error);
      return a;
    }
  }
  const std::vector<TimeValidation> per_op = validate_time_model(profile, 1, options);
  const TimeValidation& all = per_op.back();
  a.step_relative_error = all.p90_relative_error;
  a.validated = all.test_rows;
  a.source = fmt::format("per-op held-out validation of the profile ({} rows held out): 90th-percentile relative "
                         "error {:.1f}%",
                         all.test_rows, 100 * all.p90_relative_error);
  return a;
}

}  // namespace budget
