#pragma once
// The shared widths a structure can still use, before the shared-width loop (docs/matching.md,
// "Method", step 4): one closed-form interval per structure instead of a FLOPs band and a
// parameter narrowing per (structure, shared width). A necessary condition only: every shared
// width where solve_experts() could keep a point lies inside it.

#include <cstdint>

#include "match/closed_form.hpp"
#include "match/search_space.hpp"

namespace budget::match_detail {

/// Index range [begin, end) of space.shareds(); `bounded` false: no pruning applies (the range is
/// all of it).
struct SharedWidthRange {
  std::int64_t begin = 0, end = 0;
  bool bounded = false;
};

/// The shared widths S at which some (E, W) of the ranges has |dF| <= flops_bound(pruning_bound)
/// and |dN| <= params_bound(pruning_bound), with F and N of the structure's coefficients `k`.
///
/// With F = f0 + fE·E + fW·W + fS·S (no E·W term; fE >= 0, fW, fS > 0), a point at S needs W in
/// [Wa(S), Wb(S)] ∩ [W_first, W_last], Wa = (F_lo − f0 − fS·S − fE·E_max)/fW and Wb = (F_hi − f0 −
/// fS·S − fE·E_min)/fW. N = n0 + nS·S + nW·W + E·(nE + nEW·W) is increasing in E and W (coefficients
/// >= 0, checked), so a point needs
///   N(E_min, max(Wa, W_first), S) <= N_hi   (a maximum of two affine functions of S: convex), and
///   N(E_max, min(Wb, W_last), S)  >= N_lo   (a minimum of two affine functions: concave);
/// each holds on an interval of S, as does Wa <= W_last, Wb >= W_first. The intersection, widened
/// by 10⁻⁶ relative and one lattice step against rounding, is returned. With the shared width tied
/// to the routed width (S = W) the FLOPs condition alone with W = S gives a far narrower interval
/// (a width's FLOPs band is a few lattice steps wide). Not bounded for a dense or fixed-expert space,
/// no shared experts, an infinite bound, or coefficients not of that form.
SharedWidthRange shared_width_range(const SearchSpace& space, const Coefficients& k, double pruning_bound);

/// Off: shared_width_range() never bounds (the walk as it was before it): the reference that
/// bench_match measures beside and the tests compare match() against. On by default; process-wide.
void set_shared_width_range_enabled(bool enabled);

}  // namespace budget::match_detail
