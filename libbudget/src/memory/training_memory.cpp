// Memory per GPU per pipeline stage (docs/cluster.md). Sources cited below at Megatron-LM commit
// d98e8a64ddf34856e74b24714e3bedb2f5a39553 and Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models" (arXiv 2205.05198), §4 and Table 2.
#include "budget/training_memory.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"
#include "memory/memory_extras.hpp"
#include "memory/memory_shapes.hpp"
#include "layout/dispatcher_limits.hpp"
#include "layout/pipeline_schedule_rank.hpp"
#include "memory/dispatcher_buffers.hpp"
#include "memory/moe_memory.hpp"

namespace budget {
LayerActivationBytes layer_activation_bytes(const ArchConfig& config, std::int64_t layer, const ParallelLayout& layout,
                                            bool recomputed) {
  layout.validate(config, "layout");
  if (layer < 1 || layer > config.num_layers) {
    throw Error(fmt::format("layer {} is not in [1, {}]", layer, config.num_layers), "layer");
  }
  return memory_detail::activation_bytes(config, memory_detail::read_shapes(config), layer, layout, recomputed);
}

namespace {

/// What every stage's memory shares: the op list's shapes, the chunks and the divisors.
struct MemoryStageShared {
  MemoryStageShared(const ArchConfig& arch, const ParallelLayout& layout) : config(arch), l(layout) {}
  const ArchConfig& config;
  const ParallelLayout& l;
  const ClusterSpec* cluster = nullptr;
  memory_detail::OpListShapes s;
  std::vector<memory_detail::LayerParams> layers;  ///< per-layer kinds: each layer's parameters (else empty)
  std::vector<ModelChunk> chunks;
  /// Per physical layer (1-based), the pipeline ranks storing it (replicated loop placement; else empty).
  std::vector<std::int64_t> ranks_storing;
  ParameterBytes per_param;
  double t = 1.0;              ///< TP
  double r = 1.0;              ///< TP under sequence parallelism, else 1
  double expert_shards = 1.0;  ///< ETP·EP
  double H = 0.0;
  std::int64_t padded_vocab = 0;
  double V = 0.0;  ///< padded vocabulary
  double T = 0.0;  ///< b·s/CP, tokens of one micro-batch on a rank
};

/// Per physical layer, the distinct pipeline ranks whose chunks execute (and so store) it.
std::vector<std::int64_t> memory_ranks_storing(const ArchConfig& config, const ParallelLayout& l,
                                               const std::vector<ModelChunk>& chunks) {
  std::vector<std::int64_t> count(static_cast<std::size_t>(config.num_layers) + 1, 0);
  std::vector<std::int64_t> last_rank(count.size(), -1);
  for (std::int64_t rank = 0; rank < l.pp; ++rank) {
    for (std::size_t c = static_cast<std::size_t>(rank); c < chunks.size(); c += static_cast<std::size_t>(l.pp)) {
      for (const std::int64_t layer : chunks[c].stored_layers) {
        std::int64_t& seen = last_rank[static_cast<std::size_t>(layer)];
        if (seen != rank) ++count[static_cast<std::size_t>(layer)], seen = rank;
      }
    }
  }
  return count;
}

MemoryStageShared memory_stage_shared(const ArchConfig& config, const ParallelLayout& l) {
  MemoryStageShared m(config, l);
  m.s = memory_detail::read_shapes(config);
  m.layers = memory_detail::per_layer_params(config);
  m.chunks = model_chunks(config, l);
  if (l.loop_placement == LoopPlacement::replicated) m.ranks_storing = memory_ranks_storing(config, l, m.chunks);
  m.per_param = parameter_bytes(l);
  m.t = static_cast<double>(l.tp);
  m.r = l.sequence_parallel_active() ? m.t : 1.0;
  m.expert_shards = static_cast<double>(l.expert_tp() * l.ep);
  m.H = static_cast<double>(config.hidden_size);
  m.padded_vocab = l.padded_vocab(config.vocab_size);
  m.V = static_cast<double>(m.padded_vocab);
  m.T = memory_detail::micro_batch_tokens(l);
  return m;
}

/// What the stage's stored layers add up to beyond their parameters: the largest layer per GPU
/// (FSDP's gather buffers) and the FP8 GEMMs (delayed scaling's state).
struct StoredLayerExtras {
  double largest_layer = 0.0;
  double fp8_gemms = 0.0;
  memory_detail::LayerParams shared;  ///< the stored layers also stored on another rank (replicated)
  std::int64_t share_ranks = 1;        ///< the most ranks storing one of them
};

/// GEMMs of one layer that TE runs in FP8: QKV (MLA: q down and up, or q; kv down and up) and the
/// output projection; fc1 and fc2 of the dense MLP, the shared experts and each local expert.
double layer_fp8_gemms(const ArchConfig& c, const ParallelLayout& l, bool moe) {
  const auto& a = c.attention;
  double gemms = a.mla ? (a.mla->q_lora_rank > 0 ? 5.0 : 4.0) : 2.0;
  if (!moe) return gemms + 2.0;
  if (c.ffn.num_shared_experts > 0) gemms += 2.0;
  return gemms + 2.0 * static_cast<double>(c.ffn.num_experts / l.ep);
}

/// Parameters of the layers the stage stores: every stored layer once (a looped layer counts once
/// however often it runs; a rank's chunks share one copy of replicated loop weights). Fills the
/// stage's sorted stored layers and its executed-layer count.
memory_detail::LayerParams memory_stored_layer_params(const MemoryStageShared& m,
                                                      const std::vector<const ModelChunk*>& own, StageMemory& stage,
                                                      StoredLayerExtras& extras) {
  // The chunks' stored layers gathered, sorted and made unique (replicated loop weights: a rank's
  // chunks share one copy): O(n log n) in the stage's layers, not a search per layer.
  for (const ModelChunk* chunk : own) {
    stage.stored_layers.insert(stage.stored_layers.end(), chunk->stored_layers.begin(), chunk->stored_layers.end());
    stage.executed_layers += static_cast<std::int64_t>(chunk->executed_layers.size());
  }
  std::sort(stage.stored_layers.begin(), stage.stored_layers.end());
  stage.stored_layers.erase(std::unique(stage.stored_layers.begin(), stage.stored_layers.end()),
                            stage.stored_layers.end());
  memory_detail::LayerParams params;
  for (const std::int64_t layer : stage.stored_layers) {
    const bool moe = memory_detail::layer_is_moe(m.config, layer);
    memory_detail::LayerParams one = m.s.attention;
    if (!m.layers.empty()) {  // per-layer kinds: each layer's own (memory_shapes.cpp)
      one = m.layers[static_cast<std::size_t>(layer - 1)];
    } else {
      one += moe ? m.s.moe_ffn : m.s.dense_ffn;
    }
    params += one;
    const std::int64_t storing = m.ranks_storing.empty() ? 1 : m.ranks_storing[static_cast<std::size_t>(layer)];
    if (storing > 1) extras.shared += one, extras.share_ranks = std::max(extras.share_ranks, storing);
    extras.largest_layer =
        std::max(extras.largest_layer, one.tp_sharded / m.t + one.replicated + one.expert / m.expert_shards);
    extras.fp8_gemms += layer_fp8_gemms(m.config, m.l, moe);
  }
  return params;
}

/// Embedding on the first stage, LM head and final norm on the last (vocab-parallel over TP,
/// theoretical_memory_usage.py lines 247-267). Tied embeddings with PP > 1: the last stage keeps
/// its own copy of the word embeddings (Megatron's shared_embedding_or_output_weight), its
/// gradient all-reduced with the first stage's. Multi-token prediction modules sit with the chunk
/// that holds them (the last stage by default; a layout string's m places them).
void add_memory_end_stage_params(const MemoryStageShared& m, std::int64_t mtp_here, bool loss_here,
                                 const StageMemory& stage, memory_detail::LayerParams& params) {
  const ArchConfig& config = m.config;
  if (stage.has_embedding) params.tp_sharded += m.V * m.H;
  if (stage.has_lm_head) {
    const double head_bias = config.lm_head_bias ? m.V : 0.0;
    if (!config.tie_embeddings) params.tp_sharded += m.V * m.H + head_bias;
    else if (m.l.pp > 1) params.tp_sharded += m.V * m.H + head_bias;
    else params.tp_sharded += head_bias;
  }
  if (loss_here) params.replicated += m.s.final_norm;
  if (mtp_here > 0 && config.mtp_layers > 0) {
    const double share = static_cast<double>(mtp_here) / static_cast<double>(config.mtp_layers);
    params.tp_sharded += share * (m.s.mtp_params - m.s.mtp_expert_params);
    params.expert += share * m.s.mtp_expert_params;
  }
}

/// Parameters per GPU (TP-sharded / t + replicated; routed experts / (ETP·EP)) and their weights,
/// gradients and optimizer states, sharded and cast as the layout says (parameter_memory: the
/// distributed optimizer, FSDP, FP8 copies); returns FSDP's transient gather buffers.
/// `layer_params` are the stored layers' alone (the FP8 linear weights: everything but the
/// embedding, output layer, norms and routers; MLA's down projections counted as not FP8).
double set_memory_parameter_components(const MemoryStageShared& m, const memory_detail::LayerParams& params,
                                       const memory_detail::LayerParams& layer_params, const StoredLayerExtras& extras,
                                       StageMemory& stage) {
  stage.dense_params = params.tp_sharded / m.t + params.replicated;
  stage.expert_params = params.expert / m.expert_shards;
  stage.shared_dense_params = extras.shared.tp_sharded / m.t + extras.shared.replicated;
  stage.shared_expert_params = extras.shared.expert / m.expert_shards;
  stage.share_ranks = extras.share_ranks;
  const double fp8_linear = layer_params.tp_sharded / m.t + layer_params.expert / m.expert_shards;
  const ParameterMemory p = parameter_memory(m.l, stage.dense_params, stage.expert_params, fp8_linear,
                                             extras.largest_layer);
  MemoryComponents& c = stage.by_component;
  c.weights = p.weights + fp8_scaling_state_bytes(m.l, extras.fp8_gemms);
  c.gradients = p.gradients;
  c.optimizer_states = p.optimizer;
  return p.gather_buffers;
}

/// Activations of one micro-batch for each of the rank's chunks, and the transient bytes their
/// executions need: the largest layer transient and the largest fully recomputed layer's
/// activations (rebuilt during its backward).
struct MemoryChunkActivations {
  std::vector<double> per_chunk;
  double largest_recomputed_layer = 0.0;
  double transient = 0.0;
  double largest_kept_execution = 0.0;  ///< the most one layer execution keeps on the GPU
};

/// Full recompute of execution i of a chunk: the block method's first `full_layers` (0: all), or
/// every execution with the uniform method.
bool memory_execution_recomputed(const RecomputeSpec& rc, std::size_t i) {
  if (rc.kind != RecomputeKind::full) return false;
  return rc.method == RecomputeMethod::uniform || rc.full_layers == 0 ||
         static_cast<std::int64_t>(i) < rc.full_layers;
}

/// One chunk's kept bytes for one micro-batch. Full recompute keeps each recomputed execution's
/// input (uniform: only the first of each group of `full_layers`, the group rebuilt in the
/// backward). CPU offloading (--cpu-offloading-num-layers N, Megatron-Core cpu_offload.py) keeps the
/// first N executions' activations in host memory: none on the GPU but the one being copied.
double memory_chunk_kept_bytes(const MemoryStageShared& m, const ModelChunk& chunk, MemoryChunkActivations& out) {
  const ParallelLayout& l = m.l;
  const RecomputeSpec& rc = l.recompute;
  const std::int64_t group = rc.method == RecomputeMethod::uniform ? std::max<std::int64_t>(1, rc.full_layers) : 1;
  double bytes = 0.0, group_bytes = 0.0;
  // A layer's bytes depend on it only through its mixer and its FFN (activation_bytes(),
  // layer_transient_bytes()): each (mixer, FFN) kind is computed once per chunk, the same numbers.
  struct KindBytes {
    LayerMixer mixer;
    LayerFfn ffn;
    double whole, recomputed, transient;
  };
  std::vector<KindBytes> kinds;
  const auto bytes_of = [&](std::int64_t layer) -> const KindBytes& {
    const LayerMixer mixer = m.config.mixer_of_layer(layer);
    const LayerFfn ffn = m.config.ffn_of_layer(layer);
    for (const KindBytes& k : kinds) {
      if (k.mixer == mixer && k.ffn == ffn) return k;
    }
    kinds.push_back({mixer, ffn, memory_detail::activation_bytes(m.config, m.s, layer, l, false).total(),
                     memory_detail::activation_bytes(m.config, m.s, layer, l, true).total(),
                     memory_detail::layer_transient_bytes(m.config, l, layer)});
    return kinds.back();
  };
  for (std::size_t i = 0; i < chunk.executed_layers.size(); ++i) {
    const std::int64_t layer = chunk.executed_layers[i];
    const bool recomputed = memory_execution_recomputed(rc, i);
    const KindBytes& kind = bytes_of(layer);
    const double whole = kind.whole;
    const double kept = recomputed ? kind.recomputed : kind.whole;
    const bool offloaded = static_cast<std::int64_t>(i) < l.cpu_offload_layers;
    if (offloaded) {
      out.transient = std::max(out.transient, kept);  // the layer being copied to or from the host
    } else if (!recomputed || static_cast<std::int64_t>(i) % group == 0) {
      bytes += kept;
      out.largest_kept_execution = std::max(out.largest_kept_execution, kept);
    }
    if (recomputed) {
      group_bytes = static_cast<std::int64_t>(i) % group == 0 ? whole : group_bytes + whole;
      out.largest_recomputed_layer = std::max(out.largest_recomputed_layer, group_bytes);
    }
    out.transient = std::max(out.transient, kind.transient);
  }
  return bytes;
}

MemoryChunkActivations memory_chunk_activations(const MemoryStageShared& m, const std::vector<const ModelChunk*>& own) {
  const ParallelLayout& l = m.l;
  MemoryChunkActivations out;
  for (const ModelChunk* chunk : own) {
    double bytes = memory_chunk_kept_bytes(m, *chunk, out);
    if (chunk->embedding && m.config.vocab_size > 0) {
      // Embedding: the int64 token ids (8 bytes a token) and, with dropout, its mask (sbh),
      // theoretical_memory_usage.py lines 329-339.
      bytes += 8.0 * m.T + (l.dropout ? m.H * m.T / m.r : 0.0);
    }
    out.per_chunk.push_back(bytes);
  }
  return out;
}

/// Micro-batches in flight at the stage's peak: the schedule's peak count of saved chunk forwards,
/// each weighted 1 (budget/pipeline_schedule.hpp for Megatron's schedules and lines), in its closed
/// form (the simulation equals it for equal chunks: tests/unit/cluster/test_pipeline_schedule.cpp):
/// 1F1B min(m, PP − s); interleaved min(m·V, 2·(PP − s − 1) + (V − 1)·PP + 1). PP = 1: one.
std::int64_t memory_in_flight_micro_batches(const ParallelLayout& l, std::int64_t rank) {
  const std::vector<std::int64_t> ones(static_cast<std::size_t>(l.virtual_stages), 1);
  return schedule_detail::rank_peak_saved(ones, l.pp, rank, l.micro_batches);
}

/// Logits on the last stage, one micro-batch (the last stage runs each backward right after its
/// forward): the final norm's output 2H (the LM head input) and the fp32 logits the vocab-parallel
/// cross-entropy keeps for backward, 4·V/t a token (theoretical_memory_usage.py lines 368-376:
/// 4sbh(1 + V/h)/t); with cross-entropy fusion the bf16 logits only, 2·V/t. Each MTP module
/// computes its own logits and loss. Without fusion the bf16 logits exist beside their fp32 copy
/// while it is made (raises `transient`).
void set_memory_logits(const MemoryStageShared& m, bool lm_head, std::int64_t mtp_here, MemoryComponents& c,
                       double& transient) {
  const ParallelLayout& l = m.l;
  const double per_token = (l.cross_entropy_fusion ? 2.0 : 4.0) * m.V / m.t;
  const double heads_of_loss = (lm_head ? 1.0 : 0.0) + static_cast<double>(mtp_here);
  c.logits = m.T * (2.0 * m.H / m.r + heads_of_loss * per_token) +
             (lm_head ? context_parallel_logits_copy_bytes(l, m.T, m.padded_vocab) : 0.0);
  if (!l.cross_entropy_fusion) transient = std::max(transient, 2.0 * m.T * m.V / m.t);
}

/// Memory of pipeline rank `rank`: its chunks are virtual stages rank, rank + PP, ... (Megatron's
/// interleaved placement).
StageMemory memory_of_stage(const MemoryStageShared& m, std::int64_t rank) {
  const ParallelLayout& l = m.l;
  StageMemory stage;
  stage.pipeline_rank = rank;
  std::vector<const ModelChunk*> own;
  std::int64_t mtp_here = 0;
  bool loss_here = false;
  for (std::int64_t v = 0; v < l.virtual_stages; ++v) {
    own.push_back(&m.chunks[static_cast<std::size_t>(v * l.pp + rank)]);
    stage.has_embedding = stage.has_embedding || (own.back()->embedding && m.config.vocab_size > 0);
    stage.has_lm_head = stage.has_lm_head || (own.back()->loss && m.config.vocab_size > 0);
    mtp_here += own.back()->mtp_layers;
    loss_here = loss_here || own.back()->loss;
  }
  StoredLayerExtras extras;
  memory_detail::LayerParams params = memory_stored_layer_params(m, own, stage, extras);
  const memory_detail::LayerParams layer_params = params;
  add_memory_end_stage_params(m, mtp_here, loss_here, stage, params);
  const double gather_buffers = set_memory_parameter_components(m, params, layer_params, extras, stage);
  MemoryComponents& c = stage.by_component;
  const MemoryChunkActivations chunk = memory_chunk_activations(m, own);
  double transient = chunk.transient + gather_buffers;  // FSDP gathers beside the layer computing
  stage.in_flight_micro_batches = memory_in_flight_micro_batches(l, rank);
  // The peak over the schedule of the saved chunk forwards' bytes (chunks of unequal bytes peak
  // where the schedule puts them, not necessarily at the end of the warm-up).
  c.activations = schedule_detail::rank_peak_saved(chunk.per_chunk, l.pp, rank, l.micro_batches);
  if (memory_detail::holds_ep_overlap_layer(l)) c.activations += chunk.largest_kept_execution;
  if ((stage.has_lm_head || mtp_here > 0) && m.config.vocab_size > 0) {
    set_memory_logits(m, stage.has_lm_head, mtp_here, c, transient);
  }
  transient = std::max(transient, chunk.largest_recomputed_layer);
  StageContents contents;
  contents.attention_layers = !stage.stored_layers.empty();
  for (const std::int64_t layer : stage.stored_layers) {
    (memory_detail::layer_is_moe(m.config, layer) ? contents.moe_layers : contents.dense_ffn_layers) = true;
  }
  contents.lm_head = stage.has_lm_head;
  stage.te_dummy_wgrad_bytes = te_dummy_wgrad_bytes(m.config, l, contents, m.padded_vocab);
  const bool grouped = contents.moe_layers && l.moe_memory.grouped_gemm;
  c.buffers = transient + stage.te_dummy_wgrad_bytes + (grouped ? memory_detail::te_grouped_gemm_workspace_bytes() : 0.0);
  if (contents.moe_layers) stage.dispatcher_buffers = memory_detail::dispatcher_buffer_bytes(m.config, l, *m.cluster);
  stage.outside_allocator_bytes = stage.dispatcher_buffers.total();
  stage.peak_bytes = c.total();
  return stage;
}

std::string loop_placement_note(LoopPlacement placement) {
  switch (placement) {
    case LoopPlacement::wrap:
      return "; loop placement wrap: the loop's passes wrap around the pipeline, each rank storing its loop layers "
             "once and running them once per pass";
    case LoopPlacement::replicated:
      return "; loop placement replicated: each rank stores the loop layers it runs, the copies' gradients "
             "all-reduced among the ranks that share them";
    case LoopPlacement::in_chunk:
      break;
  }
  return "";  // in_chunk: the note as it always was
}

/// "the flex dispatcher's DeepEP buffers, 0.73 GiB a GPU (NVLink 0.35, RDMA 0.34, workspace 0.03),
/// lie outside PyTorch's allocator: ...".
std::string dispatcher_buffers_note(const ParallelLayout& l, const DispatcherBufferBytes& b) {
  constexpr double gib = 1073741824.0;
  std::string parts = fmt::format("NVLink {:.2f}", b.nvlink / gib);
  if (b.rdma > 0.0) parts += fmt::format(", RDMA {:.2f}", b.rdma / gib);
  if (b.workspace > 0.0) parts += fmt::format(", workspace {:.2f}", b.workspace / gib);
  return fmt::format("the flex dispatcher's {} buffers, {:.2f} GiB a GPU ({}), lie outside PyTorch's allocator: not in "
                     "the peak, subtracted from the headroom",
                     l.moe_memory.hybridep ? "HybridEP" : "DeepEP", b.total() / gib, parts);
}

/// Notes on the loop, the routed rows, the padded vocabulary and what the peak leaves out.
void add_training_memory_notes(TrainingMemory& out, const ArchConfig& config, const ParallelLayout& l) {
  if (config.loop && config.loop->repeats > 1) {
    out.notes.push_back(fmt::format(
        "loop over layers {}-{} x{}: weights, gradients and optimizer states once per stored layer, activations once "
        "per execution ({} executions of {} layers){}",
        config.loop->first, config.loop->last, config.loop->repeats, config.executed_layers(), config.num_layers,
        loop_placement_note(l.loop_placement)));
  }
  if (config.ffn.is_moe()) {
    out.notes.push_back(fmt::format("routed experts: {} rows per token on the most loaded expert rank (top_k {} x {})",
                                    memory_detail::routed_rows_per_token(config, l), config.ffn.top_k,
                                    l.capacity_factor > 0.0 ? fmt::format("min(capacity {}, imbalance {})",
                                                                          l.capacity_factor, l.imbalance)
                                                            : fmt::format("imbalance {}, dropless", l.imbalance)));
  }
  if (out.padded_vocab != config.vocab_size) {
    out.notes.push_back(fmt::format("vocabulary padded from {} to {}", config.vocab_size, out.padded_vocab));
  }
  out.notes.push_back("peak allocated memory: the CUDA context, NCCL buffers and allocator fragmentation are not "
                      "counted (the cluster's reserved memory is subtracted from the capacity instead)");
}

}  // namespace

TrainingMemory training_memory(const ArchConfig& config, const ParallelLayout& given, const ClusterSpec& cluster,
                               const std::string& source) {
  const ParallelLayout l = resolve_layout(given, source);
  l.validate(config, source);
  if (const std::string why = detail::dispatcher_cluster_error(l, config, cluster.nvlink_domain()); !why.empty()) {
    throw Error(why, source);
  }
  if (const std::string why = memory_detail::deepep_buffer_refusal(config, l); !why.empty()) throw Error(why, source);
  if (l.gpus > cluster.total_gpus()) {
    throw Error(fmt::format("the layout needs {} GPUs; the cluster has {} ({} node{} of {}); set more nodes (nodes)",
                            l.gpus, cluster.total_gpus(), cluster.nodes, cluster.nodes == 1 ? "" : "s",
                            cluster.gpus_per_node),
                source);
  }
  MemoryStageShared shared = memory_stage_shared(config, l);
  shared.cluster = &cluster;
  TrainingMemory out;
  out.layout = l;
  out.padded_vocab = shared.padded_vocab;
  out.capacity_bytes = static_cast<double>(cluster.usable_memory_bytes());
  for (std::int64_t rank = 0; rank < l.pp; ++rank) out.stages.push_back(memory_of_stage(shared, rank));
  // The peak is the first stage with the largest peak.
  for (const StageMemory& stage : out.stages) {
    if (stage.peak_bytes > out.peak_bytes) {
      out.peak_bytes = stage.peak_bytes;
      out.peak_stage = stage.pipeline_rank;
    }
  }
  // The capacity holds the allocator's peak and what lives outside the allocator (the dispatcher's buffers).
  double needed = 0.0;
  const StageMemory* outside = nullptr;
  for (const StageMemory& stage : out.stages) {
    needed = std::max(needed, stage.peak_bytes + stage.outside_allocator_bytes);
    if (stage.outside_allocator_bytes > (outside ? outside->outside_allocator_bytes : 0.0)) outside = &stage;
  }
  out.headroom_bytes = out.capacity_bytes - needed;
  if (outside) out.notes.push_back(dispatcher_buffers_note(l, outside->dispatcher_buffers));
  out.fits = out.headroom_bytes >= 0.0;
  add_training_memory_notes(out, config, l);
  return out;
}

}  // namespace budget
