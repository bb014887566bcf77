// Step time on N GPUs (docs/cluster.md, "Step time"): the time model's per-op predictions at one
// GPU's shards of one micro-batch, per layer execution by kind, summed over each stage's executed
// layers, with its communication and the 1F1B bubble (formula in cluster_time.hpp).
#include "budget/cluster_time.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/ops.hpp"
#include "base/checked_math.hpp"
#include "layout/layer_kinds.hpp"
#include "layout/layout_recipe.hpp"
#include "layout/stage_executions.hpp"
#include "step_time/step_compute.hpp"
#include "time/step_terms.hpp"

namespace budget {
namespace {

/// Of one micro-batch's forward and backward on a stage (recompute excluded), the memory-bound
/// ops' seconds and all seconds, from the part times and the stage's executions.
std::pair<double, double> memory_bound_and_total(const StageExecutions& e, const LayerTimes& times, bool embedding,
                                                 bool head, bool last) {
  const auto all_seconds = [](const LayerPartTimes& p) {
    return PartSeconds{p.attention, p.dense_ffn, p.moe_tp_part, p.routed, p.embedding, p.head, p.final_norm};
  };
  const auto memory_bound = [](const LayerPartTimes& p) -> const PartSeconds& { return p.memory_bound; };
  return {stage_part_sum(e, times, embedding, head, last, memory_bound),
          stage_part_sum(e, times, embedding, head, last, all_seconds)};
}

/// One physical layer of `config` as one GPU of the layout computes it: heads, KV heads, the dense
/// and shared-expert widths and the vocabulary divided by TP; no loop, no MTP; an attention layer
/// with full attention (a hybrid stack's kinds: layer_kind_shard()).
ArchConfig tp_shard(const ArchConfig& config, const ParallelLayout& l, std::vector<std::string>& notes) {
  ArchConfig s = config;
  s.num_layers = 1;
  s.loop = std::nullopt;
  s.mtp_layers = 0;
  s.attention.layer_types.clear();
  s.layer_mixers.clear();
  s.layer_ffns.clear();
  s.linear_attention.reset();
  s.mamba.reset();
  const std::int64_t tp = l.tp;
  s.attention.num_heads = config.attention.num_heads / tp;
  s.attention.num_kv_heads =
      config.attention.num_kv_heads % tp == 0 ? config.attention.num_kv_heads / tp : s.attention.num_heads;
  s.ffn.dense_dim = config.ffn.dense_dim / tp;
  s.ffn.first_dense_layers = 0;
  if (config.ffn.num_shared_experts > 0 && tp > 1) {
    if (config.ffn.shared_expert_dim % tp == 0) {
      s.ffn.shared_expert_dim = config.ffn.shared_expert_dim / tp;
    } else {
      // num_shared · width divides by TP (validated): one shared expert of the whole slice.
      s.ffn.shared_expert_dim = config.ffn.num_shared_experts * config.ffn.shared_expert_dim / tp;
      s.ffn.num_shared_experts = 1;
      notes.push_back("shared experts timed as one expert of their TP slice's width");
    }
  }
  if (config.vocab_size > 0) s.vocab_size = l.padded_vocab(config.vocab_size) / tp;
  return s;
}

}  // namespace

Workload time_workload(const ParallelLayout& l, const ClusterTimeOptions& options) {
  if (!(options.attended_keys >= 0.0)) {
    throw Error(fmt::format("attended keys = {} is negative (0: causal)", options.attended_keys), "time");
  }
  Workload w = causal_workload(l.seq_len);
  if (options.attended_keys > 0.0) {
    if (options.attended_keys > static_cast<double>(l.seq_len)) {
      throw Error(fmt::format("attended keys {} exceed the sequence length {}", options.attended_keys, l.seq_len),
                  "time");
    }
    w.attention_mask = AttentionMask::document;
    w.attended_keys = options.attended_keys;
  }
  return w;
}

LayerTimes layer_times(const TimeModel& model, const ArchConfig& config, const ParallelLayout& l,
                       const ClusterTimeOptions& options, PartTimesCache* cache) {
  LayerTimes out;
  // part_times through the cache: group 0 attention/dense/head and 1 router/shared (the TP shard),
  // group 2 routed experts (E/EP experts of width expert_dim/ETP). The key's expert fields are those
  // each group reads (PartTimesCache).
  const auto timed = [&](int group, std::int64_t a, std::int64_t b, const ArchConfig& c, const Workload& wl,
                         std::int64_t tokens, std::int64_t passes, std::initializer_list<LayerPart> parts) {
    if (!cache) return part_times(model, c, wl, tokens, passes, parts, false, true);
    // Group 0 and the layer kinds' mixer parts (groups from layer_kind_group) read no expert field.
    const std::int64_t experts = group == 0 || group >= layer_kind_group ? 0 : config.ffn.num_experts;
    const std::int64_t width = group == 2 ? config.ffn.expert_dim : 0;
    const std::int64_t shared = group == 1 ? config.ffn.shared_expert_dim : 0;
    return cache->find_or_add({group, a, b, tokens, passes, experts, width, shared},
                              [&] { return part_times(model, c, wl, tokens, passes, parts, cache->indexed,
                                                      cache->time_every_op); });
  };
  const Workload w = time_workload(l, options);
  const std::int64_t T = l.micro_batch_size * (l.seq_len / l.cp);  // tokens of one micro-batch on a rank
  const std::int64_t r = l.sequence_parallel_active() ? l.tp : 1;
  const bool full = l.recompute.kind == RecomputeKind::full;
  const bool selective = l.recompute.kind == RecomputeKind::selective;
  // Attention, dense FFN, embedding, head: the TP shard at T tokens (inside the TP region every
  // rank holds all T tokens; under SP the norms run on T/TP, counted at T here).
  ArchConfig dense_layer = tp_shard(config, l, out.notes);
  const bool has_dense = config.dense_ffn_layers() > 0;
  if (has_dense) {
    dense_layer.ffn = config.ffn;
    dense_layer.ffn.num_experts = 0;
    dense_layer.ffn.top_k = 0;
    dense_layer.ffn.expert_dim = 0;
    dense_layer.ffn.num_shared_experts = 0;
    dense_layer.ffn.shared_expert_dim = 0;
    dense_layer.ffn.first_dense_layers = 0;
    dense_layer.ffn.dense_dim = config.ffn.dense_dim / l.tp;
  }
  const auto base_parts = {LayerPart::attention, LayerPart::dense, LayerPart::embedding, LayerPart::head, LayerPart::final_norm};
  out.base3 = timed(0, l.tp, 0, dense_layer, w, T, 3, base_parts);
  // The forwards again: recompute's, and the forward/backward split of the EP overlap's windows.
  const bool ep_overlap = options.communication.overlap.ep && config.ffn.is_moe() && l.ep > 1;
  out.base4 = full || selective || ep_overlap ? timed(0, l.tp, 0, dense_layer, w, T, 4, base_parts) : out.base3;
  if (config.ffn.is_moe()) {
    ArchConfig moe_layer = tp_shard(config, l, out.notes);
    moe_layer.ffn.first_dense_layers = 0;
    out.moe3 = timed(1, l.tp, 0, moe_layer, w, T, 3, {LayerPart::moe_tp});
    const bool again = full || selective_recompute_in_moe(l.recompute) || ep_overlap;
    out.moe4 = again ? timed(1, l.tp, 0, moe_layer, w, T, 4, {LayerPart::moe_tp}) : out.moe3;
    // Routed experts on one EP rank: E/EP local experts of width expert_dim/ETP, receiving
    // R = (T/r)·top_k·min(F, G)·ETP rows in all (the most loaded rank; ETP gathers its group's
    // rows). Timed as a config of E' = E/EP experts with top_k' = min(top_k, E') and
    // T' = R / top_k' tokens, so that the groups hold R/E' rows each.
    const double factor = l.capacity_factor > 0.0 ? std::min(l.capacity_factor, l.imbalance) : l.imbalance;
    const double rows = static_cast<double>(T / r) * static_cast<double>(config.ffn.top_k) * factor *
                        static_cast<double>(l.expert_tp());
    ArchConfig experts = moe_layer;
    experts.ffn.num_experts = config.ffn.num_experts / l.ep;
    experts.ffn.top_k = std::min(config.ffn.top_k, experts.ffn.num_experts);
    experts.ffn.expert_dim = config.ffn.expert_dim / l.expert_tp();
    const auto tokens = static_cast<std::int64_t>(std::llround(rows / static_cast<double>(experts.ffn.top_k)));
    out.routed3 = timed(2, l.ep, l.expert_tp(), experts, w, tokens, 3, {LayerPart::routed});
    out.routed4 = again ? timed(2, l.ep, l.expert_tp(), experts, w, tokens, 4, {LayerPart::routed}) : out.routed3;
    // The dispatcher's kernels beyond the op list, in the routed part (not cached: the layout's).
    add_moe_dispatch_times(out, moe_dispatch_seconds(model, config, l, options.communication.moe, rows, experts.ffn.num_experts), again);
  }
  // A stack whose layers differ: each kind's mixer part on one layer of the kind (layer_kinds.hpp).
  if (config.has_per_layer_kinds()) {
    const ArchConfig shard = tp_shard(config, l, out.notes);
    for (const int kind : layer_kinds_present(config)) {
      const ArchConfig one = layer_kind_shard(shard, config, kind, l);
      LayerKindTimes k;
      k.kind = kind;
      k.times3 = timed(layer_kind_group + kind, l.tp, 0, one, w, T, 3, {LayerPart::attention});
      k.times4 = full || selective || ep_overlap ? timed(layer_kind_group + kind, l.tp, 0, one, w, T, 4, {LayerPart::attention}) : k.times3;
      out.out_of_range = out.out_of_range || k.times3.out_of_range;
      out.kinds.push_back(k);
    }
  }
  out.out_of_range = out.out_of_range || out.base3.out_of_range || out.moe3.out_of_range || out.routed3.out_of_range;
  if (r > 1) out.notes.push_back("under sequence parallelism the norms are timed on all T tokens (an upper bound)");
  return out;
}

ClusterStepTime cluster_step_time(const TimeModel& model, const ArchConfig& config, const TrainingMemory& memory,
                                  const ClusterSpec& cluster, const ClusterTimeOptions& options) {
  return assemble_step_time(model, config, memory, cluster, options, layer_times(model, config, memory.layout, options));
}

double stage_micro_batch_seconds(const ParallelLayout& l, const LayerTimes& times, const StageExecutions& e,
                                 bool has_embedding, bool has_lm_head, bool last_stage) {
  const LayerPartTimes& base3 = times.base3;
  const LayerPartTimes& base4 = times.base4;
  const LayerPartTimes& moe3 = times.moe3;
  const LayerPartTimes& moe4 = times.moe4;
  const LayerPartTimes& routed3 = times.routed3;
  const LayerPartTimes& routed4 = times.routed4;
  double t = mixer_part_sum(e, times, [](const LayerPartTimes& p) { return p.attention; }) +
             e.dense_layers() * base3.dense_ffn + e.moe_layers * (moe3.moe_tp_part + routed3.routed);
  // Full recompute: the recomputed layers' forward again (time at 4 passes − at 3).
  t += mixer_recompute_seconds(e, times) + e.recomputed_dense_layers() * (base4.dense_ffn - base3.dense_ffn) +
       e.recomputed_moe_layers * (moe4.moe_tp_part - moe3.moe_tp_part + routed4.routed - routed3.routed);
  // Selective recompute: each recomputed module's forward again (cluster_time_moe.cpp).
  t += selective_recompute_seconds(l, times, e);
  if (has_embedding) t += base3.embedding;
  if (has_lm_head) t += base3.head;
  if (last_stage) t += base3.final_norm;
  return t;
}

namespace {

/// One stage's step time and the pieces the step needs from it: its micro-batch compute (for the
/// bubble) and its memory-bound seconds out of its base seconds (for memory_bound_share).
struct StageStepTime {
  StageTime time;
  double micro_batch_seconds = 0.0;
  double memory_bound_seconds = 0.0;
  double base_seconds = 0.0;
};

/// Seconds of the stage's overlapped DP collectives ("dp*", "expert_dp*") that do not fit behind
/// its backward: an overlapped DP collective hides only behind the backward, 2/3 of the compute.
double step_time_late_dp_overlap_seconds(const StageCommunication& comm, double compute_seconds) {
  double overlapped_dp = 0.0;
  for (const CommTerm& term : comm.terms) {
    if (term.overlapped && (term.name.rfind("dp", 0) == 0 || term.name.rfind("expert_dp", 0) == 0)) {
      overlapped_dp += term.seconds_per_step;
    }
  }
  return std::max(0.0, overlapped_dp - 2.0 / 3.0 * compute_seconds);
}

/// A stage's time per step: m micro-batches of compute, its exposed communication and the part
/// of its overlapped DP collectives that runs past the backward.
StageStepTime step_time_of_stage(const ArchConfig& config, const ParallelLayout& l,
                                 const std::vector<ModelChunk>& chunks, const StageMemory& stage,
                                 const LayerTimes& times, const StageCommunication& comm,
                                 const EpOverlapSeconds& overlap, double optimizer) {
  const double m = static_cast<double>(l.micro_batches);
  const StageExecutions e = stage_executions(config, l, chunks, stage.pipeline_rank);
  StageStepTime out;
  StageTime& st = out.time;
  st.pipeline_rank = stage.pipeline_rank;
  const double t = stage_micro_batch_seconds(l, times, e, stage.has_embedding, stage.has_lm_head,
                                             stage.pipeline_rank == l.pp - 1);
  st.micro_batch_compute_seconds = t;
  const auto [memory_bound_s, base_s] = memory_bound_and_total(e, times, stage.has_embedding, stage.has_lm_head,
                                                               stage.pipeline_rank == l.pp - 1);
  st.compute_seconds = m * t;
  st.exposed_communication_seconds = comm.exposed_seconds;
  st.overlapped_communication_seconds = comm.overlapped_seconds;
  st.late_overlap_seconds = step_time_late_dp_overlap_seconds(comm, st.compute_seconds);
  st.overlap_exposed_seconds = overlap.exposed;
  st.overlap_slowdown_seconds = overlap.slowdown;
  st.optimizer_seconds = optimizer;
  st.seconds = st.compute_seconds + st.exposed_communication_seconds + st.late_overlap_seconds + overlap.exposed +
               overlap.slowdown + optimizer;
  out.micro_batch_seconds = t;
  out.memory_bound_seconds = memory_bound_s;
  out.base_seconds = base_s;
  return out;
}

/// Tokens per step, tokens per second per GPU and MFU: 3 · forward FLOPs a token (MTP modules not
/// counted) · tokens per step / (step seconds · GPUs · the profile's bf16 GEMM peak).
void set_step_time_throughput(ClusterStepTime& out, const TimeModel& model, const ArchConfig& config,
                              const ParallelLayout& l, const Workload& w) {
  // b·s·m·DP, at most 2^50 in a valid layout (ParallelLayout::validation_error); checked all the same.
  const std::optional<std::int64_t> tokens =
      detail::product_within({l.micro_batch_size, l.seq_len, l.micro_batches, l.data_parallel()}, std::int64_t{1} << 50);
  if (!tokens) throw Error("the layout's tokens a step (b x s x m x DP) are more than 2^50", "layout");
  out.tokens_per_step = *tokens;
  const double gpus = static_cast<double>(l.gpu_count());
  out.tokens_per_second_per_gpu = static_cast<double>(out.tokens_per_step) / out.seconds_per_step / gpus;
  double forward_flops_per_token = 0.0;
  for (const Op& op : layer_ops(config, w)) {
    if (op.kind != OpKind::mtp_module) forward_flops_per_token += op.total_forward_flops();
  }
  // MFU against the datasheet's dense BF16 peak where the profile names one (issue 32), else the
  // profile's measured 8192³ GEMM rate.
  const CalibrationPeaks& peaks = model.profile().peaks;
  if (peaks.datasheet_peak_tflops > 0) {
    out.mfu_peak_flops_per_s = peaks.datasheet_peak_tflops * 1e12;
    out.mfu_denominator = fmt::format("the datasheet's dense BF16 peak, {:g} TFLOP/s per GPU ({})",
                                      peaks.datasheet_peak_tflops, peaks.datasheet_peak_source);
  } else {
    out.mfu_peak_flops_per_s = peaks.bf16_gemm_tflops * 1e12;
    out.mfu_denominator = "the calibration profile's measured bf16 GEMM peak (8192^3) per GPU";
  }
  out.mfu = 3.0 * forward_flops_per_token * static_cast<double>(out.tokens_per_step) /
            (out.seconds_per_step * gpus * out.mfu_peak_flops_per_s);
}

/// Components of the slowest stage: compute, its communication summed by "<name>_<kind>" in
/// first-seen order, the DP time past the backward (when any) and the bubble.
void set_step_time_components(ClusterStepTime& out) {
  const StageTime& slow = out.stages[static_cast<std::size_t>(out.slowest_stage)];
  out.by_component.push_back({"compute", slow.compute_seconds, false});
  std::map<std::string, TimeComponent> comm_parts;
  std::vector<std::string> order;
  for (const CommTerm& term : out.communication[static_cast<std::size_t>(out.slowest_stage)].terms) {
    const std::string key = fmt::format("{}_{}", term.name, to_string(term.kind));
    if (!comm_parts.count(key)) order.push_back(key);
    TimeComponent& c = comm_parts[key];
    c.name = key;
    c.seconds += term.seconds_per_step;
    c.overlapped = term.overlapped;
  }
  for (const std::string& key : order) out.by_component.push_back(comm_parts[key]);
  if (slow.late_overlap_seconds > 0.0) out.by_component.push_back({"dp_beyond_backward", slow.late_overlap_seconds, false});
  if (slow.overlap_exposed_seconds > 0.0) out.by_component.push_back({"ep_not_hidden", slow.overlap_exposed_seconds, false});
  if (slow.overlap_slowdown_seconds > 0.0) {
    out.by_component.push_back({"ep_overlap_slowdown", slow.overlap_slowdown_seconds, false});
  }
  if (slow.optimizer_seconds > 0.0) out.by_component.push_back({"optimizer", slow.optimizer_seconds, false});
  out.by_component.push_back({"bubble", out.bubble_seconds, false});
  if (out.overhead_seconds > 0.0) out.by_component.push_back({"overhead", out.overhead_seconds, false});
}

/// The profile GPU against the cluster's, and the notes on what is not rescaled or not timed;
/// the notes end sorted and unique.
void set_step_time_profile_and_notes(ClusterStepTime& out, const TimeModel& model, const ArchConfig& config,
                                     const ClusterSpec& cluster) {
  out.profile_gpu = model.profile().device.name;
  out.profile_gpu_is_cluster_gpu = !out.profile_gpu.empty() && cluster.gpu_name.rfind(out.profile_gpu, 0) == 0;
  if (!out.profile_gpu_is_cluster_gpu) {
    out.notes.push_back(fmt::format(
        "compute timed as measured on the calibration profile's GPU ({}), not rescaled to the cluster's ({}); "
        "{:.1f}% of the slowest stage's compute is memory-bound ops, which would follow the two GPUs' memory "
        "bandwidth ratio, the rest their tensor-core rates",
        out.profile_gpu.empty() ? "unnamed" : out.profile_gpu, cluster.gpu_name, 100.0 * out.memory_bound_share));
  }
  if (config.mtp_layers > 0) out.notes.push_back("multi-token-prediction modules are not timed");
  if (out.out_of_range) out.notes.push_back("some shapes lie outside the profile's measured range");
  std::sort(out.notes.begin(), out.notes.end());
  out.notes.erase(std::unique(out.notes.begin(), out.notes.end()), out.notes.end());
}

}  // namespace

ClusterStepTime assemble_step_time(const TimeModel& model, const ArchConfig& config, const TrainingMemory& memory,
                                   const ClusterSpec& cluster, const ClusterTimeOptions& options,
                                   const LayerTimes& times) {
  const ParallelLayout& l = memory.layout;
  detail::check_one_recipe(model, l);
  ClusterStepTime out;
  out.moe = config.ffn.is_moe();
  out.shape = step_shape_of(l, out.moe, cluster.nvlink_domain());
  out.communication = step_communication(config, memory, cluster, options.communication);
  apply_run_fit_to_communication(model, out.communication);
  out.notes = times.notes;
  out.out_of_range = times.out_of_range;
  const Workload w = time_workload(l, options);
  const std::vector<ModelChunk> chunks = model_chunks(config, l);
  double slowest_micro_batch = 0.0;
  double slowest_seconds = -1.0;
  for (const StageMemory& stage : memory.stages) {
    const StageCommunication& comm = out.communication[static_cast<std::size_t>(stage.pipeline_rank)];
    const EpOverlapSeconds overlap = ep_overlap_seconds(model, l, options.communication.moe, comm, times,
                                                        stage_executions(config, l, chunks, stage.pipeline_rank));
    const StageStepTime s = step_time_of_stage(config, l, chunks, stage, times, comm, overlap,
                                               optimizer_step_seconds(model, l, stage));
    slowest_micro_batch = std::max(slowest_micro_batch, s.micro_batch_seconds);
    if (s.time.seconds > slowest_seconds) {
      slowest_seconds = s.time.seconds;
      out.slowest_stage = s.time.pipeline_rank;
      out.memory_bound_share = s.base_seconds > 0.0 ? s.memory_bound_seconds / s.base_seconds : 0.0;
      const StageExecutions e = stage_executions(config, l, chunks, stage.pipeline_rank);
      const bool last = stage.pipeline_rank == l.pp - 1;
      for (std::size_t k = 0; k < time_provenance_count; ++k) {
        const double seconds = stage_part_sum(e, times, stage.has_embedding, stage.has_lm_head, last,
                                              [k](const LayerPartTimes& p) -> const PartSeconds& { return p.by_provenance[k]; });
        out.provenance_share[k] = s.base_seconds > 0.0 ? seconds / s.base_seconds : 0.0;
      }
    }
    out.stages.push_back(s.time);
  }
  out.bubble_seconds = pipeline_bubble_micro_batches(l.pp, l.virtual_stages) * slowest_micro_batch;
  out.seconds_per_step = slowest_seconds + out.bubble_seconds;
  set_step_time_calibration(out, model);
  set_step_time_throughput(out, model, config, l, w);
  set_step_time_components(out);
  set_step_time_profile_and_notes(out, model, config, cluster);
  return out;
}

}  // namespace budget
