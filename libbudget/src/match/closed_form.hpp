#pragma once
// The closed-form part of the matcher (docs/matching.md, "Method"). For a fixed structure σ the
// op list makes the budgets exactly affine/bilinear in E (experts), W (expert width, or dense
// width for dense models) and S (shared-expert width):
//     F(E, W, S) = f0 + fE·E + fW·W + fEW·E·W + fS·S          (training FLOPs per token)
//     N(E, W, S) = n0 + nE·E + nW·W + nEW·E·W + nS·S          (non-embedding parameters)
// and the KV cache is constant. The coefficients are read off layer_ops()/account() (calibrate()),
// so no formula of the accounting is repeated here. For fixed (σ, W, S), u(E) = w_F·dF(E) and
// v(E) = w_N·dN(E) are affine in E, so h(E) = max(|u|, |v|) is convex: its minimiser over the
// reals is one of a few breakpoints, and the best lattice value of E is the lattice point just
// below or just above it (solve_experts(); exact).

#include <cstdint>
#include <functional>
#include <limits>
#include <unordered_map>
#include <utility>
#include <optional>

#include "budget/config.hpp"
#include "match/search_space.hpp"

namespace budget::match_detail {

/// Exact bilinear model of the budgets of one structure.
struct Coefficients {
  double f0 = 0, fE = 0, fW = 0, fEW = 0, fS = 0;
  double n0 = 0, nE = 0, nW = 0, nEW = 0, nS = 0;
};

/// a + t·b, coefficient by coefficient.
Coefficients combine(const Coefficients& a, const Coefficients& b, double t);

/// Reads the coefficients of structure `cfg` off the op list at E ∈ {E1, E1+1}, W ∈ {1, 2},
/// S ∈ {S1, S1+1} (E1 = max(top_k, 1); five account() calls, calibration_work units).
Coefficients calibrate(const SearchSpace& space, const ArchConfig& cfg, std::int64_t top_k);

/// The coefficients of the structures (kv, hidden, heads) for every heads value: for fixed
/// (kv, hidden) the op list makes F and N affine in the query width (projections 2·H·q + 2·q·H,
/// scores 4·q·A; weights H·q + q·H), so the coefficients are affine in heads. They are read off
/// the op list at two heads values and checked at a third; if the check fails (an op that is
/// not affine in heads), every structure is calibrated on its own (affine false).
struct HeadsModel {
  bool affine = false;
  std::int64_t h0 = 0;
  Coefficients at_h0, slope;
  Coefficients at(std::int64_t heads) const { return combine(at_h0, slope, static_cast<double>(heads - h0)); }
};
/// Counts 3·calibration_work when `heads` holds three values or more (else affine false, no work).
HeadsModel heads_model(const SearchSpace& space, SearchCounters& counters, const KvStructure& kv,
                       std::int64_t hidden, const Progression& heads);

/// The coefficients read off the op list during one search, by (KV structure's index in
/// SearchSpace::kv_structures(), hidden): a structure's (query width = hidden) or the heads model
/// of (KV structure, hidden) (a free query width). Bounded: past max_entries nothing is added
/// (the passes then calibrate again, as without the cache).
struct CalibrationCache {
  struct KeyHash {
    std::size_t operator()(const std::pair<std::size_t, std::int64_t>& k) const {
      return std::hash<std::int64_t>()(static_cast<std::int64_t>(k.first) * 1000003 ^ k.second);
    }
  };
  using Key = std::pair<std::size_t, std::int64_t>;
  static constexpr std::size_t max_entries = std::size_t{1} << 20;
  std::unordered_map<Key, Coefficients, KeyHash> structures;
  std::unordered_map<Key, HeadsModel, KeyHash> heads_models;
};

/// calibrate() of structure (kv, hidden, heads = hidden / head_dim) through the space's cache:
/// calibration_work units the first time in a search, 1 after.
Coefficients cached_calibration(const SearchSpace& space, SearchCounters& counters, const KvStructure& kv,
                                std::int64_t hidden, std::int64_t heads);
/// heads_model() through the space's cache (its work the first time in a search, 1 after).
HeadsModel cached_heads_model(const SearchSpace& space, SearchCounters& counters, const KvStructure& kv,
                              std::int64_t hidden, const Progression& heads);

/// The largest |dF| that can still matter under `pruning_bound` (weighted) or the FLOPs cap.
double flops_bound(const MatchConstraints& c, double pruning_bound);
/// The largest |dN| that can still matter under `pruning_bound` (weighted) or the parameters cap.
double params_bound(const MatchConstraints& c, double pruning_bound);

/// The index range [begin, end) of widths where |dF| <= fbound is reachable for some E of the
/// range at shared width S (F increasing in W). `bounded` false: no narrowing applies (an
/// infinite bound, or F not of the assumed form), the band is every width.
struct WidthBand {
  std::int64_t begin = 0, end = 0;
  bool bounded = false;
};
WidthBand flops_width_band(const SearchSpace& space, const Coefficients& k, std::int64_t S, double fbound);

/// Narrows a bounded, non-empty band by F and N together (a point that solve_experts() would
/// keep is never dropped). `pruning_bound` as for flops_bound().
void narrow_by_params(const SearchSpace& space, const Coefficients& k, std::int64_t S, double fbound,
                      double pruning_bound, WidthBand& band);

/// The best lattice number of experts at (W, S) and its model budgets; nullopt when no E of the
/// range meets the caps and `pruning_bound`.
struct ExpertSolution {
  std::int64_t experts = 0;
  double flops = 0, params = 0;
  double h = 0;  ///< max(w_F·|dF|, w_N·|dN|)
  double value = 0;  ///< the goal minimised (ExpertTarget; h for the largest)
};
std::optional<ExpertSolution> solve_experts(const SearchSpace& space, const Coefficients& k, std::int64_t W,
                                            std::int64_t S, double pruning_bound);

/// What a pass asks of the solve over experts at (structure, W, S): the bounds a point must meet
/// on its weighted |deviations| (w_F·|dF| <= flops, w_N·|dN| <= params, each with the slack, and
/// the caps), and what to minimise over E among the points that meet them:
///   largest: max(w_F·|dF|, w_N·|dN|) (what solve_experts() above minimises);
///   flops, params: w_F·|dF| alone, w_N·|dN| alone;
///   excess: max(w_F·|dF| − flops_offset, w_N·|dN| − params_offset).
/// Each is a maximum of affine functions of E, hence convex: its lattice minimiser is a lattice
/// neighbour of the continuous one, a crossing of two pieces or an end of the interval (exact).
struct ExpertTarget {
  enum class Goal { largest, flops, params, excess };
  double flops = std::numeric_limits<double>::infinity();
  double params = std::numeric_limits<double>::infinity();
  Goal goal = Goal::largest;
  double flops_offset = 0, params_offset = 0;
  /// One bound on both, minimising the largest: solve_experts(…, bound).
  static ExpertTarget within(double bound) { return {bound, bound, Goal::largest, 0, 0}; }
};
/// The best lattice number of experts for `target`; ExpertSolution::h stays max(w_F·|dF|,
/// w_N·|dN|) and `value` is the minimised goal. With ExpertTarget::within(b) the result is
/// solve_experts(space, k, W, S, b)'s, bit for bit.
std::optional<ExpertSolution> solve_experts(const SearchSpace& space, const Coefficients& k, std::int64_t W,
                                            std::int64_t S, const ExpertTarget& target);

}  // namespace budget::match_detail
