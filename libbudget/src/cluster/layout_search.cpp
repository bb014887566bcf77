// Layout search (docs/cluster.md, "Layout search"): enumerate, drop what does not fit, rank by
// step time. Compute part times are cached per shard (PartTimesCache, the indexed path): they do
// not depend on PP, V, DP or the micro-batch count; layouts are timed best bound first while the
// bound can still beat the kept ones (budget/layout_search.hpp).
#include "budget/layout_search.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "budget/accounting.hpp"
#include "budget/communication.hpp"
#include "budget/error.hpp"
#include "budget/progress.hpp"
#include "budget/workload.hpp"
#include "cluster/stage_executions.hpp"
#include "cluster/layout_search_options.hpp"
#include "cluster/search_progress.hpp"
#include "cluster/step_compute.hpp"
#include "base/checked_math.hpp"
#include "base/parallel_for.hpp"

namespace budget {

bool ranks_before(const RankedLayout& a, const RankedLayout& b) {
  if (a.time.seconds_per_step != b.time.seconds_per_step) return a.time.seconds_per_step < b.time.seconds_per_step;
  return a.memory.headroom_bytes > b.memory.headroom_bytes;
}

namespace {

using detail::search_progress;
constexpr std::string_view enumerating = "layout search (valid layouts of the space)";
constexpr std::string_view timing = "layout search (layouts timed, best bound first)";

/// Every combination of the space (budget/layout_search.hpp) in its order, outermost first: TP, CP,
/// PP, V, EP, ETP, micro-batch size, recompute, distributed optimizer; `visit(layout)` for each
/// (counted in `enumerated`), valid or not.
template <class Visit>
void enumerate_layouts(const ArchConfig& config, const ClusterSpec& cluster, const LayoutSearchOptions& o,
                       LayoutSearchResult& result, Visit&& visit) {
  const std::int64_t experts = config.ffn.is_moe() ? config.ffn.num_experts : 1;
  std::vector<std::int64_t> pps;
  for (std::int64_t p = 1; p <= config.num_layers && p <= o.gpus; ++p) {
    if (config.num_layers % p == 0 && o.gpus % p == 0) pps.push_back(p);
  }
  for (std::int64_t tp = 1; tp <= cluster.gpus_per_node && tp <= o.gpus; tp *= 2) {
    for (std::int64_t cp = 1; cp <= 8 && tp * cp <= o.gpus; cp *= 2) {
      for (const std::int64_t pp : pps) {
        if (o.gpus % (tp * cp * pp) != 0) continue;
        const std::int64_t dp = o.gpus / (tp * cp * pp);
        for (std::int64_t v = 1; v <= (pp > 1 ? 4 : 1); v *= 2) {
          for (std::int64_t ep = 1; ep <= experts; ep *= 2) {
            if (experts % ep != 0) continue;
            for (const std::int64_t etp : {std::int64_t{1}, tp}) {
              if (tp > 1 && etp == tp && !config.ffn.is_moe()) continue;  // ETP only matters with experts
              for (std::int64_t b = 1; b <= 4; b *= 2) {
                // b·s·DP tokens, checked: a product past the global batch cannot divide it.
                const std::optional<std::int64_t> per_micro_batch =
                    detail::product_within({b, o.seq_len, dp}, o.global_batch_tokens);
                if (!per_micro_batch || o.global_batch_tokens % *per_micro_batch != 0) {
                  if (result.batch_skipped++ == 0) result.first_batch_skip = {b, dp};
                  continue;
                }
                const std::int64_t m = o.global_batch_tokens / *per_micro_batch;
                for (int rc = 0; rc < 3; ++rc) {
                  for (const bool dist : {true, false}) {
                    search_progress(o.report_progress, enumerating, ++result.enumerated, 0);
                    ParallelLayout l;
                    l.tp = tp;
                    l.sequence_parallel = tp > 1;
                    l.cp = cp;
                    l.pp = pp;
                    l.virtual_stages = v;
                    l.dp = dp;
                    l.gpus = o.gpus;
                    l.ep = ep;
                    l.etp = config.ffn.is_moe() ? etp : 0;
                    l.micro_batch_size = b;
                    l.micro_batches = m;
                    l.seq_len = o.seq_len;
                    l.recompute.kind = rc == 0 ? RecomputeKind::none
                                               : rc == 1 ? RecomputeKind::selective : RecomputeKind::full;
                    l.distributed_optimizer = dist;
                    l.imbalance = config.ffn.is_moe() ? o.imbalance : 1.0;
                    visit(l);
                  }
                }
              }
              if (etp == tp) break;  // TP = 1: ETP 1 and TP are the same choice
            }
          }
        }
      }
    }
  }
}

/// A ranked layout with its enumeration position: the order of ranks_before(), ties to the first
/// enumerated (what a stable sort of the enumeration gives).
struct Ranked {
  RankedLayout ranked;
  std::size_t position = 0;
};

bool ranked_before(const Ranked& a, const Ranked& b) {
  if (ranks_before(a.ranked, b.ranked)) return true;
  if (ranks_before(b.ranked, a.ranked)) return false;
  return a.position < b.position;
}

/// Counts `l` in result.valid when it is valid for `config`; otherwise keeps its reason as the
/// space's first rejection while no valid layout has been seen.
bool count_if_valid(const ParallelLayout& l, const ArchConfig& config, LayoutSearchResult& result) {
  if (const std::string why = l.validation_error(config); !why.empty()) {
    if (result.valid == 0 && result.first_rejection.empty()) result.first_rejection = why;
    return false;
  }
  ++result.valid;
  return true;
}

/// The exhaustive reference: every fitting layout timed through the row path.
LayoutSearchResult search_exhaustive(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                     const LayoutSearchOptions& o) {
  LayoutSearchResult result;
  PartTimesCache cache;
  std::vector<Ranked> ranked;
  enumerate_layouts(config, cluster, o, result, [&](const ParallelLayout& l) {
    if (!count_if_valid(l, config, result)) return;
    TrainingMemory mem = training_memory(config, l, cluster);
    if (!detail::fits_search(mem, o)) return;
    ++result.fitting;
    ++result.timed;
    ClusterStepTime time = assemble_step_time(model, config, mem, cluster, o.time,
                                              layer_times(model, config, l, o.time, &cache));
    ranked.push_back({{std::move(mem), std::move(time)}, ranked.size()});
  });
  search_progress(o.report_progress, enumerating, result.enumerated, result.enumerated);
  const std::size_t keep = std::min(o.keep, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(), ranked_before);
  for (std::size_t i = 0; i < keep; ++i) result.layouts.push_back(std::move(ranked[i].ranked));
  return result;
}

/// The layer times a layout's shards need depend on TP (and SP), CP, the micro-batch size, EP, ETP
/// and the recompute kind (layer_times()), not on PP, V, DP, m or the optimizer.
using ShardKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>;

ShardKey shard_key(const ParallelLayout& l) {
  return {l.tp, l.cp, l.micro_batch_size, l.ep, l.etp, static_cast<int>(l.recompute.kind)};
}

/// A lower bound of assemble_step_time(...).seconds_per_step for `l` with these layer times:
///
///   seconds_per_step = max_s (m·t_s + exposed_s + late_s) + (PP − 1)/V · max_s t_s
///                    ≥ (m + (PP − 1)/V) · max_s t'_s,
///
/// exposed_s, late_s ≥ 0 and t'_s ≤ t_s: t_s without the embedding, LM head and final norm (their
/// part times are non-negative; checked: 0, no bound, when one is not). `stages` holds each
/// pipeline rank's executions. The product and sum are rounded as the step time's own terms, so
/// floating point keeps the inequality.
double compute_bound_seconds(const ParallelLayout& l, const LayerTimes& times,
                             const std::vector<StageExecutions>& stages) {
  if (times.base3.embedding < 0.0 || times.base3.head < 0.0 || times.base3.final_norm < 0.0) return 0.0;
  double slowest = 0.0;
  for (const StageExecutions& e : stages) slowest = std::max(slowest, stage_micro_batch_seconds(l, times, e, false, false, false));
  return static_cast<double>(l.micro_batches) * slowest +
         pipeline_bubble_micro_batches(l.pp, l.virtual_stages) * slowest;
}

/// A valid layout of the space, its layer times and its bound.
struct SpacePoint {
  ParallelLayout layout;
  const LayerTimes* times = nullptr;
  double bound_seconds = 0.0;
  std::optional<TrainingMemory> memory;  ///< count_fitting: checked up front (kept when it fits)
};

LayoutSearchResult search_pruned(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                 const LayoutSearchOptions& o) {
  LayoutSearchResult result;
  PartTimesCache indexed;
  indexed.indexed = true;
  std::map<ShardKey, LayerTimes> times_by_shard;
  std::map<std::tuple<std::int64_t, std::int64_t, int>, std::vector<StageExecutions>> executions;
  std::vector<SpacePoint> points;
  enumerate_layouts(config, cluster, o, result, [&](const ParallelLayout& l) {
    if (!count_if_valid(l, config, result)) return;
    SpacePoint p;
    p.layout = l;
    auto t = times_by_shard.find(shard_key(l));
    if (t == times_by_shard.end()) t = times_by_shard.emplace(shard_key(l), layer_times(model, config, l, o.time, &indexed)).first;
    p.times = &t->second;
    auto e = executions.find({l.pp, l.virtual_stages, static_cast<int>(l.recompute.kind)});
    if (e == executions.end()) {
      const std::vector<ModelChunk> chunks = model_chunks(config, l);
      std::vector<StageExecutions> stages;
      for (std::int64_t rank = 0; rank < l.pp; ++rank) stages.push_back(stage_executions(config, l, chunks, rank));
      e = executions.emplace(std::make_tuple(l.pp, l.virtual_stages, static_cast<int>(l.recompute.kind)),
                             std::move(stages)).first;
    }
    p.bound_seconds = compute_bound_seconds(l, *p.times, e->second);
    if (o.count_fitting) {
      TrainingMemory mem = training_memory(config, l, cluster);
      if (!detail::fits_search(mem, o)) return;
      ++result.fitting;
      p.memory = std::move(mem);
    }
    points.push_back(std::move(p));
  });
  // Best first by bound; a layout whose bound exceeds the keep-th best time cannot enter the list,
  // nor can any after it.
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return points[a].bound_seconds < points[b].bound_seconds; });
  search_progress(o.report_progress, enumerating, result.enumerated, result.enumerated);
  std::vector<Ranked> kept;  // sorted by ranked_before, at most o.keep
  std::int64_t visited = 0;
  for (const std::size_t i : order) {
    search_progress(o.report_progress, timing, visited++, static_cast<std::int64_t>(points.size()));
    SpacePoint& p = points[i];
    if (kept.size() == o.keep) {
      const double worst = kept.back().ranked.time.seconds_per_step;
      if (p.bound_seconds > worst + 1e-9 * std::abs(worst)) break;
    }
    if (!p.memory) {
      TrainingMemory mem = training_memory(config, p.layout, cluster);
      if (!detail::fits_search(mem, o)) continue;
      ++result.fitting;
      p.memory = std::move(mem);
    }
    ++result.timed;
    Ranked r{{*p.memory, assemble_step_time(model, config, *p.memory, cluster, o.time, *p.times)}, i};
    const auto at = std::upper_bound(kept.begin(), kept.end(), r, ranked_before);
    if (kept.size() == o.keep && at == kept.end()) continue;
    kept.insert(at, std::move(r));
    if (kept.size() > o.keep) kept.pop_back();
  }
  search_progress(o.report_progress, timing, static_cast<std::int64_t>(points.size()), static_cast<std::int64_t>(points.size()));
  // The kept layouts again through the row path: the same seconds, with the out-of-range flags.
  PartTimesCache rows;
  for (Ranked& r : kept) {
    const TrainingMemory& mem = r.ranked.memory;
    ClusterStepTime time = assemble_step_time(model, config, mem, cluster, o.time,
                                              layer_times(model, config, mem.layout, o.time, &rows));
    if (time.seconds_per_step != r.ranked.time.seconds_per_step) {
      const ParallelLayout& l = mem.layout;
      throw Error(fmt::format("internal: the indexed and row paths time {} at TP {} CP {} PP {} V {} EP {} differently "
                              "({} and {} s a step)",
                              config.name, l.tp, l.cp, l.pp, l.virtual_stages, l.ep, r.ranked.time.seconds_per_step,
                              time.seconds_per_step),
                  "layout search");
    }
    r.ranked.time = std::move(time);
    result.layouts.push_back(std::move(r.ranked));
  }
  return result;
}

}  // namespace

LayoutSearchResult search_layouts(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                  const LayoutSearchOptions& o) {
  detail::check_layout_search_options(o, cluster);
  LayoutSearchResult found =
      o.exhaustive ? search_exhaustive(model, config, cluster, o) : search_pruned(model, config, cluster, o);
  if (found.valid > 0) found.first_rejection.clear();
  return found;
}

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

ClusterCandidateTime time_one(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                              const LayoutSearchOptions& o) {
  ClusterCandidateTime out;
  out.name = config.name;
  LayoutSearchOptions one = o;
  one.keep = 1;
  one.report_progress = false;  // the ranking's own progress line; the time limit still holds
  one.count_fitting = false;  // the best layout alone: memory checked only where the bound allows
  LayoutSearchResult found = search_layouts(model, config, cluster, one);
  ParallelLayout window;
  window.seq_len = o.seq_len;
  Workload w = time_workload(window, o.time);
  w.tokens_per_step = 8 * o.seq_len;  // the single-GPU reference: 8 sequences a step
  // predict_step_time()'s seconds_per_token, bit for bit (the indexed path, no per-op breakdown).
  out.single_gpu_seconds_per_token = predict_step_seconds(model, config, w) / static_cast<double>(w.tokens_per_step);
  out.moe_executions_per_token = moe_executions(config);
  out.training_flops_per_token = account(config, w).training_flops_per_token;
  if (found.layouts.empty()) {
    out.no_layout_reason = no_layout_reason(found, one);
    return out;
  }
  out.found = true;
  out.best = std::move(found.layouts.front());
  out.seconds_per_token = out.best.time.seconds_per_step / static_cast<double>(out.best.time.tokens_per_step);
  out.gpu_seconds_per_token = out.seconds_per_token * static_cast<double>(o.gpus);
  if (out.training_flops_per_token > 0.0) out.gpu_seconds_per_flop = out.gpu_seconds_per_token / out.training_flops_per_token;
  return out;
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

/// "ep_all_to_all: +24% per token (+50% calls, -17% bytes a call); +0.031 of the ratio".
std::string component_text(const RatioComponent& c) {
  const auto change = [](double x, double y) { return y > 0.0 ? fmt::format("{:+.0f}%", 100.0 * (x / y - 1.0)) : std::string("new"); };
  std::string out = fmt::format("{}: {} per token", c.name,
                                c.seconds_per_token == 0.0 && c.baseline_seconds_per_token > 0.0
                                    ? std::string("none")
                                    : change(c.seconds_per_token, c.baseline_seconds_per_token));
  if (c.calls_per_token > 0.0 && c.baseline_calls_per_token > 0.0) {
    out += fmt::format(" ({} calls, {} bytes a call)", change(c.calls_per_token, c.baseline_calls_per_token),
                       change(c.bytes_per_call, c.baseline_bytes_per_call));
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

ClusterRanking rank_by_cluster_time(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options) {
  ClusterRanking out;
  out.baseline = time_one(model, baseline, cluster, options);
  if (!out.baseline.found) {
    throw Error(fmt::format("{} on {} GPUs of {}: {}", baseline.name, options.gpus, cluster.gpu_name,
                            out.baseline.no_layout_reason),
                no_baseline_layout_source);
  }
  out.baseline.ratio_to_baseline = 1.0;
  out.baseline.single_gpu_ratio_to_baseline = 1.0;
  const ClusterCandidateTime& b = out.baseline;
  // A layout search per candidate (about 30 ms each for DeepSeek-V3 on 1,024 GPUs), independent
  // of the others: on options.threads threads, each writing its own slot, so the ranking is the
  // same for any thread count. Progress on stderr and the --max-seconds limit (progress.hpp) bound
  // the time of a long list.
  constexpr std::string_view progress_name = "cluster ranking (a layout search per matched candidate)";
  std::vector<ClusterCandidateTime> timed(candidates.size());
  detail::parallel_for(candidates.size(), detail::thread_count(options.threads, candidates.size()), progress_name,
                       [&](std::size_t i) { timed[i] = time_one(model, candidates[i], cluster, options); });
  report_progress(progress_name, candidates.size(), candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    ClusterCandidateTime t = std::move(timed[i]);
    t.input_index = i;
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
          all_to_all = fmt::format("as many more all-to-all calls (EP {} and {})", tl.ep, bl.ep);
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
    out.candidates.push_back(std::move(t));
  }
  std::stable_sort(out.candidates.begin(), out.candidates.end(),
                   [](const ClusterCandidateTime& x, const ClusterCandidateTime& y) {
                     if (x.found != y.found) return x.found;
                     return x.seconds_per_token < y.seconds_per_token;
                   });
  return out;
}

}  // namespace budget
