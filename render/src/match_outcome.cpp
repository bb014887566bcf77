#include "budget_render/match_outcome.hpp"

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "budget_render/budgets.hpp"
#include "budget_render/cluster_rank.hpp"
#include "budget_render/match.hpp"
#include "budget_render/step_time.hpp"

namespace budget::render {
namespace {

nlohmann::ordered_json alignment_json(const std::vector<AlignmentOption>& options) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& a : options) {
    nlohmann::ordered_json o{{"alignment", a.description}, {"feasible", a.feasible}};
    if (a.feasible) {
      o["max_deviation"] = a.max_deviation;
      o["time_ratio"] = a.time_ratio;
      o["pareto"] = a.pareto;
      o["config"] = config_json(a.candidate->config);
    }
    out.push_back(o);
  }
  return out;
}

nlohmann::ordered_json native_reach_json(const NativeReach& n) {
  using json = nlohmann::ordered_json;
  const auto timed = [](double ratio) { return ratio > 0 ? json(ratio) : json(nullptr); };
  return {{"unreachable", n.unreachable},
          {"tolerance", native_match_tolerance},
          {"best_native", n.best_native ? candidate_json(*n.best_native) : json(nullptr)},
          {"best_native_time_ratio", timed(n.best_native_time_ratio)},
          {"best_padded", n.best_padded ? candidate_json(*n.best_padded) : json(nullptr)},
          {"best_padded_time_ratio", timed(n.best_padded_time_ratio)},
          {"best_off_portable", n.best_off_portable ? candidate_json(*n.best_off_portable) : json(nullptr)},
          {"best_off_portable_time_ratio", timed(n.best_off_portable_time_ratio)},
          {"suggested_loop", n.suggested_loop.empty() ? json(nullptr) : json(n.suggested_loop)},
          {"note", n.note}};
}

/// `unfitted`: the fit said of a candidate without a kernel target (the portable set's are native).
std::string reach_row(const char* label, const Candidate& c, double ratio, const char* unfitted = "native") {
  const Deviation& d = c.deviation;
  const std::string fit = c.kernel_fit ? kernel_fit_cell(*c.kernel_fit) : std::string(unfitted);
  return fmt::format("  {}: max dev {:.2f}% (FLOPs {:+.2f}%, params {:+.2f}%, KV {:+.2f}%), hidden {}, heads {}, "
                     "experts {}, {}{}\n",
                     label, 100 * d.max_abs(), 100 * d.flops, 100 * d.params, 100 * d.kv, c.config.hidden_size,
                     heads_text(c.config.attention), ffn_text(c.config.ffn), fit,
                     ratio > 0 ? fmt::format(", time ×{:.3f}", ratio) : std::string());
}

}  // namespace

std::string native_reach_text(const MatchOutcome& m) {
  if (!m.native_reach) return "";
  const NativeReach& n = *m.native_reach;
  std::string out = n.unreachable.empty()
                        ? std::string("row #1 runs padded: native shapes match within the tolerance only as below\n")
                        : fmt::format("the native shapes cannot reach: {}\n", fmt::join(n.unreachable, "; "));
  if (n.best_native) out += reach_row("best native", *n.best_native, n.best_native_time_ratio);
  if (n.best_padded) out += reach_row("best padded", *n.best_padded, n.best_padded_time_ratio);
  if (n.best_off_portable) {
    out += reach_row("best off the portable set (--all-trainable-shapes; name a GPU with --gpu to see how its kernels "
                     "run it)",
                     *n.best_off_portable, n.best_off_portable_time_ratio, "off the portable set");
  }
  return out + "  " + n.note + "\n";
}

nlohmann::ordered_json match_outcome_json(const MatchOutcome& m, const LoopSpec& loop, const Workload& workload,
                                          const MatchRequest& request, bool timings) {
  nlohmann::ordered_json out = match_json(m.result, loop, workload, timings);
  // Issue 43 item 5: what the native shapes reach, where row #1 is padded or misses a budget.
  out["summary"]["native_reach"] = m.native_reach ? native_reach_json(*m.native_reach) : nlohmann::ordered_json(nullptr);
  if (m.aligned) {
    out["aligned_alternative"] =
        m.aligned->candidate ? candidate_json(*m.aligned->candidate) : nlohmann::ordered_json();
    if (!m.aligned->reason.empty()) out["aligned_alternative_reason"] = m.aligned->reason;
  }
  if (m.timed && request.model != nullptr) {
    const TimedMatch& timed = *m.timed;
    const TimeModel& model = *request.model;
    const std::optional<double>& cap = request.time_options.max_time_ratio;
    SaidNotes said;  // each note once in this output, in its order: the candidates' rows, then the baseline
    // The equally matched set's bounds (an object, as without a model) with how many it holds.
    out["summary"]["equally_matched"]["count"] = timed.within_tolerance;
    out["summary"]["timed"] = timed.considered;
    out["time"] = {{"profile", profile_label(model)},
                   {"rank_by", request.time_options.rank_by == RankBy::time ? "time" : "budget"},
                   {"max_time_ratio", cap ? nlohmann::ordered_json(*cap) : nlohmann::ordered_json(nullptr)},
                   {"considered", timed.considered},
                   {"within_tolerance", timed.within_tolerance},
                   {"dropped_by_cap", timed.dropped_by_cap},
                   {"baseline", nullptr}};  // below, after the candidates (which come first in the output)
    const std::optional<TimeAccuracy>& accuracy = request.time_options.accuracy;
    if (accuracy) {
      out["time"]["accuracy"] = time_accuracy_json(*accuracy);
      out["time"]["fastest_ratio_half_width"] = timed.fastest_ratio_half_width;
      out["time"]["equal_within_interval"] = timed.equal_within_interval;
      out["time"]["above_cap_within_interval"] = timed.above_cap_within_interval;
    }
    for (std::size_t i = 0; i < m.result.candidates.size(); ++i) {
      // At matched work (time_rank.hpp), and per token.
      out["candidates"][i]["time_ratio"] = timed.time_ratios[i];
      if (i < timed.time_ratios_per_token.size()) out["candidates"][i]["time_ratio_per_token"] = timed.time_ratios_per_token[i];
      if (accuracy) out["candidates"][i]["time_ratio_interval"] = time_ratio_interval_json(timed.time_ratios[i], *accuracy);
      out["candidates"][i]["time"] = step_time_json(timed.candidate_times[i], model, &said);
      if (i < m.candidate_fits.size()) add_one_gpu_fit_json(out["candidates"][i]["time"], m.candidate_fits[i]);
      if (m.cluster) out["candidates"][i]["cluster"] = cluster_candidate_json(m.cluster->candidates[i]);
    }
    out["time"]["baseline"] = step_time_json(timed.baseline_time, model, &said);
    if (m.baseline_fit) add_one_gpu_fit_json(out["time"]["baseline"], *m.baseline_fit);
  }
  if (m.cluster && request.cluster != nullptr) {
    out["cluster"] = cluster_ranking_json(*m.cluster, *request.cluster, request.cluster_search);
    out["cluster"]["dropped"] = cluster_dropped_json(m.cluster_dropped);
  }
  if (request.explain) out["sensitivity"] = sensitivity_json(m.sensitivity);
  if (request.explain && request.model != nullptr) out["alignment"] = alignment_json(m.alignment);
  return out;
}

std::string one_gpu_fit_lines(const MatchOutcome& m) {
  if (!m.baseline_fit) return "";
  std::string out = "memory: baseline " + m.baseline_fit->note() + "\n";
  for (std::size_t i = 0; i < m.candidate_fits.size(); ++i) {
    out += "memory: #" + std::to_string(i + 1) + " " + m.candidate_fits[i].note() + "\n";
  }
  return out;
}

}  // namespace budget::render
