#include "budget/match_outcome.hpp"

#include <limits>
#include <string>

#include "budget/error.hpp"
#include "experiments/cluster_experts.hpp"

namespace budget {

namespace {
/// Whether aligned_constraints(c, 8) searches the same space as `c` (the trainable defaults do):
/// the aligned alternative would be the match itself.
bool already_aligned(const MatchConstraints& c) {
  try {
    const MatchConstraints a = aligned_constraints(c, 8);
    const auto same = [](const VariableRange& x, const VariableRange& y) {
      return x.min == y.min && x.max == y.max && x.multiple_of == y.multiple_of;
    };
    return same(a.hidden_size, c.hidden_size) && same(a.head_dim, c.head_dim) && same(a.expert_dim, c.expert_dim) &&
           same(a.shared_expert_dim, c.shared_expert_dim) && same(a.kv_lora_rank, c.kv_lora_rank);
  } catch (const Error&) {
    return false;
  }
}
}  // namespace

MatchOutcome match_outcome(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                           const MatchConstraints& given, const MatchRequest& request) {
  if (request.model == nullptr && request.time_options.rank_by != RankBy::budget) {
    throw Error("ranking by time needs a calibration profile (a time model to predict time from)", "rank_by");
  }
  if (request.model == nullptr && request.time_options.max_time_ratio) {
    throw Error("a time-ratio cap needs a calibration profile (a time model to predict time from)", "max_time_ratio");
  }
  if (request.cluster != nullptr &&
      (request.model == nullptr || request.time_options.rank_by != RankBy::time || request.time_options.max_time_ratio)) {
    throw Error("ranking on a cluster needs a calibration profile and ranking by time, without a time-ratio cap "
                "(the cap is on the single-GPU ratio)",
                "cluster");
  }
  MatchOutcome out;
  // On a cluster the expert count keeps the EP of the baseline's best layout when that costs the
  // match nothing (experiments/cluster_experts.hpp); the note says which.
  MatchConstraints constraints = given;
  std::string expert_note;
  if (request.cluster != nullptr) {
    try {
      expert_note = experiments_detail::follow_baseline_expert_parallel(baseline, loop, workload, constraints,
                                                                        *request.model, *request.cluster,
                                                                        request.cluster_search)
                        .note;
    } catch (const Error& e) {
      if (e.source().empty()) throw e.with_source("cluster");
      throw;
    }
  }
  if (request.model != nullptr) {
    TimeRankOptions options = request.time_options;
    // On a cluster every equally matched candidate is timed there, not only the first `top`.
    options.top_n = request.cluster != nullptr ? std::numeric_limits<int>::max() / 8 : request.top;
    options.full_step_times = request.cluster == nullptr;  // on a cluster: only the rows shown (below)
    out.timed = match_with_time(baseline, loop, workload, constraints, *request.model, options);
    if (!expert_note.empty()) out.timed->result.summary.notes.push_back(expert_note);
    if (request.cluster != nullptr && out.timed->result.summary.feasible) {
      try {
        out.cluster = rank_matched_on_cluster(*out.timed, *request.model, *request.cluster, request.cluster_search,
                                              static_cast<std::size_t>(request.top), &out.cluster_dropped);
      } catch (const Error& e) {
        if (e.source().empty()) throw e.with_source("cluster");
        throw;
      }
    }
    add_step_times(*out.timed, *request.model, workload);
    out.result = out.timed->result;
    out.baseline_fit = one_gpu_fit(baseline, request.model->profile(), workload);
    for (const Candidate& c : out.result.candidates) {
      out.candidate_fits.push_back(one_gpu_fit(c.config, request.model->profile(), workload));
    }
  } else {
    out.result = match(baseline, loop, workload, constraints, request.top);
  }
  out.native_reach = native_reach(baseline, loop, workload, constraints, out.result, request.model,
                                  request.trainable ? &*request.trainable : nullptr);
  if (request.with_aligned_alternative && out.result.summary.feasible && !out.result.candidates.empty() &&
      !already_aligned(constraints)) {
    try {
      out.aligned = aligned_alternative(baseline, loop, workload, constraints);
    } catch (const Error& e) {
      out.aligned = AlignedAlternative{std::nullopt, 8, std::string("not searched: ") + e.message()};
    }
  }
  if (request.explain) {
    out.sensitivity = constraint_sensitivity(baseline, loop, workload, constraints);
    if (request.model != nullptr) {
      TimeRankOptions options = request.time_options;
      options.top_n = request.top;
      out.alignment = alignment_tradeoffs(baseline, loop, workload, constraints, *request.model, options);
    }
  }
  return out;
}

}  // namespace budget
