#pragma once
/// \file
/// Matching honesty under a kernel target (issue 43, item 5): where the shapes the target runs
/// natively cannot match a budget within native_match_tolerance, which budget and by how much,
/// the best native and the best padded candidates side by side (with their predicted time when a
/// model is given), and a loop span (--loop) whose native match is within the tolerance: a
/// suggestion, never applied. docs/kernels.md, "Matching honesty".
///
/// Thread safety: native_reach() is reentrant.

#include <optional>
#include <string>
#include <vector>

#include "budget/match.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"

namespace budget {

/// The largest |deviation| of a budget a native match may show before native_reach() speaks:
/// the paper's worst matched deviation (3.9%, PAPER.md's grid), issue 43's acceptance.
inline constexpr double native_match_tolerance = 0.039;

struct NativeReach {
  /// Each budget the best native candidate misses by more than the tolerance, one phrase each:
  /// "kv: -25.00% at best with native shapes (the tolerance is 3.9%)".
  std::vector<std::string> unreachable;
  std::optional<Candidate> best_native;  ///< nullopt: no native shape matches at all
  std::optional<Candidate> best_padded;  ///< with a target whose padded shapes match better
  /// The portable set (no target) missing a budget: the best of the same request over every
  /// trainable shape (head dims multiples of 8 up to 256), which some kernels pad or refuse.
  std::optional<Candidate> best_off_portable;
  /// Predicted step time / the baseline's, with a model (0: not timed).
  double best_native_time_ratio = 0;
  double best_padded_time_ratio = 0;
  double best_off_portable_time_ratio = 0;
  /// "--loop 9-40": a centred span (at the request's repeats) whose native match is within the
  /// tolerance; empty when none of the spans tried is.
  std::string suggested_loop;
  double suggested_loop_max_deviation = 0;
  std::string note;  ///< what was searched (and what was not)
};

/// What the native shapes of `constraints` (a trainable space with a kernel target or the
/// portable head dims) reach next to `result` (the match of that space). nullopt when row #1 is
/// native and within native_match_tolerance, when the space has no kernel rule, or when `result`
/// is infeasible. A model (may be null) times the candidates. `trainable` (may be null): the same
/// request over the trainable shapes, searched for best_off_portable when `constraints` is the
/// portable set and misses a budget. Runs at most a few more searches (the native-only space, the
/// trainable one, and a native match at each loop span tried).
std::optional<NativeReach> native_reach(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                                        const MatchConstraints& constraints, const MatchResult& result,
                                        const TimeModel* model, const MatchConstraints* trainable = nullptr);

/// `constraints` restricted to the head dims the kernel target runs natively (its head_dim_set
/// the native values of the head_dim range); unchanged without a target.
MatchConstraints native_only(const MatchConstraints& constraints);

}  // namespace budget
