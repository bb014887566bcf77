#pragma once
/// \file
/// Matched candidates ranked by what the run costs on a cluster (issue 20, item 4; docs/cluster.md,
/// "Matched candidates by cluster time"): the equally matched candidates of a time-aware match
/// (time_rank.hpp, RankBy::time) each at its own best layout (layout_search.hpp), ranked by seconds
/// per token on the cluster, the baseline at its best layout too; and the grid likewise per cell.
///
/// Thread safety: reentrant; the TimeModel is shared read-only.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/grid.hpp"
#include "budget/layout_search.hpp"
#include "budget/time_model.hpp"
#include "budget/time_rank.hpp"

namespace budget {

/// The equally matched candidates of `timed` (its first within_tolerance, as match_with_time()
/// with RankBy::time orders them; every one of them must be in the list, so ask with a top_n at
/// least as large) ranked by rank_by_cluster_time(..., top); then `timed` reordered to that order and
/// cut to `top` (candidate_times, when there are any, and time_ratios kept parallel), the ranking cut
/// alike. Candidates
/// with no fitting layout come last and are kept. budget::Error as rank_by_cluster_time().
ClusterRanking rank_matched_on_cluster(TimedMatch& timed, const TimeModel& model, const ClusterSpec& cluster,
                                       const LayoutSearchOptions& options, std::size_t top);

/// Fills timed.candidate_times up to the candidates kept (predict_step_time() at `workload`, the
/// workload `timed` was matched with): after a ranking that asked for none (TimeRankOptions::
/// full_step_times false) and kept only the candidates it shows.
void add_step_times(TimedMatch& timed, const TimeModel& model, const Workload& workload);

/// One grid cell matched with time and ranked on the cluster.
struct ClusterGridRow {
  const GridCell* cell = nullptr;
  TimedMatch match;                      ///< cut to the best candidate by cluster time
  std::optional<ClusterRanking> ranking;  ///< none when the cell has no match
};

/// match_grid_with_time() with RankBy::time over every equally matched candidate, then
/// rank_matched_on_cluster() per cell, keeping the best.
std::vector<ClusterGridRow> match_grid_on_cluster(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                                  const std::string& constraints_path, const TimeModel& model,
                                                  const ClusterSpec& cluster, const LayoutSearchOptions& options);

}  // namespace budget
