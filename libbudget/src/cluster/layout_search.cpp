// Layout search (docs/cluster.md, "Layout search"): enumerate, drop what does not fit, rank by
// step time. Compute part times are cached per shard (PartTimesCache): they do not depend on PP,
// V, DP or the micro-batch count.
#include "budget/layout_search.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "budget/accounting.hpp"
#include "budget/error.hpp"
#include "budget/progress.hpp"
#include "budget/workload.hpp"
#include "cluster/step_compute.hpp"

namespace budget {

bool ranks_before(const RankedLayout& a, const RankedLayout& b) {
  if (a.time.seconds_per_step != b.time.seconds_per_step) return a.time.seconds_per_step < b.time.seconds_per_step;
  return a.memory.headroom_bytes > b.memory.headroom_bytes;
}

LayoutSearchResult search_layouts(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                  const LayoutSearchOptions& o) {
  if (o.gpus < 1 || o.gpus > cluster.total_gpus()) {
    throw Error(fmt::format("{} GPUs: the cluster has {} ({} nodes of {}); set more nodes (--nodes)", o.gpus,
                            cluster.total_gpus(), cluster.nodes, cluster.gpus_per_node),
                "--gpus");
  }
  if (o.seq_len < 1) throw Error(fmt::format("seq_len = {} is below 1", o.seq_len), "--seq-len");
  if (o.global_batch_tokens < o.seq_len) {
    throw Error(fmt::format("global batch of {} tokens is less than one sequence of {}", o.global_batch_tokens,
                            o.seq_len),
                "--global-batch-tokens");
  }
  if (o.keep < 1) throw Error("keep at least one layout", "keep");
  LayoutSearchResult result;
  const std::int64_t experts = config.ffn.is_moe() ? config.ffn.num_experts : 1;
  std::vector<std::int64_t> pps;
  for (std::int64_t p = 1; p <= config.num_layers && p <= o.gpus; ++p) {
    if (config.num_layers % p == 0 && o.gpus % p == 0) pps.push_back(p);
  }
  PartTimesCache cache;
  std::vector<RankedLayout> ranked;
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
                const std::int64_t per_micro_batch = b * o.seq_len * dp;
                if (o.global_batch_tokens % per_micro_batch != 0) continue;
                const std::int64_t m = o.global_batch_tokens / per_micro_batch;
                for (int rc = 0; rc < 3; ++rc) {
                  for (const bool dist : {true, false}) {
                    ++result.enumerated;
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
                    if (!l.validation_error(config).empty()) continue;
                    ++result.valid;
                    TrainingMemory mem = training_memory(config, l, cluster);
                    if (!mem.fits) continue;
                    ++result.fitting;
                    ClusterStepTime time = assemble_step_time(model, config, mem, cluster, o.time,
                                                              layer_times(model, config, l, o.time, &cache));
                    ranked.push_back({std::move(mem), std::move(time)});
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
  const std::size_t keep = std::min(o.keep, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(), ranks_before);
  ranked.resize(keep);
  result.layouts = std::move(ranked);
  return result;
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
  LayoutSearchResult found = search_layouts(model, config, cluster, one);
  ParallelLayout window;
  window.seq_len = o.seq_len;
  Workload w = time_workload(window, o.time);
  w.tokens_per_step = 8 * o.seq_len;  // the single-GPU reference: 8 sequences a step
  out.single_gpu_seconds_per_token = predict_step_time(model, config, w).seconds_per_token;
  out.moe_executions_per_token = moe_executions(config);
  out.training_flops_per_token = account(config, w).training_flops_per_token;
  if (found.layouts.empty()) return out;
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
    throw Error(fmt::format("no layout of the baseline {} fits {} GPUs of {}", baseline.name, options.gpus,
                            cluster.gpu_name),
                "--baseline");
  }
  out.baseline.ratio_to_baseline = 1.0;
  out.baseline.single_gpu_ratio_to_baseline = 1.0;
  const ClusterCandidateTime& b = out.baseline;
  // A layout search per candidate (about 0.1 s each for DeepSeek-V3 on 1,024 GPUs): progress on
  // stderr and the --max-seconds limit (progress.hpp) bound the time of a long list.
  constexpr std::string_view progress_name = "cluster ranking (a layout search per matched candidate)";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    report_progress(progress_name, i, candidates.size());
    const ArchConfig& c = candidates[i];
    ClusterCandidateTime t = time_one(model, c, cluster, options);
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
      t.differences.push_back("no layout fits");
    }
    out.candidates.push_back(std::move(t));
  }
  report_progress(progress_name, candidates.size(), candidates.size());
  std::stable_sort(out.candidates.begin(), out.candidates.end(),
                   [](const ClusterCandidateTime& x, const ClusterCandidateTime& y) {
                     if (x.found != y.found) return x.found;
                     return x.seconds_per_token < y.seconds_per_token;
                   });
  return out;
}

}  // namespace budget
