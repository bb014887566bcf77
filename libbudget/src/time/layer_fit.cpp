// The layer correction (docs/calibration.md, "Layer correction"): fitted on a profile's measured
// whole layers, applied to every step and layer prediction, and validated leaving one cell out.
//
//   layer time = Σ_c factor_c · T_c  +  launch_ms · N
//
// T_c the per-op predictions of the layer's ops of class c (TimeClass; the per-op rows' fit, the
// glue at the copy bandwidth), N the layer's kernel launches (step_terms()). The classes whose
// kernels the per-op rows time as the layer runs them (layer_fitted() false: GEMMs, expert GEMMs,
// elementwise) keep factor 1; the others' factor_c ≥ 0 and launch_ms ≥ 0 minimise
// Σᵢ ((fitᵢ − tᵢ)/tᵢ)² over the layer rows (time_fit.hpp: non-negative least squares in relative
// error, exact by active sets; the fixed classes' time is taken off the target, the error stays
// relative to tᵢ). A fitted class with no time in any row is not identified and keeps factor 1.
// Five numbers in all (attention aligned and not, indexed, glue, launch), the same for every
// config: no per-config term.

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/time_model.hpp"
#include "time/step_terms.hpp"
#include "time/time_fit.hpp"

namespace budget {

namespace {

/// The uncorrected terms of one layer: class times (ms) and launches.
struct LayerTerms {
  std::array<double, time_class_count> class_ms{};
  double launches = 0;
  std::string attention_backend;
};

LayerTerms layer_terms(const TimeModel& model, const ArchConfig& config, std::int64_t tokens, std::int64_t doc_len) {
  const detail::StepTerms terms = detail::step_terms(model, config, detail::layer_workload(tokens, doc_len));
  LayerTerms out;
  out.attention_backend = terms.attention_backend;
  for (const auto& op : terms.ops) {
    if (!op.layer_op) continue;
    out.class_ms[static_cast<std::size_t>(op.cls)] += op.seconds_per_execution * 1e3;
    out.launches += op.launches_per_execution;
  }
  return out;
}

/// Launches are scaled to thousands in the regressors, so all columns are of the order of ms.
constexpr double launch_scale = 1e-3;

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

namespace detail {

LayerCorrection fit_layer_correction(const TimeModel& model, const std::vector<CalibrationLayerRow>& layers) {
  LayerCorrection c;
  std::vector<LayerTerms> terms;
  for (const auto& row : layers) terms.push_back(layer_terms(model, row.config, row.tokens, row.doc_len));
  // The identified columns: fitted classes with time in some row, then the launches.
  std::vector<std::size_t> columns;
  for (std::size_t k = 0; k < time_class_count; ++k) {
    if (!layer_fitted(static_cast<TimeClass>(k))) continue;
    if (std::any_of(terms.begin(), terms.end(), [&](const LayerTerms& t) { return t.class_ms[k] > 0; })) columns.push_back(k);
  }
  const bool launches = std::any_of(terms.begin(), terms.end(), [](const LayerTerms& t) { return t.launches > 0; });
  std::vector<TimeSample> samples;
  std::vector<double> fixed_ms;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    TimeSample s;
    double fixed = 0;
    for (std::size_t k = 0; k < time_class_count; ++k) {
      if (!layer_fitted(static_cast<TimeClass>(k))) fixed += terms[i].class_ms[k];
    }
    for (std::size_t k : columns) s.features.push_back(terms[i].class_ms[k]);
    if (launches) s.features.push_back(terms[i].launches * launch_scale);
    s.ms = layers[i].layer_ms - fixed;
    s.relative_to_ms = layers[i].layer_ms;
    fixed_ms.push_back(fixed);
    samples.push_back(std::move(s));
  }
  const std::vector<double> beta = fit_nonnegative_relative(samples);
  if (beta.empty()) return c;  // nothing solvable: the identity
  for (std::size_t j = 0; j < columns.size(); ++j) c.factor[columns[j]] = beta[j];
  if (launches) c.launch_ms = beta.back() * launch_scale;
  c.fitted = true;
  c.layer_rows = layers.size();
  std::vector<double> errors;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    errors.push_back(std::abs((fixed_ms[i] + evaluate_fit(beta, samples[i].features)) / layers[i].layer_ms - 1.0));
  }
  c.median_relative_error = median_of(errors);
  c.max_relative_error = *std::max_element(errors.begin(), errors.end());
  return c;
}

}  // namespace detail

LayerTime predict_layer_time(const TimeModel& model, const ArchConfig& config, std::int64_t tokens, std::int64_t doc_len) {
  const LayerTerms t = layer_terms(model, config, tokens, doc_len);
  const LayerCorrection& c = model.layer_correction();
  LayerTime out;
  out.class_ms = t.class_ms;
  out.launches = t.launches;
  out.attention_backend = t.attention_backend;
  for (std::size_t k = 0; k < time_class_count; ++k) {
    out.uncorrected_ms += t.class_ms[k];
    out.ms += c.factor[k] * t.class_ms[k];
  }
  out.ms += c.launch_ms * t.launches;
  return out;
}

LayerValidation validate_layers_leave_one_cell_out(const CalibrationProfile& profile, TimeModelOptions options) {
  validate(profile);
  std::vector<std::string> cells;
  for (const auto& row : profile.layers) {
    if (std::find(cells.begin(), cells.end(), row.cell) == cells.end()) cells.push_back(row.cell);
  }
  if (cells.size() < 2) {
    throw Error(fmt::format("leave-one-cell-out validation needs layer rows of at least two cells; the profile has {}",
                            cells.size()),
                "<validation>", "/layers");
  }
  LayerValidation v;
  v.cells = cells.size();
  v.entries.resize(profile.layers.size());
  for (const auto& cell : cells) {
    CalibrationProfile fit_profile = profile;
    fit_profile.layers.clear();
    for (const auto& row : profile.layers) {
      if (row.cell != cell) fit_profile.layers.push_back(row);
    }
    const TimeModel model(fit_profile, options);
    for (std::size_t i = 0; i < profile.layers.size(); ++i) {
      const auto& row = profile.layers[i];
      if (row.cell != cell) continue;
      const LayerTime t = predict_layer_time(model, row.config, row.tokens, row.doc_len);
      LayerValidationEntry& e = v.entries[i];
      e.cell = row.cell;
      e.tag = row.tag;
      e.name = row.config.name;
      e.run = row.run;
      e.executed_layers = row.config.executed_layers();
      e.measured_ms = row.layer_ms;
      e.predicted_ms = t.ms;
      e.attention_backend = t.attention_backend;
    }
  }
  // Time per token ∝ layer ms × executed layers (same tokens within a cell and run).
  std::vector<double> layer_errors, ratio_errors;
  bool any_baseline = false;
  for (auto& e : v.entries) {
    layer_errors.push_back(std::abs(e.predicted_ms / e.measured_ms - 1.0));
    const auto base = std::find_if(v.entries.begin(), v.entries.end(), [&](const LayerValidationEntry& b) {
      return b.cell == e.cell && b.run == e.run && b.tag == "baseline";
    });
    if (base == v.entries.end()) continue;
    const double per_layer = static_cast<double>(e.executed_layers) / static_cast<double>(base->executed_layers);
    e.measured_ratio = e.measured_ms / base->measured_ms * per_layer;
    e.predicted_ratio = e.predicted_ms / base->predicted_ms * per_layer;
    if (e.tag == "baseline") {
      const double signed_error = e.predicted_ms / e.measured_ms - 1.0;
      v.max_baseline_error = any_baseline ? std::max(v.max_baseline_error, signed_error) : signed_error;
      any_baseline = true;
    } else {
      ratio_errors.push_back(std::abs(e.predicted_ratio - e.measured_ratio));
    }
  }
  v.median_layer_error = median_of(layer_errors);
  v.max_layer_error = *std::max_element(layer_errors.begin(), layer_errors.end());
  v.median_ratio_error = median_of(ratio_errors);
  v.max_ratio_error = ratio_errors.empty() ? 0 : *std::max_element(ratio_errors.begin(), ratio_errors.end());
  return v;
}

}  // namespace budget
