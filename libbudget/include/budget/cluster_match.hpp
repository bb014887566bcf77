#pragma once
/// \file
/// Matched candidates ranked by what the run costs on a cluster (issue 20, item 4; docs/cluster.md,
/// "Matched candidates by cluster time"): the equally matched candidates of a time-aware match
/// (time_rank.hpp, RankBy::time) each at its own best layout (layout_search.hpp), ranked by seconds
/// per token on the cluster, the baseline at its best layout too; and the grid likewise per cell.
///
/// Thread safety: reentrant; the TimeModel is shared read-only.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/grid.hpp"
#include "budget/layout_search.hpp"
#include "budget/time_model.hpp"
#include "budget/time_rank.hpp"

namespace budget {

/// A matched candidate left out of the cluster ranking, and why.
struct ClusterDropped {
  ArchConfig config;
  std::string reason;
};

/// The equally matched candidates of `timed` (its first within_tolerance, as match_with_time()
/// with RankBy::time orders them; every one of them must be in the list, so ask with a top_n at
/// least as large) ranked by rank_by_cluster_time(), then ordered at matched work: by GPU-seconds
/// per training FLOP (ClusterCandidateTime::gpu_seconds_per_flop; the cluster's time per token
/// over its F), so that a candidate never gains by computing less. Trainable at scale: walking
/// that order, a candidate is kept only when some layout on the cluster's N GPUs fits it and its
/// fewest-GPU layout (smallest_fitting_layout()) needs at most twice the GPUs the baseline's does;
/// the others go to `dropped` (when given) with the reason, until `top` are kept (the rule is not
/// applied when no layout of the baseline fits up to 4096 GPUs). `timed` is then reordered to the
/// kept candidates (candidate_times and both ratio lists kept parallel), the ranking alike.
/// The time limit may stop the ranking: `partial` says so and the rows are the best of the finished
/// candidates. budget::Error as rank_by_cluster_time().
ClusterRanking rank_matched_on_cluster(TimedMatch& timed, const TimeModel& model, const ClusterSpec& cluster,
                                       const LayoutSearchOptions& options, std::size_t top,
                                       std::vector<ClusterDropped>* dropped = nullptr);

/// Fills timed.candidate_times up to the candidates kept (predict_step_time() at `workload`, the
/// workload `timed` was matched with): after a ranking that asked for none (TimeRankOptions::
/// full_step_times false) and kept only the candidates it shows.
void add_step_times(TimedMatch& timed, const TimeModel& model, const Workload& workload);

/// One grid cell matched with time and ranked on the cluster.
struct ClusterGridRow {
  const GridCell* cell = nullptr;
  TimedMatch match;                      ///< cut to the best candidate by cluster time
  std::optional<ClusterRanking> ranking;  ///< none when the cell has no match or `failure`
  /// Why the cell has no ranking although it matched: its baseline has no layout on the cluster
  /// (no_layout_reason()); the other cells are ranked all the same.
  std::string failure;
  std::vector<ClusterDropped> dropped;    ///< candidates passed over on the way to the best
  LayoutSearchOptions options;            ///< the cell's search options (CellSearchOptions)
};

/// The layout search options of one grid cell's ranking, from the cell's baseline: e.g. a team's
/// Megatron-LM arguments read against it (the CLI's grid --cluster --megatron-args). A budget::Error
/// it throws (other than the time limit) is that cell's `failure`; the other cells are ranked.
using CellSearchOptions = std::function<LayoutSearchOptions(const ArchConfig& baseline)>;

/// match_grid_with_time() with RankBy::time over every equally matched candidate, then
/// rank_matched_on_cluster() per cell, keeping the best. A cell whose baseline has no layout is
/// kept with its `failure`; any other error (an option, the time limit) stops the grid.
std::vector<ClusterGridRow> match_grid_on_cluster(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                                  const GridConstraints& constraints, const TimeModel& model,
                                                  const ClusterSpec& cluster, const LayoutSearchOptions& options);
/// The same with each cell's options from its baseline.
std::vector<ClusterGridRow> match_grid_on_cluster(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                                  const GridConstraints& constraints, const TimeModel& model,
                                                  const ClusterSpec& cluster, const CellSearchOptions& options_of_cell);

}  // namespace budget
