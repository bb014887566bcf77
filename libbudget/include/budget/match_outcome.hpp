#pragma once
/// \file
/// Everything `budget-match --baseline` reports, computed in one place for the CLI and Python's
/// budget.match(): the match (timed and optionally ranked by predicted time when a time model is
/// given, time_rank.hpp), the best kernel-ready alternative (kernel_shapes.hpp) and, on request,
/// which constraint binds (constraint_sensitivity()) and, with a model, what aligning dims costs
/// (alignment_tradeoffs()). Method and order: docs/matching.md.
///
/// Thread safety: match_outcome() is reentrant (it only reads its arguments and the model).

#include <optional>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/cluster_match.hpp"
#include "budget/config.hpp"
#include "budget/gpu_fit.hpp"
#include "budget/kernel_shapes.hpp"
#include "budget/match.hpp"
#include "budget/native_reach.hpp"
#include "budget/time_model.hpp"
#include "budget/time_rank.hpp"
#include "budget/workload.hpp"

namespace budget {

struct MatchRequest {
  int top = 5;  ///< candidates kept (also time_options.top_n when timed)
  /// With a model (a calibration profile), every candidate is timed and time_options applies
  /// (rank_by, max_time_ratio); without one, time_options must be the defaults. Not owned: it
  /// must outlive the call and the outcome's use of it.
  const TimeModel* model = nullptr;
  TimeRankOptions time_options;
  /// Also compute which constraint binds and, with a model, the alignment trade-offs.
  bool explain = false;
  /// Also search the best candidate whose shapes are all on the fused kernels' full-rate path
  /// (not searched when the constraints are aligned already: the trainable defaults, --align).
  bool with_aligned_alternative = true;
  /// With a cluster (and a model, RankBy::time, no time-ratio cap): every equally matched
  /// candidate at its own best layout on it, ranked by cluster time per token
  /// (rank_matched_on_cluster(); cluster_match.hpp): the outcome's rows are then in that order.
  /// Not owned, like `model`.
  const ClusterSpec* cluster = nullptr;
  LayoutSearchOptions cluster_search;  ///< the layout search per candidate, with `cluster`
  /// With the portable set (no kernel target): the same request over the trainable shapes, whose
  /// best is shown where the portable set misses a budget (NativeReach::best_off_portable).
  std::optional<MatchConstraints> trainable;
};

struct MatchOutcome {
  MatchResult result;
  std::optional<TimedMatch> timed;                 ///< with a model
  std::vector<ConstraintSensitivity> sensitivity;  ///< with explain
  std::vector<AlignmentOption> alignment;          ///< with explain and a model
  std::optional<AlignedAlternative> aligned;       ///< with_aligned_alternative and a feasible match
  /// Under a kernel rule (a target or the portable set) where row #1 is padded or misses a budget
  /// by more than native_match_tolerance: what the native shapes reach (native_reach.hpp).
  std::optional<NativeReach> native_reach;
  /// With a cluster and a feasible match: the first `top` by cluster time, parallel to
  /// result.candidates (and timed's lists).
  std::optional<ClusterRanking> cluster;
  /// With a cluster: the equally matched candidates passed over as not trainable at scale, with
  /// the reason (rank_matched_on_cluster()).
  std::vector<ClusterDropped> cluster_dropped;
  /// With a model: whether the baseline and each candidate (parallel to result.candidates) fit
  /// one GPU of the profile's kind (budget/gpu_fit.hpp), said beside their times.
  std::optional<OneGpuFit> baseline_fit;
  std::vector<OneGpuFit> candidate_fits;
};

/// The match and its companions as described above. budget::Error for invalid inputs (as match()
/// and match_with_time() throw them); an aligned search that fails (e.g. over the search limit)
/// is no error: the outcome's aligned alternative says "not searched: <why>". Throws
/// budget::Error (source "rank_by"/"max_time_ratio") when time options are set without a model,
/// and (source "cluster") when a cluster is given without a model, without RankBy::time or with a
/// time-ratio cap.
MatchOutcome match_outcome(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                           const MatchConstraints& constraints, const MatchRequest& request);

}  // namespace budget
