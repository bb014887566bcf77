#pragma once
/// \file
/// Memory per GPU of a training step under a parallel layout, per pipeline stage and by component
/// (docs/cluster.md, every term with its formula and source): weights, gradients and optimizer
/// states of the layers the stage stores (once per stored layer: a looped layer's weights count
/// once however often it runs), activations of one micro-batch per layer execution (Korthikanti et
/// al. 2022, Table 2 and §4, with the widths of the op list: GQA, MLA, SwiGLU, MoE routing and
/// experts) times the micro-batches in flight on the stage (Megatron-Core's 1F1B and interleaved
/// warm-up counts), the fp32 logits and loss on the last stage, and transient buffers. Megatron-Core
/// semantics throughout; where another trainer differs, docs/cluster.md says so.
///
/// Thread safety: every function here is reentrant.

#include <cstdint>
#include <string>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"

namespace budget {

/// Bytes by component. `buffers` are transient (the largest single workspace the step allocates
/// on top of what it keeps: MoE dispatch buffers, a recomputed layer's activations, bf16 logits).
struct MemoryComponents {
  double weights = 0.0;           ///< the stored layers' parameters at the training precision
  double gradients = 0.0;         ///< their gradient buffers
  double optimizer_states = 0.0;  ///< master weights and Adam moments (÷ DP with the distributed optimizer)
  double activations = 0.0;       ///< kept for the backward pass, times the micro-batches in flight
  double logits = 0.0;            ///< fp32 logits and loss (the last stage)
  double buffers = 0.0;           ///< transient workspaces (above)

  double total() const { return weights + gradients + optimizer_states + activations + logits + buffers; }
};

/// Activation bytes one execution of one layer keeps for the backward pass, for one micro-batch on
/// one GPU, split as Korthikanti et al. split them.
struct LayerActivationBytes {
  double attention = 0.0;  ///< norm input, projections' inputs, Q/K/V, softmax terms, output-projection input
  double ffn = 0.0;        ///< norm input, dense MLP or MoE (router, dispatch, experts, shared experts)
  double total() const { return attention + ffn; }
};

/// Activation bytes kept by one execution of physical layer `layer` (1-based) of `config`, one
/// micro-batch of layout.micro_batch_size sequences of layout.seq_len / CP tokens, under
/// layout's TP, SP, ETP, recompute (selective drops the attention core's softmax terms; full keeps
/// only the layer's input), capacity and imbalance factors. `recomputed` says whether this
/// execution is one of full recompute's layers. Precondition: the layout is valid for config.
LayerActivationBytes layer_activation_bytes(const ArchConfig& config, std::int64_t layer,
                                            const ParallelLayout& layout, bool recomputed);

/// The flex dispatcher's communication buffers of one GPU, bytes, allocated outside PyTorch's
/// caching allocator (cudaMalloc, cuMemCreate, NVSHMEM) once for the process: not in
/// torch.cuda.max_memory_allocated(), but the capacity must hold them (docs/cluster.md, "MoE memory
/// terms"). Zero without the flex dispatcher.
struct DispatcherBufferBytes {
  /// Shared over NVLink within a domain: DeepEP's NVLink buffer, HybridEP's dispatch and combine
  /// buffers and its all-gather routing map.
  double nvlink = 0.0;
  /// Between NVLink domains (only when the TP×EP group spans more than one; DeepEP: more than 8
  /// ranks): DeepEP's NVSHMEM buffer, HybridEP's RDMA dispatch and combine buffers.
  double rdma = 0.0;
  double workspace = 0.0;  ///< DeepEP's 32 MiB workspace
  double total() const { return nvlink + rdma + workspace; }
};

/// One pipeline rank's memory.
struct StageMemory {
  std::int64_t pipeline_rank = 0;
  std::vector<std::int64_t> stored_layers;  ///< physical layers (1-based) it holds weights of
  std::int64_t executed_layers = 0;         ///< layer executions per micro-batch, loops included
  bool has_embedding = false;
  bool has_lm_head = false;
  /// Parameters held per GPU: sharded by TP (attention, dense and shared MLPs, embedding/head),
  /// replicated (norms, routers, MLA down projections), and routed experts (by ETP·EP).
  double dense_params = 0.0;
  double expert_params = 0.0;
  /// Loop placement replicated: of these, the parameters per GPU of the stored layers that other
  /// pipeline ranks store too (their gradients all-reduced among them once a step), and the most
  /// ranks storing one of them (the all-reduce's group; 1: none shared).
  double shared_dense_params = 0.0;
  double shared_expert_params = 0.0;
  std::int64_t share_ranks = 1;
  /// Micro-batches whose activations the stage holds at its peak (1F1B: min(m, PP − s); with
  /// virtual stages: model-chunk forwards, Megatron's warm-up count + 1).
  std::int64_t in_flight_micro_batches = 0;
  MemoryComponents by_component;
  /// Of `buffers`: Transformer Engine's cached dummy weight gradients (kept from the first backward
  /// on; one bf16 tensor per distinct weight shape of the stage).
  double te_dummy_wgrad_bytes = 0.0;
  double peak_bytes = 0.0;  ///< the allocator's peak: MemoryComponents::total()
  /// The flex dispatcher's buffers of a stage with MoE layers (outside the allocator).
  DispatcherBufferBytes dispatcher_buffers;
  /// GPU memory the stage needs outside PyTorch's allocator, not in peak_bytes (it is not in
  /// torch.cuda.max_memory_allocated()): dispatcher_buffers.total(). The capacity must hold
  /// peak_bytes + this (TrainingMemory::headroom_bytes).
  double outside_allocator_bytes = 0.0;
};

struct TrainingMemory {
  ParallelLayout layout;  ///< resolved: gpus and dp both set
  std::vector<StageMemory> stages;
  std::int64_t peak_stage = 0;
  double peak_bytes = 0.0;
  double capacity_bytes = 0.0;  ///< the GPU's usable memory (cluster: memory − reserved)
  double headroom_bytes = 0.0;  ///< capacity − the largest stage's peak + outside-allocator bytes (negative: does not fit)
  bool fits = false;
  std::int64_t padded_vocab = 0;
  std::vector<std::string> notes;  ///< assumptions that matter for this config (loops, imbalance, ...)
};

/// Memory per GPU of `config` trained under `layout` on `cluster`'s GPUs. Validates the layout
/// first (budget::Error naming `source` with the reason when it does not divide, when a loop
/// crosses a pipeline chunk, or when the layout needs more GPUs than the cluster has).
TrainingMemory training_memory(const ArchConfig& config, const ParallelLayout& layout, const ClusterSpec& cluster,
                               const std::string& source = "layout");

}  // namespace budget
