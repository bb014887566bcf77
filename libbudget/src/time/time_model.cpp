// The time model (docs/calibration.md, "The time model"): per-op time for any shape from a
// calibration profile's rows.
//
// Rows are grouped into families — (op, pass), plus the matrix kind for expert GEMMs and the
// backend for attention — and, inside a family, into alignment classes of the dims that decide
// which kernels run. Each class gets a fit of time against a few physical regressors:
//
//   gemm (y = x·Wᵀ, x M×K):  t = β₀ + β₁·2MKN + β₂·2(MK + KN + MN)
//        launch overhead + FLOPs at the class's rate + elements moved at its bandwidth;
//        class = (K mod 8 = 0, N mod 8 = 0). On the H200 data only 8-alignment separates
//        throughput (≈ 3×); the finer classes (16, 64, 128) split the rows without improving the
//        held-out error, so they are not separate fits (docs/calibration.md, "Alignment").
//   expert_gemms (E groups of T rows, in → out):  t = β₀ + β₁·2·E·T·in·out
//        + β₂·2E(T·in + in·out + T·out) + β₃·E;  class = (in mod 8 = 0, out mod 8 = 0);
//        family by matrix: "up_gate" and "up" share one (an H → n GEMM either way), "down" another.
//   attention (docs of length L, h heads of head_dim d, kv KV heads, T tokens):
//        t = β₀ + β₁·4·h·d₆₄·Ā₁₂₈·T + β₂·T(2h + 2kv)d + β₃·T·h,
//        d₆₄ = d rounded up to a multiple of 64 (the kernels' head-dim instantiations),
//        Ā₁₂₈ = keys per query a 128×128-tiled causal kernel computes: n(n+1)/2·128²/L, n = ⌈L/128⌉;
//        class = (d mod 8 = 0, d ≤ 64 | ≤ 128 | larger); family by backend.
//   memory-bound ops:  t = β₀ + β₁·elements (rows × width).
//
// The fit is non-negative least squares in relative error (time_fit.hpp). Then the log residuals
// ρᵢ = ln(tᵢ / fit) of the k nearest measured shapes of the class, in log-shape space, correct the
// fit by their inverse-distance-weighted mean: t̂ = fit · exp(Σ wᵢρᵢ / Σ wᵢ), wᵢ = 1/(dᵢ + 10⁻⁶).
// A measured shape is reproduced (its own residual dominates); between shapes the fit carries.
//
// The pieces: op_shape.cpp (the regressors, classes and coordinates of a shape), time_fit.cpp (the
// fit), neighbour_index.cpp (the residual correction's search), time_model.cpp (the fit of a
// profile and the row path predict()), time_model_indexed.cpp (the typed path predict_ms()),
// time_validation.cpp (held-out validation).

#include "budget/time_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "time/op_shape.hpp"
#include "time/step_terms.hpp"
#include "time/time_fit.hpp"
#include "time/time_model_impl.hpp"

namespace budget {

using namespace detail;

namespace detail {

void finish_class(ClassFit& c, const std::vector<double>& fallback_beta) {
  const std::size_t p = c.samples.empty() ? 0 : c.samples.front().features.size();
  // A class fits its own line only with more rows than regressors; else it borrows the family's
  // (the family's pooled fit itself is made from whatever rows there are: fewer regressors then).
  const bool own = c.samples.size() > p || fallback_beta.empty();
  c.beta = own ? detail::fit_nonnegative_relative(c.samples) : std::vector<double>{};
  if (c.beta.empty() || detail::evaluate_fit(c.beta, c.samples.front().features) <= 0) c.beta = fallback_beta;
  for (auto& s : c.samples) {
    const double fit = detail::evaluate_fit(c.beta, s.features);
    s.log_residual = fit > 0 ? std::log(s.ms / fit) : 0.0;
  }
  if (!c.samples.empty()) {
    c.lo = c.hi = c.samples.front().coords;
    for (const auto& s : c.samples) {
      for (std::size_t i = 0; i < s.coords.size(); ++i) {
        c.lo[i] = std::min(c.lo[i], s.coords[i]);
        c.hi[i] = std::max(c.hi[i], s.coords[i]);
      }
    }
  }
  c.index.build(c.samples);
}

}  // namespace detail

namespace {

/// The attention backend the layer rows show the framework ran, per head_dim class: for each row
/// with forced-backend times, the accepted backend (one the per-op rows know) whose attention block
/// time is nearest (in log) the row's attn_block_ms (the framework's own choice); per class the
/// backend most rows show (ties: the name first in order). Keyed by the class's words.
std::map<std::string, std::string> layer_backends(const CalibrationProfile& profile) {
  std::map<std::string, bool> known;
  for (const auto& row : profile.rows) {
    if (row.op == ProfileOp::attention && row.backend != "default") known[row.backend] = true;
  }
  std::map<std::string, std::map<std::string, int>> votes;
  for (const auto& layer : profile.layers) {
    if (layer.attn_block_ms <= 0) continue;
    std::string best;
    double best_distance = 0;
    for (const auto& [name, ms] : layer.attention_backend_ms) {
      if (ms <= 0 || known.count(name) == 0) continue;
      const double distance = std::abs(std::log(ms / layer.attn_block_ms));
      if (best.empty() || distance < best_distance) {
        best = name;
        best_distance = distance;
      }
    }
    if (!best.empty()) ++votes[attention_head_dim_class(layer.config.attention.head_dim).second][best];
  }
  std::map<std::string, std::string> out;
  for (const auto& [cls, counts] : votes) {
    const auto top = std::max_element(counts.begin(), counts.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    out[cls] = top->first;
  }
  return out;
}

/// The run fit's compute factors on the correction's classes (both paths read them from there):
/// gemm; attention (both head-dim classes); expert GEMMs; the memory-bound classes.
void apply_run_fit(const CalibrationRunFit& fit, LayerCorrection& c) {
  const auto scale = [&c](TimeClass cls, double f) { c.factor[static_cast<std::size_t>(cls)] *= f; };
  scale(TimeClass::gemm, fit.gemm);
  scale(TimeClass::attention_aligned, fit.attention);
  scale(TimeClass::attention_unaligned, fit.attention);
  scale(TimeClass::expert_gemms, fit.expert_gemms);
  scale(TimeClass::indexed, fit.memory_bound);
  scale(TimeClass::elementwise, fit.memory_bound);
  scale(TimeClass::glue, fit.memory_bound);
}

/// The run fit's cost per kernel launch, on top of the layer correction's (none under CUDA graphs).
void apply_run_fit_launch(const CalibrationRunFit& fit, const TimeModelOptions& o, LayerCorrection& c) {
  if (!o.cuda_graphs) c.launch_ms += fit.launch_us * 1e-3;
}

}  // namespace

bool add_cuda_graph_module(CudaGraphModules& m, std::string_view name) {
  for (auto [module_name, flag] : {std::pair<std::string_view, bool*>{"attn", &m.attn}, {"mlp", &m.mlp}, {"moe", &m.moe},
                                   {"moe_router", &m.moe_router}, {"moe_preprocess", &m.moe_preprocess},
                                   {"mamba", &m.mamba}}) {
    if (name == module_name) return *flag = true;
  }
  return false;
}

TimeModel::TimeModel(const CalibrationProfile& profile, TimeModelOptions options) {
  validate(profile);
  if (options.neighbours < 0 || options.neighbours > 1000) {
    throw Error(fmt::format("value {} is out of range; allowed: 0 to 1000 neighbours", options.neighbours),
                "<time model options>", "neighbours");
  }
  if (!(options.host_launch_seconds >= 0.0 && options.host_launch_seconds <= 1e-3)) {
    throw Error(fmt::format("value {} s is out of range; allowed: 0 to 0.001 s of CPU time a kernel launch",
                            options.host_launch_seconds),
                "<time model options>", "host_launch_seconds");
  }
  const std::string& b = options.attention_backend;
  if (!(b == "auto" || b == "cudnn" || b == "flash" || b == "default" || (b.rfind("fallback-", 0) == 0 && b.size() > 9))) {
    throw Error(fmt::format("attention backend \"{}\" is not allowed; allowed: \"auto\", \"cudnn\", \"flash\", "
                            "\"default\" or \"fallback-<name>\"",
                            b),
                "<time model options>", "attention_backend");
  }
  auto impl = std::make_shared<Impl>();
  impl->profile = profile;
  impl->options = std::move(options);
  for (const auto& row : profile.rows) {
    if (row.op == ProfileOp::attention) {
      auto& counts = impl->acceptance[row.backend];
      const int base = row.shape.at("head_dim") % 8 == 0 ? 0 : 2;
      ++counts[static_cast<std::size_t>(base + (row.refused ? 1 : 0))];
    }
    if (row.refused) continue;
    const auto op = static_cast<std::size_t>(row.op);
    if (op < TimeQuery::op_count) {
      if (row.dtype.empty()) impl->measured_ops[op] = true;
      impl->dtype_rows[op][static_cast<std::size_t>(dtype_of(row.dtype))] = true;
    }
    const Shaped s = describe(row, row.pass, row.backend);
    TimeSample sample{s.features, s.coords, row.ms, 0};
    sample.carried = !row.carried_from.empty();
    auto& family = impl->families[s.family];
    family.classes[s.cls].samples.push_back(sample);
    family.pooled.samples.push_back(sample);
  }
  for (auto& [name, family] : impl->families) {
    finish_class(family.pooled, {});
    for (auto& [cls, fit] : family.classes) finish_class(fit, family.pooled.beta);
  }
  impl->correction.backend_by_head_dim_class = layer_backends(profile);
  impl->build_index();
  impl_ = impl;
  if (!profile.layers.empty()) {
    // The per-op fit (and the backends above) is complete: the correction is fitted on it.
    // The layers were measured on the profile's own kernels: the correction is fitted without a
    // kernel target's padding (TimeModelOptions::kernels), which applies to predictions only.
    std::optional<KernelTarget> target = std::exchange(impl->options.kernels, std::nullopt);
    LayerCorrection correction = detail::fit_layer_correction(*this, profile.layers);
    impl->options.kernels = std::move(target);
    correction.backend_by_head_dim_class = impl->correction.backend_by_head_dim_class;
    impl->correction = std::move(correction);
    impl->build_index();  // the backends by class may have changed the attention plans
  }
  if (const CalibrationRunFit* fit = run_fit()) {
    apply_run_fit(*fit, impl->correction);
    apply_run_fit_launch(*fit, impl->options, impl->correction);
  }
}

const LayerCorrection& TimeModel::layer_correction() const { return impl_->correction; }

const CalibrationRunFit* TimeModel::run_fit() const {
  for (const CalibrationRunFit& f : impl_->profile.run_fits) {
    if (f.precision == kernel_precision(impl_->options.recipe.fp8)) return &f;
  }
  return nullptr;
}

const CalibrationProfile& TimeModel::profile() const { return impl_->profile; }
const TimeModelOptions& TimeModel::options() const { return impl_->options; }

int TimeModel::Impl::accepts(const std::string& backend, std::int64_t head_dim) const {
  const auto it = acceptance.find(backend);
  if (it == acceptance.end()) return -1;
  const std::size_t base = head_dim % 8 == 0 ? 0 : 2;
  if (it->second[base] > 0) return 1;
  if (it->second[base + 1] > 0) return 0;
  return -1;
}

TimePrediction TimeModel::Impl::predict_fitted(const CalibrationRow& q, const std::string& pass,
                                               const std::string& backend) const {
  const Shaped s = describe(q, pass, backend);
  TimePrediction p;
  p.backend = backend;
  const auto fam = families.find(s.family);
  if (fam == families.end()) {
    p.no_rows = true;
    return p;
  }
  const auto cls = fam->second.classes.find(s.cls);
  const ClassFit* fit = &fam->second.pooled;
  if (cls != fam->second.classes.end()) {
    fit = &cls->second;
  } else {
    p.out_of_range = true;
    p.note = fmt::format("no {} rows in its class ({}); the fit of all its classes is used", to_string(q.op), s.cls_description);
  }
  const double base = detail::evaluate_fit(fit->beta, s.features);
  if (!(base > 0)) {
    p.no_rows = true;
    return p;
  }
  p.ms = base * std::exp(detail::neighbour_log_residual(fit->samples, s.coords, options.neighbours));
  p.provenance = row_provenance(*fit, s.coords);
  // No GEMM or attention kernel beats the profile's measured bf16 GEMM peak (FP8: scaled by the
  // datasheet FP8/BF16 ratio): an extrapolated fit that would is held to it.
  const double at_peak_ms = s.peak_flops / (peak_tflops(dtype_of(q.dtype)) * 1e12) * 1e3;
  if (p.ms < at_peak_ms) {
    p.ms = at_peak_ms;
    p.note = fmt::format("{}{}the fit would beat the measured bf16 GEMM peak: held to it", p.note,
                         p.note.empty() ? "" : "; ");
  }
  const std::vector<std::string> names = coord_names(q);
  for (std::size_t i = 0; i < s.coords.size() && i < fit->lo.size(); ++i) {
    const bool below = s.coords[i] < fit->lo[i] - 1e-9, above = s.coords[i] > fit->hi[i] + 1e-9;
    if (!below && !above) continue;
    p.out_of_range = true;
    p.provenance = TimeProvenance::extrapolated;
    // Which dim, how far and by what factor: coordinates are logs, so the factor is e^|Δ|.
    const double value = std::exp(s.coords[i]), edge = std::exp(above ? fit->hi[i] : fit->lo[i]);
    // "8× the largest measured" above the range, "8× below the smallest measured" under it.
    p.note = fmt::format("{}{}{} {:.0f} is {:.3g}× {} measured ({:.0f})", p.note, p.note.empty() ? "" : "; ",
                         i < names.size() ? names[i] : "dim", value, above ? value / edge : edge / value,
                         above ? "the largest" : "below the smallest", edge);
  }
  return p;
}

TimeProvenance TimeModel::Impl::row_provenance(const detail::ClassFit& fit, const std::vector<double>& coords) const {
  bool exact = false, carried = false;
  for (const auto& s : fit.samples) {
    carried = carried || s.carried;
    bool same = s.coords.size() == coords.size();
    for (std::size_t i = 0; same && i < coords.size(); ++i) same = std::abs(s.coords[i] - coords[i]) < 1e-9;
    exact = exact || same;
  }
  if (carried) return TimeProvenance::carried;
  if (!exact) return TimeProvenance::interpolated;
  return profile.source.kind == "published" ? TimeProvenance::published : TimeProvenance::measured;
}

TimePrediction TimeModel::Impl::predict_pass(const CalibrationRow& q, const std::string& pass,
                                             const std::string& backend) const {
  const TimeQuery::Dtype dtype = dtype_of(q.dtype);
  if (dtype != TimeQuery::Dtype::bf16 && !has_dtype_rows(q.op, dtype)) {
    // No rows of this precision: the precision standing in for it (dtype_fallback()).
    const auto [other_dtype, factor] = dtype_fallback(dtype);
    CalibrationRow other = q;
    other.dtype = dtype_name(other_dtype);
    TimePrediction p = predict_pass(other, pass, backend);
    p.ms *= factor;
    if (p.provenance != TimeProvenance::extrapolated && p.provenance != TimeProvenance::assumed) {
      p.provenance = TimeProvenance::carried;
    }
    p.note = fmt::format("{}{}no {} {} rows: {} rows{}", p.note, p.note.empty() ? "" : "; ", q.dtype, to_string(q.op),
                         other.dtype.empty() ? "bf16" : other.dtype,
                         factor != 1.0 ? fmt::format(" × {:.3g} (datasheet BF16/FP8 peak ratio)", factor) : "");
    return p;
  }
  TimePrediction p = predict_fitted(q, pass, backend);
  if (!p.no_rows) return p;
  // No rows of this pass: derive it from the passes that have rows, by their relative cost.
  const std::vector<std::string> passes = is_gemm_like(q.op) ? std::vector<std::string>{"forward", "input_grad", "weight_grad"}
                                                             : std::vector<std::string>{"forward+backward", "forward", "backward"};
  if (pass == "forward+backward") {
    TimePrediction f = predict_fitted(q, "forward", backend);
    TimePrediction b = predict_fitted(q, "backward", backend);
    if (!f.no_rows && !b.no_rows) {
      f.ms += b.ms;
      f.out_of_range = f.out_of_range || b.out_of_range;
      f.provenance = std::max(f.provenance, b.provenance);  // the less trusted of the two
      return f;
    }
  }
  for (const auto& other : passes) {
    if (other == pass) continue;
    TimePrediction o = predict_fitted(q, other, backend);
    if (o.no_rows) continue;
    o.ms *= pass_weight(q.op, pass) / pass_weight(q.op, other);
    o.no_rows = true;
    // Another pass's time scaled by the passes' relative cost: not a row of this pass.
    if (o.provenance == TimeProvenance::measured || o.provenance == TimeProvenance::published) {
      o.provenance = TimeProvenance::interpolated;
    }
    o.note = fmt::format("no {} {} rows: {} time × {:.3g}", to_string(q.op), pass, other,
                         pass_weight(q.op, pass) / pass_weight(q.op, other));
    return o;
  }
  // Nothing measured for the op at all: the profile's peaks.
  const Shaped s = describe(q, pass, backend);
  p = TimePrediction{};
  p.backend = backend;
  p.no_rows = true;
  p.from_peaks = true;
  p.provenance = TimeProvenance::assumed;
  if (s.peak_flops > 0) {
    p.ms = s.peak_flops / (profile.peaks.bf16_gemm_tflops * 1e12) * 1e3;
    p.note = fmt::format("no {} rows: FLOPs at the measured bf16 GEMM peak", to_string(q.op));
  } else {
    p.ms = s.peak_bytes / (profile.peaks.copy_gbytes_per_s * 1e9) * 1e3;
    p.note = fmt::format("no {} rows: bytes at the measured copy bandwidth", to_string(q.op));
  }
  return p;
}

TimePrediction TimeModel::predict(const CalibrationRow& query) const {
  if (static_cast<std::size_t>(query.op) >= profile_op_count) {
    throw Error(fmt::format("unknown op \"{}\" in a time query", to_string(query.op)), "<time model>");
  }
  const Impl& m = *impl_;
  if (query.op != ProfileOp::attention) return m.predict_pass(query, query.pass, query.backend);

  const std::int64_t hd = shape_field(query, "head_dim");
  std::vector<std::string> backends;
  for (const auto& [name, counts] : m.acceptance) backends.push_back(name);
  const std::string wanted = query.backend.empty() ? m.options.attention_backend : query.backend;
  const auto fastest = [&](const std::string& excluded) {
    TimePrediction best;
    bool found = false;
    for (const auto& b : backends) {
      if (b == excluded || m.accepts(b, hd) != 1) continue;
      TimePrediction p = m.predict_pass(query, query.pass, b);
      if (!found || p.ms < best.ms) best = p;
      found = true;
    }
    return found ? std::optional<TimePrediction>(best) : std::nullopt;
  };
  std::string chosen = wanted;
  if (wanted == "auto") {
    // The backend the layer rows show for the class, when they show one the per-op rows accept.
    const std::string words = attention_head_dim_class(hd).second;
    const auto by_layers = m.correction.backend_by_head_dim_class.find(words);
    if (by_layers != m.correction.backend_by_head_dim_class.end() && m.accepts(by_layers->second, hd) == 1) {
      TimePrediction p = m.predict_pass(query, query.pass, by_layers->second);
      p.note = fmt::format("{}{}backend {} as the layer rows show for {}", p.note, p.note.empty() ? "" : "; ",
                           by_layers->second, words);
      return p;
    }
    chosen = m.accepts("default", hd) == 1 ? "default" : "";
  }
  if (!chosen.empty() && m.accepts(chosen, hd) != 0) {
    TimePrediction p = m.predict_pass(query, query.pass, chosen);
    if (m.accepts(chosen, hd) == -1) {
      p.note = fmt::format("no {} rows with head_dim {} a multiple of 8 or not alike; assumed to accept it", chosen, hd);
    }
    return p;
  }
  if (auto best = fastest(chosen)) {
    if (!chosen.empty()) {
      best->note = fmt::format("{} refuses head_dim {} (its rows of head_dim {}a multiple of 8 are refused); {} used",
                               chosen, hd, hd % 8 == 0 ? "" : "not ", best->backend);
    }
    return *best;
  }
  // No backend is known to accept the shape: the peak-rate fallback.
  TimePrediction p = m.predict_pass(query, query.pass, chosen.empty() ? "default" : chosen);
  p.note = fmt::format("no attention backend of the profile is known to accept head_dim {}; {}", hd,
                       p.note.empty() ? "its fit is used" : p.note);
  p.out_of_range = true;
  return p;
}

}  // namespace budget
