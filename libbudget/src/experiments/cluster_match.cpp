// Matched candidates ranked on a cluster (budget/cluster_match.hpp).
#include "budget/cluster_match.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "budget/training_memory.hpp"
#include "budget/error.hpp"
#include "experiments/cluster_experts.hpp"

namespace budget {

namespace {

/// Why `c` is not trainable on the cluster, or empty: trainable means some layout of the search on
/// the cluster's N GPUs fits it (issue 41: a candidate that fits the GPUs given is ranked, however
/// many GPUs its fewest-GPU layout needs).
std::string not_trainable_on_gpus(const ClusterCandidateTime& c, const LayoutSearchOptions& options) {
  if (c.found) return {};
  return c.no_layout_reason.empty()
             ? fmt::format("no layout of the search space on {} GPUs fits the GPU's memory", options.gpus)
             : fmt::format("no layout on {} GPUs: {}", options.gpus, c.no_layout_reason);
}

}  // namespace

ClusterRanking rank_matched_on_cluster(TimedMatch& timed, const TimeModel& model, const ClusterSpec& cluster,
                                       const LayoutSearchOptions& options, std::size_t top,
                                       std::vector<ClusterDropped>* dropped) {
  const std::size_t equal = std::min(timed.within_tolerance, timed.result.candidates.size());
  std::vector<ArchConfig> configs;
  configs.reserve(equal);
  for (std::size_t i = 0; i < equal; ++i) configs.push_back(timed.result.candidates[i].config);
  // At matched work (GPU-seconds per training FLOP, the ones with a layout first), the candidates not
  // trainable at scale refused, the work shared across the candidates of one structure and the
  // layouts that cannot reach the top kept skipped (rank_by_cluster_time(..., order)). The time
  // limit (--max-seconds) may pass in a check as in the ranking: the ranking is then partial, the
  // rows not checked kept and said so (ClusterRanking::unchecked).
  ClusterRankOrder order;
  order.per_flop = true;
  order.refuse = [&](const ClusterCandidateTime& c, std::size_t) { return not_trainable_on_gpus(c, options); };
  ClusterRanking ranking = rank_by_cluster_time(model, timed.result.baseline, configs, cluster, options, top, order);
  if (dropped != nullptr) {
    for (ClusterRankRefusal& r : ranking.refused) dropped->push_back({configs[r.input_index], std::move(r.reason)});
  }
  std::vector<Candidate> candidates;
  std::vector<StepTime> times;
  std::vector<double> ratios, per_token;
  for (ClusterCandidateTime& c : ranking.candidates) {
    const std::size_t i = c.input_index;
    if (c.found && c.ratio_to_baseline > 1.0) {
      c.differences.insert(c.differences.begin(),
                           fmt::format("slower than the baseline on this cluster: {:.3f}x its seconds per token",
                                       c.ratio_to_baseline));
    }
    candidates.push_back(std::move(timed.result.candidates[i]));
    if (!timed.candidate_times.empty()) times.push_back(std::move(timed.candidate_times[i]));
    ratios.push_back(timed.time_ratios[i]);
    per_token.push_back(i < timed.time_ratios_per_token.size() ? timed.time_ratios_per_token[i] : timed.time_ratios[i]);
  }
  timed.result.candidates = std::move(candidates);
  timed.candidate_times = std::move(times);
  timed.time_ratios = std::move(ratios);
  timed.time_ratios_per_token = std::move(per_token);
  if (!timed.result.candidates.empty()) {
    timed.result.summary.best_max_deviation = timed.result.candidates.front().deviation.max_abs();
  } else {
    timed.result.summary.feasible = false;
    timed.result.summary.message =
        ranking.partial ? "none of the equally matched candidates finished before the time limit fits the GPUs "
                          "given (each one listed with why; the ranking is partial)"
                        : "no equally matched candidate fits the GPUs given on this cluster (each one listed with "
                          "why)";
  }
  return ranking;
}

void add_step_times(TimedMatch& timed, const TimeModel& model, const Workload& workload) {
  for (std::size_t i = timed.candidate_times.size(); i < timed.result.candidates.size(); ++i) {
    timed.candidate_times.push_back(predict_step_time(model, timed.result.candidates[i].config, workload));
  }
}

std::vector<ClusterGridRow> match_grid_on_cluster(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                                  const GridConstraints& constraints, const TimeModel& model,
                                                  const ClusterSpec& cluster, const LayoutSearchOptions& options) {
  return match_grid_on_cluster(grid, loop, workload, constraints, model, cluster,
                               [&options](const ArchConfig&) { return options; });
}

std::vector<ClusterGridRow> match_grid_on_cluster(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                                  const GridConstraints& constraints, const TimeModel& model,
                                                  const ClusterSpec& cluster, const CellSearchOptions& options_of_cell) {
  TimeRankOptions time_options;
  time_options.rank_by = RankBy::time;
  time_options.top_n = std::numeric_limits<int>::max() / 8;  // every equally matched candidate
  time_options.full_step_times = false;                      // the one shown is timed below
  std::vector<ClusterGridRow> rows;
  for (const GridCell& cell : grid.cells) {
    ClusterGridRow out{&cell, {}, std::nullopt, {}, {}, {}};
    bool ready = true;
    try {
      out.options = options_of_cell(cell.baseline);
    } catch (const TimeLimitError&) {
      throw;
    } catch (const Error& e) {
      out.failure = e.text();
      ready = false;
    }
    // Each cell's expert count keeps its baseline's EP on the cluster when free (cluster_experts.hpp).
    MatchConstraints c = cell_constraints(cell, constraints);
    const std::string note =
        ready ? experiments_detail::follow_baseline_expert_parallel(cell.baseline, cell_loop_spec(cell, loop), workload,
                                                                    c, model, cluster, out.options)
                    .note
              : std::string();
    out.match = match_with_time(cell.baseline, cell_loop_spec(cell, loop), workload, c, model, time_options);
    if (!note.empty()) out.match.result.summary.notes.push_back(note);
    if (ready && out.match.result.summary.feasible && !out.match.result.candidates.empty()) {
      try {
        out.ranking = rank_matched_on_cluster(out.match, model, cluster, out.options, 1, &out.dropped);
      } catch (const Error& e) {
        if (e.source() != no_baseline_layout_source) throw;
        out.failure = e.message();
      }
    }
    add_step_times(out.match, model, workload);
    rows.push_back(std::move(out));
  }
  return rows;
}

}  // namespace budget
