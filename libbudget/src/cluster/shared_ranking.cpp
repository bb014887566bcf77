// The cluster ranking with shared work (docs/cluster.md, "Shared work across candidates"): the
// candidates' layout searches share their structure's part times and stage executions, and each
// search is told the top-th best step time found so far, above which no layout of it can matter.
//
// Why the result is exact. A search skips a layout whose compute bound exceeds θ(1 + 10⁻⁹), θ the
// top-th best step time among the candidates established so far (+∞ until `top` are). A step time
// is at least its bound (layout_search.hpp), so every skipped layout is slower than θ(1 + 10⁻⁹).
// If the search's best s is at most θ(1 + 10⁻⁹), no skipped layout could beat or tie it, and the
// layouts it did visit are visited in the order of the full search up to the point where that one
// stops (sorted by bound, stopping at the first bound above the best found): s and its layout are
// exactly the full search's (*established*). Otherwise the candidate's best is above θ(1 + 10⁻⁹):
// `top` established candidates are faster by more than rounding, so it is not in the top (nor is a
// candidate with no layout fitting: those rank last). θ only falls as candidates are established,
// so a candidate of the final top, at most the final θ, is established whenever it is searched:
// the top of the established ones is the top of all, ties to the earlier given as in the full
// ranking, whatever the order in which threads finish.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <queue>
#include <string_view>
#include <vector>

#include "budget/error.hpp"
#include "budget/progress.hpp"
#include "base/parallel_for.hpp"
#include "cluster/structure_share.hpp"

namespace budget::detail {
namespace {

constexpr double unbounded_seconds = std::numeric_limits<double>::infinity();

/// The `top` smallest step times of the established candidates; θ is the largest of them once
/// there are `top`. Thread-safe.
class TopStepTimes {
 public:
  explicit TopStepTimes(std::size_t top) : top_(top) {}

  double threshold() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (top_ == 0) return -unbounded_seconds;
    return steps_.size() < top_ ? unbounded_seconds : steps_.top();
  }
  void add(double seconds_per_step) {
    const std::lock_guard<std::mutex> lock(mutex_);
    steps_.push(seconds_per_step);
    if (steps_.size() > top_) steps_.pop();
  }

 private:
  std::size_t top_;
  mutable std::mutex mutex_;
  std::priority_queue<double> steps_;  // a max-heap of at most top_
};

/// Whether a search run under threshold θ established the candidate's best layout (above).
bool established_under(const ClusterCandidateTime& t, double threshold) {
  if (!std::isfinite(threshold)) return threshold > 0.0;
  return t.found && t.best.time.seconds_per_step <= threshold + 1e-9 * std::abs(threshold);
}

struct SharedRankOutcome {
  ClusterCandidateTime time;
  bool finished = false;
  bool established = false;
};

/// The established candidates in the full ranking's order (found ones by seconds per token, then
/// those with none, each group in the order given), cut to `top`, with their single-GPU figures
/// and their comparison with the baseline.
std::vector<ClusterCandidateTime> established_top(std::vector<SharedRankOutcome>& outcomes, std::size_t top, const TimeModel& model,
                                         const std::vector<ArchConfig>& candidates,
                                         const LayoutSearchOptions& options, const ClusterCandidateTime& baseline) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].finished && outcomes[i].established) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const ClusterCandidateTime &x = outcomes[a].time, &y = outcomes[b].time;
    if (x.found != y.found) return x.found;
    return x.seconds_per_token < y.seconds_per_token;
  });
  order.resize(std::min(order.size(), top));
  std::vector<ClusterCandidateTime> out;
  for (const std::size_t i : order) {
    ClusterCandidateTime t = std::move(outcomes[i].time);
    t.input_index = i;
    add_single_gpu_figures(t, model, candidates[i], options);
    compare_with_baseline(t, baseline);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

ClusterRanking rank_top_shared(const TimeModel& model, const ArchConfig& baseline,
                               const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                               const LayoutSearchOptions& options, std::size_t top) {
  StructureShares shares;
  ClusterRanking out;
  out.baseline = baseline_on_cluster(model, baseline, cluster, options, SearchSharing{&shares.of(baseline)});
  std::vector<SharedRankOutcome> outcomes(candidates.size());
  TopStepTimes best(top);
  std::atomic<std::size_t> finished_count{0};
  constexpr std::string_view progress_name = "cluster ranking (matched candidates at their best layouts)";
  const auto search = [&](std::size_t i) {
    const double threshold = best.threshold();
    SharedRankOutcome o;
    o.time = best_layout_on_cluster(model, candidates[i], cluster, options,
                                    SearchSharing{&shares.of(candidates[i]), threshold});
    o.established = established_under(o.time, threshold);
    if (o.established && o.time.found) best.add(o.time.best.time.seconds_per_step);
    o.finished = true;
    outcomes[i] = std::move(o);
    // From the worker too (parallel_for reports from the caller every 200 ms): the time limit is
    // checked as each candidate finishes, however quick the candidates are. Finished ones are kept.
    report_progress(progress_name, finished_count.fetch_add(1) + 1, candidates.size());
  };
  try {
    parallel_for(candidates.size(), thread_count(options.threads, candidates.size()), progress_name, search);
    report_progress(progress_name, candidates.size(), candidates.size());
  } catch (const Error& e) {
    if (e.path() != "time limit") throw;
    out.partial = true;
    out.stopped_by = e.text();
  }
  out.given = candidates.size();
  for (const SharedRankOutcome& o : outcomes) {
    out.finished += o.finished ? 1 : 0;
    out.searched += o.finished && o.established ? 1 : 0;
  }
  out.candidates = established_top(outcomes, top, model, candidates, options, out.baseline);
  return out;
}

}  // namespace budget::detail
