// What Megatron-Core's MoE layer and selective recompute run beyond the op list's per-op times
// (docs/cluster.md, "MoE dispatch" and "Per-module selective recompute"; step_time/step_compute.hpp).
//
// The token dispatcher (megatron/core/transformer/moe/token_dispatcher.py at d98e8a64,
// MoEAlltoAllTokenDispatcher and MoEFlexTokenDispatcher), per MoE layer execution on an EP rank
// that receives R rows of H:
//   - permutation 2 (alltoall only, when the rank holds more than one expert): the received rows
//     sorted by local expert before the experts (dispatch_postprocess: sort_chunks_by_idxs, or the
//     drop-and-pad transpose .contiguous()) and back after them (combine_preprocess); each a read and
//     a write of R·H bf16 elements, 4·R·H bytes, twice forward and twice backward (the gradients);
//     the flex dispatcher's kernels lay the rows out themselves (its permute is the op list's
//     dispatch).
//   - the host synchronisation of the dropless path: the split sizes of the all-to-all (or the
//     tokens per expert of the grouped GEMM) are copied to the host and the CPU waits for them
//     (_maybe_dtoh_and_synchronize, once per forward; DeepEP's and HybridEP's dispatch likewise
//     return counts to the host). The GPU then idles while the CPU launches what follows: counted
//     as four launches' CPU time per forward (an estimate of a device-to-host copy's round trip and
//     the launch of the all-to-all, at TimeModelOptions::host_launch_seconds a launch). With
//     --moe-pad-expert-input-to-capacity the shapes are fixed: no synchronisation; nor under CUDA
//     graphs of whole layers or iterations (a captured graph cannot wait for the host).
//   - the router without --moe-router-fusion: topk_routing_with_score_function (softmax or sigmoid,
//     group-limited top-k, scaling, the scatter into the routing map) and the auxiliary loss
//     (compute_routing_scores_for_aux_loss, the load-balancing loss, its auto-scaler) are about 30
//     PyTorch ops forward and as many backward (counted in moe_utils.py and router.py at d98e8a64);
//     fused (TE's fused_topk_with_score_function and fused aux-loss kernels) about 3 and 3. Without
//     CUDA graphs each launch costs the CPU TimeModelOptions::host_launch_seconds (step_stack.cpp)
//     that these tiny kernels cannot hide: exposed, beyond the 2 launches the router top-k op
//     already counts.
#include <algorithm>

#include "step_time/step_compute.hpp"

namespace budget {

namespace {

/// The dropless dispatcher's host synchronisation per forward, in launches (an estimate, above).
constexpr double host_sync_launches = 4.0;
/// Router launches forward + backward without and with --moe-router-fusion (counted above), less
/// the 2 the op list's router top-k counts.
constexpr double router_launches_unfused = 60.0 - 2.0;
constexpr double router_launches_fused = 6.0 - 2.0;
/// Of the EP all-to-all the combined 1F1B's windows could cover, the share hidden in practice:
/// 0.37, Megatron-Bridge's matched A/B of --overlap-moe-expert-parallel-comm on Qwen3-30B-A3B on 16
/// H100 (HybridEP, EP16): "communication hidden by GEMM/attention increasing from 0.11% to 36.55%"
/// (NVIDIA-NeMo/Megatron-Bridge@067f987:skills/nemo-mbridge-perf-moe-hardware-configs/SKILL.md:127-129).
/// The windows themselves would hide nearly all of it there (a two-stream simulation of the schedule
/// below: 94%): kernel contention and the CPU's issue of two interleaved micro-batches are not
/// modelled; this one measured share stands for them (docs/cluster.md, "MoE dispatch").
constexpr double ep_overlap_efficiency = 0.37;

/// The op kinds a selective recompute of `module` runs forward again (Megatron-Core's
/// --recompute-modules, transformer_config.py at d98e8a64; the modules' forwards in
/// transformer_layer.py, attention.py, multi_latent_attention.py and moe_layer.py).
bool recomputed_by(RecomputeModule module, OpKind kind) {
  switch (module) {
    case RecomputeModule::core_attn: return kind == OpKind::attention_scores;
    case RecomputeModule::layernorm: return kind == OpKind::norms;
    case RecomputeModule::mla_up_proj: return kind == OpKind::q_up_projection || kind == OpKind::kv_up_projection;
    case RecomputeModule::mlp: return kind == OpKind::dense_ffn || kind == OpKind::dense_activation;
    case RecomputeModule::moe_act: return kind == OpKind::expert_activation;
    case RecomputeModule::shared_experts: return kind == OpKind::shared_experts || kind == OpKind::shared_activation;
    case RecomputeModule::moe:
      return kind == OpKind::router || kind == OpKind::router_topk || kind == OpKind::router_softmax_fp32 ||
             kind == OpKind::routed_experts || kind == OpKind::expert_dispatch || kind == OpKind::expert_combine ||
             kind == OpKind::expert_activation || kind == OpKind::routing_weights || kind == OpKind::combine_zero ||
             kind == OpKind::shared_experts || kind == OpKind::shared_activation;
  }
  return false;
}

constexpr RecomputeModule all_recompute_modules[] = {
    RecomputeModule::core_attn, RecomputeModule::moe_act, RecomputeModule::layernorm, RecomputeModule::mla_up_proj,
    RecomputeModule::mlp,       RecomputeModule::moe,     RecomputeModule::shared_experts};

}  // namespace

double selective_recompute_seconds(const ParallelLayout& l, const LayerTimes& times, const StageExecutions& e) {
  if (l.recompute.kind != RecomputeKind::selective) return 0.0;
  double t = 0.0;
  for (std::size_t k = 0; k < op_kind_count; ++k) {
    const auto kind = static_cast<OpKind>(k);
    bool recomputed = false;
    for (const RecomputeModule m : all_recompute_modules) recomputed = recomputed || (l.recompute.recomputes(m) && recomputed_by(m, kind));
    if (!recomputed) continue;
    // A module's repeated forward: its kinds' seconds at 4 passes less at 3, per execution of the
    // layers that hold it.
    switch (op_traits(kind).part) {
      case LayerPart::attention: t += mixer_op_recompute_seconds(e, times, k); break;
      case LayerPart::dense: t += e.dense_layers() * (times.base4.by_kind[k] - times.base3.by_kind[k]); break;
      case LayerPart::moe_tp: t += e.moe_layers * (times.moe4.by_kind[k] - times.moe3.by_kind[k]); break;
      case LayerPart::routed: t += e.moe_layers * (times.routed4.by_kind[k] - times.routed3.by_kind[k]); break;
      default: break;
    }
  }
  if (l.recompute.recomputes(RecomputeModule::moe)) t += e.moe_layers * times.moe_dispatch_forward_seconds;
  return t;
}

void add_moe_dispatch_times(LayerTimes& times, const MoeDispatchSeconds& d, bool again) {
  const auto add_dispatch = [&d](LayerPartTimes& p, double extra_forwards) {
    const double seconds = d.training() + extra_forwards * d.forward();
    p.routed += seconds;
    p.memory_bound.routed += d.memory_bound() + extra_forwards * d.forward_memory_bound;
    p.by_provenance[static_cast<std::size_t>(TimeProvenance::assumed)].routed += seconds;
  };
  add_dispatch(times.routed3, 0.0);
  if (again) {
    add_dispatch(times.routed4, 1.0);
  } else {
    times.routed4 = times.routed3;
  }
  times.moe_dispatch_forward_seconds = d.forward();
}

bool selective_recompute_in_moe(const RecomputeSpec& r) {
  return r.kind == RecomputeKind::selective &&
         (r.recomputes(RecomputeModule::moe) || r.recomputes(RecomputeModule::moe_act) ||
          r.recomputes(RecomputeModule::shared_experts));
}

MoeDispatchSeconds moe_dispatch_seconds(const TimeModel& model, const ArchConfig& config, const ParallelLayout& l,
                                        const MoeDispatchOptions& options, double rows, std::int64_t local_experts) {
  MoeDispatchSeconds s;
  // Megatron-Core's dispatcher: none of it on the PyTorch-eager stack (its layer rows time their own
  // balanced dispatch).
  const bool megatron = model.options().stack == KernelStack::megatron_core_te ||
                        (model.options().stack == KernelStack::profile && model.profile().source.stack == "megatron-core-te");
  if (!megatron) return s;
  const double copy_bytes_per_s = model.profile().peaks.copy_gbytes_per_s * 1e9;
  const double indexed = model.layer_correction().factor[static_cast<std::size_t>(TimeClass::indexed)];
  if (l.dispatcher != MoeDispatcher::flex && local_experts > 1) {
    const double copy = 4.0 * rows * static_cast<double>(config.hidden_size) / copy_bytes_per_s * indexed;
    s.forward_memory_bound = 2.0 * copy;
    s.backward_memory_bound = 2.0 * copy;
  }
  // A CUDA graph cannot wait for the host: whole-layer and full-iteration graphs (and the moe module's)
  // capture only sync-free MoE layers (drop-and-pad; CudaGraphModule.moe, enums.py:70 at d98e8a64).
  const bool graphed_layer = model.options().cuda_graphs || model.options().cuda_graph_modules.moe;
  const bool dropless_sync = !(options.pad_to_capacity && l.capacity_factor > 0.0) && !graphed_layer;
  const double launch_seconds = model.options().host_launch_seconds;
  if (dropless_sync) s.forward_exposed += host_sync_launches * launch_seconds;
  const CudaGraphModules& graphed = model.options().cuda_graph_modules;
  if (!model.options().cuda_graphs && !graphed.moe_router && !graphed.moe) {
    const double launches = options.router_fusion ? router_launches_fused : router_launches_unfused;
    s.forward_exposed += 0.5 * launches * launch_seconds;
    s.backward_exposed += 0.5 * launches * launch_seconds;
  }
  return s;
}

EpOverlapSeconds ep_overlap_seconds(const TimeModel& model, const ParallelLayout& l, const MoeDispatchOptions& options,
                                    const StageCommunication& comm, const LayerTimes& times, const StageExecutions& e) {
  EpOverlapSeconds out;
  const CommTerm* ep = nullptr;
  for (const CommTerm& term : comm.terms) {
    if (term.overlapped && term.name == "ep" && term.calls_per_step > 0.0) ep = &term;
  }
  if (ep == nullptr) return out;
  // Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm;
  // megatron/core/models/common/model_chunk_schedule_plan.py:243-245 at d98e8a64) runs one
  // micro-batch's layer forward beside another's backward, in three windows:
  //   communication: combine_bwd         | dispatch_fwd → dispatch_bwd        | combine_fwd
  //   computation:   pre-dispatch fwd    | MLP bwd (dgrad, wgrad) → MLP fwd   | pre-dispatch bwd
  // (pre-dispatch: the attention part and the router and shared experts). A window takes the longer
  // of the two: of each all-to-all, what its window's computation covers is hidden. Forward and
  // backward of a part: its time at 4 passes less at 3, and the rest.
  const double a = ep->seconds_per_step / ep->calls_per_step;
  const double attention_fwd = times.base4.attention - times.base3.attention;
  const double moe_fwd = times.moe4.moe_tp_part - times.moe3.moe_tp_part;
  const double pre_fwd = std::max(0.0, attention_fwd + moe_fwd);
  const double pre_bwd = std::max(0.0, times.base3.attention - attention_fwd + times.moe3.moe_tp_part - moe_fwd);
  const double mlp = std::max(0.0, times.routed3.routed);
  const double per_layer = std::min(a, pre_fwd) + std::min(2.0 * a, mlp) + std::min(a, pre_bwd);
  const double pairs = static_cast<double>(l.micro_batches) * e.moe_layers;
  // Of what the windows could cover, the share measured hidden (ep_overlap_efficiency, above).
  const double hidden = ep_overlap_efficiency * std::min(ep->seconds_per_step, pairs * per_layer);
  out.exposed = ep->seconds_per_step - hidden;
  // The communication kernels' SMs (MoeDispatchOptions::comm_sms) are taken from the computation
  // while they run: the hidden seconds leave hidden · SMs_comm / SMs of work to do after.
  const double sms = static_cast<double>(model.profile().device.sm_count);
  if (sms > 0.0) {
    const double comm_sms = options.comm_sms > 0 ? static_cast<double>(options.comm_sms)
                            : l.dispatcher == MoeDispatcher::flex ? 20.0 : 32.0;
    out.slowdown = hidden * std::min(1.0, comm_sms / sms);
  }
  return out;
}

}  // namespace budget
