#pragma once
/// \file
/// Time-aware matching (docs/calibration.md, "Time in matching"): the matcher's candidates with
/// their predicted step time and time ratio to the baseline, optionally ranked by predicted time
/// among the equally matched ones and capped by a time ratio; the grid likewise; and what aligning
/// head_dim, hidden size or expert width to multiples of 8, 16 or 64 costs in budget deviation and
/// saves in time (a Pareto list). Built on match() without changing it: the matcher is asked for a
/// wide list and the list is re-ranked here.
///
/// Thread safety: rank_by_time(), match_with_time(), match_grid_with_time() and
/// alignment_tradeoffs() are reentrant; they only read the (immutable) TimeModel, so one model may
/// serve concurrent calls.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "budget/config.hpp"
#include "budget/grid.hpp"
#include "budget/match.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"

namespace budget {

enum class RankBy {
  budget,  ///< the matcher's ranking (docs/matching.md)
  /// The equally matched candidates (every one the matcher returns: each budget within the
  /// tolerance, docs/matching.md) fastest first at matched work (TimedMatch::time_ratios).
  time,
};

struct TimeRankOptions {
  RankBy rank_by = RankBy::budget;
  /// Drop candidates whose time ratio at matched work (TimedMatch::time_ratios) exceeds this.
  std::optional<double> max_time_ratio;
  int top_n = 5;
  /// The first width asked of match() before re-ranking; match_with_time() widens it until the
  /// whole equally matched set is in the list (every_equally_matched()), however many.
  int search_top_n = 200;
  /// What the predicted times are worth (time_accuracy()); absent: times are taken as exact.
  /// With it, RankBy::time treats the equally matched candidates whose ratio is within the
  /// interval of the fastest one's (ratio ≤ fastest + its ± ) as equal in time and orders them by
  /// match quality (objective, then matcher order), and max_time_ratio drops a candidate only
  /// when its ratio exceeds the cap by more than its ± (ratio − ± > cap): the model cannot tell
  /// the others from the cap.
  std::optional<TimeAccuracy> accuracy;
  /// Build each kept candidate's full StepTime (breakdown, notes) into candidate_times; false leaves
  /// candidate_times empty, for a caller that reorders the list and times only what it shows (the
  /// cluster ranking keeps every equally matched candidate: tens of thousands of them).
  bool full_step_times = true;
};

/// A match with predicted times.
struct TimedMatch {
  MatchResult result;                   ///< candidates in the chosen order, at most top_n
  StepTime baseline_time;
  std::vector<StepTime> candidate_times;  ///< parallel to result.candidates
  /// At matched work, parallel: (seconds per token / the baseline's) / (F / the baseline's F), F
  /// the matched FLOPs per token (1 + deviation.flops): the time the candidate would take for the
  /// baseline's FLOPs, so a candidate never gains by computing less. What ranks and is shown.
  std::vector<double> time_ratios;
  std::vector<double> time_ratios_per_token;  ///< seconds per token / the baseline's, parallel
  std::size_t considered = 0;             ///< candidates timed (match_with_time(): every equally matched one)
  std::size_t within_tolerance = 0;       ///< of them, equally matched (docs/matching.md: every one)
  std::size_t dropped_by_cap = 0;         ///< removed by max_time_ratio
  /// With options.accuracy: the ± of the fastest equally matched ratio, and how many equally
  /// matched candidates are within it of the fastest (equal in time within the model's accuracy,
  /// the fastest included; ordered by match quality).
  double fastest_ratio_half_width = 0;
  std::size_t equal_within_interval = 0;
  /// With options.accuracy and a cap: kept candidates whose ratio is above the cap but within their ±.
  std::size_t above_cap_within_interval = 0;
};

/// Times and re-ranks an existing match result (`wide`: as match() returns it: every candidate
/// equally matched). RankBy::time sorts them by time ratio at matched work (ties: matcher order). A cap that removes every candidate leaves the result
/// infeasible with a message naming the smallest ratio seen. budget::Error for a cap ≤ 0 or top_n < 1.
TimedMatch rank_by_time(MatchResult wide, const TimeModel& model, const Workload& workload,
                        const MatchConstraints& constraints, const TimeRankOptions& options);

/// match() asked for `initial_width` candidates, then for four times as many until the list is
/// shorter than the width asked: then it holds every candidate within constraints.tolerance of the
/// best (the matcher collects all of them while fewer than the width).
MatchResult every_equally_matched(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                                  const MatchConstraints& constraints, int initial_width);

/// every_equally_matched() from options.search_top_n, then rank_by_time(): with RankBy::time the
/// pick is the fastest of the whole equally matched set.
TimedMatch match_with_time(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                           const MatchConstraints& constraints, const TimeModel& model,
                           const TimeRankOptions& options);

/// One grid cell, matched with time.
struct TimedGridRow {
  const GridCell* cell = nullptr;
  TimedMatch match;
};

/// match_grid() with time: each cell's loop and constraints as match_grid() sets them.
std::vector<TimedGridRow> match_grid_with_time(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                               const GridConstraints& constraints, const TimeModel& model,
                                               const TimeRankOptions& options);

/// One alignment requirement and what it gives.
struct AlignmentOption {
  std::string description;  ///< "as given", "head_dim multiple of 16", "all three multiple of 64", ...
  bool feasible = false;
  double max_deviation = 0;  ///< of the chosen candidate
  double time_ratio = 0;     ///< predicted seconds per token / the baseline's
  std::optional<Candidate> candidate;
  bool pareto = false;       ///< no other option has both a smaller deviation and a smaller time ratio
};

/// For the constraints as given, then head_dim, hidden_size, expert_dim and all three required to
/// be multiples of 8, 16 and 64 (each combined with its existing multiple by lcm): the candidate
/// chosen with `options` (rank_by time picks the fastest equally matched one) and its
/// (max deviation, time ratio); pareto marks the options no other beats on both.
std::vector<AlignmentOption> alignment_tradeoffs(const ArchConfig& baseline, const LoopSpec& loop,
                                                 const Workload& workload, const MatchConstraints& constraints,
                                                 const TimeModel& model, const TimeRankOptions& options);

}  // namespace budget
