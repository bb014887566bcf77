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
#include "search/structure_share.hpp"

namespace budget::detail {
namespace {

constexpr double unbounded_seconds = std::numeric_limits<double>::infinity();

/// The `top` smallest keys of the admitted candidates; θ is the largest of them once there are
/// `top`. Thread-safe.
class TopKeys {
 public:
  explicit TopKeys(std::size_t top) : top_(top) {}

  double threshold() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (top_ == 0) return -unbounded_seconds;
    return keys_.size() < top_ ? unbounded_seconds : keys_.top();
  }
  void add(double key) {
    const std::lock_guard<std::mutex> lock(mutex_);
    keys_.push(key);
    if (keys_.size() > top_) keys_.pop();
  }

 private:
  std::size_t top_;
  mutable std::mutex mutex_;
  std::priority_queue<double> keys_;  // a max-heap of at most top_
};

/// Whether a search run under threshold θ established the candidate's best layout (above).
bool established_under(const ClusterCandidateTime& t, double threshold) {
  if (!std::isfinite(threshold)) return threshold > 0.0;
  return t.found && t.best.time.seconds_per_step <= threshold + 1e-9 * std::abs(threshold);
}

struct SharedRankOutcome {
  ClusterCandidateTime time;
  double flops = 0.0;  // F, for the per-FLOP order
  bool finished = false;
  bool established = false;
  bool asked = false;  // ClusterRankOrder::refuse was asked (its answer in `refusal`)
  std::string refusal;
};

/// The key of the order: seconds per step, or GPU-seconds per training FLOP (add_single_gpu_figures()'s
/// gpu_seconds_per_flop, the same double; 0 as there when F is not positive).
double rank_key(const SharedRankOutcome& o, bool per_flop) {
  if (!per_flop) return o.time.best.time.seconds_per_step;
  return o.flops > 0.0 ? o.time.gpu_seconds_per_token / o.flops : 0.0;
}

/// The step time at which a candidate of F `flops` reaches the key θ: θ itself, or for the per-FLOP
/// order θ·F/N GPU-seconds per token times the tokens of a step (every layout's: the global batch).
double step_threshold(double theta, double flops, const LayoutSearchOptions& options, bool per_flop) {
  if (!per_flop || !std::isfinite(theta)) return theta;
  if (!(flops > 0.0)) return unbounded_seconds;
  return theta * flops / static_cast<double>(options.gpus) * static_cast<double>(options.global_batch_tokens);
}

/// True when outcome `a` ranks before `b`: found first, then by the order's key (for the per-FLOP
/// order, ties by seconds per token), then in the order given.
bool ranks_first(const SharedRankOutcome& a, std::size_t ia, const SharedRankOutcome& b, std::size_t ib,
                 bool per_flop) {
  const ClusterCandidateTime &x = a.time, &y = b.time;
  if (x.found != y.found) return x.found;
  if (x.found && per_flop) {
    const double kx = rank_key(a, true), ky = rank_key(b, true);
    if (kx != ky) return kx < ky;
  }
  if (x.seconds_per_token != y.seconds_per_token) return x.seconds_per_token < y.seconds_per_token;
  return ia < ib;
}

/// Asks `refuse` of a candidate in the final walk, unless the time limit stopped the ranking (before
/// or now): false when the candidate is to be skipped unasked (one with no layout after the limit).
bool ask_in_walk(SharedRankOutcome& o, std::size_t i, const ClusterRankOrder& order, ClusterRanking& out) {
  if (!out.partial) {
    try {
      o.refusal = order.refuse(o.time, i);
      o.asked = true;
      return true;
    } catch (const TimeLimitError& e) {
      out.partial = true;
      out.stopped_by = e.text();
    }
  }
  if (!o.time.found) return false;
  out.unchecked.push_back(i);
  return true;
}

/// The established candidates in the full ranking's order, walked with `refuse` until `top` are
/// kept (the refused ones before then into out.refused), with their single-GPU figures and their
/// comparison with the baseline.
std::vector<ClusterCandidateTime> established_top(std::vector<SharedRankOutcome>& outcomes, std::size_t top,
                                                  const ClusterRankOrder& order, const TimeModel& model,
                                                  const std::vector<ArchConfig>& candidates,
                                                  const LayoutSearchOptions& options, ClusterRanking& out) {
  std::vector<std::size_t> ranked;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].finished && outcomes[i].established) ranked.push_back(i);
  }
  std::sort(ranked.begin(), ranked.end(), [&](std::size_t a, std::size_t b) {
    return ranks_first(outcomes[a], a, outcomes[b], b, order.per_flop);
  });
  std::vector<ClusterCandidateTime> kept;
  for (const std::size_t i : ranked) {
    if (kept.size() >= top) break;
    SharedRankOutcome& o = outcomes[i];
    if (order.refuse && !o.asked && !ask_in_walk(o, i, order, out)) continue;
    if (!o.refusal.empty()) {
      out.refused.push_back({i, o.refusal});
      continue;
    }
    ClusterCandidateTime t = std::move(o.time);
    t.input_index = i;
    add_single_gpu_figures(t, model, candidates[i], options);
    compare_with_baseline(t, out.baseline);
    kept.push_back(std::move(t));
  }
  return kept;
}

}  // namespace

ClusterRanking rank_top_shared(const TimeModel& model, const ArchConfig& baseline,
                               const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                               const LayoutSearchOptions& options, std::size_t top, const ClusterRankOrder& order) {
  StructureShares shares;
  ClusterRanking out;
  out.baseline = baseline_on_cluster(model, baseline, cluster, options, SearchSharing{&shares.of(baseline)});
  std::vector<SharedRankOutcome> outcomes(candidates.size());
  TopKeys best(top);
  std::atomic<std::size_t> finished_count{0};
  constexpr std::string_view progress_name = "cluster ranking (matched candidates at their best layouts)";
  const auto search = [&](std::size_t i) {
    SharedRankOutcome& o = outcomes[i];
    if (order.per_flop) o.flops = training_flops_per_token(candidates[i], options);
    const double threshold = step_threshold(best.threshold(), o.flops, options, order.per_flop);
    o.time = best_layout_on_cluster(model, candidates[i], cluster, options,
                                    SearchSharing{&shares.of(candidates[i]), threshold});
    o.established = established_under(o.time, threshold);
    o.finished = true;
    // A candidate past the top-th admitted one cannot take a row, nor come before the last row kept.
    if (o.established && o.time.found && rank_key(o, order.per_flop) <= best.threshold()) {
      if (order.refuse) {
        if (order.per_flop) {
          o.time.training_flops_per_token = o.flops;
          o.time.gpu_seconds_per_flop = rank_key(o, true);
        }
        o.refusal = order.refuse(o.time, i);  // the time limit may stop it here: `o` stays unasked
        o.asked = true;
      }
      if (o.refusal.empty()) best.add(rank_key(o, order.per_flop));
    }
    // From the worker too (parallel_for reports from the caller every 200 ms): the time limit is
    // checked as each candidate finishes, however quick the candidates are. Finished ones are kept.
    report_progress(progress_name, finished_count.fetch_add(1) + 1, candidates.size());
  };
  try {
    parallel_for(candidates.size(), thread_count(options.threads, candidates.size()), progress_name, search);
    report_progress(progress_name, candidates.size(), candidates.size());
  } catch (const TimeLimitError& e) {
    out.partial = true;
    out.stopped_by = e.text();
  }
  out.given = candidates.size();
  for (const SharedRankOutcome& o : outcomes) {
    out.finished += o.finished ? 1 : 0;
    out.searched += o.finished && o.established ? 1 : 0;
  }
  out.candidates = established_top(outcomes, top, order, model, candidates, options, out);
  return out;
}

}  // namespace budget::detail
