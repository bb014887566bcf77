#pragma once
// The per-layer-part compute times of one GPU's shard under a layout (private to the cluster
// domain): computed once per (TP, EP, ETP, CP, micro-batch size, recompute, imbalance) and reused
// by the layout search.
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "budget/cluster_time.hpp"
#include "cluster/stage_executions.hpp"

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
  double attention_core = 0.0;  ///< the core alone (what selective recompute reruns)
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
  bool out_of_range = false;
};

struct LayerTimes {
  LayerPartTimes base3, base4, moe3, moe4, routed3, routed4;
  bool out_of_range = false;
  std::vector<std::string> notes;
};

/// Memoised part times (one model, one workload, one imbalance): keyed by (part group, the shard's
/// sizes, tokens, passes, the routed expert count and width, the shared expert width) of the part's
/// config. One cache may serve several configs when they differ in nothing else than those three
/// widths and counts (and name and notes): one *structure* (cluster/structure_share.hpp, docs/cluster.md,
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

namespace detail {
/// budget::Error ("fp8") unless `model` times the GEMMs with `layout_fp8`, the FP8 recipe the
/// layout's memory is priced with: one recipe prices memory and time (the search's recipe, a fixed
/// layout's fp8).
void check_one_fp8_recipe(const TimeModel& model, Fp8Recipe layout_fp8);
}  // namespace detail

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
  return e.layers * base.attention + e.dense_layers() * base.dense_ffn + e.moe_layers * (moe.moe_tp_part + routed.routed) +
         (embedding ? base.embedding : 0.0) + (head ? base.head : 0.0) + (last ? base.final_norm : 0.0);
}

/// The run fit of the model (time_model.hpp, run_fit()) on the step's communication: each
/// collective's seconds × the factor of the link it crosses (inter- or intra-node); the stages'
/// exposed and overlapped sums recomputed. No run fit: unchanged.
void apply_run_fit_to_communication(const TimeModel& model, std::vector<StageCommunication>& communication);
/// The run fit's constant per step (0 without one) and the notes on the kernel stack, the FP8
/// recipe, the run fit and the provenance of the compute (cluster_time_calibration.cpp).
void set_step_time_calibration(ClusterStepTime& out, const TimeModel& model);

}  // namespace budget
