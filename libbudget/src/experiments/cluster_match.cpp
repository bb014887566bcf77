// Matched candidates ranked on a cluster (budget/cluster_match.hpp).
#include "budget/cluster_match.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "budget/training_memory.hpp"
#include "budget/error.hpp"

namespace budget {

namespace {

/// The fewest GPUs the baseline fits on (smallest_fitting_layout(), up to 4096, the ranking's recipe
/// held), 0 when none.
std::int64_t baseline_min_gpus(const ArchConfig& baseline, const ClusterSpec& cluster, const LayoutSearchOptions& o) {
  const SmallestLayout s = smallest_fitting_layout(baseline, cluster, o.seq_len, 4096, &o.recipe);
  return s.found ? s.memory.layout.gpus : 0;
}

/// Why `c` is no candidate at scale, or empty: no layout on the cluster's N GPUs fits it, or its
/// fewest-GPU layout needs more than twice `baseline_gpus` (0: not checked).
std::string not_trainable_at_scale(const ClusterCandidateTime& c, const ArchConfig& config, const ClusterSpec& cluster,
                                   const LayoutSearchOptions& options, std::int64_t baseline_gpus) {
  if (!c.found) {
    return fmt::format("no layout of the search space on {} GPUs fits the GPU's memory", options.gpus);
  }
  if (baseline_gpus < 1) return {};
  if (!smallest_fitting_layout(config, cluster, options.seq_len, 2 * baseline_gpus, &options.recipe).found) {
    return fmt::format("needs more than {} GPUs to fit memory, twice the {} the baseline fits on", 2 * baseline_gpus,
                       baseline_gpus);
  }
  return {};
}

}  // namespace

ClusterRanking rank_matched_on_cluster(TimedMatch& timed, const TimeModel& model, const ClusterSpec& cluster,
                                       const LayoutSearchOptions& options, std::size_t top,
                                       std::vector<ClusterDropped>* dropped) {
  const std::size_t equal = std::min(timed.within_tolerance, timed.result.candidates.size());
  std::vector<ArchConfig> configs;
  configs.reserve(equal);
  for (std::size_t i = 0; i < equal; ++i) configs.push_back(timed.result.candidates[i].config);
  // Every candidate ranked (no cut at `top`: the order below is at matched work, and drops may reach
  // past `top`), with the work shared across the candidates of one structure.
  ClusterRanking ranking = rank_by_cluster_time(model, timed.result.baseline, configs, cluster, options, configs.size());
  // At matched work: GPU-seconds per training FLOP, the ones with a layout first (ties: as ranked).
  std::stable_sort(ranking.candidates.begin(), ranking.candidates.end(),
                   [](const ClusterCandidateTime& a, const ClusterCandidateTime& b) {
                     if (a.found != b.found) return a.found;
                     return a.found && a.gpu_seconds_per_flop < b.gpu_seconds_per_flop;
                   });
  // The time limit (--max-seconds) may pass during the checks below as during the ranking: the rows
  // checked so far stay, the others found are kept unchecked and said so, the ranking is partial.
  bool stopped = ranking.partial;
  const auto stop = [&](const Error& e) {
    if (e.path() != "time limit") throw e;
    stopped = true;
    if (!ranking.partial) ranking.stopped_by = e.text();
    ranking.partial = true;
  };
  std::int64_t baseline_gpus = 0;
  try {
    if (!stopped) baseline_gpus = baseline_min_gpus(timed.result.baseline, cluster, options);
  } catch (const Error& e) {
    stop(e);
  }
  std::vector<ClusterCandidateTime> kept;
  std::vector<Candidate> candidates;
  std::vector<StepTime> times;
  std::vector<double> ratios, per_token;
  for (ClusterCandidateTime& c : ranking.candidates) {
    if (kept.size() >= top) break;
    const std::size_t i = c.input_index;
    std::string why;
    if (!stopped) {
      try {
        why = not_trainable_at_scale(c, configs[i], cluster, options, baseline_gpus);
      } catch (const Error& e) {
        stop(e);
      }
    }
    if (stopped && why.empty()) {
      if (!c.found) continue;
      c.differences.push_back(fmt::format("not checked against twice the baseline's GPUs: {}", ranking.stopped_by));
    }
    if (!why.empty()) {
      if (dropped != nullptr) dropped->push_back({configs[i], std::move(why)});
      continue;
    }
    candidates.push_back(std::move(timed.result.candidates[i]));
    if (!timed.candidate_times.empty()) times.push_back(std::move(timed.candidate_times[i]));
    ratios.push_back(timed.time_ratios[i]);
    per_token.push_back(i < timed.time_ratios_per_token.size() ? timed.time_ratios_per_token[i] : timed.time_ratios[i]);
    kept.push_back(std::move(c));
  }
  ranking.candidates = std::move(kept);
  timed.result.candidates = std::move(candidates);
  timed.candidate_times = std::move(times);
  timed.time_ratios = std::move(ratios);
  timed.time_ratios_per_token = std::move(per_token);
  if (!timed.result.candidates.empty()) {
    timed.result.summary.best_max_deviation = timed.result.candidates.front().deviation.max_abs();
  } else {
    timed.result.summary.feasible = false;
    timed.result.summary.message = "no equally matched candidate is trainable at scale on this cluster (each one "
                                   "dropped, see the reasons)";
  }
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
  return match_grid_on_cluster(grid, loop, workload, constraints_path, model, cluster,
                               [&options](const ArchConfig&) { return options; });
}

std::vector<ClusterGridRow> match_grid_on_cluster(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                                  const std::string& constraints_path, const TimeModel& model,
                                                  const ClusterSpec& cluster, const CellSearchOptions& options_of_cell) {
  TimeRankOptions time_options;
  time_options.rank_by = RankBy::time;
  time_options.top_n = std::numeric_limits<int>::max() / 8;  // every equally matched candidate
  time_options.full_step_times = false;                      // the one shown is timed below
  std::vector<ClusterGridRow> rows;
  for (TimedGridRow& row : match_grid_with_time(grid, loop, workload, constraints_path, model, time_options)) {
    ClusterGridRow out{row.cell, std::move(row.match), std::nullopt, {}, {}, {}};
    bool ready = true;
    try {
      out.options = options_of_cell(out.match.result.baseline);
    } catch (const Error& e) {
      if (e.path() == "time limit") throw;
      out.failure = e.text();
      ready = false;
    }
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
