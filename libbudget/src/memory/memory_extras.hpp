#pragma once
// Memory terms beyond Korthikanti's activations and Megatron's bytes per parameter, found against
// measured Megatron-Core runs (docs/cluster.md, "Memory to the allocator's peak"); private to the
// memory domain. Each formula is written once, in memory_extras.cpp, with its source.
#include <cstdint>

#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"

namespace budget {

/// What a pipeline rank holds, as the extra terms need it.
struct StageContents {
  bool attention_layers = false;  ///< stores at least one transformer layer
  bool dense_ffn_layers = false;  ///< stores a layer with a dense MLP
  bool moe_layers = false;        ///< stores a layer with routed (and shared) experts
  bool lm_head = false;           ///< runs the output layer (the last pipeline rank)
};

/// Transformer Engine's cached dummy weight gradients, bytes on one GPU. With gradient-accumulation
/// fusion (Megatron's default) every TE linear layer accumulates its weight gradient into the fp32
/// main_grad and hands autograd a placeholder of the weight's shape in the weight's dtype from
/// get_dummy_wgrad(), which allocates one tensor per distinct (rows, cols, dtype) and keeps it for
/// the life of the process (TransformerEngine v2.11 c188b533, transformer_engine/pytorch/module/
/// base.py:79-92; called from linear.py:947-962, layernorm_linear.py:1002-1012, layernorm_mlp.py:
/// 488-498, grouped_linear.py:478-500). Megatron's own output layer does the same
/// (megatron/core/tensor_parallel/layers.py:733-762 at d98e8a64). So the stage keeps, in bf16, one
/// tensor of each distinct TP/ETP-sharded weight shape it trains: QKV (MLA: q down, q up, kv down,
/// kv up), the output projection, fc1 and fc2 of dense, shared and routed MLPs, and the output layer
/// (V/t × H) on the last stage. 0 without gradient-accumulation fusion or in fp32.
double te_dummy_wgrad_bytes(const ArchConfig& config, const ParallelLayout& layout, const StageContents& stage,
                            std::int64_t padded_vocab);

/// Context parallelism: a second bf16 copy of the logits, 2·V/t bytes per token of the rank, on the
/// last stage. FITTED, source not found: every measured CP run (SimuMax's B200 runs, a2a CP with
/// TE's fused cross-entropy) keeps about this much more than the same model without CP; fitted on
/// llama3_70b_l12_tp2_cp4_seq32768 and validated on the six other CP runs (docs/cluster.md).
double context_parallel_logits_copy_bytes(const ParallelLayout& layout, double tokens, std::int64_t padded_vocab);

/// Weights, gradients and optimizer states per GPU, and the transient gather / reduce-scatter
/// buffers of sharded data parallelism, for `dense` parameters held by DP·CP ranks and `expert`
/// parameters held by EDP ranks (both already divided by TP / ETP·EP), of which `fp8_linear` are
/// linear-layer weights Transformer Engine casts to FP8, the largest layer `largest_layer` of them.
/// Megatron's bytes per parameter (parameter_bytes) sharded as the layout says:
///   distributed optimizer / Megatron-FSDP optim: optimizer states ÷ d (ZeRO-1);
///   Megatron-FSDP optim_grads: gradients ÷ d too (ZeRO-2); optim_grads_params: weights ÷ d too
///     (ZeRO-3), plus the unsharded bf16 weights of two layers (the one computing and the prefetched
///     one) and one layer's unsharded gradients awaiting reduce-scatter
///     (docs/user-guide/features/megatron_fsdp.md at d98e8a64; megatron/core/distributed/fsdp/src/
///     docs/mfsdp_design.md, "double buffer");
///   torch FSDP2: fp32 sharded parameters (the master copy, 4/d), fp32 sharded gradients (4/d), Adam
///     moments (8/d), plus two layers' bf16 all-gathered weights and one layer's gradients (PyTorch
///     FSDP2, reshard_after_forward, the implicit prefetch of the next layer);
///   d = DP·CP / instances for dense, EDP / instances for experts (--num-distributed-optimizer-
///     instances shards within each instance).
/// FP8 (TransformerEngine v2.11): every FP8 linear weight keeps a rowwise FP8 copy and a columnwise
/// (transposed) one for the backward, 1 byte an element each (blockwise: + one fp32 scale per 128×128
/// block; MXFP8: + one E8M0 byte per 32 elements); with --fp8-param-gather the parameter itself is
/// the rowwise FP8 copy, so its bf16 weight (2 bytes, sharded as weights are) is not kept.
struct ParameterMemory {
  double weights = 0.0;
  double gradients = 0.0;
  double optimizer = 0.0;
  double gather_buffers = 0.0;  ///< transient: FSDP's unsharded weights and gradients
};
ParameterMemory parameter_memory(const ParallelLayout& layout, double dense, double expert, double fp8_linear,
                                 double largest_layer);

/// Delayed scaling's per-tensor state: for each FP8 GEMM three tensors (input, weight, gradient),
/// each an fp32 amax history of --fp8-amax-history-len entries plus scale and inverse scale
/// (TransformerEngine v2.11, fp8.py's FP8GlobalStateManager / recipe.DelayedScaling). 0 otherwise.
double fp8_scaling_state_bytes(const ParallelLayout& layout, double fp8_gemms);

}  // namespace budget
