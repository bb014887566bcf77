// The matching solver. Method (docs/matching.md):
//
// 1. Structure: every discrete choice that changes the shape of attention or the depth is a
//    "structure" σ = (num_layers, top_k, num_kv_heads, head_dim, hidden, num_heads). For fixed σ
//    the op list (ops.hpp) makes the budgets exactly affine/bilinear in the remaining variables
//    E (experts), W (expert width, or dense width for dense models) and S (shared-expert width):
//        F(E, W, S)  = f0 + fE·E + fW·W + fEW·E·W + fS·S          (training FLOPs per token)
//        N(E, W, S)  = n0 + nE·E + nW·W + nEW·E·W + nS·S          (non-embedding parameters)
//        KV          = constant for σ.
//    The coefficients are read off layer_ops()/account() at five points (calibrate()), so the
//    solver repeats no formula of the accounting.
// 2. For fixed (σ, W, S), u(E) = w_F·dF(E) and v(E) = w_N·dN(E) are affine in E, so
//    h(E) = max(|u|, |v|) is convex. Its minimiser over the reals (clamped to the interval that
//    caps and bounds allow) is one of a few breakpoints; by convexity the best lattice value of E
//    is the lattice point just below or just above it. This inner solve is exact.
// 3. W and S are enumerated over their lattices, restricted to the interval where the FLOPs
//    bound can still hold (F is monotone in W); σ is enumerated in order of increasing KV
//    deviation, which stops the search once KV alone exceeds the best objective (branch and
//    bound). Pass 1 finds the optimum g*; pass 2 collects every point within g* + tolerance,
//    which are then re-accounted exactly with account() and ranked.

#include "budget/match.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget {

// ---------------------------------------------------------------------------------------------
// VariableRange, LoopSpec

namespace {
std::int64_t ceil_to_multiple(std::int64_t value, std::int64_t step) {
  const std::int64_t q = value / step;
  return (q * step >= value ? q : q + 1) * step;
}
std::int64_t floor_to_multiple(std::int64_t value, std::int64_t step) {
  const std::int64_t q = value / step;
  return (q * step <= value ? q : q - 1) * step;
}
}  // namespace

std::vector<std::int64_t> VariableRange::values() const {
  std::vector<std::int64_t> out;
  if (is_fixed()) {
    out.push_back(min);
    return out;
  }
  const std::int64_t step = std::max<std::int64_t>(1, multiple_of);
  for (std::int64_t v = ceil_to_multiple(min, step); v <= max; v += step) out.push_back(v);
  return out;
}

std::int64_t VariableRange::size() const {
  if (is_fixed()) return 1;
  const std::int64_t step = std::max<std::int64_t>(1, multiple_of);
  const std::int64_t first = ceil_to_multiple(min, step);
  const std::int64_t last = floor_to_multiple(max, step);
  return last < first ? 0 : (last - first) / step + 1;
}

std::optional<LoopConfig> LoopSpec::resolve(std::int64_t num_layers) const {
  if (repeats <= 1) return std::nullopt;
  if (first > 0) {
    if (last < first || last > num_layers) {
      throw Error(fmt::format("loop layers {}–{} do not fit in a stack of {} layers; allowed: 1 <= first <= "
                              "last <= {}",
                              first, last, num_layers, num_layers),
                  "", "/loop");
    }
    return LoopConfig{first, last, repeats};
  }
  if (span_fraction <= 0.0) return std::nullopt;
  return centred_loop(num_layers, span_fraction, repeats);
}

std::string LoopSpec::describe() const {
  if (repeats <= 1 || (first == 0 && span_fraction <= 0.0)) return "no loop";
  if (first > 0) return fmt::format("layers {}–{} ×{}", first, last, repeats);
  return fmt::format("centred {:g}% of layers ×{}", 100.0 * span_fraction, repeats);
}

// ---------------------------------------------------------------------------------------------
// Defaults

MatchConstraints default_constraints(const ArchConfig& b) {
  MatchConstraints c;
  const std::int64_t H = b.hidden_size;
  c.hidden_size = {std::max<std::int64_t>(8, ceil_to_multiple(H / 4, 8)), 2 * H, 8};
  const std::int64_t hd = b.attention.head_dim;
  c.head_dim = {std::max<std::int64_t>(4, ceil_to_multiple(hd / 4, 4)), 2 * hd, 4};
  c.num_kv_heads = VariableRange::fixed(b.attention.num_kv_heads);
  c.num_heads = {1, 4 * b.attention.num_heads, 1};
  c.num_layers = VariableRange::fixed(b.num_layers);
  c.top_k = VariableRange::fixed(b.ffn.top_k);
  if (b.ffn.is_moe()) {
    c.num_experts = {b.ffn.top_k, 8 * b.ffn.num_experts, 8};
    c.expert_dim = {8, 4 * b.ffn.expert_dim, 8};
  } else {
    c.num_experts = VariableRange::fixed(0);
    c.expert_dim = {8, 4 * b.ffn.dense_dim, 8};
  }
  c.shared_expert_dim = b.ffn.num_shared_experts > 0 ? VariableRange{8, 4 * b.ffn.shared_expert_dim, 8}
                                                     : VariableRange::fixed(b.ffn.shared_expert_dim);
  c.query_equals_hidden = b.attention.query_width() == b.hidden_size;
  // MLA: the query latent, rotary, no-rope and value dims are held (head_dim = qk_nope + qk_rope);
  // the KV latent is searched, as head_dim and KV heads are for GQA, to match the KV cache.
  if (b.attention.mla) {
    c.head_dim = VariableRange::fixed(hd);
    const std::int64_t r = b.attention.mla->kv_lora_rank;
    c.kv_lora_rank = {std::max<std::int64_t>(16, ceil_to_multiple(r / 4, 16)), std::max<std::int64_t>(16, 2 * r), 16};
    // MLA baselines are large and free the query width (num_heads searched with hidden): coarser
    // lattices keep a default search of DeepSeek-V3 or Kimi-K2 to seconds.
    c.hidden_size = {std::max<std::int64_t>(64, ceil_to_multiple(H / 4, 64)), std::max<std::int64_t>(64, 2 * H), 64};
    const std::int64_t heads = b.attention.num_heads;
    const std::int64_t step = std::max<std::int64_t>(1, heads / 16);
    c.num_heads = {std::max(step, ceil_to_multiple(heads / 4, step)), 2 * heads, step};
    const std::int64_t width = b.ffn.is_moe() ? b.ffn.expert_dim : b.ffn.dense_dim;
    c.expert_dim = {64, std::max<std::int64_t>(64, 4 * width), 64};
    if (b.ffn.num_shared_experts > 0) c.shared_expert_dim = {64, std::max<std::int64_t>(64, 4 * b.ffn.shared_expert_dim), 64};
    c.query_equals_hidden = false;
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Candidate evaluation (exact, through account())

double Deviation::max_abs() const { return std::max({std::fabs(flops), std::fabs(params), std::fabs(kv)}); }

namespace {
double proportion_distance(const ArchConfig& c, const ArchConfig& b, const ProportionWeights& w) {
  const auto log_ratio = [](double x, double y) { return std::fabs(std::log(x / y)); };
  const auto width = [](const ArchConfig& a) {
    return static_cast<double>(a.ffn.is_moe() ? a.ffn.expert_dim : a.ffn.dense_dim);
  };
  const double H = static_cast<double>(c.hidden_size);
  const double Hb = static_cast<double>(b.hidden_size);
  double d = w.expert_dim_to_hidden * log_ratio(width(c) / H, width(b) / Hb) +
             w.head_dim * log_ratio(static_cast<double>(c.attention.head_dim), static_cast<double>(b.attention.head_dim)) +
             w.query_to_hidden * log_ratio(static_cast<double>(c.attention.query_width()) / H,
                                           static_cast<double>(b.attention.query_width()) / Hb);
  if (c.ffn.num_shared_experts > 0 && b.ffn.shared_expert_dim > 0 && c.ffn.shared_expert_dim > 0) {
    d += w.shared_expert_dim_to_hidden * log_ratio(static_cast<double>(c.ffn.shared_expert_dim) / H,
                                                   static_cast<double>(b.ffn.shared_expert_dim) / Hb);
  }
  return d;
}

/// The weighted |deviations| sorted descending.
std::array<double, 3> weighted_sorted(const Deviation& d, const MatchConstraints& c) {
  std::array<double, 3> w{c.weight_flops * std::fabs(d.flops), c.weight_params * std::fabs(d.params),
                          c.weight_kv * std::fabs(d.kv)};
  std::sort(w.begin(), w.end(), std::greater<>());
  return w;
}
}  // namespace

Candidate evaluate_candidate(const ArchConfig& candidate, const ArchConfig& baseline, const Budgets& base,
                             const Workload& workload, const MatchConstraints& constraints) {
  Candidate c;
  c.config = candidate;
  c.budgets = account(candidate, workload);
  c.deviation.flops = relative_deviation(c.budgets.training_flops_per_token, base.training_flops_per_token);
  c.deviation.params = relative_deviation(static_cast<double>(c.budgets.non_embedding_params_total),
                                          static_cast<double>(base.non_embedding_params_total));
  c.deviation.kv = relative_deviation(static_cast<double>(c.budgets.kv_elements_per_token),
                                      static_cast<double>(base.kv_elements_per_token));
  const auto w = weighted_sorted(c.deviation, constraints);
  c.objective = w[0];
  c.second_objective = w[1];
  c.proportion_distance = proportion_distance(candidate, baseline, constraints.proportions);
  return c;
}

// ---------------------------------------------------------------------------------------------
// The search

namespace {

/// A point of the space in compact form.
struct Point {
  std::int64_t num_layers, top_k, num_kv_heads, head_dim, hidden, num_heads, experts, width, shared;
  double objective;  // model value, for pass 2's filter
  std::int64_t kv_lora = 0;  // MLA only
};

/// σ without hidden/heads: what fixes the KV cache.
struct KvStructure {
  std::int64_t num_layers, top_k, num_kv_heads, head_dim;
  std::optional<LoopConfig> loop;
  double kv_term;  // w_KV·|dKV|
  std::int64_t kv_lora = 0;  // MLA only: the KV latent width
};

/// Exact bilinear model of the budgets of one structure (see the header comment).
struct Coefficients {
  double f0 = 0, fE = 0, fW = 0, fEW = 0, fS = 0;
  double n0 = 0, nE = 0, nW = 0, nEW = 0, nS = 0;
};

class Searcher {
 public:
  Searcher(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload, const MatchConstraints& c)
      : baseline_(baseline), loop_(loop), workload_(workload), c_(c) {
    base_ = account(baseline, workload);
    if (base_.kv_elements_per_token == 0) {
      throw Error("the baseline keeps no per-token KV cache (every layer has sliding-window attention), so the "
                  "KV budget cannot be matched; allowed: a baseline with at least one full-attention layer",
                  "", "/attention/layer_types");
    }
    F_b_ = base_.training_flops_per_token;
    N_b_ = static_cast<double>(base_.non_embedding_params_total);
    KV_b_ = static_cast<double>(base_.kv_elements_per_token);
    dense_ = !baseline.ffn.is_moe();
    has_shared_ = baseline.ffn.num_shared_experts > 0;
    experts_ = c.num_experts;
    widths_ = c.expert_dim.values();
    shareds_ = c.shared_expert_dim.values();
    build_kv_structures();
  }

  const Budgets& baseline_budgets() const { return base_; }

  std::int64_t space_size() const {
    const auto size = [](const VariableRange& r) { return static_cast<double>(r.size()); };
    const double s = size(c_.num_layers) * size(c_.top_k) * size(c_.num_kv_heads) * size(c_.head_dim) *
                     size(c_.hidden_size) * (c_.query_equals_hidden ? 1.0 : size(c_.num_heads)) *
                     size(c_.num_experts) * size(c_.expert_dim) * size(c_.shared_expert_dim) *
                     (baseline_.attention.mla ? size(c_.kv_lora_rank) : 1.0);
    return s > 9e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(s);
  }

  /// Runs one pass. `collect` empty: branch and bound for the minimum (returns it, +inf if
  /// nothing is feasible). Else: visits every point with model objective <= fixed bound.
  double run(double bound, std::vector<Point>* collect) {
    best_ = bound;
    collect_ = collect;
    fixed_bound_ = collect != nullptr;
    for (const KvStructure& kv : kv_structures_) {
      if (kv.kv_term > best_ + slack) break;  // sorted by kv_term: nothing later can do better
      for (std::int64_t hidden : c_.hidden_size.values()) {
        if (c_.query_equals_hidden) {
          if (hidden % kv.head_dim != 0) continue;
          const std::int64_t heads = hidden / kv.head_dim;
          if (heads % kv.num_kv_heads != 0) continue;
          visit_structure(kv, hidden, heads);
        } else {
          for (std::int64_t heads : c_.num_heads.values()) {
            if (heads % kv.num_kv_heads != 0) continue;
            visit_structure(kv, hidden, heads);
          }
        }
      }
    }
    return best_;
  }

  std::int64_t evaluated() const { return evaluated_; }
  std::int64_t structures() const { return structures_; }

  ArchConfig make_config(const Point& p) const {
    ArchConfig cfg = baseline_;
    cfg.name = baseline_.name.empty() ? "matched" : baseline_.name + "-matched";
    cfg.num_layers = p.num_layers;
    cfg.loop = loop_.resolve(p.num_layers);
    cfg.hidden_size = p.hidden;
    cfg.attention.head_dim = p.head_dim;
    cfg.attention.num_heads = p.num_heads;
    cfg.attention.num_kv_heads = p.num_kv_heads;
    if (cfg.attention.mla) cfg.attention.mla->kv_lora_rank = p.kv_lora;
    cfg.ffn.top_k = dense_ ? 0 : p.top_k;
    if (dense_) {
      cfg.ffn.dense_dim = p.width;
    } else {
      cfg.ffn.num_experts = p.experts;
      cfg.ffn.expert_dim = p.width;
    }
    if (has_shared_) cfg.ffn.shared_expert_dim = p.shared;
    cfg.ffn.first_dense_layers = std::min(cfg.ffn.first_dense_layers, cfg.num_layers);
    return cfg;
  }

  static constexpr double slack = 1e-12;

 private:
  void build_kv_structures() {
    for (std::int64_t L : c_.num_layers.values()) {
      const std::optional<LoopConfig> loop = loop_.resolve(L);
      for (std::int64_t k : c_.top_k.values()) {
        if (!dense_ && (k < 1)) continue;
        for (std::int64_t kvh : c_.num_kv_heads.values()) {
          if (kvh < 1) continue;
          for (std::int64_t hd : c_.head_dim.values()) {
            if (hd < 1) continue;
            // MLA holds head_dim (qk_nope + qk_rope) and its single latent KV head; per-layer
            // attention kinds are tied to the baseline's depth.
            if (baseline_.attention.mla && (hd != baseline_.attention.head_dim || kvh != 1)) continue;
            if (!baseline_.attention.layer_types.empty() && L != baseline_.num_layers) continue;
            const std::vector<std::int64_t> latents =
                baseline_.attention.mla ? c_.kv_lora_rank.values() : std::vector<std::int64_t>{0};
            for (std::int64_t latent : latents) {
              if (baseline_.attention.mla && latent < 1) continue;
              // KV elements per token from the config (ArchConfig::kv_elements_per_token()).
              // Cross-checked against account() for every candidate reported.
              ArchConfig shape = baseline_;
              shape.num_layers = L;
              shape.loop = loop;
              shape.attention.num_kv_heads = kvh;
              shape.attention.head_dim = hd;
              if (shape.attention.mla) shape.attention.mla->kv_lora_rank = latent;
              const double kv = static_cast<double>(shape.kv_elements_per_token());
              const double term = c_.weight_kv * std::fabs(kv / KV_b_ - 1.0);
              if (c_.max_kv_deviation && std::fabs(kv / KV_b_ - 1.0) > *c_.max_kv_deviation + slack) continue;
              kv_structures_.push_back({L, k, kvh, hd, loop, term, latent});
            }
          }
        }
      }
    }
    std::stable_sort(kv_structures_.begin(), kv_structures_.end(),
                     [](const KvStructure& a, const KvStructure& b) { return a.kv_term < b.kv_term; });
  }

  ArchConfig structure_config(const KvStructure& kv, std::int64_t hidden, std::int64_t heads) const {
    ArchConfig cfg = baseline_;
    cfg.num_layers = kv.num_layers;
    cfg.loop = kv.loop;
    cfg.hidden_size = hidden;
    cfg.attention.num_heads = heads;
    cfg.attention.head_dim = kv.head_dim;
    cfg.attention.num_kv_heads = kv.num_kv_heads;
    if (cfg.attention.mla) cfg.attention.mla->kv_lora_rank = kv.kv_lora;
    cfg.ffn.top_k = dense_ ? 0 : kv.top_k;
    cfg.ffn.first_dense_layers = std::min(cfg.ffn.first_dense_layers, cfg.num_layers);
    return cfg;
  }

  /// F and N of `cfg` with (E, W, S) set; from the op list.
  std::pair<double, double> budgets_at(ArchConfig cfg, std::int64_t E, std::int64_t W, std::int64_t S) const {
    if (dense_) {
      cfg.ffn.dense_dim = W;
    } else {
      cfg.ffn.num_experts = E;
      cfg.ffn.expert_dim = W;
    }
    if (has_shared_) cfg.ffn.shared_expert_dim = S;
    const Budgets b = account(layer_ops(cfg, workload_), cfg, workload_);
    return {b.training_flops_per_token, static_cast<double>(b.non_embedding_params_total)};
  }

  /// Reads the bilinear coefficients off the op list at E ∈ {E1, E1+1}, W ∈ {1, 2}, S ∈ {S1, S1+1}.
  Coefficients calibrate(const ArchConfig& cfg, std::int64_t top_k) const {
    Coefficients k;
    const std::int64_t E1 = dense_ ? 0 : std::max<std::int64_t>(top_k, 1);
    const std::int64_t S1 = has_shared_ ? 1 : cfg.ffn.shared_expert_dim;
    const auto [F00, N00] = budgets_at(cfg, E1, 1, S1);
    const auto [F01, N01] = budgets_at(cfg, E1, 2, S1);
    const double dFW = F01 - F00, dNW = N01 - N00;
    if (dense_) {
      k.fW = dFW;
      k.nW = dNW;
    } else {
      const auto [F10, N10] = budgets_at(cfg, E1 + 1, 1, S1);
      const auto [F11, N11] = budgets_at(cfg, E1 + 1, 2, S1);
      k.fEW = (F11 - F10) - dFW;
      k.nEW = (N11 - N10) - dNW;
      k.fE = (F10 - F00) - k.fEW * 1.0;
      k.nE = (N10 - N00) - k.nEW * 1.0;
      k.fW = dFW - k.fEW * static_cast<double>(E1);
      k.nW = dNW - k.nEW * static_cast<double>(E1);
    }
    if (has_shared_) {
      const auto [FS, NS] = budgets_at(cfg, E1, 1, S1 + 1);
      k.fS = FS - F00;
      k.nS = NS - N00;
    }
    const double e1 = static_cast<double>(E1), s1 = static_cast<double>(S1);
    k.f0 = F00 - k.fE * e1 - k.fW - k.fEW * e1 - k.fS * s1;
    k.n0 = N00 - k.nE * e1 - k.nW - k.nEW * e1 - k.nS * s1;
    return k;
  }

  void visit_structure(const KvStructure& kv, std::int64_t hidden, std::int64_t heads) {
    if (kv.kv_term > best_ + slack) return;
    const ArchConfig cfg = structure_config(kv, hidden, heads);
    ++structures_;
    const Coefficients k = calibrate(cfg, kv.top_k);
    for (std::int64_t S : shareds_) {
      // W interval where |dF| can still be within the bound for some E (F increasing in W).
      std::size_t w_begin = 0, w_end = widths_.size();
      const double fbound = flops_bound();
      // fEW is 0 up to float rounding (F has no E·W term); the bound assumes it.
      if (std::isfinite(fbound) && std::fabs(k.fEW) <= 1e-9 * k.fW && k.fW > 0.0) {
        const double e_lo = static_cast<double>(dense_ ? 0 : experts_.min);
        const double e_hi = static_cast<double>(dense_ ? 0 : experts_.max);
        const double rest = k.f0 + k.fS * static_cast<double>(S);
        const double w_max = (F_b_ * (1.0 + fbound) - rest - k.fE * e_lo) / k.fW;
        const double w_min = (F_b_ * (1.0 - fbound) - rest - k.fE * e_hi) / k.fW;
        w_begin = static_cast<std::size_t>(
            std::lower_bound(widths_.begin(), widths_.end(), std::ceil(w_min - 1e-9)) - widths_.begin());
        w_end = static_cast<std::size_t>(
            std::upper_bound(widths_.begin(), widths_.end(), std::floor(w_max + 1e-9)) - widths_.begin());
      }
      for (std::size_t i = w_begin; i < w_end; ++i) solve_experts(kv, hidden, heads, k, widths_[i], S);
    }
  }

  /// The largest |dF| that can still matter: the bound (weighted) or the cap.
  double flops_bound() const {
    double b = c_.weight_flops > 0 ? (best_ + slack) / c_.weight_flops : std::numeric_limits<double>::infinity();
    if (c_.max_flops_deviation) b = std::min(b, *c_.max_flops_deviation);
    return b;
  }

  /// Interval of E where lo <= a + b·E <= hi (b >= 0). Returns false if empty.
  static bool affine_interval(double a, double b, double lo, double hi, double& e_lo, double& e_hi) {
    if (b > 0) {
      e_lo = std::max(e_lo, (lo - a) / b);
      e_hi = std::min(e_hi, (hi - a) / b);
    } else if (a < lo || a > hi) {
      return false;
    }
    return e_lo <= e_hi;
  }

  void solve_experts(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, const Coefficients& k,
                     std::int64_t W, std::int64_t S) {
    ++evaluated_;
    const double w = static_cast<double>(W), s = static_cast<double>(S);
    // F(E) = aF + bF·E, N(E) = aN + bN·E.
    const double aF = k.f0 + k.fW * w + k.fS * s, bF = k.fE + k.fEW * w;
    const double aN = k.n0 + k.nW * w + k.nS * s, bN = k.nE + k.nEW * w;
    // u(E), v(E): weighted relative deviations.
    const double uA = c_.weight_flops * (aF / F_b_ - 1.0), uB = c_.weight_flops * bF / F_b_;
    const double vA = c_.weight_params * (aN / N_b_ - 1.0), vB = c_.weight_params * bN / N_b_;
    const auto h = [&](double E) { return std::max(std::fabs(uA + uB * E), std::fabs(vA + vB * E)); };

    if (dense_ || experts_.is_fixed()) {
      const std::int64_t E = dense_ ? 0 : experts_.min;
      consider(kv, hidden, heads, E, W, S, aF + bF * static_cast<double>(E), aN + bN * static_cast<double>(E),
               h(static_cast<double>(E)));
      return;
    }
    // Interval of E allowed by the lattice range, the caps and the bound.
    double e_lo = static_cast<double>(experts_.min), e_hi = static_cast<double>(experts_.max);
    const double bound = best_ + slack;
    const auto limit = [&](double weight, std::optional<double> cap) {
      double d = weight > 0 ? bound / weight : std::numeric_limits<double>::infinity();
      if (cap) d = std::min(d, *cap + slack);
      return d;
    };
    const double dF = limit(c_.weight_flops, c_.max_flops_deviation);
    const double dN = limit(c_.weight_params, c_.max_params_deviation);
    if (std::isfinite(dF) && !affine_interval(aF, bF, F_b_ * (1 - dF), F_b_ * (1 + dF), e_lo, e_hi)) return;
    if (std::isfinite(dN) && !affine_interval(aN, bN, N_b_ * (1 - dN), N_b_ * (1 + dN), e_lo, e_hi)) return;
    // Continuous minimiser of the convex h on [e_lo, e_hi]: among the breakpoints.
    double best_e = e_lo, best_h = h(e_lo);
    const auto try_point = [&](double E) {
      if (!(E >= e_lo && E <= e_hi)) return;
      const double value = h(E);
      if (value < best_h) best_h = value, best_e = E;
    };
    try_point(e_hi);
    if (uB != 0) try_point(-uA / uB);
    if (vB != 0) try_point(-vA / vB);
    if (uB != vB) try_point((vA - uA) / (uB - vB));
    if (uB + vB != 0) try_point(-(uA + vA) / (uB + vB));
    // Lattice neighbours of the minimiser inside [e_lo, e_hi].
    const std::int64_t step = std::max<std::int64_t>(1, experts_.multiple_of);
    const std::int64_t lattice_lo = ceil_to_multiple(std::max<std::int64_t>(experts_.min, static_cast<std::int64_t>(std::ceil(e_lo - 1e-9))), step);
    const std::int64_t lattice_hi = floor_to_multiple(std::min<std::int64_t>(experts_.max, static_cast<std::int64_t>(std::floor(e_hi + 1e-9))), step);
    if (lattice_lo > lattice_hi) return;
    const std::int64_t below = std::clamp(floor_to_multiple(static_cast<std::int64_t>(std::floor(best_e)), step), lattice_lo, lattice_hi);
    const std::int64_t above = std::clamp(ceil_to_multiple(static_cast<std::int64_t>(std::ceil(best_e)), step), lattice_lo, lattice_hi);
    const double h_below = h(static_cast<double>(below)), h_above = h(static_cast<double>(above));
    const std::int64_t E = h_above < h_below ? above : below;
    const double e = static_cast<double>(E);
    consider(kv, hidden, heads, E, W, S, aF + bF * e, aN + bN * e, std::min(h_below, h_above));
  }

  void consider(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, std::int64_t E, std::int64_t W,
                std::int64_t S, double F, double N, double h_value) {
    if (!dense_ && E < kv.top_k) return;
    const double dF = F / F_b_ - 1.0, dN = N / N_b_ - 1.0;
    if (c_.max_flops_deviation && std::fabs(dF) > *c_.max_flops_deviation + slack) return;
    if (c_.max_params_deviation && std::fabs(dN) > *c_.max_params_deviation + slack) return;
    const double objective = std::max(kv.kv_term, h_value);
    if (objective > best_ + slack) return;
    if (!fixed_bound_) {
      best_ = objective;
      return;
    }
    collect_->push_back(
        {kv.num_layers, kv.top_k, kv.num_kv_heads, kv.head_dim, hidden, heads, E, W, S, objective, kv.kv_lora});
  }

  const ArchConfig& baseline_;
  LoopSpec loop_;
  const Workload& workload_;
  const MatchConstraints& c_;
  Budgets base_;
  double F_b_ = 0, N_b_ = 0, KV_b_ = 0;
  bool dense_ = false, has_shared_ = false;
  VariableRange experts_;
  std::vector<std::int64_t> widths_, shareds_;
  std::vector<KvStructure> kv_structures_;
  double best_ = 0;
  bool fixed_bound_ = false;
  std::vector<Point>* collect_ = nullptr;
  std::int64_t evaluated_ = 0, structures_ = 0;
};

void check_constraints(const MatchConstraints& c) {
  const auto check = [](const VariableRange& r, const char* name, std::int64_t min_allowed) {
    if (r.multiple_of < 1) {
      throw Error(fmt::format("multiple_of {} must be at least 1", r.multiple_of), "", fmt::format("/{}/multiple_of", name));
    }
    if (r.min < min_allowed || r.max < r.min) {
      throw Error(fmt::format("range [{}, {}] is empty or below {}", r.min, r.max, min_allowed), "", fmt::format("/{}", name));
    }
    if (r.size() == 0) {
      throw Error(fmt::format("range [{}, {}] holds no multiple of {}", r.min, r.max, r.multiple_of), "",
                  fmt::format("/{}", name));
    }
  };
  check(c.hidden_size, "hidden_size", 1);
  check(c.expert_dim, "expert_dim", 1);
  check(c.head_dim, "head_dim", 1);
  check(c.num_heads, "num_heads", 1);
  check(c.num_kv_heads, "num_kv_heads", 1);
  check(c.num_layers, "num_layers", 1);
  check(c.num_experts, "num_experts", 0);
  check(c.top_k, "top_k", 0);
  check(c.shared_expert_dim, "shared_expert_dim", 0);
  check(c.kv_lora_rank, "kv_lora_rank", 0);
  const auto check_weight = [](double w, const char* name) {
    if (!(w >= 0 && std::isfinite(w))) throw Error(fmt::format("weight {} must be a finite number >= 0", w), "", name);
  };
  check_weight(c.weight_flops, "/weights/flops");
  check_weight(c.weight_params, "/weights/params");
  check_weight(c.weight_kv, "/weights/kv");
  if (c.weight_flops + c.weight_params + c.weight_kv <= 0) throw Error("at least one weight must be positive", "", "/weights");
  if (!(c.tolerance >= 0 && c.tolerance < 1)) throw Error(fmt::format("tolerance {} must be in [0, 1)", c.tolerance), "", "/tolerance");

}

/// Ranks the collected points (docs/matching.md, "Ranking"):
///  1. eligible = objective <= g* + tolerance (pass 2 collected exactly those);
///  2. per structure (depth, top_k, KV heads, head dim, heads, hidden) keep the member with the
///     smallest (objective, second-largest deviation, sum of deviations): widths and expert counts
///     fine-tune the budgets of one shape, so the best-matched one represents it;
///  3. representatives by distance from the baseline's proportions, then objective;
///  4. the other eligible points after them, by (objective, second-largest deviation).
std::vector<Candidate> rank(std::vector<Candidate> all, int top_n) {
  const auto key = [](const Candidate& c) {
    const auto& a = c.config;
    return std::array<std::int64_t, 6>{a.num_layers, a.ffn.top_k, a.attention.num_kv_heads, a.attention.head_dim,
                                       a.attention.num_heads, a.hidden_size};
  };
  const auto sum = [](const Candidate& c) {
    return std::fabs(c.deviation.flops) + std::fabs(c.deviation.params) + std::fabs(c.deviation.kv);
  };
  const auto better_match = [&](const Candidate& a, const Candidate& b) {
    if (a.objective != b.objective) return a.objective < b.objective;
    if (a.second_objective != b.second_objective) return a.second_objective < b.second_objective;
    return sum(a) < sum(b);
  };
  std::stable_sort(all.begin(), all.end(), [&](const Candidate& a, const Candidate& b) {
    const auto ka = key(a), kb = key(b);
    if (ka != kb) return ka < kb;
    return better_match(a, b);
  });
  std::vector<Candidate> representatives, others;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool first_of_structure = i == 0 || key(all[i]) != key(all[i - 1]);
    (first_of_structure ? representatives : others).push_back(std::move(all[i]));
  }
  std::stable_sort(representatives.begin(), representatives.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.proportion_distance != b.proportion_distance) return a.proportion_distance < b.proportion_distance;
    return better_match(a, b);
  });
  std::stable_sort(others.begin(), others.end(), better_match);
  for (auto& c : others) {
    if (representatives.size() >= static_cast<std::size_t>(top_n)) break;
    representatives.push_back(std::move(c));
  }
  if (representatives.size() > static_cast<std::size_t>(top_n)) representatives.resize(static_cast<std::size_t>(top_n));
  return representatives;
}

/// Smallest weighted objective attainable under `c` (+inf if none), by one branch-and-bound pass.
double best_objective(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                      const MatchConstraints& c) {
  Searcher searcher(baseline, loop, workload, c);
  return searcher.run(std::numeric_limits<double>::infinity(), nullptr);
}

struct Relaxation {
  std::string name;
  std::function<void(MatchConstraints&)> apply;
};

/// Every constraint that can be relaxed on its own, named as a user would write it.
std::vector<Relaxation> relaxations(const MatchConstraints& c) {
  std::vector<Relaxation> out;
  const auto add_range = [&](const char* name, VariableRange MatchConstraints::*field) {
    const VariableRange r = c.*field;
    if (r.is_fixed()) {
      out.push_back({fmt::format("{} fixed at {}", name, r.min), [field, r](MatchConstraints& m) {
                       m.*field = {1, std::max<std::int64_t>(8, 4 * r.max), 1};
                     }});
      return;
    }
    if (r.multiple_of > 1) {
      out.push_back({fmt::format("{} multiple of {}", name, r.multiple_of),
                     [field](MatchConstraints& m) { (m.*field).multiple_of = 1; }});
    }
    out.push_back({fmt::format("{} in [{}, {}]", name, r.min, r.max), [field, r](MatchConstraints& m) {
                     (m.*field).min = std::min<std::int64_t>(r.min, std::max<std::int64_t>(1, r.multiple_of));
                     (m.*field).max = 4 * r.max;
                   }});
  };
  if (c.kv_lora_rank.max == 0) {  // MLA baselines hold head_dim and the single latent KV head
    add_range("head_dim", &MatchConstraints::head_dim);
    add_range("num_kv_heads", &MatchConstraints::num_kv_heads);
  }
  add_range("hidden_size", &MatchConstraints::hidden_size);
  add_range("num_experts", &MatchConstraints::num_experts);
  add_range("expert_dim", &MatchConstraints::expert_dim);
  if (!c.query_equals_hidden) add_range("num_heads", &MatchConstraints::num_heads);
  add_range("num_layers", &MatchConstraints::num_layers);
  add_range("top_k", &MatchConstraints::top_k);
  if (c.kv_lora_rank.max > 0) add_range("kv_lora_rank", &MatchConstraints::kv_lora_rank);  // MLA baselines
  if (c.query_equals_hidden) {
    out.push_back({"query width = hidden_size", [](MatchConstraints& m) { m.query_equals_hidden = false; }});
  }
  return out;
}

void explain_infeasibility(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                           const MatchConstraints& c, MatchSummary& summary) {
  MatchConstraints uncapped = c;
  uncapped.max_flops_deviation.reset();
  uncapped.max_params_deviation.reset();
  uncapped.max_kv_deviation.reset();
  const MatchResult free_result = match(baseline, loop, workload, uncapped, 1);
  if (!free_result.candidates.empty()) summary.uncapped_best = free_result.candidates.front();

  struct Budget {
    const char* name;
    std::optional<double> cap;
    double MatchConstraints::*weight;
  };
  const Budget budgets[] = {{"flops", c.max_flops_deviation, &MatchConstraints::weight_flops},
                            {"params", c.max_params_deviation, &MatchConstraints::weight_params},
                            {"kv", c.max_kv_deviation, &MatchConstraints::weight_kv}};
  std::vector<std::string> parts;
  for (const Budget& b : budgets) {
    if (!b.cap) continue;
    // This budget alone: weight 1, the others 0, no caps.
    MatchConstraints alone = uncapped;
    alone.weight_flops = alone.weight_params = alone.weight_kv = 0;
    alone.*(b.weight) = 1;
    const double attainable = best_objective(baseline, loop, workload, alone);
    if (attainable <= *b.cap + 1e-12) continue;
    InfeasibleBudget reason{b.name, attainable, {}};
    for (const Relaxation& r : relaxations(c)) {
      MatchConstraints relaxed = alone;
      r.apply(relaxed);
      if (best_objective(baseline, loop, workload, relaxed) <= *b.cap + 1e-12) reason.binding.push_back(r.name);
    }
    std::string binding;
    for (const auto& name : reason.binding) binding += (binding.empty() ? "" : "; ") + name;
    parts.push_back(fmt::format("the {} budget cannot be met within {:.3g}%: the closest attainable is {:.3f}%{}", b.name,
                                100.0 * *b.cap, 100.0 * attainable,
                                binding.empty() ? std::string(" (no single constraint relaxation helps)")
                                                : "; binding constraint(s): " + binding));
    summary.infeasible.push_back(std::move(reason));
  }
  if (parts.empty()) {
    std::string binding;
    for (const Relaxation& r : relaxations(c)) {
      MatchConstraints relaxed = c;
      r.apply(relaxed);
      if (std::isfinite(best_objective(baseline, loop, workload, relaxed))) {
        binding += (binding.empty() ? "" : "; ") + r.name;
      }
    }
    parts.push_back(fmt::format(
        "each capped budget can be met alone, but not all at once{}{}",
        summary.uncapped_best ? fmt::format("; without caps the best largest deviation is {:.3f}%",
                                            100.0 * summary.uncapped_best->deviation.max_abs())
                              : std::string(),
        binding.empty() ? std::string() : "; relaxing any one of these makes it feasible: " + binding));
  }
  for (const auto& p : parts) summary.message += (summary.message.empty() ? "" : "; ") + p;
}

}  // namespace

MatchResult match(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                  const MatchConstraints& constraints, int top_n) {
  const auto start = std::chrono::steady_clock::now();
  validate(baseline);
  validate(workload);
  check_constraints(constraints);
  if (top_n < 1) throw Error(fmt::format("top {} must be at least 1", top_n), "", "--top");
  for (std::int64_t L : constraints.num_layers.values()) (void)loop.resolve(L);  // loop fits every depth

  MatchResult result;
  result.baseline = baseline;
  Searcher searcher(baseline, loop, workload, constraints);
  result.baseline_budgets = searcher.baseline_budgets();
  result.summary.space_size = searcher.space_size();

  const double inf = std::numeric_limits<double>::infinity();
  const double best = searcher.run(inf, nullptr);
  if (std::isfinite(best)) {
    std::vector<Point> points;
    searcher.run(best + constraints.tolerance, &points);
    std::vector<Candidate> candidates;
    candidates.reserve(points.size());
    for (const Point& p : points) {
      candidates.push_back(evaluate_candidate(searcher.make_config(p), baseline, result.baseline_budgets, workload,
                                              constraints));
    }
    result.summary.best_objective = inf;
    for (const auto& c : candidates) result.summary.best_objective = std::min(result.summary.best_objective, c.objective);
    result.candidates = rank(std::move(candidates), top_n);
    result.summary.feasible = !result.candidates.empty();
  }
  if (!result.summary.feasible) explain_infeasibility(baseline, loop, workload, constraints, result.summary);
  if (!baseline.ffn.is_moe() && loop.resolve(baseline.num_layers)) {
    result.summary.notes.push_back(
        "the baseline is dense: a loop adds FLOPs per token without adding parameters, and a dense FFN cannot "
        "trade parameters for compute the way extra experts do, so FLOPs and parameters cannot both be matched");
  }
  result.summary.evaluated = searcher.evaluated();
  result.summary.structures = searcher.structures();
  result.summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::vector<ConstraintSensitivity> constraint_sensitivity(const ArchConfig& baseline, const LoopSpec& loop,
                                                          const Workload& workload,
                                                          const MatchConstraints& constraints) {
  validate(baseline);
  validate(workload);
  check_constraints(constraints);
  std::vector<ConstraintSensitivity> out;
  for (const Relaxation& r : relaxations(constraints)) {
    MatchConstraints relaxed = constraints;
    r.apply(relaxed);
    out.push_back({r.name, best_objective(baseline, loop, workload, relaxed)});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.relaxed_objective < b.relaxed_objective;
  });
  return out;
}

std::string MatchSummary::brief() const {
  if (!feasible) return "infeasible: " + message;
  return fmt::format("matched: best max deviation {:.3f}% over a space of {} points ({} structures, {} closed-form "
                     "solves) in {:.2f} ms",
                     100.0 * best_objective, space_size, structures, evaluated, 1e3 * seconds);
}

std::string MatchSummary::full_report() const {
  std::string out = brief() + "\n";
  out += fmt::format("  space: {} points; structures calibrated from the op list: {}; closed-form expert solves: {}\n",
                     space_size, structures, evaluated);
  out += fmt::format("  time: {:.3f} ms\n", 1e3 * seconds);
  for (const auto& reason : infeasible) {
    std::string binding;
    for (const auto& b : reason.binding) binding += (binding.empty() ? "" : "; ") + b;
    out += fmt::format("  {} cannot be met: best attainable {:.4f}%; binding: {}\n", reason.budget,
                       100.0 * reason.best_attainable, binding.empty() ? "none alone" : binding);
  }
  if (uncapped_best) {
    out += fmt::format("  best without caps: largest deviation {:.4f}%\n", 100.0 * uncapped_best->deviation.max_abs());
  }
  for (const auto& note : notes) out += "  note: " + note + "\n";
  return out;
}

}  // namespace budget
