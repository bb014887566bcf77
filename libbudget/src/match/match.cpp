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
#include <tuple>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/progress.hpp"

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

/// The admissible values of a VariableRange as an arithmetic progression first, first + step, ...,
/// last, iterated by index: the matcher never materialises a range (a range may hold 2^31 values).
struct Progression {
  std::int64_t first = 0;
  std::int64_t last = -1;
  std::int64_t step = 1;

  static Progression of(const VariableRange& r) {
    if (r.is_fixed()) return {r.min, r.min, 1};
    const std::int64_t step = std::max<std::int64_t>(1, r.multiple_of);
    return {ceil_to_multiple(r.min, step), floor_to_multiple(r.max, step), step};
  }
  std::int64_t count() const { return last < first ? 0 : (last - first) / step + 1; }
  std::int64_t at(std::int64_t i) const { return first + i * step; }
  /// Index of the first value >= x, count() if none (std::lower_bound on the values; x integral).
  std::int64_t index_not_below(double x) const {
    if (!(x > static_cast<double>(first))) return 0;
    if (x > static_cast<double>(last)) return count();
    const auto xi = static_cast<std::int64_t>(x);
    return (xi - first + step - 1) / step;
  }
  /// Index of the first value > x, count() if none (std::upper_bound on the values; x integral).
  std::int64_t index_above(double x) const {
    if (x < static_cast<double>(first)) return 0;
    if (!(x < static_cast<double>(last))) return count();
    const auto xi = static_cast<std::int64_t>(x);
    return (xi - first) / step + 1;
  }
  /// The values that are also multiples of m >= 1. The values are multiples of `step` (of 1 for a
  /// fixed value), so these are the multiples of lcm(step, m) in [first, last].
  Progression multiples_of(std::int64_t m) const {
    if (count() == 0) return {};
    const std::int64_t g = std::gcd(step, m);
    const std::int64_t a = step / g;
    if (last < 1 || a > last / m) {  // lcm(step, m) = a·m > last: only 0 could be a multiple
      return first <= 0 && last >= 0 ? Progression{0, 0, 1} : Progression{};
    }
    const std::int64_t l = a * m;
    return {ceil_to_multiple(first, l), floor_to_multiple(last, l), l};
  }
};

/// Visits 0..n-1 from `centre` outward (c, c+1, c−1, c+2, ...); `visit(i)` returns false to stop
/// going further in that direction. A search order only: the matcher's results do not depend on
/// it (pass 1 finds a minimum, pass 2 a set), but good structures found first tighten the bounds.
template <typename Visit>
void outward(std::int64_t n, std::int64_t centre, Visit&& visit) {
  if (n <= 0) return;
  std::int64_t up = std::clamp<std::int64_t>(centre, 0, n - 1), down = up - 1;
  bool go_up = true, go_down = true;
  while ((go_up && up < n) || (go_down && down >= 0)) {
    if (go_up && up < n) go_up = visit(up++);
    if (go_down && down >= 0) go_down = visit(down--);
  }
}

/// Saturating product of counts (the size of a product space without overflow).
std::int64_t saturating_product(std::initializer_list<std::int64_t> counts) {
  long double p = 1;
  for (std::int64_t c : counts) p *= static_cast<long double>(c);
  return p >= 9.2e18L ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(p);
}

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max() : a + b;
}

/// A double clamped into the int64 range before conversion (never UB for huge or NaN values).
std::int64_t to_int64_clamped(double x) {
  if (!(x > -9.2e18)) return std::numeric_limits<std::int64_t>::min() / 2;
  if (!(x < 9.2e18)) return std::numeric_limits<std::int64_t>::max() / 2;
  return static_cast<std::int64_t>(x);
}

/// The index of the value of `p` nearest `x` (search order only).
std::int64_t nearest_index(const Progression& p, double x) {
  if (p.count() == 0) return 0;
  const double i = std::round((x - static_cast<double>(p.first)) / static_cast<double>(p.step));
  return std::clamp<std::int64_t>(to_int64_clamped(i), 0, p.count() - 1);
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

std::string LoopSpec::validation_error() const {
  if (repeats < 1 || repeats > 1024) {
    return fmt::format("repeats = {} is not allowed; allowed: 1 to 1024 (1: no loop)", repeats);
  }
  if (!std::isfinite(span_fraction) || span_fraction < 0.0 || span_fraction > 1.0) {
    return fmt::format("span_fraction = {} is not allowed; allowed: a number in [0, 1] (0: no loop)", span_fraction);
  }
  if (first != 0 || last != 0) {
    if (first < 1 || last < first) {
      return fmt::format("loop layers {}-{} are not a range; allowed: 1 <= first <= last", first, last);
    }
  }
  return {};
}

std::optional<LoopConfig> LoopSpec::resolve(std::int64_t num_layers) const {
  if (const std::string message = validation_error(); !message.empty()) throw Error(message, "", "/loop");
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
  // Model values (exact up to rounding), for pass 2's filter and for choosing what to keep:
  double objective;  // largest weighted |deviation|
  double second;     // second largest weighted |deviation|
  double sum;        // |dF| + |dN| + |dKV|
  double kv_term;    // of its KV structure (enumeration order)
  std::int64_t kv_lora = 0;  // MLA only
  // quantized() objective, second and sum: the keys of better_model_match().
  double q_objective = 0, q_second = 0, q_sum = 0;
};

/// `x` rounded to 40 significant bits (relative 1e-12): model values that differ only by rounding
/// compare equal, so that ties fall to the enumeration order as in the exact ranking.
double quantized(double x) {
  if (x == 0.0 || !std::isfinite(x)) return x;
  int exponent = 0;
  const double mantissa = std::frexp(x, &exponent);
  return std::ldexp(std::round(std::ldexp(mantissa, 40)), exponent - 40);
}

/// The ranking's "better matched" order (rank(), below) on model values; ties (up to rounding) by
/// the enumeration order of the exhaustive search (shared width, then width, ascending), which is
/// what the exact ranking's stable sort falls back to.
bool better_model_match(const Point& a, const Point& b) {
  if (a.q_objective != b.q_objective) return a.q_objective < b.q_objective;
  if (a.q_second != b.q_second) return a.q_second < b.q_second;
  if (a.q_sum != b.q_sum) return a.q_sum < b.q_sum;
  if (a.shared != b.shared) return a.shared < b.shared;
  return a.width < b.width;
}

/// The enumeration order of the exhaustive search: KV structures by KV term (then depth, top_k,
/// KV heads, head dim, MLA latent), hidden, heads, shared width, width. The exact ranking's stable sorts
/// break exact ties in this order, as they did when every point was collected in it.
bool enumeration_order(const Point& a, const Point& b) {
  return std::tie(a.kv_term, a.num_layers, a.top_k, a.num_kv_heads, a.head_dim, a.kv_lora, a.hidden, a.num_heads,
                  a.shared, a.width) < std::tie(b.kv_term, b.num_layers, b.top_k, b.num_kv_heads, b.head_dim,
                                                b.kv_lora, b.hidden, b.num_heads, b.shared, b.width);
}

/// σ without hidden/heads: what fixes the KV cache.
struct KvStructure {
  std::int64_t num_layers, top_k, num_kv_heads, head_dim;
  std::optional<LoopConfig> loop;
  double kv_term;  // w_KV·|dKV|
  std::int64_t kv_lora = 0;  // MLA only: the KV latent width
  double kv_dev;   // dKV, signed
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
    widths_ = Progression::of(c.expert_dim);
    shareds_ = Progression::of(c.shared_expert_dim);
    hiddens_ = Progression::of(c.hidden_size);
    heads_ = Progression::of(c.num_heads);
    check_work_limits();
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
  double run(double bound, std::vector<Point>* collect, int top_n = 1) {
    best_ = bound;
    fixed_bound_ = collect != nullptr;
    top_n_ = std::max(1, top_n);
    prune_threshold_ = 4 * (static_cast<std::size_t>(top_n_) + structure_margin);
    structures_kept_.clear();
    skip_threshold_ = std::numeric_limits<double>::infinity();
    for (const KvStructure& kv : kv_structures_) {
      if (kv.kv_term > best_ + slack) break;  // sorted by kv_term: nothing later can do better
      if (cannot_improve(kv)) break;
      if (c_.query_equals_hidden) {
        // hidden % head_dim == 0 and (hidden / head_dim) % kv_heads == 0 ⟺ hidden is a multiple of
        // head_dim·kv_heads: step through those multiples only.
        const Progression hidden = hiddens_.multiples_of(kv.head_dim * kv.num_kv_heads);
        outward(hidden.count(), nearest_index(hidden, static_cast<double>(baseline_.hidden_size)), [&](std::int64_t i) {
          if (cannot_improve(kv)) return false;
          const std::int64_t h = hidden.at(i);
          visit_structure(kv, h, h / kv.head_dim);
          return true;
        });
      } else {
        const Progression heads = heads_.multiples_of(kv.num_kv_heads);
        const double query_ratio =
            static_cast<double>(baseline_.attention.query_width()) / static_cast<double>(baseline_.hidden_size);
        outward(hiddens_.count(), nearest_index(hiddens_, static_cast<double>(baseline_.hidden_size)), [&](std::int64_t i) {
          if (cannot_improve(kv)) return false;
          const std::int64_t h = hiddens_.at(i);
          std::optional<HeadsModel> model;  // calibrated on the first structure actually visited
          // Heads outward from the baseline's query/hidden ratio: past it, the proportion bound of
          // cannot_rank() only grows, so a direction stops at its first unrankable structure.
          const double ideal = query_ratio * static_cast<double>(h) / static_cast<double>(kv.head_dim);
          const std::int64_t centre = nearest_index(heads, ideal);
          outward(heads.count(), centre, [&](std::int64_t j) {
            if (kv.kv_term > best_ + slack || cannot_improve(kv)) return false;
            const std::int64_t n = heads.at(j);
            if (cannot_rank(kv, h, n)) {
              const bool moving_away = j >= centre ? static_cast<double>(n) >= ideal : static_cast<double>(n) <= ideal;
              return !moving_away;
            }
            if (!model) model = heads_model(kv, h, heads);
            visit_structure(kv, h, n, &*model);
            return true;
          });
          return true;
        });
      }
    }
    if (collect != nullptr) *collect = take_collected();
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
  /// Work units of one structure's calibration (five account() calls) against one closed-form
  /// solve: the weight of a structure in MatchConstraints::max_work.
  static constexpr std::int64_t calibration_work = 16;

 private:
  /// Refuses, before any work, a space over the limits (docs/reliability.md): the (depth, top_k,
  /// KV heads, head dim) combinations held in memory, and the structures the search may visit.
  void check_work_limits() const {
    const Progression layers = Progression::of(c_.num_layers), top_k = Progression::of(c_.top_k),
                      kv_heads = Progression::of(c_.num_kv_heads), head_dims = Progression::of(c_.head_dim);
    const std::int64_t kv_limit = std::max<std::int64_t>(1, c_.max_structures / 10);
    const std::int64_t latents = baseline_.attention.mla ? Progression::of(c_.kv_lora_rank).count() : 1;
    const std::int64_t kv_count =
        saturating_product({layers.count(), top_k.count(), kv_heads.count(), head_dims.count(), latents});
    if (kv_count > kv_limit) {
      throw Error(fmt::format("{} (num_layers, top_k, num_kv_heads, head_dim, kv_lora_rank) "
                              "combinations ({} × {} × {} × {} × {}), more than the limit of {} (max_structures / 10); narrow these "
                              "ranges, or raise the limit with --max-structures (\"max_structures\" in a constraints "
                              "file)",
                              kv_count, layers.count(), top_k.count(), kv_heads.count(), head_dims.count(), latents,
                              kv_limit),
                  "search space");
    }
    std::int64_t structures = 0;
    for (std::int64_t c = 0; c < kv_heads.count(); ++c) {
      const std::int64_t kvh = kv_heads.at(c);
      if (kvh < 1) continue;
      std::int64_t per_kv = 0;
      if (c_.query_equals_hidden) {
        for (std::int64_t d = 0; d < head_dims.count(); ++d) {
          const std::int64_t hd = head_dims.at(d);
          if (hd >= 1) per_kv = saturating_add(per_kv, hiddens_.multiples_of(hd * kvh).count());
        }
      } else {
        // Free heads: three calibrations per (KV structure, hidden) (heads_model()).
        per_kv = saturating_product(
            {head_dims.count(), hiddens_.count(), std::min<std::int64_t>(3, heads_.multiples_of(kvh).count())});
      }
      structures = saturating_add(structures, saturating_product({per_kv, layers.count(), top_k.count(), latents}));
      if (structures > c_.max_structures) break;
    }
    if (structures > c_.max_structures) {
      throw Error(fmt::format("{}{} structures to calibrate (num_layers, top_k, num_kv_heads, "
                              "head_dim, hidden_size; with a free query width, three heads values each), more than "
                              "the limit of {}; narrow the ranges, or raise the limit with --max-structures "
                              "(\"max_structures\" in a constraints file)",
                              structures == std::numeric_limits<std::int64_t>::max() ? "more than " : "",
                              structures == std::numeric_limits<std::int64_t>::max() ? std::int64_t{9'200'000'000'000'000'000} : structures,
                              c_.max_structures),
                  "search space");
    }
  }

  /// Counts work and stops a search that needs more than max_work (docs/reliability.md).
  void count_work(std::int64_t units) {
    const std::int64_t before = work_;
    work_ += units;
    // Progress (and the process-wide time limit, budget/progress.hpp) every 2^16 units.
    if ((before >> 16) != (work_ >> 16)) {
      report_progress("matcher search (work units)", static_cast<std::uint64_t>(work_),
                      static_cast<std::uint64_t>(c_.max_work));
    }
    if (work_ > c_.max_work) {
      throw Error(fmt::format("the search needed more than {} work units (a structure calibrated counts {}, a "
                              "closed-form solve 1) without finishing; narrow the ranges or loosen the caps, or "
                              "raise the limit with --max-work (\"max_work\" in a constraints file)",
                              c_.max_work, calibration_work),
                  "search space");
    }
  }

  void build_kv_structures() {
    const Progression layers = Progression::of(c_.num_layers), top_k = Progression::of(c_.top_k),
                      kv_heads = Progression::of(c_.num_kv_heads), head_dims = Progression::of(c_.head_dim);
    for (std::int64_t a = 0; a < layers.count(); ++a) {
      const std::int64_t L = layers.at(a);
      const std::optional<LoopConfig> loop = loop_.resolve(L);
      for (std::int64_t b = 0; b < top_k.count(); ++b) {
        const std::int64_t k = top_k.at(b);
        if (!dense_ && (k < 1)) continue;
        for (std::int64_t c = 0; c < kv_heads.count(); ++c) {
          const std::int64_t kvh = kv_heads.at(c);
          if (kvh < 1) continue;
          for (std::int64_t d = 0; d < head_dims.count(); ++d) {
            const std::int64_t hd = head_dims.at(d);
            if (hd < 1) continue;
            // MLA holds head_dim (qk_nope + qk_rope) and its single latent KV head; per-layer
            // attention kinds are tied to the baseline's depth.
            if (baseline_.attention.mla && (hd != baseline_.attention.head_dim || kvh != 1)) continue;
            if (!baseline_.attention.layer_types.empty() && L != baseline_.num_layers) continue;
            const Progression latents =
                baseline_.attention.mla ? Progression::of(c_.kv_lora_rank) : Progression{0, 0, 1};
            for (std::int64_t e = 0; e < latents.count(); ++e) {
              const std::int64_t latent = latents.at(e);
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
              kv_structures_.push_back({L, k, kvh, hd, loop, term, latent, kv / KV_b_ - 1.0});
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

  /// The coefficients of the structures (kv, hidden, heads) for every heads value: for fixed
  /// (kv, hidden) the op list makes F and N affine in the query width (projections 2·H·q + 2·q·H,
  /// scores 4·q·A; weights H·q + q·H), so the coefficients are affine in heads. They are read off
  /// the op list at two heads values and checked at a third; if the check fails (an op that is
  /// not affine in heads), every structure is calibrated on its own.
  struct HeadsModel {
    bool affine = false;
    std::int64_t h0 = 0;
    Coefficients at_h0, slope;
  };

  static Coefficients combine(const Coefficients& a, const Coefficients& b, double t) {
    Coefficients c;
    c.f0 = a.f0 + t * b.f0, c.fE = a.fE + t * b.fE, c.fW = a.fW + t * b.fW, c.fEW = a.fEW + t * b.fEW, c.fS = a.fS + t * b.fS;
    c.n0 = a.n0 + t * b.n0, c.nE = a.nE + t * b.nE, c.nW = a.nW + t * b.nW, c.nEW = a.nEW + t * b.nEW, c.nS = a.nS + t * b.nS;
    return c;
  }

  HeadsModel heads_model(const KvStructure& kv, std::int64_t hidden, const Progression& heads) {
    HeadsModel m;
    if (heads.count() < 3) return m;
    const std::int64_t h0 = heads.at(0), h1 = heads.at(1), h2 = heads.at(heads.count() - 1);
    count_work(3 * calibration_work);
    const Coefficients c0 = calibrate(structure_config(kv, hidden, h0), kv.top_k);
    const Coefficients c1 = calibrate(structure_config(kv, hidden, h1), kv.top_k);
    const Coefficients c2 = calibrate(structure_config(kv, hidden, h2), kv.top_k);
    const Coefficients slope = combine(c1, c0, -1.0);
    const double per_head = 1.0 / static_cast<double>(h1 - h0);
    m.slope = combine(Coefficients{}, slope, per_head);
    m.h0 = h0;
    m.at_h0 = c0;
    const Coefficients predicted = combine(c0, m.slope, static_cast<double>(h2 - h0));
    const auto close = [&](double x, double y, double scale) { return std::fabs(x - y) <= 1e-12 * scale; };
    const double f_scale = std::max(F_b_, std::fabs(c2.f0)), n_scale = std::max(N_b_, std::fabs(c2.n0));
    m.affine = close(predicted.f0, c2.f0, f_scale) && close(predicted.fE, c2.fE, f_scale) &&
               close(predicted.fW, c2.fW, f_scale) && close(predicted.fEW, c2.fEW, f_scale) &&
               close(predicted.fS, c2.fS, f_scale) && close(predicted.n0, c2.n0, n_scale) &&
               close(predicted.nE, c2.nE, n_scale) && close(predicted.nW, c2.nW, n_scale) &&
               close(predicted.nEW, c2.nEW, n_scale) && close(predicted.nS, c2.nS, n_scale);
    return m;
  }

  /// Pass 2 only: a lower bound of the proportion distance of any point of the structure (its
  /// head-dim and query-width terms; the width terms are >= 0). A structure whose bound exceeds
  /// the distance of top_n + margin structures already kept cannot be ranked: it is skipped.
  bool cannot_rank(const KvStructure& kv, std::int64_t hidden, std::int64_t heads) const {
    if (!fixed_bound_ || !(skip_threshold_ < std::numeric_limits<double>::infinity())) return false;
    const auto log_ratio = [](double x, double y) { return std::fabs(std::log(x / y)); };
    const ProportionWeights& w = c_.proportions;
    const double bound =
        w.head_dim * log_ratio(static_cast<double>(kv.head_dim), static_cast<double>(baseline_.attention.head_dim)) +
        w.query_to_hidden * log_ratio(static_cast<double>(heads * kv.head_dim) / static_cast<double>(hidden),
                                      static_cast<double>(baseline_.attention.query_width()) /
                                          static_cast<double>(baseline_.hidden_size));
    return bound > skip_threshold_;
  }

  /// Pass 1 only: every point of a structure has objective >= its KV term, so once the incumbent
  /// is at or below that term no point of it can lower the minimum (the KV-dominated case of every
  /// looped match: g* is found by the first structure that reaches it, the rest are skipped).
  bool cannot_improve(const KvStructure& kv) const { return !fixed_bound_ && kv.kv_term >= best_; }

  /// The bound on each weighted |deviation| of F and N that a point must meet to matter. Pass 1:
  /// the incumbent. Pass 2: also the structure's pool (pool_bound_, see update_pool_bound()).
  double pruning_bound() const { return fixed_bound_ ? std::min(best_, pool_bound_) : best_; }

  /// Pass 2: once the structure's pool is full, a point matters only if it is at least as well
  /// matched as the pool's worst w (objective o_w, second s_w). Such a point has objective
  /// max(kv, f, n) <= o_w, so f, n <= o_w; and when o_w is the KV term itself, its second largest
  /// term max(f, n) must be <= s_w. (f, n: weighted |dF|, |dN|.) Ties pass (slack).
  void update_pool_bound(const KvStructure& kv) {
    if (current_.size() < keep_per_structure()) return;
    const Point& worst = *std::max_element(current_.begin(), current_.end(), better_model_match);
    pool_bound_ = worst.objective > kv.kv_term ? worst.objective : worst.second;
  }

  /// Pass 2 only, after calibration: cannot_rank() with the width terms bounded too. A point that
  /// can be collected has |dF| within the bound, so T = fW·W + fS·S lies in [T_lo, T_hi] (F has
  /// no E·W term and fE >= 0, so E only shifts T by fE·E). The width terms of the proportion
  /// distance, w_e·|ln(W/W*)| + w_s·|ln(S/S*)| with W* = W_b·H/H_b and S* = S_b·H/H_b (the widths
  /// in the baseline's proportions), are then at least the cost of clamping (W*, S*) into their
  /// ranges plus min(w_e, w_s)·ln(T_c/T_hi) (or ln(T_lo/T_c)): scaling W and S by factors within
  /// e^{±m} scales T by at most e^{±m}. A structure whose bound exceeds the distance of top_n +
  /// margin kept structures is skipped (1e-9 of margin against rounding).
  bool cannot_rank_widths(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, const Coefficients& k) const {
    if (!fixed_bound_) return false;
    const double fbound = flops_bound();
    if (!std::isfinite(fbound) || !(k.fW > 0.0) || std::fabs(k.fEW) > 1e-9 * k.fW || k.fE < 0.0) return false;
    if (has_shared_ && !(k.fS > 0.0)) return false;
    const ProportionWeights& w = c_.proportions;
    const auto log_ratio = [](double x, double y) { return std::fabs(std::log(x / y)); };
    const double H = static_cast<double>(hidden), Hb = static_cast<double>(baseline_.hidden_size);
    const double e_lo = static_cast<double>(dense_ ? 0 : experts_.min), e_hi = static_cast<double>(dense_ ? 0 : experts_.max);
    const double base_width = static_cast<double>(dense_ ? baseline_.ffn.dense_dim : baseline_.ffn.expert_dim);
    const double W_star = base_width * H / Hb;
    const double Wc = std::clamp(W_star, static_cast<double>(widths_.first), static_cast<double>(widths_.last));
    double clamp_cost = w.expert_dim_to_hidden * log_ratio(Wc, W_star);
    double Tc = k.fW * Wc;
    double move_weight = w.expert_dim_to_hidden;
    const bool shared_term = has_shared_ && baseline_.ffn.shared_expert_dim > 0 && shareds_.first > 0;
    if (has_shared_) {
      const double S_star = static_cast<double>(baseline_.ffn.shared_expert_dim) * H / Hb;
      const double Sc = std::clamp(S_star, static_cast<double>(shareds_.first), static_cast<double>(shareds_.last));
      Tc += k.fS * Sc;
      if (shared_term) {
        clamp_cost += w.shared_expert_dim_to_hidden * log_ratio(Sc, S_star);
        move_weight = std::min(move_weight, w.shared_expert_dim_to_hidden);
      } else {
        move_weight = 0.0;  // S moves freely without cost
      }
    }
    const double T_lo = F_b_ * (1.0 - fbound) - k.f0 - k.fE * e_hi;
    const double T_hi = F_b_ * (1.0 + fbound) - k.f0 - k.fE * e_lo;
    // No (W, S) in their ranges reaches the band: no point of the structure can be collected.
    const double T_min = k.fW * static_cast<double>(widths_.first) + (has_shared_ ? k.fS * static_cast<double>(shareds_.first) : 0.0);
    const double T_max = k.fW * static_cast<double>(widths_.last) + (has_shared_ ? k.fS * static_cast<double>(shareds_.last) : 0.0);
    if (T_hi < T_min || T_lo > T_max) return true;
    double gap = 0.0;
    if (Tc > T_hi) gap = std::log(Tc / T_hi);  // T_hi >= T_min > 0 here
    if (Tc < T_lo && Tc > 0.0) gap = std::log(T_lo / Tc);
    if (!std::isfinite(gap)) return false;
    const double bound =
        w.head_dim * log_ratio(static_cast<double>(kv.head_dim), static_cast<double>(baseline_.attention.head_dim)) +
        w.query_to_hidden * log_ratio(static_cast<double>(heads * kv.head_dim) / H,
                                      static_cast<double>(baseline_.attention.query_width()) / Hb) +
        clamp_cost + move_weight * gap;
    return skip_threshold_ < std::numeric_limits<double>::infinity() && bound > skip_threshold_ + 1e-9;
  }

  void visit_structure(const KvStructure& kv, std::int64_t hidden, std::int64_t heads,
                       const HeadsModel* model = nullptr) {
    if (kv.kv_term > best_ + slack) return;
    if (cannot_improve(kv)) return;
    pool_bound_ = std::numeric_limits<double>::infinity();
    if (cannot_rank(kv, hidden, heads)) return;
    ++structures_;
    Coefficients k;
    if (model != nullptr && model->affine) {
      count_work(1);
      k = combine(model->at_h0, model->slope, static_cast<double>(heads - model->h0));
    } else {
      count_work(calibration_work);
      k = calibrate(structure_config(kv, hidden, heads), kv.top_k);
    }
    if (cannot_rank_widths(kv, hidden, heads, k)) return;
    // Shared widths outward from the baseline's proportion S_b·H/H_b (good points first tighten
    // the bounds). F increases with S, so the W interval below slides down as S grows: once it
    // has left the W range on one side, every further S in that direction is empty too.
    const double s_centre = static_cast<double>(baseline_.ffn.shared_expert_dim) * static_cast<double>(hidden) /
                            static_cast<double>(baseline_.hidden_size);
    const std::int64_t centre = nearest_index(shareds_, s_centre);
    // Pass 2: as the pool bound tightens, the representative's |dF| bound narrows the width
    // band of cannot_rank_widths(); a structure found unrankable midway is dropped whole (its
    // representative, better matched than the pool's worst, obeys the same bound).
    bool unrankable = false;
    double checked_bound = pool_bound_;
    outward(shareds_.count(), centre, [&](std::int64_t si) {
      if (cannot_improve(kv) || unrankable) return false;
      if (fixed_bound_ && pool_bound_ < checked_bound) {
        checked_bound = pool_bound_;
        if (cannot_rank_widths(kv, hidden, heads, k)) {
          unrankable = true;
          return false;
        }
      }
      const std::int64_t S = shareds_.at(si);
      count_work(1);
      // W interval where |dF| can still be within the bound for some E (F increasing in W).
      std::int64_t w_begin = 0, w_end = widths_.count();
      const double fbound = flops_bound();
      // fEW is 0 up to float rounding (F has no E·W term); the bound assumes it.
      if (std::isfinite(fbound) && std::fabs(k.fEW) <= 1e-9 * k.fW && k.fW > 0.0) {
        const double e_lo = static_cast<double>(dense_ ? 0 : experts_.min);
        const double e_hi = static_cast<double>(dense_ ? 0 : experts_.max);
        const double rest = k.f0 + k.fS * static_cast<double>(S);
        const double w_max = (F_b_ * (1.0 + fbound) - rest - k.fE * e_lo) / k.fW;
        const double w_min = (F_b_ * (1.0 - fbound) - rest - k.fE * e_hi) / k.fW;
        w_begin = widths_.index_not_below(std::ceil(w_min - 1e-9));
        w_end = widths_.index_above(std::floor(w_max + 1e-9));
        if (w_begin >= w_end && k.fS > 0.0) {
          const bool up = si >= centre;
          if (up && w_end == 0) return false;                   // below the W range: larger S only lower
          if (!up && w_begin == widths_.count()) return false;  // above it: smaller S only higher
        }
        if (w_begin < w_end) narrow_by_params(k, S, fbound, rest, w_begin, w_end);
      }
      for (std::int64_t i = w_begin; i < w_end && !cannot_improve(kv); ++i) {
        solve_experts(kv, hidden, heads, k, widths_.at(i), S);
      }
      return true;
    });
    if (unrankable) {
      current_.clear();
      return;
    }
    if (fixed_bound_) end_structure();
  }

  /// Narrows the W index range [w_begin, w_end) of one shared width S by F and N together. A
  /// collectible point needs |dF| <= fbound and |dN| <= the params bound for its E. The F band
  /// alone allows every E of the range, whose router FLOPs (fE·E) widen the W band ~10-fold; but
  /// N = n0 + nS·S + nW·W + E·(nE + nEW·W) pins E for each W: over a W interval, E lies between
  /// the extremes of g(W) = (N_target − n0 − nS·S − nW·W)/(nE + nEW·W), which is monotone in W
  /// (the sign of g' does not depend on W), so at the interval's ends. E so bounded narrows the
  /// W band of F in turn; three rounds reach the intersection. Necessary conditions only: no
  /// point that solve_experts() would keep is dropped.
  void narrow_by_params(const Coefficients& k, std::int64_t S, double fbound, double rest, std::int64_t& w_begin,
                        std::int64_t& w_end) const {
    if (dense_ || experts_.is_fixed()) return;
    double nbound = c_.weight_params > 0 ? (pruning_bound() + slack) / c_.weight_params
                                         : std::numeric_limits<double>::infinity();
    if (c_.max_params_deviation) nbound = std::min(nbound, *c_.max_params_deviation + slack);
    if (!std::isfinite(nbound)) return;
    const double rest_n = k.n0 + k.nS * static_cast<double>(S);
    double e_lo = static_cast<double>(experts_.min), e_hi = static_cast<double>(experts_.max);
    double w_lo = static_cast<double>(widths_.at(w_begin)), w_hi = static_cast<double>(widths_.at(w_end - 1));
    for (int round = 0; round < 3; ++round) {
      const double slope_lo = k.nE + k.nEW * w_lo, slope_hi = k.nE + k.nEW * w_hi;
      if (!(slope_lo > 0.0 && slope_hi > 0.0)) return;
      const auto g = [&](double target, double w, double slope) { return (target - rest_n - k.nW * w) / slope; };
      const double n_lo = N_b_ * (1.0 - nbound), n_hi = N_b_ * (1.0 + nbound);
      const double e_min = std::min(g(n_lo, w_lo, slope_lo), g(n_lo, w_hi, slope_hi));
      const double e_max = std::max(g(n_hi, w_lo, slope_lo), g(n_hi, w_hi, slope_hi));
      e_lo = std::max(e_lo, e_min - 1e-6 * std::max(1.0, std::fabs(e_min)));
      e_hi = std::min(e_hi, e_max + 1e-6 * std::max(1.0, std::fabs(e_max)));
      if (e_lo > e_hi) {
        w_end = w_begin;
        return;
      }
      const double w_max = (F_b_ * (1.0 + fbound) - rest - k.fE * e_lo) / k.fW;
      const double w_min = (F_b_ * (1.0 - fbound) - rest - k.fE * e_hi) / k.fW;
      w_begin = std::max(w_begin, widths_.index_not_below(std::ceil(w_min - 1e-9)));
      w_end = std::min(w_end, widths_.index_above(std::floor(w_max + 1e-9)));
      if (w_begin >= w_end) return;
      w_lo = static_cast<double>(widths_.at(w_begin));
      w_hi = static_cast<double>(widths_.at(w_end - 1));
    }
  }

  /// The largest |dF| that can still matter: the bound (weighted) or the cap.
  double flops_bound() const {
    double b = c_.weight_flops > 0 ? (pruning_bound() + slack) / c_.weight_flops : std::numeric_limits<double>::infinity();
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
    count_work(1);
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
    const double bound = pruning_bound() + slack;
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
    const std::int64_t lattice_lo = ceil_to_multiple(std::max<std::int64_t>(experts_.min, to_int64_clamped(std::ceil(e_lo - 1e-9))), step);
    const std::int64_t lattice_hi = floor_to_multiple(std::min<std::int64_t>(experts_.max, to_int64_clamped(std::floor(e_hi + 1e-9))), step);
    if (lattice_lo > lattice_hi) return;
    const std::int64_t below = std::clamp(floor_to_multiple(to_int64_clamped(std::floor(best_e)), step), lattice_lo, lattice_hi);
    const std::int64_t above = std::clamp(ceil_to_multiple(to_int64_clamped(std::ceil(best_e)), step), lattice_lo, lattice_hi);
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
    std::array<double, 3> w{c_.weight_flops * std::fabs(dF), c_.weight_params * std::fabs(dN), kv.kv_term};
    std::sort(w.begin(), w.end(), std::greater<>());
    current_.push_back({kv.num_layers, kv.top_k, kv.num_kv_heads, kv.head_dim, hidden, heads, E, W, S, objective, w[1],
                        std::fabs(dF) + std::fabs(dN) + std::fabs(kv.kv_dev), kv.kv_term, kv.kv_lora});
    Point& added = current_.back();
    added.q_objective = quantized(added.objective);
    added.q_second = quantized(added.second);
    added.q_sum = quantized(added.sum);
    // Bounded: a structure may hold a million (W, S) points within the tolerance; only the best
    // few by the ranking's order can represent it or be among the top others.
    // Kept at keep_per_structure() points: the worst leaves as a better one comes, and the pool
    // bound follows at once (it prunes the rest of the structure, and cannot_rank_widths() uses it).
    const std::size_t keep = keep_per_structure();
    if (current_.size() > keep) {
      const auto worst = std::max_element(current_.begin(), current_.end(), better_model_match);
      *worst = current_.back();
      current_.pop_back();
    }
    if (current_.size() >= keep) update_pool_bound(kv);
  }

  // ---- Pass 2's bounded collection ------------------------------------------------------------
  // rank() keeps one representative per structure (its best-matched member) and, only when fewer
  // structures than top_n are eligible, the next best-matched points. So each structure keeps its
  // `representative_pool` best points by model order (the exact re-accounting picks among them)
  // while fewer than top_n structures are known, top_n + representative_pool of them; and once
  // more structures than needed are collected, only those whose best member is nearest the
  // baseline's proportions survive (the ranking's order), ties included.

  static constexpr std::size_t representative_pool = 8;
  static constexpr std::size_t structure_margin = 8;

  std::size_t keep_per_structure() const {
    return structures_kept_.size() >= static_cast<std::size_t>(top_n_) ? representative_pool
                                                                          : representative_pool + static_cast<std::size_t>(top_n_);
  }

  void trim_current() {
    const std::size_t keep = keep_per_structure();
    if (current_.size() <= keep) return;
    std::nth_element(current_.begin(), current_.begin() + static_cast<std::ptrdiff_t>(keep), current_.end(),
                     better_model_match);
    current_.resize(keep);
  }

  struct KeptStructure {
    std::vector<Point> points;  // best first by model order
    double distance;  // proportion distance of its best point
  };

  void end_structure() {
    if (current_.empty()) return;
    trim_current();
    std::sort(current_.begin(), current_.end(), better_model_match);
    const double distance = proportion_distance(make_config(current_.front()), baseline_, c_.proportions);
    structures_kept_.push_back({std::move(current_), distance});
    current_.clear();
    if (structures_kept_.size() >= prune_threshold_) prune_structures();
  }

  /// Keeps the top_n + margin structures nearest the baseline's proportions (all ties at the
  /// boundary), each with representative_pool points.
  void prune_structures() {
    const std::size_t keep = static_cast<std::size_t>(top_n_) + structure_margin;
    if (structures_kept_.size() <= keep) return;
    std::vector<double> distances;
    distances.reserve(structures_kept_.size());
    for (const auto& k : structures_kept_) distances.push_back(k.distance);
    std::nth_element(distances.begin(), distances.begin() + static_cast<std::ptrdiff_t>(keep - 1), distances.end());
    const double threshold = distances[keep - 1];
    std::vector<KeptStructure> kept;
    for (auto& k : structures_kept_) {
      if (k.distance > threshold) continue;
      if (k.points.size() > representative_pool) k.points.resize(representative_pool);
      kept.push_back(std::move(k));
    }
    structures_kept_ = std::move(kept);
    skip_threshold_ = std::min(skip_threshold_, threshold);
    // Ties can keep more than `keep`: prune again only after as many more.
    prune_threshold_ = std::max(prune_threshold_, 2 * structures_kept_.size());
  }

  std::vector<Point> take_collected() {
    prune_structures();
    std::vector<Point> out;
    for (auto& k : structures_kept_) out.insert(out.end(), k.points.begin(), k.points.end());
    structures_kept_.clear();
    std::sort(out.begin(), out.end(), enumeration_order);
    return out;
  }

  const ArchConfig& baseline_;
  LoopSpec loop_;
  const Workload& workload_;
  const MatchConstraints& c_;
  Budgets base_;
  double F_b_ = 0, N_b_ = 0, KV_b_ = 0;
  bool dense_ = false, has_shared_ = false;
  VariableRange experts_;
  Progression widths_, shareds_, hiddens_, heads_;
  std::int64_t work_ = 0;  // structures·calibration_work + shared-width steps + closed-form solves
  std::vector<KvStructure> kv_structures_;
  double best_ = 0;
  bool fixed_bound_ = false;
  int top_n_ = 1;
  std::vector<Point> current_;                  // pass 2: the points of the structure being visited
  std::vector<KeptStructure> structures_kept_;  // pass 2: bounded (see prune_structures())
  std::size_t prune_threshold_ = 0;
  double skip_threshold_ = std::numeric_limits<double>::infinity();  // pass 2: see cannot_rank()
  double pool_bound_ = std::numeric_limits<double>::infinity();      // pass 2: see update_pool_bound()
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
  if (c.max_structures < 1) throw Error(fmt::format("max_structures {} must be at least 1", c.max_structures), "", "/max_structures");
  if (c.max_work < 1) throw Error(fmt::format("max_work {} must be at least 1", c.max_work), "", "/max_work");

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
/// A relaxed search over the work limits counts as not attainable (+inf): relaxations widen ranges
/// four-fold, and a relaxation the limits refuse cannot be recommended.
double best_objective(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                      const MatchConstraints& c) {
  try {
    Searcher searcher(baseline, loop, workload, c);
    return searcher.run(std::numeric_limits<double>::infinity(), nullptr);
  } catch (const Error& e) {
    if (e.source() == "search space") return std::numeric_limits<double>::infinity();
    throw;
  }
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
  MatchResult result;
  result.baseline = baseline;
  Searcher searcher(baseline, loop, workload, constraints);  // checks the work limits first
  {
    const Progression layers = Progression::of(constraints.num_layers);
    for (std::int64_t i = 0; i < layers.count(); ++i) (void)loop.resolve(layers.at(i));  // loop fits every depth
  }
  result.baseline_budgets = searcher.baseline_budgets();
  result.summary.space_size = searcher.space_size();

  const double inf = std::numeric_limits<double>::infinity();
  const double best = searcher.run(inf, nullptr);
  if (std::isfinite(best)) {
    std::vector<Point> points;
    searcher.run(best + constraints.tolerance, &points, top_n);
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
  // No wall-clock time here: outputs are byte-identical across runs (docs/reliability.md).
  return fmt::format("matched: best max deviation {:.3f}% over a space of {} points ({} structures, {} closed-form "
                     "solves)",
                     100.0 * best_objective, space_size, structures, evaluated);
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
