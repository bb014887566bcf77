// Time-aware matching: re-ranking the matcher's candidates by predicted time, the time-ratio cap,
// the grid with time, and the alignment trade-offs (docs/calibration.md, "Time in matching").

#include "budget/time_rank.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/kernel_shapes.hpp"

namespace budget {

namespace {

// One timed candidate of rank_by_time().
struct TimedRankEntry {
  std::size_t order;  // matcher rank
  bool equal;         // equally matched (every candidate of a match is)
  double seconds_per_token;
  double ratio;            // at matched work: time per token / the baseline's, over F / the baseline's F
  double per_token_ratio;  // time per token / the baseline's
  bool time_equal = false;  // within the interval of the fastest equally matched ratio
};

// budget::Error for top_n < 1 or a time-ratio cap that is not finite and > 0.
void check_time_rank_options(const TimeRankOptions& options) {
  if (options.top_n < 1) throw Error(fmt::format("top {} is not allowed; allowed: ≥ 1", options.top_n), "top");
  if (options.max_time_ratio && !(*options.max_time_ratio > 0 && std::isfinite(*options.max_time_ratio))) {
    throw Error(fmt::format("value {} is not allowed; allowed: a time ratio > 0", *options.max_time_ratio),
                "max_time_ratio");
  }
}

// The ± of a predicted time ratio under options.accuracy (0 without it).
double time_rank_half_width(const TimeRankOptions& options, double ratio) {
  return options.accuracy ? options.accuracy->ratio_half_width(ratio) : 0.0;
}

// Times every candidate (matcher order) and keeps those the cap allows: a candidate is dropped
// when ratio − ±(ratio) > max_time_ratio. The ratio is at matched work (time_rank.hpp): the time
// per token over the baseline's, divided by the matched F over the baseline's (1 + dF), so that a
// candidate that computes less gains nothing from it. Every candidate of a match is equally
// matched (docs/matching.md, "Equally matched"). Counts within_tolerance and dropped_by_cap into
// `out`; `smallest_ratio` is the smallest ratio seen, dropped candidates included.
std::vector<TimedRankEntry> timed_rank_entries(const std::vector<Candidate>& candidates, const TimeModel& model,
                                               const Workload& workload, const MatchConstraints& constraints,
                                               const TimeRankOptions& options, TimedMatch& out,
                                               double& smallest_ratio) {
  std::vector<TimedRankEntry> entries;
  (void)constraints;
  const auto tokens = static_cast<double>(workload.tokens_per_step);
  smallest_ratio = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    // The indexed path (predict_step_seconds(): predict_step_time()'s seconds, bit for bit); the
    // full StepTime, with its breakdown and notes, only for the candidates kept.
    const double seconds_per_token = predict_step_seconds(model, candidates[i].config, workload) / tokens;
    const double per_token_ratio = seconds_per_token / out.baseline_time.seconds_per_token;
    const double ratio = per_token_ratio / (1.0 + candidates[i].deviation.flops);
    const bool equal = true;
    if (equal) ++out.within_tolerance;
    smallest_ratio = std::min(smallest_ratio, ratio);
    if (options.max_time_ratio && ratio - time_rank_half_width(options, ratio) > *options.max_time_ratio) {
      ++out.dropped_by_cap;
      continue;
    }
    entries.push_back({i, equal, seconds_per_token, ratio, per_token_ratio});
  }
  return entries;
}

// RankBy::time order: equally matched first, fastest at matched work first; then the rest in
// matcher order (stable on ties). With options.accuracy, the equally matched entries within the ±
// of the fastest come first, in matcher order; sets fastest_ratio_half_width and
// equal_within_interval in `out`.
void sort_entries_by_time(std::vector<TimedRankEntry>& entries, const TimeRankOptions& options, TimedMatch& out) {
  std::stable_sort(entries.begin(), entries.end(), [](const TimedRankEntry& a, const TimedRankEntry& b) {
    if (a.equal != b.equal) return a.equal;
    if (a.equal) return a.ratio < b.ratio;
    return a.order < b.order;
  });
  if (!options.accuracy || entries.empty() || !entries.front().equal) return;
  // Equal in time within the model's accuracy: ratio ≤ fastest + ±(fastest).
  const double fastest = entries.front().ratio;
  out.fastest_ratio_half_width = time_rank_half_width(options, fastest);
  for (auto& e : entries) e.time_equal = e.equal && e.ratio <= fastest + out.fastest_ratio_half_width;
  const auto band_end =
      std::stable_partition(entries.begin(), entries.end(), [](const TimedRankEntry& e) { return e.time_equal; });
  out.equal_within_interval = static_cast<std::size_t>(band_end - entries.begin());
  // Equal in time: the matcher's order decides (its row order: nearest the proportions first by
  // default), not the deviations, which are equal within the tolerance.
  std::stable_sort(entries.begin(), band_end,
                   [](const TimedRankEntry& a, const TimedRankEntry& b) { return a.order < b.order; });
}

// Keeps the first top_n entries (with their full StepTime) in out.result, then sets the summary:
// infeasible with a message when the cap left none, best objective and deviation, and row order.
void keep_ranked_entries(const std::vector<TimedRankEntry>& entries, const std::vector<Candidate>& candidates,
                         const TimeModel& model, const Workload& workload, const TimeRankOptions& options,
                         double smallest_ratio, TimedMatch& out) {
  const std::size_t keep = std::min<std::size_t>(entries.size(), static_cast<std::size_t>(options.top_n));
  for (std::size_t i = 0; i < keep; ++i) {
    out.result.candidates.push_back(candidates[entries[i].order]);
    if (options.full_step_times) {
      out.candidate_times.push_back(predict_step_time(model, out.result.candidates.back().config, workload));
    }
    out.time_ratios.push_back(entries[i].ratio);
    out.time_ratios_per_token.push_back(entries[i].per_token_ratio);
    if (options.max_time_ratio && entries[i].ratio > *options.max_time_ratio) ++out.above_cap_within_interval;
  }
  if (out.result.candidates.empty() && out.result.summary.feasible) {
    out.result.summary.feasible = false;
    out.result.summary.message =
        fmt::format("no matched candidate is within the time-ratio cap {:.3f}; the fastest of the {} considered "
                    "has predicted time ratio {:.3f}",
                    *options.max_time_ratio, out.considered, smallest_ratio);
  }
  if (!out.result.candidates.empty()) {
    out.result.summary.best_max_deviation = out.result.candidates.front().deviation.max_abs();
  }
  if (options.rank_by == RankBy::time) {
    out.result.summary.order =
        out.equal_within_interval > 0 ? RowOrder::predicted_time_within_accuracy : RowOrder::predicted_time;
  }
}

}  // namespace

TimedMatch rank_by_time(MatchResult wide, const TimeModel& model, const Workload& workload,
                        const MatchConstraints& constraints, const TimeRankOptions& options) {
  check_time_rank_options(options);
  TimedMatch out;
  out.baseline_time = predict_step_time(model, wide.baseline, workload);
  std::vector<Candidate> candidates = std::move(wide.candidates);
  out.result = std::move(wide);
  out.considered = candidates.size();

  double smallest_ratio = 0;
  std::vector<TimedRankEntry> entries =
      timed_rank_entries(candidates, model, workload, constraints, options, out, smallest_ratio);
  if (options.rank_by == RankBy::time) sort_entries_by_time(entries, options, out);
  keep_ranked_entries(entries, candidates, model, workload, options, smallest_ratio, out);
  return out;
}

MatchResult every_equally_matched(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                                  const MatchConstraints& constraints, int initial_width) {
  // The collecting pass keeps every point within the tolerance while there are fewer than the
  // width asked for (it trims a structure's points or prunes structures only beyond the width), so
  // a list shorter than the width is the whole equally matched set. It is asked for the widest
  // list at once: a narrower pass costs no less once the set is larger than its width (it visits
  // the same points, then is repeated wider), and no more when the set is smaller (it collects the
  // same points). (Until issue 35 it asked `initial_width` first, then four times wider each time.)
  (void)initial_width;
  constexpr int max_width = std::numeric_limits<int>::max() / 4;
  return match(baseline, loop, workload, constraints, max_width);
}

TimedMatch match_with_time(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                           const MatchConstraints& constraints, const TimeModel& model,
                           const TimeRankOptions& options) {
  const int initial = std::max(options.search_top_n, options.top_n);
  return rank_by_time(every_equally_matched(baseline, loop, workload, constraints, initial), model, workload,
                      constraints, options);
}

std::vector<TimedGridRow> match_grid_with_time(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                               const GridConstraints& constraints, const TimeModel& model,
                                               const TimeRankOptions& options) {
  std::vector<TimedGridRow> rows;
  rows.reserve(grid.cells.size());
  for (const GridCell& cell : grid.cells) {
    rows.push_back({&cell, match_with_time(cell.baseline, cell_loop_spec(cell, loop), workload,
                                           cell_constraints(cell, constraints), model, options)});
  }
  return rows;
}


std::vector<AlignmentOption> alignment_tradeoffs(const ArchConfig& baseline, const LoopSpec& loop,
                                                 const Workload& workload, const MatchConstraints& constraints,
                                                 const TimeModel& model, const TimeRankOptions& options) {
  struct Variant {
    std::string description;
    MatchConstraints constraints;
  };
  std::vector<Variant> variants{{"as given", constraints}};
  const bool dense = !baseline.ffn.is_moe();
  for (const std::int64_t m : {8, 16, 64}) {
    MatchConstraints h = constraints, d = constraints, e = constraints, all = constraints;
    h.head_dim = aligned_range(h.head_dim, m);
    d.hidden_size = aligned_range(d.hidden_size, m);
    e.expert_dim = aligned_range(e.expert_dim, m);
    all.head_dim = aligned_range(all.head_dim, m);
    all.hidden_size = aligned_range(all.hidden_size, m);
    all.expert_dim = aligned_range(all.expert_dim, m);
    variants.push_back({fmt::format("head_dim multiple of {}", m), h});
    variants.push_back({fmt::format("hidden_size multiple of {}", m), d});
    variants.push_back({fmt::format("{} multiple of {}", dense ? "dense_dim" : "expert_dim", m), e});
    variants.push_back({fmt::format("all three multiples of {}", m), all});
  }
  TimeRankOptions one = options;
  one.top_n = 1;
  one.max_time_ratio.reset();
  std::vector<AlignmentOption> out;
  for (const auto& v : variants) {
    AlignmentOption o;
    o.description = v.description;
    try {
      const TimedMatch m = match_with_time(baseline, loop, workload, v.constraints, model, one);
      if (m.result.summary.feasible && !m.result.candidates.empty()) {
        o.feasible = true;
        o.candidate = m.result.candidates.front();
        o.max_deviation = o.candidate->deviation.max_abs();
        o.time_ratio = m.time_ratios.front();
      }
    } catch (const TimeLimitError&) {
      throw;  // the time limit of long work (budget/progress.hpp) stops everything
    } catch (const Error&) {
      o.feasible = false;  // an alignment that empties a range: no candidate
    }
    out.push_back(std::move(o));
  }
  for (auto& a : out) {
    if (!a.feasible) continue;
    a.pareto = std::none_of(out.begin(), out.end(), [&](const AlignmentOption& b) {
      return b.feasible && b.max_deviation <= a.max_deviation && b.time_ratio <= a.time_ratio &&
             (b.max_deviation < a.max_deviation || b.time_ratio < a.time_ratio);
    });
  }
  return out;
}

}  // namespace budget
