#include "match/collecting_pass.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "budget/match.hpp"

#include "match/ranking.hpp"
#include "match/structure_walk.hpp"

namespace budget::match_detail {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

/// The shape of a point as rank() keys it (depth, top_k, KV heads, head dim, heads, hidden, MLA
/// latent): a structure of the walk.
std::array<std::int64_t, 7> shape_key(const Point& p) {
  return {p.num_layers, p.top_k, p.num_kv_heads, p.head_dim, p.num_heads, p.hidden, p.kv_lora};
}

/// The hooks of StructureWalk for pass 2: a fixed bound, bounded collection, and the proportion
/// bounds that skip structures which cannot be ranked among the top_n.
class CollectingPass {
 public:
  CollectingPass(const SearchSpace& space, const EqualMatchBounds& bounds, int top_n)
      : space_(space), c_(space.constraints()), bound_(bounds.objective),
        flops_cap_(bounds.cap(bounds.flops)), params_cap_(bounds.cap(bounds.params)), kv_cap_(bounds.cap(bounds.kv)),
        by_proportions_(c_.order == MatchOrder::proportions), tight_(tightest_order(c_)), top_n_(std::max(1, top_n)),
        prune_threshold_(4 * (static_cast<std::size_t>(top_n_) + structure_margin)) {}

  double incumbent() const { return bound_; }
  /// Structures come by KV term: past the KV cap of the equally matched, none is.
  bool cannot_improve(const KvStructure& kv) const { return kv.kv_term > kv_cap_ + slack; }
  double pruning_bound() const {
    return std::min({bound_, pool_bound_, first_row_only_ ? structure_first_row_bound_ : inf});
  }
  /// The walk's bounds: the pruning bound and each budget's cap of the equally matched.
  ExpertTarget target() const {
    const double bound = pruning_bound();
    return {std::min(bound, flops_cap_), std::min(bound, params_cap_), ExpertTarget::Goal::largest, 0, 0};
  }
  double pool_bound() const {
    return first_row_only_ ? std::min(pool_bound_, structure_first_row_bound_) : pool_bound_;
  }
  void begin_structure() {
    pool_bound_ = inf;
    first_row_only_ = false;
    best_model_point_.reset();
  }

  /// A lower bound of the proportion distance of any point of the structure (its head-dim and
  /// query-width terms) above the distance of top_n + margin structures already kept. Such a
  /// structure is still visited, for row #1 only, when its KV term can be that of a row #1.
  bool cannot_rank(const KvStructure& kv, std::int64_t hidden, std::int64_t heads) {
    if (!(skip_threshold_ < inf)) return false;
    if (structure_proportion_bound(kv.head_dim, heads, hidden, space_.baseline(), c_) <= skip_threshold_) {
      return false;
    }
    if (kv.kv_term > first_row_bound_ || cannot_tie_nearer(kv, hidden, heads)) return true;
    structure_first_row_bound_ = first_row_width_bound(kv);
    first_row_only_ = true;
    return false;
  }

  /// Unit weights, a KV term that prints as row #1's largest deviation and row #1's other two
  /// printing 0.00%: a point of the structure can at best tie row #1's key, and then only a
  /// smaller proportion distance shows it first; the structure's lower bound of the distance
  /// (head-dim and query terms) rules that out.
  bool cannot_tie_nearer(const KvStructure& kv, std::int64_t hidden, std::int64_t heads) const {
    if (!first_row_ || tight_ != RowOrder::shown_deviation) return false;
    std::array<long long, 3> best{std::llround(1e4 * std::fabs(first_row_->deviation.flops)),
                                  std::llround(1e4 * std::fabs(first_row_->deviation.params)),
                                  std::llround(1e4 * std::fabs(first_row_->deviation.kv))};
    std::sort(best.begin(), best.end(), std::greater<>());
    if (best[1] != 0 || best[2] != 0 || std::llround(1e4 * kv.kv_term - 1e-7) < best[0]) return false;
    return structure_proportion_bound(kv.head_dim, heads, hidden, space_.baseline(), c_) >
           first_row_->proportion_distance + 1e-9;
  }
  bool cannot_rank_widths(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, const Coefficients& k);
  bool cannot_rank_by_widths(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, const Coefficients& k) const;

  void consider(const KvStructure& kv, Point p, double dF, double dN);
  void end_structure(bool dropped);
  std::vector<Point> take_collected();

 private:
  static constexpr std::size_t representative_pool = 8;
  static constexpr std::size_t structure_margin = 8;

  struct KeptStructure {
    std::vector<Point> points;  // best first by model order
    double distance;            // proportion distance of its best point
  };

  /// The pool's order: the proportions order's (distance, then model match), else model match.
  bool pool_before(const Point& a, const Point& b) const {
    if (by_proportions_ && a.distance != b.distance) return a.distance < b.distance;
    return better_model_match(a, b);
  }
  std::size_t keep_per_structure() const {
    if (first_row_only_) return 1;  // only the representative can be row #1
    return structures_kept_.size() >= static_cast<std::size_t>(top_n_)
               ? representative_pool
               : representative_pool + static_cast<std::size_t>(top_n_);
  }
  void update_pool_bound(const KvStructure& kv);
  void prune_structures();
  bool widths_reach(const Coefficients& k, double bound) const;
  double first_row_width_bound(const KvStructure& kv) const;
  void consider_first_row(const Point& representative);

  const SearchSpace& space_;
  const MatchConstraints& c_;
  double bound_;
  double flops_cap_, params_cap_, kv_cap_;  // each budget's cap of the equally matched (weighted)
  bool by_proportions_;                      // MatchOrder::proportions: the pool by distance
  RowOrder tight_;                           // tightest_order(): the order row #1 is tracked in
  int top_n_;
  std::size_t prune_threshold_;
  std::vector<Point> current_;                  // the points of the structure being visited
  std::optional<Point> best_model_point_;       // its best-matched point (the tightest's candidate)
  std::vector<KeptStructure> structures_kept_;  // bounded (see prune_structures())
  double skip_threshold_ = inf;                 // see cannot_rank()
  double pool_bound_ = inf;                     // see update_pool_bound()
  // Row #1 (ranking.hpp, rank() step 3): the representative first by first_row_before() among
  // the structures ended so far, kept whether or not its structure is kept; and the largest
  // objective a point can have and still be shown before it (+inf until there is one).
  std::optional<Point> first_row_point_;
  std::optional<Candidate> first_row_;
  double first_row_bound_ = inf;
  bool first_row_only_ = false;  // the structure being visited can only give row #1
  double structure_first_row_bound_ = inf;  // first_row_width_bound() of that structure
};

/// cannot_rank() with the width terms bounded too (cannot_rank_by_widths()); a structure it skips
/// is still visited for row #1 alone when its KV term and widths allow a row #1.
///
/// cannot_rank_by_widths(): A point that can be collected has |dF| within
/// the bound, so T = fW·W + fS·S lies in [T_lo, T_hi] (F has no E·W term and fE >= 0, so E only
/// shifts T by fE·E). The width terms of the proportion distance, w_e·|ln(W/W*)| + w_s·|ln(S/S*)|
/// with W* = W_b·H/H_b and S* = S_b·H/H_b (the widths in the baseline's proportions), are then at
/// least the cost of clamping (W*, S*) into their ranges plus min(w_e, w_s)·ln(T_c/T_hi) (or
/// ln(T_lo/T_c)): scaling W and S by factors within e^{±m} scales T by at most e^{±m}. A
/// structure whose bound exceeds the distance of top_n + margin kept structures is skipped (1e-9
/// of margin against rounding); so is one where no (W, S) of the ranges reaches the band.
bool CollectingPass::cannot_rank_widths(const KvStructure& kv, std::int64_t hidden, std::int64_t heads,
                                        const Coefficients& k) {
  if (first_row_only_) return !widths_reach(k, structure_first_row_bound_);
  if (!cannot_rank_by_widths(kv, hidden, heads, k)) return false;
  // Unrankable by proportion, but its representative can still be row #1 if it can be as well
  // matched as the row #1 so far.
  if (kv.kv_term > first_row_bound_ || cannot_tie_nearer(kv, hidden, heads)) return true;
  const double bound = first_row_width_bound(kv);
  if (!widths_reach(k, bound)) return true;
  structure_first_row_bound_ = bound;
  first_row_only_ = true;
  return false;
}

/// The bound on w·|dF| and w·|dN| of a point of a structure with this KV term that can be shown
/// before the row #1 so far: its largest printed deviation rounds to no more than row #1's, so
/// first_row_bound_; with unit weights and a KV deviation that prints as row #1's largest, the
/// point's second largest printed, max(|dF|, |dN|), must print no larger than row #1's second:
/// |dF|, |dN| < (second + 0.5)·0.01%. (The KV term's 0.01% are rounded down by 1e-7 of a unit, as
/// in consider_first_row(): a KV term that may print below row #1's largest gets the first bound.)
double CollectingPass::first_row_width_bound(const KvStructure& kv) const {
  if (!first_row_ || tight_ != RowOrder::shown_deviation) return first_row_bound_;
  std::array<long long, 3> best{std::llround(1e4 * std::fabs(first_row_->deviation.flops)),
                                std::llround(1e4 * std::fabs(first_row_->deviation.params)),
                                std::llround(1e4 * std::fabs(first_row_->deviation.kv))};
  std::sort(best.begin(), best.end(), std::greater<>());
  if (std::llround(1e4 * kv.kv_term - 1e-7) < best[0]) return first_row_bound_;
  return std::min(first_row_bound_, (static_cast<double>(best[1]) + 0.5) * 1e-4 * (1 + 1e-9));
}

/// Whether some (W, S) of the ranges gives |dF| within flops_bound(bound): the band of T = fW·W
/// + fS·S that such a point needs meets [T_min, T_max] (as in cannot_rank_by_widths()). True
/// when that cannot be decided (the bound is not finite, or F has an E·W term).
bool CollectingPass::widths_reach(const Coefficients& k, double bound) const {
  const double fbound = flops_bound(c_, std::min({bound, pruning_bound(), flops_cap_}));
  if (!std::isfinite(fbound) || !(k.fW > 0.0) || std::fabs(k.fEW) > 1e-9 * k.fW || k.fE < 0.0) return true;
  const bool has_shared = space_.has_shared();
  if (has_shared && !(k.fS > 0.0)) return true;
  const Progression &widths = space_.widths(), &shareds = space_.shareds();
  const double e_lo = static_cast<double>(space_.dense() ? 0 : space_.experts().min);
  const double e_hi = static_cast<double>(space_.dense() ? 0 : space_.experts().max);
  const double F_b = space_.baseline_flops();
  const double T_lo = F_b * (1.0 - fbound) - k.f0 - k.fE * e_hi;
  const double T_hi = F_b * (1.0 + fbound) - k.f0 - k.fE * e_lo;
  const double T_min = k.fW * static_cast<double>(widths.first) + (has_shared ? k.fS * static_cast<double>(shareds.first) : 0.0);
  const double T_max = k.fW * static_cast<double>(widths.last) + (has_shared ? k.fS * static_cast<double>(shareds.last) : 0.0);
  return !(T_hi < T_min || T_lo > T_max);
}

bool CollectingPass::cannot_rank_by_widths(const KvStructure& kv, std::int64_t hidden, std::int64_t heads,
                                           const Coefficients& k) const {
  const double fbound = flops_bound(c_, std::min(pruning_bound(), flops_cap_));
  if (!std::isfinite(fbound) || !(k.fW > 0.0) || std::fabs(k.fEW) > 1e-9 * k.fW || k.fE < 0.0) return false;
  const bool has_shared = space_.has_shared();
  if (has_shared && !(k.fS > 0.0)) return false;
  const ArchConfig& b = space_.baseline();
  const ProportionWeights& w = c_.proportions;
  const Progression &widths = space_.widths(), &shareds = space_.shareds();
  const auto log_ratio = [](double x, double y) { return std::fabs(std::log(x / y)); };
  const double H = static_cast<double>(hidden), Hb = static_cast<double>(b.hidden_size);
  const bool dense = space_.dense();
  const double e_lo = static_cast<double>(dense ? 0 : space_.experts().min);
  const double e_hi = static_cast<double>(dense ? 0 : space_.experts().max);
  const double W_star = static_cast<double>(dense ? b.ffn.dense_dim : b.ffn.expert_dim) * H / Hb;
  const double Wc = std::clamp(W_star, static_cast<double>(widths.first), static_cast<double>(widths.last));
  double clamp_cost = w.expert_dim_to_hidden * log_ratio(Wc, W_star);
  double Tc = k.fW * Wc;
  double move_weight = w.expert_dim_to_hidden;
  const bool shared_term = has_shared && b.ffn.shared_expert_dim > 0 && shareds.first > 0;
  if (has_shared) {
    const double S_star = static_cast<double>(b.ffn.shared_expert_dim) * H / Hb;
    const double Sc = std::clamp(S_star, static_cast<double>(shareds.first), static_cast<double>(shareds.last));
    Tc += k.fS * Sc;
    if (shared_term) {
      clamp_cost += w.shared_expert_dim_to_hidden * log_ratio(Sc, S_star);
      move_weight = std::min(move_weight, w.shared_expert_dim_to_hidden);
    } else {
      move_weight = 0.0;  // S moves freely without cost
    }
  }
  const double F_b = space_.baseline_flops();
  const double T_lo = F_b * (1.0 - fbound) - k.f0 - k.fE * e_hi;
  const double T_hi = F_b * (1.0 + fbound) - k.f0 - k.fE * e_lo;
  const double T_min = k.fW * static_cast<double>(widths.first) + (has_shared ? k.fS * static_cast<double>(shareds.first) : 0.0);
  const double T_max = k.fW * static_cast<double>(widths.last) + (has_shared ? k.fS * static_cast<double>(shareds.last) : 0.0);
  if (T_hi < T_min || T_lo > T_max) return true;
  double gap = 0.0;
  if (Tc > T_hi) gap = std::log(Tc / T_hi);  // T_hi >= T_min > 0 here
  if (Tc < T_lo && Tc > 0.0) gap = std::log(T_lo / Tc);
  if (!std::isfinite(gap)) return false;
  const double bound =
      structure_proportion_bound(kv.head_dim, heads, hidden, b, c_) + clamp_cost + move_weight * gap;
  return skip_threshold_ < inf && bound > skip_threshold_ + 1e-9;
}

/// Keeps at most keep_per_structure() points of the structure: the worst leaves as a better one
/// comes (a structure may hold a million (W, S) points within the tolerance), and the pool bound
/// follows at once (it prunes the rest of the structure; cannot_rank_widths() uses it).
void CollectingPass::consider(const KvStructure& kv, Point p, double dF, double dN) {
  std::array<double, 3> w{c_.weight_flops * std::fabs(dF), c_.weight_params * std::fabs(dN), kv.kv_term};
  std::sort(w.begin(), w.end(), std::greater<>());
  p.second = w[1];
  p.sum = std::fabs(dF) + std::fabs(dN) + std::fabs(kv.kv_dev);
  p.q_objective = quantized(p.objective);
  p.q_second = quantized(p.second);
  p.q_sum = quantized(p.sum);
  if (!best_model_point_ || better_model_match(p, *best_model_point_)) best_model_point_ = p;
  if (first_row_only_) return;  // only the best-matched point can be the tightest
  if (by_proportions_) {
    p.distance = proportion_distance_of(p.head_dim, p.num_heads * p.head_dim, p.hidden, p.width,
                                        space_.has_shared() ? p.shared : 0, space_.baseline(), c_);
  }
  // current_ is a max-heap by pool_before (its front the worst point): O(log keep) a point (a linear
  // search for the worst made a wide pool quadratic). The order is total within a structure, so the
  // points kept are the same whichever way the worst is found.
  const auto before = [this](const Point& x, const Point& y) { return pool_before(x, y); };
  current_.push_back(p);
  std::push_heap(current_.begin(), current_.end(), before);
  const std::size_t keep = keep_per_structure();
  if (current_.size() > keep) {
    std::pop_heap(current_.begin(), current_.end(), before);
    current_.pop_back();
  }
  if (!by_proportions_ && current_.size() >= keep) update_pool_bound(kv);
}

/// Once the structure's pool is full, a point matters only if it is at least as well matched as
/// the pool's worst w (objective o_w, second s_w). Such a point has objective max(kv, f, n) <= o_w,
/// so f, n <= o_w; and when o_w is the KV term itself, its second largest term max(f, n) must be
/// <= s_w. (f, n: weighted |dF|, |dN|.) Ties pass (slack).
void CollectingPass::update_pool_bound(const KvStructure& kv) {
  if (current_.size() < keep_per_structure()) return;
  const Point& worst = current_.front();  // the heap's top (consider())
  pool_bound_ = worst.objective > kv.kv_term ? worst.objective : worst.second;
}

void CollectingPass::end_structure(bool dropped) {
  if (dropped || !best_model_point_) {
    current_.clear();
    return;
  }
  consider_first_row(*best_model_point_);
  if (first_row_only_ || current_.empty()) {
    current_.clear();
    return;
  }
  const auto before = [this](const Point& x, const Point& y) { return pool_before(x, y); };
  const std::size_t keep = keep_per_structure();
  if (current_.size() > keep) {
    std::nth_element(current_.begin(), current_.begin() + static_cast<std::ptrdiff_t>(keep), current_.end(), before);
    current_.resize(keep);
  }
  std::sort(current_.begin(), current_.end(), before);
  const double distance =
      by_proportions_ ? current_.front().distance
                      : proportion_distance(space_.make_config(current_.front()), space_.baseline(), c_);
  structures_kept_.push_back({std::move(current_), distance});
  current_.clear();
  if (structures_kept_.size() >= prune_threshold_) prune_structures();
}

/// Keeps the top_n + margin structures nearest the baseline's proportions (all ties at the
/// boundary), each with representative_pool points.
void CollectingPass::prune_structures() {
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

/// Row #1 so far against a structure's representative. Its shown key is bounded below from the
/// model values (each |deviation| in 0.01% rounded down by 1e-7 of a unit: the exact value
/// differs from the model's by rounding only), and only a representative that can be shown
/// before the row #1 so far (a smaller key, or a key that may tie it with a proportion distance
/// no larger) is accounted exactly (evaluate_candidate(), as the ranking will).
/// With weights not all 1 the bound is on the objective. Exact ties: the smaller shape key, as
/// rank() breaks them.
void CollectingPass::consider_first_row(const Point& p) {
  const RowOrder order = tight_;
  if (first_row_) {
    if (order == RowOrder::shown_deviation) {
      const double third = std::max(0.0, p.sum - p.objective - p.second);
      std::array<long long, 3> low{std::llround(1e4 * p.objective - 1e-7), std::llround(1e4 * p.second - 1e-7),
                                   std::llround(1e4 * third - 1e-7)};
      std::array<long long, 3> best{std::llround(1e4 * std::fabs(first_row_->deviation.flops)),
                                    std::llround(1e4 * std::fabs(first_row_->deviation.params)),
                                    std::llround(1e4 * std::fabs(first_row_->deviation.kv))};
      std::sort(best.begin(), best.end(), std::greater<>());
      if (low > best) return;
      // A key that cannot be smaller than row #1's (its lower bound is row #1's) can only tie it:
      // the proportion distance decides first (no accounting for a structure that is not nearer).
      if (low == best &&
          proportion_distance(space_.make_config(p), space_.baseline(), c_) >
              first_row_->proportion_distance + 1e-12) {
        return;
      }
    } else if (p.objective > first_row_->objective * (1 + 1e-9) + 1e-15) {
      return;
    }
  }
  Candidate c = evaluate_candidate(space_.make_config(p), space_.baseline(), space_.baseline_budgets(),
                                   space_.workload(), c_);
  if (first_row_) {
    if (first_row_before(*first_row_, c, order)) return;
    if (!first_row_before(c, *first_row_, order) && !(shape_key(p) < shape_key(*first_row_point_))) return;
  }
  // Shown before it: a largest |deviation| that rounds to no more than its largest (unit
  // weights), or a weighted objective no larger.
  first_row_bound_ = order == RowOrder::shown_deviation
                         ? (static_cast<double>(std::llround(1e4 * c.deviation.max_abs())) + 0.5) * 1e-4 * (1 + 1e-9)
                         : c.objective * (1 + 1e-9) + 1e-15;
  first_row_point_ = p;
  first_row_ = std::move(c);
}

std::vector<Point> CollectingPass::take_collected() {
  prune_structures();
  std::vector<Point> out;
  for (auto& k : structures_kept_) out.insert(out.end(), k.points.begin(), k.points.end());
  structures_kept_.clear();
  // Row #1's structure may have been pruned or visited for row #1 only: its representative is
  // collected all the same (one point more than the proportion pruning keeps).
  if (first_row_point_) {
    const Point& f = *first_row_point_;
    const auto same = [&](const Point& q) { return !enumeration_order(q, f) && !enumeration_order(f, q); };
    if (std::none_of(out.begin(), out.end(), same)) out.push_back(f);
  }
  std::sort(out.begin(), out.end(), enumeration_order);
  return out;
}

}  // namespace

std::vector<Point> collect_within(const SearchSpace& space, SearchCounters& counters, const EqualMatchBounds& bounds,
                                  int top_n) {
  CollectingPass pass(space, bounds, top_n);
  StructureWalk<CollectingPass>(space, counters, pass).run();
  return pass.take_collected();
}

}  // namespace budget::match_detail
