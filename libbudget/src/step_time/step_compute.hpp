#pragma once
// The per-layer-part compute times of one GPU's shard under a layout (private to the step_time
// domain and the search above it): computed once per (TP, EP, ETP, CP, micro-batch size,
// recompute, imbalance) and reused by the layout search.
#include <array>
#include <initializer_list>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "budget/cluster_time.hpp"
#include "budget/op_traits.hpp"  // LayerPart (the part of a layer an op belongs to), op_kind_count
#include "budget/ops.hpp"
#include "layout/stage_executions.hpp"

namespace budget {

/// Seconds of the parts of a layer (one execution, one micro-batch on one GPU) that compute or move;
/// the parts are LayerPartTimes' (below).
struct PartSeconds {
  double attention = 0.0;    ///< norms, projections, the attention core
  double dense_ffn = 0.0;    ///< a dense layer's FFN
  double moe_tp_part = 0.0;  ///< router, top-k, shared experts
  double routed = 0.0;       ///< routed experts, dispatch, combine, activation
  double embedding = 0.0;    ///< the embedding lookup (first stage)
  double head = 0.0;         ///< the LM head (last stage)
  double final_norm = 0.0;   ///< the norm before the head
};

/// Seconds of one execution of each part of a layer, for one micro-batch on one GPU.
struct LayerPartTimes {
  double attention = 0.0;       ///< norms, projections, the attention core
  double dense_ffn = 0.0;
  double moe_tp_part = 0.0;     ///< router, top-k, shared experts
  double routed = 0.0;          ///< routed experts' grouped GEMMs, dispatch, combine, activation
  double embedding = 0.0;
  double head = 0.0;        ///< LM head (with a vocabulary)
  double final_norm = 0.0;  ///< the norm before the head (last stage, always)
  /// Of each part above, the memory-bound ops' seconds (time classes indexed, elementwise and glue:
  /// norms, activations, dispatch and combine, the embedding lookup, the layer glue), which scale
  /// with the GPU's memory bandwidth rather than its tensor-core rate.
  PartSeconds memory_bound;
  /// Of each part, the seconds by provenance (TimeProvenance order; the row path only, zero on the
  /// indexed path): where the compute's times come from.
  std::array<PartSeconds, time_provenance_count> by_provenance{};
  /// The seconds of each op kind (OpKind order) of the parts timed: what a selective recompute of a
  /// module repeats is its kinds' seconds at 4 passes less at 3 (cluster_time_moe.cpp).
  std::array<double, op_kind_count> by_kind{};
  bool out_of_range = false;
};

/// One layer kind's times (layer_kinds.hpp), of a stack whose layers differ: the `attention` part
/// of each (and its attention_core, memory_bound and by_provenance) is the kind's mixer with its
/// norms and layer glue, timed on one layer of the kind at its TP shard; its FFN is the stack's
/// dense FFN (base3) or MoE parts (moe3, routed3).
struct LayerKindTimes {
  int kind = 0;
  LayerPartTimes times3, times4;  ///< at 3 and 4 training passes (4: recompute)
};

/// Adds `seconds` to `part`'s field of `parts` (LayerPartTimes or PartSeconds: the same field names).
template <class Parts>
void add_part_seconds(Parts& parts, LayerPart part, double seconds) {
  switch (part) {
    case LayerPart::attention: parts.attention += seconds; break;
    case LayerPart::dense: parts.dense_ffn += seconds; break;
    case LayerPart::moe_tp: parts.moe_tp_part += seconds; break;
    case LayerPart::routed: parts.routed += seconds; break;
    case LayerPart::embedding: parts.embedding += seconds; break;
    case LayerPart::head: parts.head += seconds; break;
    case LayerPart::final_norm: parts.final_norm += seconds; break;
    case LayerPart::none: break;
  }
}

/// Times per part of a one-layer config `c` at `tokens` tokens and `passes` training passes, only
/// the ops of the `wanted` parts; `indexed`: through the time model's indexed path (the same
/// seconds, out_of_range not known, left false); `every_op`: time every op of `c` on that path (the
/// same seconds, the reference ranking's cost).
LayerPartTimes part_times(const TimeModel& model, const ArchConfig& c, Workload w, std::int64_t tokens,
                          std::int64_t passes, std::initializer_list<LayerPart> wanted, bool indexed, bool every_op);

struct LayerTimes {
  LayerPartTimes base3, base4, moe3, moe4, routed3, routed4;
  /// Empty for stacks of one kind of layer (ArchConfig::has_per_layer_kinds() false), whose
  /// layers' mixer part is base3.attention; else one entry per kind present, in kind order.
  std::vector<LayerKindTimes> kinds;
  /// One more forward of the MoE dispatcher's kernels beyond the op list (moe_dispatch_seconds(); in
  /// routed3 and routed4 already): what a selective recompute of the moe module repeats.
  double moe_dispatch_forward_seconds = 0.0;
  bool out_of_range = false;
  std::vector<std::string> notes;
};

/// The mixer parts (`attention`: norms, the mixer, the layer glue) of a stage's executions `e`, with
/// `pick` choosing a number of each LayerPartTimes at 3 passes (`pick4`: at 4, recompute): uniform
/// stacks e.layers · pick(base3); per-layer-kind stacks Σ_kind executions · pick(its times3).
template <class Pick>
double mixer_part_sum(const StageExecutions& e, const LayerTimes& times, const Pick& pick) {
  if (times.kinds.empty()) return e.layers * pick(times.base3);
  double seconds = 0.0;
  for (const LayerKindTimes& k : times.kinds) seconds += e.kind_layers[static_cast<std::size_t>(k.kind)] * pick(k.times3);
  return seconds;
}
/// Full recompute's extra forward of the mixer parts: recomputed executions · (time at 4 passes −
/// at 3), per kind.
double mixer_recompute_seconds(const StageExecutions& e, const LayerTimes& times);
/// Selective recompute of one op kind `op` of the mixer parts (attention scores for core_attn, the
/// norms, the projections): executions · (its seconds at 4 passes − at 3), per layer kind.
double mixer_op_recompute_seconds(const StageExecutions& e, const LayerTimes& times, std::size_t op);

/// Memoised part times (one model, one workload, one imbalance): keyed by (part group, the shard's
/// sizes, tokens, passes, the routed expert count and width, the shared expert width) of the part's
/// config. One cache may serve several configs when they differ in nothing else than those three
/// widths and counts (and name and notes): one *structure* (search/structure_share.hpp, docs/cluster.md,
/// "Shared work"). That rests on an invariant of layer_times(): a part group's times depend on the
/// config only through the shard sizes of its key; the attention, dense-FFN, embedding, LM-head and
/// final-norm group (0) does not read the routed or shared experts (key values 0), the router and
/// shared-expert group (1) reads the expert count and shared width, the routed group (2) the expert
/// count and width. A part that comes to depend on another field must add it to the key.
struct PartTimesCache {
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t>;
  std::map<Key, LayerPartTimes> entries;
  /// Predict through the indexed path (predict_step_time()'s seconds bit for bit, out_of_range
  /// not known and left false): for ranking layouts; the layouts kept are timed again without it.
  bool indexed = false;
  /// The indexed path times every op of a part's one-layer config, not only the part's own (the
  /// same seconds, more work): the cost of the search before that filter, for the reference
  /// ranking (LayoutSearchOptions::share_work false) that bench_cluster measures beside.
  bool time_every_op = false;
  /// Set when threads share the cache: held around each lookup and insertion (a part is computed
  /// outside it; two threads computing one part insert the same value).
  std::mutex* mutex = nullptr;

  /// The entry of `key`, computed by `compute()` and kept when absent.
  template <class Compute>
  LayerPartTimes find_or_add(const Key& key, const Compute& compute) {
    {
      std::unique_lock<std::mutex> lock;
      if (mutex != nullptr) lock = std::unique_lock<std::mutex>(*mutex);
      const auto it = entries.find(key);
      if (it != entries.end()) return it->second;
    }
    LayerPartTimes times = compute();
    std::unique_lock<std::mutex> lock;
    if (mutex != nullptr) lock = std::unique_lock<std::mutex>(*mutex);
    entries.emplace(key, times);
    return times;
  }
};

/// The part times of `layout`'s shards (forward + backward, and at 4 passes where recompute needs it).
LayerTimes layer_times(const TimeModel& model, const ArchConfig& config, const ParallelLayout& layout,
                       const ClusterTimeOptions& options, PartTimesCache* cache = nullptr);

/// t_s: one micro-batch's forward and backward on a pipeline stage with executions `e`, from the
/// part times (docs/cluster.md, "Step time"): attention per execution, the dense FFN or the MoE
/// parts per execution of each, full recompute's extra forward (time at 4 passes − at 3),
/// selective recompute's attention core again, the embedding, LM head and final norm where held.
double stage_micro_batch_seconds(const ParallelLayout& layout, const LayerTimes& times, const StageExecutions& e,
                                 bool has_embedding, bool has_lm_head, bool last_stage);

/// The step time from precomputed part times (the model's FP8 recipe the layout's: checked).
ClusterStepTime assemble_step_time(const TimeModel& model, const ArchConfig& config, const TrainingMemory& memory,
                                   const ClusterSpec& cluster, const ClusterTimeOptions& options,
                                   const LayerTimes& times);

/// The workload the layout's attention is timed with.
Workload time_workload(const ParallelLayout& layout, const ClusterTimeOptions& options);

/// One micro-batch's forward and backward seconds of a stage from per-part seconds (`pick` chooses
/// the PartSeconds of each LayerPartTimes: all seconds, the memory-bound ones, one provenance's).
template <class Pick>
double stage_part_sum(const StageExecutions& e, const LayerTimes& times, bool embedding, bool head, bool last,
                      const Pick& pick) {
  const PartSeconds& base = pick(times.base3);
  const PartSeconds& moe = pick(times.moe3);
  const PartSeconds& routed = pick(times.routed3);
  const double mixers = mixer_part_sum(e, times, [&pick](const LayerPartTimes& p) { return pick(p).attention; });
  return mixers + e.dense_layers() * base.dense_ffn + e.moe_layers * (moe.moe_tp_part + routed.routed) +
         (embedding ? base.embedding : 0.0) + (head ? base.head : 0.0) + (last ? base.final_norm : 0.0);
}

/// The MoE token dispatcher's kernels beyond the op list, per MoE layer execution on an EP rank that
/// receives `rows` rows for `local_experts` experts (cluster_time_moe.cpp): permutation 2's copies
/// (alltoall, more than one local expert; memory-bound, at the copy bandwidth and the indexed class's
/// factor), the dropless path's host synchronisation and the router's CPU launches without CUDA graphs
/// (exposed).
struct MoeDispatchSeconds {
  double forward_memory_bound = 0.0, backward_memory_bound = 0.0;
  double forward_exposed = 0.0, backward_exposed = 0.0;
  double forward() const { return forward_memory_bound + forward_exposed; }
  double training() const { return forward() + backward_memory_bound + backward_exposed; }
  double memory_bound() const { return forward_memory_bound + backward_memory_bound; }
};
MoeDispatchSeconds moe_dispatch_seconds(const TimeModel& model, const ArchConfig& config, const ParallelLayout& layout,
                                        const MoeDispatchOptions& options, double rows, std::int64_t local_experts);
/// Adds the dispatcher's seconds `d` to the routed part of `times` (routed3 one training pass; routed4,
/// when `again` (recompute or the EP overlap's split), one more forward; else routed4 = routed3) and
/// sets moe_dispatch_forward_seconds.
void add_moe_dispatch_times(LayerTimes& times, const MoeDispatchSeconds& d, bool again);
/// Per micro-batch on a stage, the forwards selective recompute runs again: every op kind of the
/// recomputed modules (RecomputeSpec::recomputes()) at 4 passes less at 3, per execution of the layers
/// holding it, and the dispatcher's kernels again when the moe module is recomputed.
double selective_recompute_seconds(const ParallelLayout& layout, const LayerTimes& times, const StageExecutions& e);
/// An overlapped EP all-to-all (--overlap-moe-expert-parallel-comm) on a stage: what its windows of
/// Megatron-Core's combined 1F1B leave exposed, and the compute its kernels slow (the hidden seconds ×
/// the SMs they occupy / the GPU's SMs, the profile's device.sm_count; 0 when unknown).
struct EpOverlapSeconds {
  double exposed = 0.0;
  double slowdown = 0.0;
};
EpOverlapSeconds ep_overlap_seconds(const TimeModel& model, const ParallelLayout& layout, const MoeDispatchOptions& options,
                                    const StageCommunication& comm, const LayerTimes& times, const StageExecutions& e);
/// The optimizer step of one GPU of `stage` (cluster_time_optimizer.cpp): the owned parameters' Adam
/// update and gradient norm and the held gradients zeroed, at the copy bandwidth.
double optimizer_step_seconds(const TimeModel& model, const ParallelLayout& layout, const StageMemory& stage);
/// Whether a selective recompute repeats a part of the MoE layer (moe, moe_act, shared_experts).
bool selective_recompute_in_moe(const RecomputeSpec& recompute);

/// The run fit of the model (time_model.hpp, run_fit()) on the step's communication: each
/// collective's seconds × the factor of the link it crosses (inter- or intra-node); the stages'
/// exposed and overlapped sums recomputed. No run fit: unchanged.
void apply_run_fit_to_communication(const TimeModel& model, std::vector<StageCommunication>& communication);
/// The run fit's constant per step (0 without one) and the notes on the kernel stack, the FP8
/// recipe, the run fit and the provenance of the compute (cluster_time_calibration.cpp).
void set_step_time_calibration(ClusterStepTime& out, const TimeModel& model);

}  // namespace budget
