#pragma once
// The enumeration both passes share (docs/matching.md, "Method", step 3): KV structures in order
// of increasing KV term, hidden sizes (and free head counts) outward from the baseline's, one
// calibration per structure, shared widths outward from the baseline's proportion, widths within
// the band where the FLOPs bound can still hold, and a closed-form solve over experts for each.
// What a pass does with a point, and which structures it may skip, is the pass's: the walk calls
//   double incumbent() const                  the bound a point's objective must meet (best_)
//   bool cannot_improve(kv) const             stop: no point of kv can matter any more
//   bool cannot_rank(kv, hidden, heads) const skip the structure before calibration
//   bool cannot_rank_widths(kv, hidden, heads, k) const   ... after calibration
//   ExpertTarget target() const               the bounds on w_F·|dF| and w_N·|dN| of a point that
//                                             matters, and what the solve over experts minimises
//   double pool_bound() const                 tightens within a structure (+inf if it never does)
//   void begin_structure(), end_structure(bool dropped)
//   void consider(kv, Point, dF, dN)          a point within the caps and the incumbent (dF, dN:
//                                             its signed relative FLOPs and params deviations)
// The space's proportion factor (MatchConstraints::proportion_factor) bounds the free heads, the
// widths and the shared widths of each structure (SearchSpace::width_window() and friends).
// A template, not virtual calls: the hooks are inlined into the walk of each pass.

#include <cmath>
#include <cstdint>
#include <optional>

#include "match/closed_form.hpp"
#include "match/search_space.hpp"

namespace budget::match_detail {

template <class Pass>
class StructureWalk {
 public:
  StructureWalk(const SearchSpace& space, SearchCounters& counters, Pass& pass)
      : space_(space), c_(space.constraints()), counters_(counters), pass_(pass) {}

  void run() {
    for (const KvStructure& kv : space_.kv_structures()) {
      if (kv.kv_term > pass_.incumbent() + slack) break;  // sorted by kv_term: nothing later can do better
      if (pass_.cannot_improve(kv)) break;
      if (c_.query_equals_hidden) {
        visit_tied_heads(kv);
      } else {
        visit_free_heads(kv);
      }
    }
  }

 private:
  /// heads·head_dim = hidden: hidden % head_dim == 0 and (hidden / head_dim) % kv_heads == 0 ⟺
  /// hidden is a multiple of head_dim·kv_heads, so only those multiples are visited.
  void visit_tied_heads(const KvStructure& kv) {
    const Progression hidden = space_.hiddens().multiples_of(kv.head_dim * kv.num_kv_heads);
    const double centre = static_cast<double>(space_.baseline().hidden_size);
    outward(hidden.count(), nearest_index(hidden, centre), [&](std::int64_t i) {
      if (pass_.cannot_improve(kv)) return false;
      const std::int64_t h = hidden.at(i);
      visit_structure(kv, h, h / kv.head_dim, nullptr);
      return true;
    });
  }

  /// A free query width: heads outward from the baseline's query/hidden ratio for each hidden.
  /// Past that ratio the proportion bound of cannot_rank() only grows, so a direction stops at
  /// its first unrankable structure. The heads model is calibrated on the first structure visited.
  void visit_free_heads(const KvStructure& kv) {
    const ArchConfig& b = space_.baseline();
    const Progression& hiddens = space_.hiddens();
    const Progression heads = space_.heads().multiples_of(kv.num_kv_heads);
    const double query_ratio = static_cast<double>(b.attention.query_width()) / static_cast<double>(b.hidden_size);
    outward(hiddens.count(), nearest_index(hiddens, static_cast<double>(b.hidden_size)), [&](std::int64_t i) {
      if (pass_.cannot_improve(kv)) return false;
      const std::int64_t h = hiddens.at(i);
      std::optional<HeadsModel> model;
      const double ideal = query_ratio * static_cast<double>(h) / static_cast<double>(kv.head_dim);
      const std::int64_t centre = nearest_index(heads, ideal);
      outward(heads.count(), centre, [&](std::int64_t j) {
        if (kv.kv_term > pass_.incumbent() + slack || pass_.cannot_improve(kv)) return false;
        const std::int64_t n = heads.at(j);
        const bool moving_away = j >= centre ? static_cast<double>(n) >= ideal : static_cast<double>(n) <= ideal;
        if (!space_.query_in_proportion(n * kv.head_dim, h)) return !moving_away;
        if (!space_.heads_fit_gemms(n, kv.head_dim)) return true;  // the next head count may fit
        if (pass_.cannot_rank(kv, h, n)) return !moving_away;
        if (!model) model = cached_heads_model(space_, counters_, kv, h, heads);
        visit_structure(kv, h, n, &*model);
        return true;
      });
      return true;
    });
  }

  void visit_structure(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, const HeadsModel* model) {
    if (kv.kv_term > pass_.incumbent() + slack) return;
    if (pass_.cannot_improve(kv)) return;
    pass_.begin_structure();
    if (pass_.cannot_rank(kv, hidden, heads)) return;
    ++counters_.structures;
    Coefficients k;
    if (model != nullptr && model->affine) {
      counters_.count_work(1, c_.max_work);
      k = model->at(heads);
    } else if (model == nullptr) {
      k = cached_calibration(space_, counters_, kv, hidden, heads);  // query width = hidden: one per (kv, hidden)
    } else {
      counters_.count_work(calibration_work, c_.max_work);  // heads not affine: every structure its own
      k = calibrate(space_, space_.structure_config(kv, hidden, heads), kv.top_k);
    }
    if (pass_.cannot_rank_widths(kv, hidden, heads, k)) return;
    // Shared widths outward from the baseline's proportion S_b·H/H_b (good points first tighten
    // the bounds). As the pass's pool bound tightens, cannot_rank_widths() is asked again: a
    // structure found unrankable midway is dropped whole.
    const ArchConfig& b = space_.baseline();
    const double s_centre = static_cast<double>(b.ffn.shared_expert_dim) * static_cast<double>(hidden) /
                            static_cast<double>(b.hidden_size);
    const std::int64_t centre = nearest_index(space_.shareds(), s_centre);
    const IndexWindow shared_window = space_.shared_window(hidden);
    const IndexWindow width_window = space_.width_window(hidden);
    if (space_.tied_shared()) {
      pass_.end_structure(!visit_tied_widths(kv, hidden, heads, k, width_window));
      return;
    }
    bool unrankable = false;
    double checked_bound = pass_.pool_bound();
    outward(space_.shareds().count(), centre, [&](std::int64_t si) {
      if (pass_.cannot_improve(kv) || unrankable) return false;
      if (si < shared_window.begin || si >= shared_window.end) {
        return si >= centre ? si < shared_window.begin : si >= shared_window.end;  // on: toward the window
      }
      if (pass_.pool_bound() < checked_bound) {
        checked_bound = pass_.pool_bound();
        if (pass_.cannot_rank_widths(kv, hidden, heads, k)) {
          unrankable = true;
          return false;
        }
      }
      return visit_shared_width(kv, hidden, heads, k, space_.shareds().at(si), si >= centre, width_window);
    });
    pass_.end_structure(unrankable);
  }

  /// Shared experts tied to the routed width (S = W): along that diagonal F and N are those of a
  /// structure whose width coefficients are fW + fS and nW + nS, so one band over the widths
  /// visits exactly the points (W, W) the walk over shared widths would (each where |dF| can be
  /// within the bound), without a band per shared width. False when the structure is found
  /// unrankable midway (as the pool bound tightens: cannot_rank_widths()).
  bool visit_tied_widths(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, const Coefficients& k,
                         const IndexWindow& window) {
    Coefficients diagonal = k;
    diagonal.fW += k.fS;
    diagonal.nW += k.nS;
    diagonal.fS = diagonal.nS = 0.0;
    counters_.count_work(1, c_.max_work);
    const ExpertTarget target = pass_.target();
    const double fbound = flops_bound(c_, target.flops);
    WidthBand band = flops_width_band(space_, diagonal, 0, fbound);
    if (band.bounded && band.begin < band.end) narrow_by_params(space_, diagonal, 0, fbound, target.params, band);
    double checked_bound = pass_.pool_bound();
    for (std::int64_t i = std::max(band.begin, window.begin); i < std::min(band.end, window.end); ++i) {
      if (pass_.cannot_improve(kv)) break;
      if (pass_.pool_bound() < checked_bound) {
        checked_bound = pass_.pool_bound();
        if (pass_.cannot_rank_widths(kv, hidden, heads, k)) return false;
      }
      evaluate(kv, hidden, heads, k, i, std::nullopt);
    }
    return true;
  }

  /// One shared width S; false stops the walk in this direction. F increases with S, so the W
  /// band slides down as S grows: once it has left the W range on one side, every further S in
  /// that direction is empty too.
  bool visit_shared_width(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, const Coefficients& k,
                          std::int64_t S, bool up, const IndexWindow& window) {
    counters_.count_work(1, c_.max_work);
    const ExpertTarget target = pass_.target();
    const double fbound = flops_bound(c_, target.flops);
    WidthBand band = flops_width_band(space_, k, S, fbound);
    if (band.bounded) {
      if (band.begin >= band.end && k.fS > 0.0) {
        if (up && band.end == 0) return false;                             // below the W range
        if (!up && band.begin == space_.widths().count()) return false;  // above it
      }
      if (band.begin < band.end) narrow_by_params(space_, k, S, fbound, target.params, band);
    }
    std::int64_t begin = std::max(band.begin, window.begin), end = std::min(band.end, window.end);
    if (space_.tied_shared()) {
      // Tied: the one routed width equal to S (the walk's S values are the routed widths).
      const std::int64_t i = space_.widths().index_not_below(static_cast<double>(S));
      begin = std::max(begin, i);
      end = std::min(end, i + 1);
    }
    for (std::int64_t i = begin; i < end && !pass_.cannot_improve(kv); ++i) evaluate(kv, hidden, heads, k, i, S);
    return true;
  }

  /// Solves the experts at routed width index i and shared width `shared` (none: the routed width W
  /// itself) and hands the pass the point; counted as evaluated work.
  void evaluate(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, const Coefficients& k, std::int64_t i,
                std::optional<std::int64_t> shared) {
    ++counters_.evaluated;
    counters_.count_work(1, c_.max_work);
    const std::int64_t W = space_.widths().at(i);
    const std::int64_t S = shared.value_or(W);
    const std::optional<ExpertSolution> solution = solve_experts(space_, k, W, S, pass_.target());
    if (solution) consider(kv, hidden, heads, *solution, W, S);
  }

  /// Hands the pass a point that meets top_k, the caps and the incumbent.
  void consider(const KvStructure& kv, std::int64_t hidden, std::int64_t heads, const ExpertSolution& s,
                std::int64_t W, std::int64_t S) {
    if (!space_.dense() && s.experts < kv.top_k) return;
    const double dF = s.flops / space_.baseline_flops() - 1.0, dN = s.params / space_.baseline_params() - 1.0;
    if (c_.max_flops_deviation && std::fabs(dF) > *c_.max_flops_deviation + slack) return;
    if (c_.max_params_deviation && std::fabs(dN) > *c_.max_params_deviation + slack) return;
    const double objective = std::max(kv.kv_term, s.h);
    if (objective > pass_.incumbent() + slack) return;
    Point p{kv.num_layers, kv.top_k, kv.num_kv_heads, kv.head_dim, hidden, heads, s.experts, W, S, objective,
            0.0, 0.0, kv.kv_term, kv.kv_lora};
    pass_.consider(kv, p, dF, dN);
  }

  const SearchSpace& space_;
  const MatchConstraints& c_;
  SearchCounters& counters_;
  Pass& pass_;
};

}  // namespace budget::match_detail
