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

#include "budget/time_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "time/step_terms.hpp"
#include "time/time_fit.hpp"

namespace budget {

namespace {

using detail::TimeSample;

double dbl(std::int64_t v) { return static_cast<double>(v); }

std::int64_t field(const CalibrationRow& row, const char* name) {
  const auto it = row.shape.find(name);
  if (it == row.shape.end()) {
    throw Error(fmt::format("a {} query needs the shape field \"{}\"", row.op, name), "<time model>");
  }
  return it->second;
}

bool is_gemm_like(const std::string& op) { return op == "gemm" || op == "expert_gemms"; }

/// Relative cost of the passes of an op, for deriving a pass that has no rows from one that has:
/// GEMM passes cost the same FLOPs; attention backward = 2.5 × forward (FlashAttention's count);
/// a memory-bound op's backward moves about 1.5 × its forward's bytes (RMSNorm: 3 of 5 elements).
double pass_weight(const std::string& op, const std::string& pass) {
  if (is_gemm_like(op)) return 1.0;
  const double backward = op == "attention" ? 2.5 : 1.5;
  if (pass == "forward") return 1.0;
  if (pass == "backward") return backward;
  return 1.0 + backward;
}

/// Keys per query a causal kernel with square `tile`×`tile` blocks computes over a document of L
/// tokens: n = ⌈L/tile⌉ block rows, n(n+1)/2 blocks of tile² scores, over L queries.
double tiled_causal_keys(double doc_len, double tile) {
  const double n = std::ceil(doc_len / tile);
  return n * (n + 1.0) / 2.0 * tile * tile / doc_len;
}

/// Forward bytes per element of a memory-bound op (fallback when a profile has no rows of it).
double fallback_bytes_per_element(const std::string& op) {
  if (op == "swiglu") return 6.0;               // read gate and up, write the product (bf16)
  if (op == "router_softmax_topk") return 2.0;  // read the logits
  return 4.0;                                   // read and write one bf16 element
}

/// The attention class of a head_dim: (d mod 8 = 0, d ≤ 64 | 65–128 | > 128) as a key and in words.
std::pair<std::string, std::string> attention_head_dim_class(std::int64_t hd) {
  const int bucket = hd <= 64 ? 0 : hd <= 128 ? 1 : 2;
  return {fmt::format("{}{}", hd % 8 == 0 ? 1 : 0, bucket),
          fmt::format("head_dim {}, {}", hd % 8 == 0 ? "a multiple of 8" : "not a multiple of 8",
                      bucket == 0 ? "≤ 64" : bucket == 1 ? "65–128" : "> 128")};
}

/// The attention backend the layer rows show the framework ran, per head_dim class: for each row
/// with forced-backend times, the accepted backend (one the per-op rows know) whose attention block
/// time is nearest (in log) the row's attn_block_ms (the framework's own choice); per class the
/// backend most rows show (ties: the name first in order). Keyed by the class's words.
std::map<std::string, std::string> layer_backends(const CalibrationProfile& profile) {
  std::map<std::string, bool> known;
  for (const auto& row : profile.rows) {
    if (row.op == "attention" && row.backend != "default") known[row.backend] = true;
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

/// What the model needs of a row or query.
struct Shaped {
  std::string family;
  std::string cls;
  std::string cls_description;
  std::vector<double> features;
  std::vector<double> coords;
  double peak_flops = 0;   ///< FLOPs of the pass for the no-rows fallback (GEMMs, attention)
  double peak_bytes = 0;   ///< bytes of the pass for the no-rows fallback (memory-bound ops)
};

std::string family_of(const std::string& op, const std::string& pass, const CalibrationRow& row,
                      const std::string& backend) {
  if (op == "expert_gemms") {
    return fmt::format("expert_gemms|{}|{}{}", pass, row.matrix == "down" ? "down" : "up",
                       row.routing == "skewed" ? "|skewed" : "");
  }
  if (op == "attention") return fmt::format("attention|{}|{}", pass, backend);
  return op + "|" + pass;
}

Shaped describe(const CalibrationRow& row, const std::string& pass, const std::string& backend) {
  Shaped s;
  s.family = family_of(row.op, pass, row, backend);
  const auto yes = [](bool b) { return b ? "yes" : "no"; };
  if (row.op == "gemm") {
    const double M = dbl(field(row, "M")), K = dbl(field(row, "K")), N = dbl(field(row, "N"));
    const bool k8 = field(row, "K") % 8 == 0, n8 = field(row, "N") % 8 == 0;
    s.cls = fmt::format("{}{}", k8 ? 1 : 0, n8 ? 1 : 0);
    s.cls_description = fmt::format("K multiple of 8: {}, N multiple of 8: {}", yes(k8), yes(n8));
    s.features = {1.0, 2 * M * K * N / 1e9, 2 * (M * K + K * N + M * N) / 1e6};
    s.coords = {std::log(M), std::log(K), std::log(N)};
    s.peak_flops = 2 * M * K * N;
  } else if (row.op == "expert_gemms") {
    const std::int64_t H = field(row, "H"), d = field(row, "expert_dim");
    const double E = dbl(field(row, "E")), T = dbl(field(row, "tokens_per_expert"));
    std::int64_t in = H, out = d;
    if (row.matrix == "up_gate") out = 2 * d;
    if (row.matrix == "down") std::swap(in, out);
    const double i = dbl(in), o = dbl(out);
    s.cls = fmt::format("{}{}", in % 8 == 0 ? 1 : 0, out % 8 == 0 ? 1 : 0);
    s.cls_description = fmt::format("GEMM K multiple of 8: {}, N multiple of 8: {}", yes(in % 8 == 0), yes(out % 8 == 0));
    s.features = {1.0, 2 * E * T * i * o / 1e9, 2 * E * (T * i + i * o + T * o) / 1e6, E / 100};
    s.coords = {std::log(E), std::log(T), std::log(i), std::log(o)};
    s.peak_flops = 2 * E * T * i * o;
  } else if (row.op == "attention") {
    const std::int64_t hd = field(row, "head_dim");
    const double L = dbl(field(row, "doc_len")), T = dbl(field(row, "tokens"));
    const double h = dbl(field(row, "num_heads")), kv = dbl(field(row, "num_kv_heads")), d = dbl(hd);
    const double d64 = std::ceil(d / 64.0) * 64.0;
    std::tie(s.cls, s.cls_description) = attention_head_dim_class(hd);
    s.features = {1.0, 4 * h * d64 * tiled_causal_keys(L, 128) * T / 1e12, T * (2 * h + 2 * kv) * d / 1e9, T * h / 1e6};
    s.coords = {std::log(L), std::log(h), std::log(kv), std::log(d), std::log(T)};
    // Exact causal keys (L + 1)/2 per query; forward 4·h·d·Ā·T, passes weighted 1 : 2.5.
    s.peak_flops = 4 * h * d * (L + 1) / 2 * T * pass_weight("attention", pass);
  } else {
    const auto fields = calibration_shape_fields(row.op);
    double elements = 1;
    for (const auto& f : fields.required) {
      if (row.op == "router_softmax_topk" && f == "top_k") continue;
      const double v = dbl(field(row, f.c_str()));
      elements *= v;
    }
    for (const auto& f : fields.required) s.coords.push_back(std::log(dbl(field(row, f.c_str()))));
    s.cls = "";
    s.features = {1.0, elements / 1e9};
    s.peak_bytes = fallback_bytes_per_element(row.op) * elements * pass_weight(row.op, pass);
  }
  return s;
}

struct ClassFit {
  std::vector<TimeSample> samples;
  std::vector<double> beta;
  std::vector<double> lo, hi;
};

struct FamilyFit {
  std::map<std::string, ClassFit> classes;
  ClassFit pooled;
};

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
}

}  // namespace

struct TimeModel::Impl {
  CalibrationProfile profile;
  TimeModelOptions options;
  std::map<std::string, FamilyFit> families;
  /// Attention acceptance per backend: [aligned accepted, aligned refused, unaligned accepted,
  /// unaligned refused] row counts ("aligned": head_dim a multiple of 8).
  std::map<std::string, std::array<int, 4>> acceptance;
  LayerCorrection correction;

  TimePrediction predict_pass(const CalibrationRow& q, const std::string& pass, const std::string& backend) const;
  TimePrediction predict_fitted(const CalibrationRow& q, const std::string& pass, const std::string& backend) const;
  /// 1 accepts, 0 refuses, -1 unknown (no rows of that alignment).
  int accepts(const std::string& backend, std::int64_t head_dim) const;
};

TimeModel::TimeModel(const CalibrationProfile& profile, TimeModelOptions options) {
  validate(profile);
  if (options.neighbours < 0 || options.neighbours > 1000) {
    throw Error(fmt::format("value {} is out of range; allowed: 0 to 1000 neighbours", options.neighbours),
                "<time model options>", "neighbours");
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
    if (row.op == "attention") {
      auto& counts = impl->acceptance[row.backend];
      const int base = row.shape.at("head_dim") % 8 == 0 ? 0 : 2;
      ++counts[static_cast<std::size_t>(base + (row.refused ? 1 : 0))];
    }
    if (row.refused) continue;
    const Shaped s = describe(row, row.pass, row.backend);
    TimeSample sample{s.features, s.coords, row.ms, 0};
    auto& family = impl->families[s.family];
    family.classes[s.cls].samples.push_back(sample);
    family.pooled.samples.push_back(sample);
  }
  for (auto& [name, family] : impl->families) {
    finish_class(family.pooled, {});
    for (auto& [cls, fit] : family.classes) finish_class(fit, family.pooled.beta);
  }
  impl->correction.backend_by_head_dim_class = layer_backends(profile);
  impl_ = impl;
  if (!profile.layers.empty()) {
    // The per-op fit (and the backends above) is complete: the correction is fitted on it.
    LayerCorrection correction = detail::fit_layer_correction(*this, profile.layers);
    correction.backend_by_head_dim_class = impl->correction.backend_by_head_dim_class;
    impl->correction = std::move(correction);
  }
}

const LayerCorrection& TimeModel::layer_correction() const { return impl_->correction; }

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
    p.note = fmt::format("no {} rows in its class ({}); the fit of all its classes is used", q.op, s.cls_description);
  }
  const double base = detail::evaluate_fit(fit->beta, s.features);
  if (!(base > 0)) {
    p.no_rows = true;
    return p;
  }
  p.ms = base * std::exp(detail::neighbour_log_residual(fit->samples, s.coords, options.neighbours));
  // No GEMM or attention kernel beats the profile's measured bf16 GEMM peak: an extrapolated fit
  // that would is held to it.
  const double at_peak_ms = s.peak_flops / (profile.peaks.bf16_gemm_tflops * 1e12) * 1e3;
  if (p.ms < at_peak_ms) {
    p.ms = at_peak_ms;
    p.note = fmt::format("{}{}the fit would beat the measured bf16 GEMM peak: held to it", p.note,
                         p.note.empty() ? "" : "; ");
  }
  for (std::size_t i = 0; i < s.coords.size() && i < fit->lo.size(); ++i) {
    if (s.coords[i] < fit->lo[i] - 1e-9 || s.coords[i] > fit->hi[i] + 1e-9) p.out_of_range = true;
  }
  return p;
}

TimePrediction TimeModel::Impl::predict_pass(const CalibrationRow& q, const std::string& pass,
                                             const std::string& backend) const {
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
      return f;
    }
  }
  for (const auto& other : passes) {
    if (other == pass) continue;
    TimePrediction o = predict_fitted(q, other, backend);
    if (o.no_rows) continue;
    o.ms *= pass_weight(q.op, pass) / pass_weight(q.op, other);
    o.no_rows = true;
    o.note = fmt::format("no {} {} rows: {} time × {:.3g}", q.op, pass, other,
                         pass_weight(q.op, pass) / pass_weight(q.op, other));
    return o;
  }
  // Nothing measured for the op at all: the profile's peaks.
  const Shaped s = describe(q, pass, backend);
  p = TimePrediction{};
  p.backend = backend;
  p.no_rows = true;
  p.from_peaks = true;
  if (s.peak_flops > 0) {
    p.ms = s.peak_flops / (profile.peaks.bf16_gemm_tflops * 1e12) * 1e3;
    p.note = fmt::format("no {} rows: FLOPs at the measured bf16 GEMM peak", q.op);
  } else {
    p.ms = s.peak_bytes / (profile.peaks.copy_gbytes_per_s * 1e9) * 1e3;
    p.note = fmt::format("no {} rows: bytes at the measured copy bandwidth", q.op);
  }
  return p;
}

TimePrediction TimeModel::predict(const CalibrationRow& query) const {
  const auto& ops = calibration_ops();
  if (std::find(ops.begin(), ops.end(), query.op) == ops.end()) {
    throw Error(fmt::format("unknown op \"{}\" in a time query", query.op), "<time model>");
  }
  const Impl& m = *impl_;
  if (query.op != "attention") return m.predict_pass(query, query.pass, query.backend);

  const std::int64_t hd = field(query, "head_dim");
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

// ---------------------------------------------------------------------------------------------
// Held-out validation.

std::vector<TimeValidation> validate_time_model(const CalibrationProfile& profile, std::uint64_t seed,
                                                TimeModelOptions options) {
  validate(profile);
  // A shape: op, matrix, routing and the shape fields — all its passes and backends go together.
  const auto shape_key = [](const CalibrationRow& r) {
    std::string key = r.op + "|" + r.matrix + "|" + r.routing;
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
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, std::size_t> fitted;
  for (const auto& r : fit_profile.rows) {
    if (!r.refused) ++fitted[r.op];
  }
  for (const CalibrationRow* r : test) {
    const TimePrediction p = model.predict(*r);
    const double e = std::abs(p.ms / r->ms - 1.0);
    errors[r->op].push_back(e);
    errors["all"].push_back(e);
  }
  fitted["all"] = 0;
  for (const auto& [op, n] : fitted) fitted["all"] += op == "all" ? 0 : n;
  std::vector<TimeValidation> out;
  const auto summarise = [&](const std::string& op) {
    auto e = errors[op];
    std::sort(e.begin(), e.end());
    // Percentiles by the nearest-rank rule: the ⌈q·n⌉-th smallest.
    const auto rank = [&](double q) {
      const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(e.size())));
      return e[std::max<std::size_t>(k, 1) - 1];
    };
    const double median = e.size() % 2 == 1 ? e[e.size() / 2] : 0.5 * (e[e.size() / 2 - 1] + e[e.size() / 2]);
    out.push_back({op, fitted[op], e.size(), median, rank(0.9), e.back()});
  };
  for (const auto& op : calibration_ops()) {
    if (errors.count(op) != 0) summarise(op);
  }
  summarise("all");
  return out;
}

}  // namespace budget
