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
#include <initializer_list>
#include <random>
#include <string_view>
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
double pass_weight(TimeQuery::Op op, TimeQuery::Pass pass) {
  if (op == TimeQuery::Op::gemm || op == TimeQuery::Op::expert_gemms) return 1.0;
  const double backward = op == TimeQuery::Op::attention ? 2.5 : 1.5;
  if (pass == TimeQuery::Pass::forward) return 1.0;
  if (pass == TimeQuery::Pass::backward) return backward;
  return 1.0 + backward;
}

/// The op of a calibration_ops() name (a query's op is checked against the list first).
TimeQuery::Op op_of(const std::string& op) {
  const auto& ops = calibration_ops();
  return static_cast<TimeQuery::Op>(std::find(ops.begin(), ops.end(), op) - ops.begin());
}

/// A pass name as pass_weight() reads it: anything but forward and backward weighs as forward+backward
/// (GEMM passes all weigh 1).
TimeQuery::Pass weight_pass_of(const std::string& pass) {
  if (pass == "forward") return TimeQuery::Pass::forward;
  if (pass == "backward") return TimeQuery::Pass::backward;
  return TimeQuery::Pass::forward_backward;
}

double pass_weight(const std::string& op, const std::string& pass) { return pass_weight(op_of(op), weight_pass_of(pass)); }

/// Keys per query a causal kernel with square `tile`×`tile` blocks computes over a document of L
/// tokens: n = ⌈L/tile⌉ block rows, n(n+1)/2 blocks of tile² scores, over L queries.
double tiled_causal_keys(double doc_len, double tile) {
  const double n = std::ceil(doc_len / tile);
  return n * (n + 1.0) / 2.0 * tile * tile / doc_len;
}

/// Forward bytes per element of a memory-bound op (fallback when a profile has no rows of it).
double fallback_bytes_per_element(std::string_view op) {
  if (op == "swiglu") return 6.0;               // read gate and up, write the product (bf16)
  if (op == "router_softmax_topk") return 2.0;  // read the logits
  return 4.0;                                   // read and write one bf16 element
}

/// The attention class of a head_dim as an integer: 3·(d mod 8 = 0) + (0: d ≤ 64 | 1: 65–128 | 2: > 128).
int attention_class_code(std::int64_t hd) { return (hd % 8 == 0 ? 3 : 0) + (hd <= 64 ? 0 : hd <= 128 ? 1 : 2); }

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

/// The numbers the model takes of a shape (the formulas of the file comment), shared by the row
/// path (describe()) and the typed path (TimeModel::predict_ms()).
struct ShapeNumbers {
  std::array<double, 4> features{};
  std::size_t feature_count = 0;
  std::array<double, 6> coords{};
  std::size_t coord_count = 0;
  int cls_code = 0;        ///< gemm-like: 2·(K mod 8 = 0) + (N mod 8 = 0); attention: attention_class_code(); else 0
  double peak_flops = 0;   ///< FLOPs of the pass for the no-rows fallback (GEMMs, attention)
  double peak_bytes = 0;   ///< bytes of the pass for the no-rows fallback (memory-bound ops)
};

/// `d`: the TimeQuery dims of the op (the fields it reads; see TimeQuery).
ShapeNumbers shape_numbers(TimeQuery::Op op, TimeQuery::Matrix matrix, TimeQuery::Pass pass,
                           const std::array<std::int64_t, TimeQuery::max_dims>& d) {
  ShapeNumbers s;
  const auto set_features = [&s](std::initializer_list<double> values) {
    for (const double v : values) s.features[s.feature_count++] = v;
  };
  const auto add_coord = [&s](double v) { s.coords[s.coord_count++] = std::log(v); };
  switch (op) {
    case TimeQuery::Op::gemm: {
      const double M = dbl(d[0]), K = dbl(d[1]), N = dbl(d[2]);
      s.cls_code = (d[1] % 8 == 0 ? 2 : 0) + (d[2] % 8 == 0 ? 1 : 0);
      set_features({1.0, 2 * M * K * N / 1e9, 2 * (M * K + K * N + M * N) / 1e6});
      add_coord(M);
      add_coord(K);
      add_coord(N);
      s.peak_flops = 2 * M * K * N;
      break;
    }
    case TimeQuery::Op::expert_gemms: {
      const std::int64_t H = d[2], width = d[3];
      const double E = dbl(d[0]), T = dbl(d[1]);
      std::int64_t in = H, out = width;
      if (matrix == TimeQuery::Matrix::up_gate) out = 2 * width;
      if (matrix == TimeQuery::Matrix::down) std::swap(in, out);
      const double i = dbl(in), o = dbl(out);
      s.cls_code = (in % 8 == 0 ? 2 : 0) + (out % 8 == 0 ? 1 : 0);
      set_features({1.0, 2 * E * T * i * o / 1e9, 2 * E * (T * i + i * o + T * o) / 1e6, E / 100});
      add_coord(E);
      add_coord(T);
      add_coord(i);
      add_coord(o);
      s.peak_flops = 2 * E * T * i * o;
      break;
    }
    case TimeQuery::Op::attention: {
      const std::int64_t hd = d[5];
      const double L = dbl(d[1]), T = dbl(d[2]);
      const double h = dbl(d[3]), kv = dbl(d[4]), dh = dbl(hd);
      const double d64 = std::ceil(dh / 64.0) * 64.0;
      s.cls_code = attention_class_code(hd);
      set_features({1.0, 4 * h * d64 * tiled_causal_keys(L, 128) * T / 1e12, T * (2 * h + 2 * kv) * dh / 1e9, T * h / 1e6});
      add_coord(L);
      add_coord(h);
      add_coord(kv);
      add_coord(dh);
      add_coord(T);
      // Exact causal keys (L + 1)/2 per query; forward 4·h·d·Ā·T, passes weighted 1 : 2.5.
      s.peak_flops = 4 * h * dh * (L + 1) / 2 * T * pass_weight(op, pass);
      break;
    }
    default: {
      const std::size_t fields = op == TimeQuery::Op::router_softmax_topk ? 3 : 2;
      double elements = 1;
      for (std::size_t f = 0; f < fields; ++f) {
        if (op == TimeQuery::Op::router_softmax_topk && f == 2) continue;  // top_k does not scale the bytes
        elements *= dbl(d[f]);
      }
      for (std::size_t f = 0; f < fields; ++f) add_coord(dbl(d[f]));
      set_features({1.0, elements / 1e9});
      s.peak_bytes = fallback_bytes_per_element(to_string(op)) * elements * pass_weight(op, pass);
      break;
    }
  }
  return s;
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

/// The TimeQuery dims of a row, read in the order the model's formulas need them (so a missing
/// field is named as before the typed path existed).
std::array<std::int64_t, TimeQuery::max_dims> row_dims(const CalibrationRow& row) {
  std::array<std::int64_t, TimeQuery::max_dims> d{};
  if (row.op == "expert_gemms") {
    d[2] = field(row, "H");
    d[3] = field(row, "expert_dim");
    d[0] = field(row, "E");
    d[1] = field(row, "tokens_per_expert");
  } else if (row.op == "attention") {
    d[5] = field(row, "head_dim");
    d[1] = field(row, "doc_len");
    d[2] = field(row, "tokens");
    d[3] = field(row, "num_heads");
    d[4] = field(row, "num_kv_heads");
  } else {
    const auto fields = calibration_shape_fields(row.op);
    for (std::size_t i = 0; i < fields.required.size() && i < d.size(); ++i) d[i] = field(row, fields.required[i].c_str());
  }
  return d;
}

TimeQuery::Matrix matrix_of(const std::string& matrix) {
  if (matrix == "up_gate") return TimeQuery::Matrix::up_gate;
  if (matrix == "up") return TimeQuery::Matrix::up;
  if (matrix == "down") return TimeQuery::Matrix::down;
  return TimeQuery::Matrix::none;
}

Shaped describe(const CalibrationRow& row, const std::string& pass, const std::string& backend) {
  Shaped s;
  s.family = family_of(row.op, pass, row, backend);
  const TimeQuery::Op op = op_of(row.op);
  const auto d = row_dims(row);
  const ShapeNumbers n = shape_numbers(op, matrix_of(row.matrix), weight_pass_of(pass), d);
  s.features.assign(n.features.begin(), n.features.begin() + static_cast<std::ptrdiff_t>(n.feature_count));
  s.coords.assign(n.coords.begin(), n.coords.begin() + static_cast<std::ptrdiff_t>(n.coord_count));
  s.peak_flops = n.peak_flops;
  s.peak_bytes = n.peak_bytes;
  const auto yes = [](bool b) { return b ? "yes" : "no"; };
  const bool k8 = (n.cls_code & 2) != 0, n8 = (n.cls_code & 1) != 0;
  if (op == TimeQuery::Op::gemm || op == TimeQuery::Op::expert_gemms) {
    s.cls = fmt::format("{}{}", k8 ? 1 : 0, n8 ? 1 : 0);
    s.cls_description = fmt::format("{}K multiple of 8: {}, N multiple of 8: {}",
                                    op == TimeQuery::Op::gemm ? "" : "GEMM ", yes(k8), yes(n8));
  } else if (op == TimeQuery::Op::attention) {
    std::tie(s.cls, s.cls_description) = attention_head_dim_class(d[5]);
  }
  return s;
}

/// The samples of a class sorted along one log-shape axis (the one of widest spread), for the
/// k nearest shapes without visiting all of them: from the query's position on the axis outwards,
/// each side stopped once its axis gap alone exceeds the k-th distance found. The same k samples
/// and the same sum as detail::neighbour_log_residual() (ties by (distance, residual), summed in
/// that order), bit for bit.
struct NeighbourIndex {
  std::size_t axis = 0;
  std::size_t dims = 0;
  std::vector<double> axis_value;  ///< sorted
  std::vector<double> coords;      ///< dims per sample, in the sorted order
  std::vector<double> residual;

  void build(const std::vector<TimeSample>& samples) {
    if (samples.empty()) return;
    dims = samples.front().coords.size();
    double widest = -1;
    for (std::size_t a = 0; a < dims; ++a) {
      double lo = samples.front().coords[a], hi = lo;
      for (const auto& s : samples) {
        lo = std::min(lo, s.coords[a]);
        hi = std::max(hi, s.coords[a]);
      }
      if (hi - lo > widest) {
        widest = hi - lo;
        axis = a;
      }
    }
    std::vector<std::size_t> order(samples.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return samples[x].coords[axis] < samples[y].coords[axis]; });
    for (const std::size_t i : order) {
      axis_value.push_back(samples[i].coords[axis]);
      coords.insert(coords.end(), samples[i].coords.begin(), samples[i].coords.end());
      residual.push_back(samples[i].log_residual);
    }
  }

  double log_residual(const double* query, std::size_t query_dims, int k) const {
    if (k <= 0 || axis_value.empty()) return 0;
    const std::size_t n = axis_value.size();
    const std::size_t want = std::min<std::size_t>(static_cast<std::size_t>(k), n);
    constexpr std::size_t stack = 16;
    std::array<std::pair<double, double>, stack> small{};
    std::vector<std::pair<double, double>> large;
    std::pair<double, double>* best = small.data();
    if (want > stack) {
      large.resize(want);
      best = large.data();
    }
    std::size_t found = 0;
    const std::size_t used = std::min(dims, query_dims);
    const auto consider = [&](std::size_t i) {
      double d2 = 0;
      for (std::size_t c = 0; c < used; ++c) {
        const double d = coords[i * dims + c] - query[c];
        d2 += d * d;
      }
      const std::pair<double, double> e{std::sqrt(d2), residual[i]};
      if (found == want && !(e < best[want - 1])) return;
      std::size_t at = found == want ? want - 1 : found++;
      while (at > 0 && e < best[at - 1]) {
        best[at] = best[at - 1];
        --at;
      }
      best[at] = e;
    };
    // Distance ≥ |axis gap| up to rounding: a side stops when its gap exceeds the k-th distance
    // by more than a relative 1e-9 (so no sample that could tie or win is skipped).
    const auto beyond = [&](double gap) { return found == want && gap > best[want - 1].first * (1 + 1e-9) + 1e-300; };
    const double q = query[axis];
    std::size_t right = static_cast<std::size_t>(std::lower_bound(axis_value.begin(), axis_value.end(), q) - axis_value.begin());
    std::size_t left = right;  // samples [0, left) and [right, n) not yet visited
    bool left_open = left > 0, right_open = right < n;
    while (left_open || right_open) {
      if (right_open) {
        if (beyond(axis_value[right] - q)) {
          right_open = false;
        } else {
          consider(right++);
          right_open = right < n;
        }
      }
      if (left_open) {
        if (beyond(q - axis_value[left - 1])) {
          left_open = false;
        } else {
          consider(--left);
          left_open = left > 0;
        }
      }
    }
    return detail::inverse_distance_mean(best, found);
  }
};

/// The names of a query's log-shape coordinates (ShapeNumbers::coords), for out-of-range notes.
std::vector<std::string> coord_names(const CalibrationRow& q) {
  if (q.op == "gemm") return {"M (tokens)", "K", "N"};
  if (q.op == "expert_gemms") {
    if (q.matrix == "down") return {"experts", "tokens per expert", "expert width", "hidden size"};
    return {"experts", "tokens per expert", "hidden size", q.matrix == "up_gate" ? "2 × expert width" : "expert width"};
  }
  if (q.op == "attention") return {"doc_len", "num_heads", "num_kv_heads", "head_dim", "tokens"};
  return calibration_shape_fields(q.op).required;
}

struct ClassFit {
  std::vector<TimeSample> samples;
  std::vector<double> beta;
  std::vector<double> lo, hi;
  NeighbourIndex index;
};

struct FamilyFit {
  std::map<std::string, ClassFit> classes;
  ClassFit pooled;
  /// classes by ShapeNumbers::cls_code (nullptr: no rows in that class; the pooled fit is used).
  std::array<const ClassFit*, 6> by_code{};
};

/// x·β as detail::evaluate_fit() sums it.
double evaluate_fit(const std::vector<double>& beta, const ShapeNumbers& n) {
  double sum = 0;
  for (std::size_t i = 0; i < beta.size() && i < n.feature_count; ++i) sum += beta[i] * n.features[i];
  return sum;
}

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

}  // namespace

struct TimeModel::Impl {
  CalibrationProfile profile;
  TimeModelOptions options;
  std::map<std::string, FamilyFit> families;
  /// Attention acceptance per backend: [aligned accepted, aligned refused, unaligned accepted,
  /// unaligned refused] row counts ("aligned": head_dim a multiple of 8).
  std::map<std::string, std::array<int, 4>> acceptance;
  LayerCorrection correction;
  /// Per TimeQuery::Op: the profile has a row of it that is not refused (measured()).
  std::array<bool, TimeQuery::op_count> measured_ops{};

  // The index of the typed path (predict_ms()), built once after the fit.
  std::vector<std::string> backends;  ///< every backend a family or the options name; "default" first
  std::vector<const FamilyFit*> family_table;  ///< by family_slot()
  /// Per attention_class_code(): how the options' backend is resolved (predict()'s rules, which
  /// depend on the head_dim only through its class and its alignment).
  struct AttentionPlan {
    enum class Mode { single, fastest, fallback } mode = Mode::fallback;
    std::vector<std::size_t> backend_ids;  ///< single/fallback: one; fastest: in predict()'s order
  };
  std::array<AttentionPlan, 6> attention_plan;

  std::size_t family_slot(TimeQuery::Op op, TimeQuery::Pass pass, bool down, std::size_t backend) const {
    return ((static_cast<std::size_t>(op) * TimeQuery::pass_count + static_cast<std::size_t>(pass)) * 2 + (down ? 1 : 0)) *
               backends.size() +
           backend;
  }
  void build_index();
  /// predict_fitted()'s ms; a negative value for no rows.
  double fitted_ms(const TimeQuery& q, TimeQuery::Pass pass, std::size_t backend) const;
  double pass_ms(const TimeQuery& q, TimeQuery::Pass pass, std::size_t backend) const;

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
    for (std::size_t op = 0; op < TimeQuery::op_count; ++op) {
      if (row.op == to_string(static_cast<TimeQuery::Op>(op))) impl->measured_ops[op] = true;
    }
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
  impl->build_index();
  impl_ = impl;
  if (!profile.layers.empty()) {
    // The per-op fit (and the backends above) is complete: the correction is fitted on it.
    LayerCorrection correction = detail::fit_layer_correction(*this, profile.layers);
    correction.backend_by_head_dim_class = impl->correction.backend_by_head_dim_class;
    impl->correction = std::move(correction);
    impl->build_index();  // the backends by class may have changed the attention plans
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
  const std::vector<std::string> names = coord_names(q);
  for (std::size_t i = 0; i < s.coords.size() && i < fit->lo.size(); ++i) {
    const bool below = s.coords[i] < fit->lo[i] - 1e-9, above = s.coords[i] > fit->hi[i] + 1e-9;
    if (!below && !above) continue;
    p.out_of_range = true;
    // Which dim, how far and by what factor: coordinates are logs, so the factor is e^|Δ|.
    const double value = std::exp(s.coords[i]), edge = std::exp(above ? fit->hi[i] : fit->lo[i]);
    p.note = fmt::format("{}{}{} {:.0f} is {:.3g}× the {} measured ({:.0f})", p.note, p.note.empty() ? "" : "; ",
                         i < names.size() ? names[i] : "dim", value, above ? value / edge : edge / value,
                         above ? "largest" : "smallest", edge);
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
// The typed path: predict_ms() through the index (the same decisions as predict(), by integers).

std::string_view to_string(TimeQuery::Op op) { return calibration_ops()[static_cast<std::size_t>(op)]; }

std::string_view to_string(TimeQuery::Pass pass) {
  switch (pass) {
    case TimeQuery::Pass::forward: return "forward";
    case TimeQuery::Pass::input_grad: return "input_grad";
    case TimeQuery::Pass::weight_grad: return "weight_grad";
    case TimeQuery::Pass::backward: return "backward";
    case TimeQuery::Pass::forward_backward: return "forward+backward";
  }
  return "?";
}

CalibrationRow to_row(const TimeQuery& query) {
  CalibrationRow row;
  row.op = std::string(to_string(query.op));
  row.pass = std::string(to_string(query.pass));
  const auto fields = calibration_shape_fields(row.op);
  for (std::size_t i = 0; i < fields.required.size() && i < query.dims.size(); ++i) row.shape[fields.required[i]] = query.dims[i];
  if (query.op == TimeQuery::Op::attention && query.v_head_dim > 0) row.shape["v_head_dim"] = query.v_head_dim;
  switch (query.matrix) {
    case TimeQuery::Matrix::none: break;
    case TimeQuery::Matrix::up: row.matrix = "up"; break;
    case TimeQuery::Matrix::up_gate: row.matrix = "up_gate"; break;
    case TimeQuery::Matrix::down: row.matrix = "down"; break;
  }
  return row;
}

void TimeModel::Impl::build_index() {
  backends = {"default"};
  const auto add_backend = [this](const std::string& name) {
    if (std::find(backends.begin(), backends.end(), name) == backends.end()) backends.push_back(name);
  };
  for (const auto& [name, counts] : acceptance) add_backend(name);
  for (const auto& [cls, name] : correction.backend_by_head_dim_class) add_backend(name);
  if (options.attention_backend != "auto") add_backend(options.attention_backend);
  const auto id_of = [this](const std::string& name) {
    return static_cast<std::size_t>(std::find(backends.begin(), backends.end(), name) - backends.begin());
  };

  family_table.assign(TimeQuery::op_count * TimeQuery::pass_count * 2 * backends.size(), nullptr);
  for (std::size_t o = 0; o < TimeQuery::op_count; ++o) {
    for (std::size_t pa = 0; pa < TimeQuery::pass_count; ++pa) {
      for (int down = 0; down < 2; ++down) {
        for (std::size_t b = 0; b < backends.size(); ++b) {
          const auto op = static_cast<TimeQuery::Op>(o);
          const auto pass = static_cast<TimeQuery::Pass>(pa);
          CalibrationRow row;
          row.matrix = down != 0 ? "down" : "up";
          const std::string family = family_of(std::string(to_string(op)), std::string(to_string(pass)), row, backends[b]);
          const auto it = families.find(family);
          family_table[family_slot(op, pass, down != 0, b)] = it == families.end() ? nullptr : &it->second;
        }
      }
    }
  }
  for (auto& [name, family] : families) {
    family.by_code.fill(nullptr);
    for (int code = 0; code < 6; ++code) {
      const std::string key = name.rfind("attention|", 0) == 0 ? fmt::format("{}{}", code / 3, code % 3)
                              : name.rfind("gemm|", 0) == 0 || name.rfind("expert_gemms|", 0) == 0
                                  ? fmt::format("{}{}", code / 2, code % 2)
                                  : std::string(code == 0 ? "" : "-");
      const auto it = family.classes.find(key);
      if (it != family.classes.end()) family.by_code[static_cast<std::size_t>(code)] = &it->second;
    }
  }

  // predict()'s backend choice for the options' backend, per head_dim class (a head_dim of it).
  for (int code = 0; code < 6; ++code) {
    const std::int64_t hd = std::array<std::int64_t, 6>{60, 100, 200, 64, 128, 256}[static_cast<std::size_t>(code)];
    AttentionPlan& plan = attention_plan[static_cast<std::size_t>(code)];
    plan = AttentionPlan{};
    const std::string& wanted = options.attention_backend;
    std::string chosen = wanted;
    if (wanted == "auto") {
      const auto by_layers = correction.backend_by_head_dim_class.find(attention_head_dim_class(hd).second);
      if (by_layers != correction.backend_by_head_dim_class.end() && accepts(by_layers->second, hd) == 1) {
        plan.mode = AttentionPlan::Mode::single;
        plan.backend_ids = {id_of(by_layers->second)};
        continue;
      }
      chosen = accepts("default", hd) == 1 ? "default" : "";
    }
    if (!chosen.empty() && accepts(chosen, hd) != 0) {
      plan.mode = AttentionPlan::Mode::single;
      plan.backend_ids = {id_of(chosen)};
      continue;
    }
    for (const auto& [name, counts] : acceptance) {
      if (name != chosen && accepts(name, hd) == 1) plan.backend_ids.push_back(id_of(name));
    }
    if (!plan.backend_ids.empty()) {
      plan.mode = AttentionPlan::Mode::fastest;
    } else {
      plan.mode = AttentionPlan::Mode::fallback;
      plan.backend_ids = {id_of(chosen.empty() ? "default" : chosen)};
    }
  }
}

double TimeModel::Impl::fitted_ms(const TimeQuery& q, TimeQuery::Pass pass, std::size_t backend) const {
  const FamilyFit* family = family_table[family_slot(q.op, pass, q.matrix == TimeQuery::Matrix::down, backend)];
  if (family == nullptr) return -1;
  const ShapeNumbers n = shape_numbers(q.op, q.matrix, pass, q.dims);
  const ClassFit* own = family->by_code[static_cast<std::size_t>(n.cls_code)];
  const ClassFit* fit = own != nullptr ? own : &family->pooled;
  const double base = evaluate_fit(fit->beta, n);
  if (!(base > 0)) return -1;
  double ms = base * std::exp(fit->index.log_residual(n.coords.data(), n.coord_count, options.neighbours));
  const double at_peak_ms = n.peak_flops / (profile.peaks.bf16_gemm_tflops * 1e12) * 1e3;
  if (ms < at_peak_ms) ms = at_peak_ms;
  return ms;
}

double TimeModel::Impl::pass_ms(const TimeQuery& q, TimeQuery::Pass pass, std::size_t backend) const {
  const double ms = fitted_ms(q, pass, backend);
  if (ms >= 0) return ms;
  using P = TimeQuery::Pass;
  const bool gemm_like = q.op == TimeQuery::Op::gemm || q.op == TimeQuery::Op::expert_gemms;
  const std::array<P, 3> passes = gemm_like ? std::array<P, 3>{P::forward, P::input_grad, P::weight_grad}
                                            : std::array<P, 3>{P::forward_backward, P::forward, P::backward};
  if (pass == P::forward_backward) {
    const double f = fitted_ms(q, P::forward, backend);
    const double b = fitted_ms(q, P::backward, backend);
    if (f >= 0 && b >= 0) return f + b;
  }
  for (const P other : passes) {
    if (other == pass) continue;
    const double o = fitted_ms(q, other, backend);
    if (o < 0) continue;
    return o * (pass_weight(q.op, pass) / pass_weight(q.op, other));
  }
  const ShapeNumbers n = shape_numbers(q.op, q.matrix, pass, q.dims);
  if (n.peak_flops > 0) return n.peak_flops / (profile.peaks.bf16_gemm_tflops * 1e12) * 1e3;
  return n.peak_bytes / (profile.peaks.copy_gbytes_per_s * 1e9) * 1e3;
}

bool TimeModel::measured(TimeQuery::Op op) const { return impl_->measured_ops[static_cast<std::size_t>(op)]; }

double TimeModel::predict_ms(const TimeQuery& query) const {
  const Impl& m = *impl_;
  if (query.op != TimeQuery::Op::attention) return m.pass_ms(query, query.pass, 0);
  const Impl::AttentionPlan& plan = m.attention_plan[static_cast<std::size_t>(attention_class_code(query.dims[5]))];
  if (plan.mode != Impl::AttentionPlan::Mode::fastest) return m.pass_ms(query, query.pass, plan.backend_ids.front());
  double best = 0;
  bool found = false;
  for (const std::size_t b : plan.backend_ids) {
    const double ms = m.pass_ms(query, query.pass, b);
    if (!found || ms < best) best = ms;
    found = true;
  }
  return best;
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
