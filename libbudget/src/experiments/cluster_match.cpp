// Matched candidates ranked on a cluster (budget/cluster_match.hpp).
#include "budget/cluster_match.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace budget {

ClusterRanking rank_matched_on_cluster(TimedMatch& timed, const TimeModel& model, const ClusterSpec& cluster,
                                       const LayoutSearchOptions& options, std::size_t top) {
  const std::size_t equal = std::min(timed.within_tolerance, timed.result.candidates.size());
  std::vector<ArchConfig> configs;
  configs.reserve(equal);
  for (std::size_t i = 0; i < equal; ++i) configs.push_back(timed.result.candidates[i].config);
  ClusterRanking ranking = rank_by_cluster_time(model, timed.result.baseline, configs, cluster, options, top);
  std::vector<Candidate> candidates;
  std::vector<StepTime> times;
  std::vector<double> ratios;
  for (const ClusterCandidateTime& c : ranking.candidates) {
    candidates.push_back(std::move(timed.result.candidates[c.input_index]));
    if (!timed.candidate_times.empty()) times.push_back(std::move(timed.candidate_times[c.input_index]));
    ratios.push_back(timed.time_ratios[c.input_index]);
  }
  timed.result.candidates = std::move(candidates);
  timed.candidate_times = std::move(times);
  timed.time_ratios = std::move(ratios);
  if (!timed.result.candidates.empty()) timed.result.summary.best_objective = timed.result.candidates.front().objective;
  return ranking;
}

void add_step_times(TimedMatch& timed, const TimeModel& model, const Workload& workload) {
  for (std::size_t i = timed.candidate_times.size(); i < timed.result.candidates.size(); ++i) {
    timed.candidate_times.push_back(predict_step_time(model, timed.result.candidates[i].config, workload));
  }
}

std::vector<ClusterGridRow> match_grid_on_cluster(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                                  const std::string& constraints_path, const TimeModel& model,
                                                  const ClusterSpec& cluster, const LayoutSearchOptions& options) {
  TimeRankOptions time_options;
  time_options.rank_by = RankBy::time;
  time_options.top_n = std::numeric_limits<int>::max() / 8;  // every equally matched candidate
  time_options.full_step_times = false;                      // the one shown is timed below
  std::vector<ClusterGridRow> rows;
  for (TimedGridRow& row : match_grid_with_time(grid, loop, workload, constraints_path, model, time_options)) {
    ClusterGridRow out{row.cell, std::move(row.match), std::nullopt};
    if (out.match.result.summary.feasible && !out.match.result.candidates.empty()) {
      out.ranking = rank_matched_on_cluster(out.match, model, cluster, options, 1);
    }
    add_step_times(out.match, model, workload);
    rows.push_back(std::move(out));
  }
  return rows;
}

}  // namespace budget
