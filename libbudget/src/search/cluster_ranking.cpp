// Matched candidates ranked by cluster time (docs/cluster.md, "Matched candidates by cluster time"):
// each config at its own best layout (search_layouts()), its ratio to the baseline beside the
// single-GPU one, and what makes the two differ. rank_by_cluster_time() with share_work searches the
// candidates with shared caches and prunes those proven slower than the top-th (shared_ranking.cpp);
// rank_each_on_its_own() below is the reference it is tested against and measured beside.
#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "budget/accounting.hpp"
#include "budget/error.hpp"
#include "budget/layout_search.hpp"
#include "budget/progress.hpp"
#include "budget/workload.hpp"
#include "base/checked_math.hpp"
#include "base/parallel_for.hpp"
#include "layout/dispatcher_limits.hpp"
#include "step_time/step_compute.hpp"
#include "search/structure_share.hpp"

namespace budget {

namespace {

double moe_executions(const ArchConfig& c) {
  double n = 0.0;
  for (const std::int64_t layer : executed_layer_sequence(c)) {
    if (c.ffn.is_moe() && layer > c.ffn.first_dense_layers) n += 1.0;
  }
  return n;
}

/// Seconds per token of a time component of the best layout ("compute", communication, "bubble").
double component_per_token(const ClusterCandidateTime& c, bool communication) {
  double s = 0.0;
  for (const TimeComponent& part : c.best.time.by_component) {
    if (part.overlapped) continue;
    const bool is_comm = part.name != "compute" && part.name != "bubble";
    if (is_comm == communication) s += part.seconds;
  }
  return s / static_cast<double>(c.best.time.tokens_per_step);
}

/// A component's exposed seconds per token, and its collective's calls per token and mean bytes a
/// call on one GPU of the slowest stage (the by_component key is "<term>_<collective>").
struct ComponentFigures {
  double seconds_per_token = 0.0;
  double calls_per_token = 0.0;
  double bytes_per_call = 0.0;
};

std::map<std::string, ComponentFigures> component_figures(const ClusterCandidateTime& c) {
  std::map<std::string, ComponentFigures> out;
  const double tokens = static_cast<double>(c.best.time.tokens_per_step);
  for (const TimeComponent& part : c.best.time.by_component) {
    out[part.name].seconds_per_token += part.overlapped ? 0.0 : part.seconds / tokens;
  }
  const auto slowest = static_cast<std::size_t>(c.best.time.slowest_stage);
  if (slowest < c.best.time.communication.size()) {
    std::map<std::string, double> bytes;  // Σ size · calls
    for (const CommTerm& term : c.best.time.communication[slowest].terms) {
      const std::string key = fmt::format("{}_{}", term.name, to_string(term.kind));
      out[key].calls_per_token += term.calls_per_step / tokens;
      bytes[key] += term.size_bytes * term.calls_per_step;
    }
    for (const auto& [key, total] : bytes) {
      ComponentFigures& f = out[key];
      f.bytes_per_call = f.calls_per_token > 0.0 ? total / (f.calls_per_token * tokens) : 0.0;
    }
  }
  return out;
}

std::vector<std::string> component_order(const ClusterCandidateTime& candidate, const ClusterCandidateTime& baseline) {
  std::vector<std::string> names;
  for (const ClusterCandidateTime* c : {&baseline, &candidate}) {
    for (const TimeComponent& part : c->best.time.by_component) {
      if (std::find(names.begin(), names.end(), part.name) == names.end()) names.push_back(part.name);
    }
  }
  return names;
}

/// A candidate's figure x against the baseline's y as the ranking prints every change: the relative
/// change x/y − 1 in whole percent ("+50%"), "new" where the baseline has none (y = 0). One wording
/// for call counts everywhere (issue 44 §5): "+50% calls" in a component's line and "+50% all-to-all
/// calls per token" in the MoE line both come from here.
std::string change_text(double x, double y) {
  return y > 0.0 ? fmt::format("{:+.0f}%", 100.0 * (x / y - 1.0)) : std::string("new");
}

/// "ep_all_to_all: +24% per token (+50% calls, -17% bytes a call); +0.031 of the ratio".
std::string component_text(const RatioComponent& c) {
  std::string out = fmt::format("{}: {} per token", c.name,
                                c.seconds_per_token == 0.0 && c.baseline_seconds_per_token > 0.0
                                    ? std::string("none")
                                    : change_text(c.seconds_per_token, c.baseline_seconds_per_token));
  if (c.calls_per_token > 0.0 && c.baseline_calls_per_token > 0.0) {
    out += fmt::format(" ({} calls, {} bytes a call)", change_text(c.calls_per_token, c.baseline_calls_per_token),
                       change_text(c.bytes_per_call, c.baseline_bytes_per_call));
  }
  return out + fmt::format("; {:+.3f} of the ratio", c.contribution);
}

}  // namespace

std::vector<RatioComponent> ratio_components(const ClusterCandidateTime& candidate,
                                             const ClusterCandidateTime& baseline) {
  if (!candidate.found || !baseline.found) throw Error("a ratio decomposition needs both at a fitting layout", "ratio");
  const std::map<std::string, ComponentFigures> x = component_figures(candidate);
  const std::map<std::string, ComponentFigures> b = component_figures(baseline);
  const double baseline_per_token = baseline.seconds_per_token;
  std::vector<RatioComponent> out;
  for (const std::string& name : component_order(candidate, baseline)) {
    const auto xi = x.find(name);
    const auto bi = b.find(name);
    const ComponentFigures xf = xi == x.end() ? ComponentFigures{} : xi->second;
    const ComponentFigures bf = bi == b.end() ? ComponentFigures{} : bi->second;
    RatioComponent c;
    c.name = name;
    c.seconds_per_token = xf.seconds_per_token;
    c.baseline_seconds_per_token = bf.seconds_per_token;
    c.contribution = (xf.seconds_per_token - bf.seconds_per_token) / baseline_per_token;
    c.calls_per_token = xf.calls_per_token;
    c.baseline_calls_per_token = bf.calls_per_token;
    c.bytes_per_call = xf.bytes_per_call;
    c.baseline_bytes_per_call = bf.bytes_per_call;
    out.push_back(std::move(c));
  }
  return out;
}


namespace {

/// The team's layout (LayoutSearchOptions::team_layout) resolved for `config` on options.gpus: its
/// memory when the layout is valid for the config and fits (with the headroom asked for); else
/// nothing, with `why` saying what stops it.
std::optional<TrainingMemory> team_layout_memory(const ArchConfig& config, const ClusterSpec& cluster,
                                                 const LayoutSearchOptions& o, std::string& why) {
  ParallelLayout l = *o.team_layout;
  l.gpus = o.gpus;
  l.dp = 0;
  l.imbalance = config.ffn.is_moe() ? l.imbalance : 1.0;
  if (!config.ffn.is_moe()) l.capacity_factor = 0.0;
  // TP·CP·PP of the team's arguments, formed only within 2^40 (checked_math.hpp): never a wrapped divisor.
  const std::optional<std::int64_t> group = detail::product_within({l.tp, l.cp, l.pp}, std::int64_t{1} << 40);
  if (!group || *group < 1 || o.gpus % *group != 0) {
    why = fmt::format("{} GPUs do not divide by its TP·CP·PP = {}·{}·{}", o.gpus, l.tp, l.cp, l.pp);
    return std::nullopt;
  }
  l = resolve_layout(l, "the team's layout");
  std::string invalid = l.validation_error(config);
  if (invalid.empty()) invalid = detail::dispatcher_cluster_error(l, config, cluster.nvlink_domain());
  if (!invalid.empty()) {
    why = "is not valid for it: " + invalid;
    return std::nullopt;
  }
  TrainingMemory memory = training_memory(config, l, cluster, "the team's layout");
  if (!memory.fits || memory.headroom_bytes < o.min_headroom_bytes) {
    constexpr double gib = 1024.0 * 1024.0 * 1024.0;
    why = fmt::format("does not fit it: peak {:.2f} GiB on stage {} of {:.2f} GiB usable{}", memory.peak_bytes / gib,
                      memory.peak_stage, memory.capacity_bytes / gib,
                      o.min_headroom_bytes > 0.0 ? fmt::format(" with {:.2f} GiB of headroom", o.min_headroom_bytes / gib)
                                                 : std::string());
    return std::nullopt;
  }
  return memory;
}

}  // namespace

namespace detail {

ClusterCandidateTime best_layout_on_cluster(const TimeModel& model, const ArchConfig& config,
                                            const ClusterSpec& cluster, const LayoutSearchOptions& o,
                                            const SearchSharing& sharing) {
  // One basis (issue 41): every config, the baseline too, at its best layout searched under the same
  // recipe; the team's layout prices the baseline on a line of its own (team_baseline_on_cluster()).
  ClusterCandidateTime out;
  out.name = config.name;
  LayoutSearchOptions one = o;
  one.keep = 1;
  one.report_progress = false;  // the ranking's own progress line; the time limit still holds
  one.count_fitting = false;  // the best layout alone: memory checked only where the bound allows
  LayoutSearchResult found = search_layouts_shared(model, config, cluster, one, sharing);
  if (found.layouts.empty()) {
    out.no_layout_reason = no_layout_reason(found, one);
    return out;
  }
  out.found = true;
  out.best = std::move(found.layouts.front());
  out.seconds_per_token = out.best.time.seconds_per_step / static_cast<double>(out.best.time.tokens_per_step);
  out.gpu_seconds_per_token = out.seconds_per_token * static_cast<double>(o.gpus);
  return out;
}

namespace {
/// The single-GPU reference workload: the search's window, 8 sequences a step.
Workload single_gpu_workload(const LayoutSearchOptions& o) {
  ParallelLayout window;
  window.seq_len = o.seq_len;
  Workload w = time_workload(window, o.time);
  w.tokens_per_step = 8 * o.seq_len;
  return w;
}
}  // namespace

double training_flops_per_token(const ArchConfig& config, const LayoutSearchOptions& o) {
  return account(config, single_gpu_workload(o)).training_flops_per_token;
}

void add_single_gpu_figures(ClusterCandidateTime& out, const TimeModel& model, const ArchConfig& config,
                            const LayoutSearchOptions& o) {
  const Workload w = single_gpu_workload(o);
  // predict_step_time()'s seconds_per_token, bit for bit (the indexed path, no per-op breakdown).
  out.single_gpu_seconds_per_token = predict_step_seconds(model, config, w) / static_cast<double>(w.tokens_per_step);
  out.moe_executions_per_token = moe_executions(config);
  out.training_flops_per_token = training_flops_per_token(config, o);
  if (out.found && out.training_flops_per_token > 0.0) {
    out.gpu_seconds_per_flop = out.gpu_seconds_per_token / out.training_flops_per_token;
  }
}

void compare_with_baseline(ClusterCandidateTime& t, const ClusterCandidateTime& b) {
  t.single_gpu_ratio_to_baseline = t.single_gpu_seconds_per_token / b.single_gpu_seconds_per_token;
  if (t.found) {
    t.ratio_to_baseline = t.seconds_per_token / b.seconds_per_token;
    const auto change = [](double x, double y) { return y > 0.0 ? 100.0 * (x / y - 1.0) : 0.0; };
    const ParallelLayout& tl = t.best.memory.layout;
    const ParallelLayout& bl = b.best.memory.layout;
    if (b.moe_executions_per_token > 0.0 && t.moe_executions_per_token != b.moe_executions_per_token) {
      // An executed MoE layer pays an all-to-all pair only under expert parallelism (EP > 1).
      std::string all_to_all;
      if (tl.ep > 1 && bl.ep > 1) {
        // An all-to-all pair per executed MoE layer on both sides: the calls change as the executions do.
        all_to_all = fmt::format("{} all-to-all calls per token (EP {} and {})",
                                 change_text(t.moe_executions_per_token, b.moe_executions_per_token), tl.ep, bl.ep);
      } else if (tl.ep == 1 && bl.ep == 1) {
        all_to_all = "no all-to-all at either best layout (EP 1)";
      } else {
        all_to_all = fmt::format("all-to-all calls per token: {} at EP {} against {} at the baseline's EP {}",
                                 tl.ep > 1 ? t.moe_executions_per_token : 0.0, tl.ep,
                                 bl.ep > 1 ? b.moe_executions_per_token : 0.0, bl.ep);
      }
      t.differences.push_back(fmt::format("{:+.0f}% MoE layer executions per token ({} vs {}); {}",
                                          change(t.moe_executions_per_token, b.moe_executions_per_token),
                                          t.moe_executions_per_token, b.moe_executions_per_token, all_to_all));
    }
    t.differences.push_back(fmt::format("{:+.0f}% compute per token, {:+.0f}% exposed communication per token",
                                        change(component_per_token(t, false), component_per_token(b, false)),
                                        change(component_per_token(t, true), component_per_token(b, true))));
    if (tl.tp != bl.tp || tl.pp != bl.pp || tl.ep != bl.ep || tl.cp != bl.cp) {
      t.differences.push_back(fmt::format("its best layout differs: TP {} PP {} EP {} CP {} (baseline TP {} PP {} EP {} "
                                          "CP {})",
                                          tl.tp, tl.pp, tl.ep, tl.cp, bl.tp, bl.pp, bl.ep, bl.cp));
    }
    t.ratio_components = ratio_components(t, b);
    for (const RatioComponent& part : t.ratio_components) {
      if (part.seconds_per_token > 0.0 || part.baseline_seconds_per_token > 0.0) t.differences.push_back(component_text(part));
    }
  } else {
    t.differences.push_back(t.no_layout_reason);
  }
}

ClusterCandidateTime team_baseline_on_cluster(const TimeModel& model, const ArchConfig& baseline,
                                             const ClusterSpec& cluster, const LayoutSearchOptions& o,
                                             const ClusterCandidateTime& searched) {
  ClusterCandidateTime out;
  out.name = baseline.name;
  out.at_team_layout = true;
  out.layout_choice = "the team's layout";
  std::string why;
  std::optional<TrainingMemory> memory = team_layout_memory(baseline, cluster, o, why);
  if (!memory) {
    out.no_layout_reason = "the team's layout " + why;
    return out;
  }
  // Its step time through the row path, as a search's kept layout.
  ClusterStepTime time = cluster_step_time(model, baseline, *memory, cluster, o.time);
  out.found = true;
  out.best = {std::move(*memory), std::move(time)};
  out.seconds_per_token = out.best.time.seconds_per_step / static_cast<double>(out.best.time.tokens_per_step);
  out.gpu_seconds_per_token = out.seconds_per_token * static_cast<double>(o.gpus);
  out.single_gpu_seconds_per_token = searched.single_gpu_seconds_per_token;
  out.training_flops_per_token = searched.training_flops_per_token;
  if (out.training_flops_per_token > 0.0) out.gpu_seconds_per_flop = out.gpu_seconds_per_token / out.training_flops_per_token;
  out.ratio_to_baseline = searched.seconds_per_token > 0.0 ? out.seconds_per_token / searched.seconds_per_token : 0.0;
  out.single_gpu_ratio_to_baseline = 1.0;
  return out;
}

/// The baseline at its best layout with its single-GPU figures; an error when no layout fits.
ClusterCandidateTime baseline_on_cluster(const TimeModel& model, const ArchConfig& baseline, const ClusterSpec& cluster,
                                         const LayoutSearchOptions& options, const SearchSharing& sharing) {
  ClusterCandidateTime out = best_layout_on_cluster(model, baseline, cluster, options, sharing);
  add_single_gpu_figures(out, model, baseline, options);
  if (!out.found) {
    throw Error(fmt::format("{} on {} GPUs of {}: {}", baseline.name, options.gpus, cluster.gpu_name,
                            out.no_layout_reason),
                no_baseline_layout_source);
  }
  out.ratio_to_baseline = 1.0;
  out.single_gpu_ratio_to_baseline = 1.0;
  return out;
}

}  // namespace detail

namespace {

/// The reference (share_work false): every candidate searched on its own, a layout search each
/// (about 30 ms for DeepSeek-V3 on 1,024 GPUs), on options.threads threads, each writing its own
/// slot, so the ranking is the same for any thread count. Progress on stderr and the --max-seconds
/// limit (progress.hpp) bound the time of a long list.
ClusterRanking rank_each_on_its_own(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options) {
  ClusterRanking out;
  detail::SearchSharing on_its_own;
  on_its_own.reference = true;
  out.baseline = detail::baseline_on_cluster(model, baseline, cluster, options, on_its_own);
  constexpr std::string_view progress_name = "cluster ranking (a layout search per matched candidate)";
  std::vector<ClusterCandidateTime> timed(candidates.size());
  detail::parallel_for(candidates.size(), detail::thread_count(options.threads, candidates.size()), progress_name,
                       [&](std::size_t i) {
                         timed[i] = detail::best_layout_on_cluster(model, candidates[i], cluster, options, on_its_own);
                         detail::add_single_gpu_figures(timed[i], model, candidates[i], options);
                       });
  report_progress(progress_name, candidates.size(), candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    ClusterCandidateTime t = std::move(timed[i]);
    t.input_index = i;
    detail::compare_with_baseline(t, out.baseline);
    out.candidates.push_back(std::move(t));
  }
  std::stable_sort(out.candidates.begin(), out.candidates.end(),
                   [](const ClusterCandidateTime& x, const ClusterCandidateTime& y) {
                     if (x.found != y.found) return x.found;
                     return x.seconds_per_token < y.seconds_per_token;
                   });
  out.given = out.finished = out.searched = candidates.size();
  return out;
}

/// The reference ranking (every candidate searched in full) in `order`, walked with its `refuse`
/// until `top` are kept: what the shared ranking must return bit for bit.
ClusterRanking ordered_reference(ClusterRanking all, std::size_t top, const ClusterRankOrder& order) {
  if (order.per_flop) {
    std::stable_sort(all.candidates.begin(), all.candidates.end(),
                     [](const ClusterCandidateTime& a, const ClusterCandidateTime& b) {
                       if (a.found != b.found) return a.found;
                       return a.found && a.gpu_seconds_per_flop < b.gpu_seconds_per_flop;
                     });
  }
  std::vector<ClusterCandidateTime> kept;
  for (ClusterCandidateTime& c : all.candidates) {
    if (kept.size() >= top) break;
    std::string why;
    if (order.refuse && !all.partial) {
      try {
        why = order.refuse(c, c.input_index);
      } catch (const TimeLimitError& e) {
        all.partial = true;
        all.stopped_by = e.text();
      }
    }
    if (order.refuse && all.partial && why.empty()) {
      if (!c.found) continue;
      all.unchecked.push_back(c.input_index);
    }
    if (!why.empty()) {
      all.refused.push_back({c.input_index, std::move(why)});
      continue;
    }
    kept.push_back(std::move(c));
  }
  all.candidates = std::move(kept);
  return all;
}

}  // namespace

ClusterRanking rank_by_cluster_time(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options) {
  if (!options.share_work) return rank_each_on_its_own(model, baseline, candidates, cluster, options);
  return rank_by_cluster_time(model, baseline, candidates, cluster, options, candidates.size());
}

ClusterRanking rank_by_cluster_time(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options, std::size_t top) {
  return rank_by_cluster_time(model, baseline, candidates, cluster, options, top, ClusterRankOrder{});
}

ClusterRanking rank_by_cluster_time(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options, std::size_t top, const ClusterRankOrder& order) {
  ClusterRanking out = options.share_work
                           ? detail::rank_top_shared(model, baseline, candidates, cluster, options, top, order)
                           : ordered_reference(rank_each_on_its_own(model, baseline, candidates, cluster, options), top, order);
  if (options.team_layout) {
    out.team_baseline = detail::team_baseline_on_cluster(model, baseline, cluster, options, out.baseline);
  }
  return out;
}

}  // namespace budget
