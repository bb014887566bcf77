#pragma once
/// \file
/// TrainingRecipe: how a step trains, apart from how it is spread over GPUs (budget/parallel_layout.hpp)
/// and what it trains (budget/config.hpp): the precision and FP8 recipe, the gradient and optimizer
/// dtypes, the micro-batch size, recompute, optimizer sharding, offload and the MoE kernels' memory
/// settings, each field once, named after the Megatron-LM argument that sets it (at d98e8a64). A
/// ParallelLayout holds one as its base; the time model is built from a profile and one
/// (TimeModelOptions::recipe); a measured run's is its layout's.
///
/// Thread safety: every function here is reentrant; a TrainingRecipe is a plain value.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "budget/fp8_recipe.hpp"

namespace budget {

/// What the backward pass recomputes instead of storing (Megatron-Core --recompute-granularity):
/// nothing; selective: the attention core (recompute_modules = core_attn, Megatron's default
/// selective module); full: whole layers, `full_layers` of each model chunk (the block method,
/// --recompute-method block --recompute-num-layers; 0 = every layer of the chunk).
enum class RecomputeKind { none, selective, full };
std::string_view to_string(RecomputeKind kind);

/// Megatron --recompute-method for full recompute: block (the first N layer executions of each model
/// chunk) or uniform (every layer, in groups of N whose first input alone is kept).
enum class RecomputeMethod { block, uniform };
std::string_view to_string(RecomputeMethod method);

/// Megatron-Core's selective recompute modules (--recompute-modules, transformer_config.py:560-580
/// at d98e8a64). What each frees and repeats: docs/cluster.md, "Per-module selective recompute".
enum class RecomputeModule { core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts };
std::string_view to_string(RecomputeModule module);
/// A module by Megatron's name; anything else: budget::Error naming `where` and listing the names.
RecomputeModule parse_recompute_module(std::string_view text, const std::string& where);

struct RecomputeSpec {
  RecomputeKind kind = RecomputeKind::none;
  /// full, block: layer executions recomputed per model chunk (0: all); uniform: layers per group.
  std::int64_t full_layers = 0;
  RecomputeMethod method = RecomputeMethod::block;
  /// selective: the modules recomputed; empty means Megatron's default {core_attn}.
  std::vector<RecomputeModule> modules;
  /// Whether selective recompute covers `module` (the default list when `modules` is empty).
  bool recomputes(RecomputeModule module) const;
};
/// A recompute choice as the CLI (--recompute) and Python (recompute=) write it: none | selective
/// | full | full:N, N ≥ 1 layer executions per model chunk (the names are to_string()'s). Anything
/// else: budget::Error naming `where` (the option or argument), the value and the allowed forms.
RecomputeSpec parse_recompute(std::string_view text, const std::string& where);

/// Where a repeated loop's layers sit on the pipeline (docs/cluster.md, "Loops across pipeline stages"):
/// - in_chunk: model chunks split the physical layers and the loop lies inside one chunk (every
///   pass runs there);
/// - wrap: model chunks split the executed sequence (the loop unrolled) so that every physical
///   layer runs on one pipeline rank in every pass (global chunk c sits on rank c mod PP, so a pass
///   of the loop spans a multiple of PP chunks): each rank stores its loop layers once and runs them
///   once per pass as further virtual stages, their gradients accumulating in one buffer;
/// - replicated: model chunks split the executed sequence freely; each rank stores every layer it
///   runs, and a layer stored on several ranks has its gradients all-reduced among them once a step
///   (as Megatron all-reduces the tied embedding's, finalize_model_grads.py:676 at d98e8a64).
/// Neither wrap nor replicated is Megatron behaviour: a trainer must tie the chunks' parameters.
enum class LoopPlacement { in_chunk, wrap, replicated };
std::string_view to_string(LoopPlacement placement);
/// in_chunk | wrap | replicated (to_string()'s names); anything else: budget::Error naming `where`.
LoopPlacement parse_loop_placement(std::string_view text, const std::string& where);

/// Training precision, as Megatron's distributed-optimizer table lists it
/// (docs/user-guide/features/dist_optimizer.md): bf16 weights with fp32 main gradients and fp32
/// master weights and Adam moments (Megatron-Core's default); fp16 weights and gradients with fp32
/// master weights, main-gradient copy and moments; fp32 throughout.
enum class TrainingPrecision { bf16, fp16, fp32 };
std::string_view to_string(TrainingPrecision precision);
/// bf16 | fp16 | fp32 (to_string()'s names); anything else: budget::Error naming `where`.
TrainingPrecision parse_training_precision(std::string_view text, const std::string& where);

/// Bytes per parameter of one precision, split as memory is reported.
struct ParameterBytes {
  double weights = 0.0;    ///< model weights (never sharded over DP)
  double gradients = 0.0;  ///< the gradient buffer (never sharded over DP: reduce-scatter in place)
  double optimizer = 0.0;  ///< master weights, Adam moments (and fp16's fp32 gradient copy): sharded by the distributed optimizer
};
/// bf16: 2 + 4 + 12 = 18; fp16: 2 + 2 + 16 = 20; fp32: 4 + 4 + 8 = 16 (Megatron's table, above).
ParameterBytes parameter_bytes(TrainingPrecision precision);

/// Sharded data parallelism beyond the distributed optimizer (ZeRO-3 family): Megatron-FSDP
/// (--use-megatron-fsdp) or PyTorch FSDP2 (--use-torch-fsdp2).
enum class FsdpKind { none, megatron_fsdp, torch_fsdp2 };
std::string_view to_string(FsdpKind kind);
/// What Megatron-FSDP shards (--data-parallel-sharding-strategy): optimizer states (ZeRO-1), also
/// gradients (ZeRO-2), also parameters (ZeRO-3). torch FSDP2 always shards all three.
enum class FsdpSharding { optim, optim_grads, optim_grads_params };
std::string_view to_string(FsdpSharding sharding);

/// The MoE token dispatcher (--moe-token-dispatcher-type; flex: DeepEP / HybridEP).
enum class MoeDispatcher { alltoall, allgather, flex };
std::string_view to_string(MoeDispatcher dispatcher);

/// The dtype of an optimizer tensor under Megatron's precision-aware optimizer (--main-params-dtype,
/// --exp-avg-dtype, --exp-avg-sq-dtype; megatron/training/arguments.py:3667-3684 at d98e8a64).
enum class StateDtype { fp32, bf16, fp16, fp8 };
std::string_view to_string(StateDtype dtype);
/// fp32 | bf16 | fp16 | fp8 (to_string()'s names); anything else: budget::Error naming `where`.
StateDtype parse_state_dtype(std::string_view text, const std::string& where);

/// What the optimizer keeps beside the weights, as Megatron's flags set it (docs/cluster.md,
/// "Gradient and optimizer dtypes"; bytes per parameter: parameter_bytes(const TrainingRecipe&)).
struct OptimizerDtypes {
  /// The gradient buffer (main_grad) in bf16 instead of fp32, bf16 training only: Megatron accumulates
  /// and reduces in fp32 by default (--accumulate-allreduce-grads-in-fp32 is set for --bf16) unless
  /// --grad-reduce-in-bf16 or --main-grads-dtype bf16 (arguments.py:1207-1216 at d98e8a64).
  bool bf16_main_grads = false;
  /// --use-precision-aware-optimizer (with the distributed optimizer): Transformer Engine's FusedAdam
  /// keeps the master weights and the Adam moments in the dtypes below.
  bool precision_aware = false;
  StateDtype main_params = StateDtype::fp32;  ///< fp32 or fp16
  StateDtype exp_avg = StateDtype::fp32;
  StateDtype exp_avg_sq = StateDtype::fp32;
  bool operator==(const OptimizerDtypes& o) const {
    return bf16_main_grads == o.bf16_main_grads && precision_aware == o.precision_aware &&
           main_params == o.main_params && exp_avg == o.exp_avg && exp_avg_sq == o.exp_avg_sq;
  }
  bool operator!=(const OptimizerDtypes& o) const { return !(*this == o); }
};

/// MoE settings that change memory beyond the dispatcher and the permutation (docs/cluster.md, "MoE
/// memory terms"; each term a named function in memory/moe_memory.cpp with its source).
struct MoeMemoryRecipe {
  /// The flex dispatcher on HybridEP (--moe-flex-dispatcher-backend hybridep): its NVLink dispatch
  /// and combine buffers are allocated outside PyTorch's caching allocator.
  bool hybridep = false;
  /// --moe-expert-rank-capacity-factor (HybridEP): the permuted rows a rank allocates are a static
  /// budget of top_k × this per token it sends, whatever the routing; 0: sized by the routed rows
  /// (Megatron's default, None).
  double rank_capacity_factor = 0.0;
  /// --moe-grouped-gemm: Transformer Engine's grouped GEMMs keep one cuBLAS workspace per compute stream.
  bool grouped_gemm = false;
  /// --overlap-moe-expert-parallel-comm: the combined 1F1B schedule runs one micro-batch's layer
  /// forward beside another's layer backward, so one more layer execution's activations are held.
  bool ep_overlap_schedule = false;
  /// --moe-flex-dispatcher-num-sms (or the deprecated --moe-deepep-num-sms / --moe-hybridep-num-sms):
  /// the SMs of the flex dispatcher's kernels; DeepEP's buffers are sized by them (num_sms / 2
  /// channels). 0: Megatron's default, 20 for DeepEP (token_dispatcher.py:1287-1292).
  std::int64_t flex_num_sms = 0;
  bool operator==(const MoeMemoryRecipe& o) const {
    return hybridep == o.hybridep && rank_capacity_factor == o.rank_capacity_factor && grouped_gemm == o.grouped_gemm &&
           ep_overlap_schedule == o.ep_overlap_schedule && flex_num_sms == o.flex_num_sms;
  }
};
/// The training recipe: every field once, with the Megatron-LM argument it comes from.
struct TrainingRecipe {
  std::int64_t micro_batch_size = 1;  ///< sequences per micro-batch (--micro-batch-size)
  /// --recompute-granularity, --recompute-method, --recompute-num-layers, --recompute-modules.
  RecomputeSpec recompute;
  /// --use-distributed-optimizer: optimizer states sharded over DP·CP (experts: over expert DP).
  bool distributed_optimizer = false;
  TrainingPrecision precision = TrainingPrecision::bf16;  ///< --bf16, --fp16 (neither: fp32)
  /// --cross-entropy-loss-fusion: the loss fused with the logits, no fp32 copy of the logits.
  bool cross_entropy_fusion = false;
  /// Routed-expert capacity factor (Megatron --moe-expert-capacity-factor, token dropping); 0:
  /// dropless (Megatron's default).
  double capacity_factor = 0.0;
  /// Pad the vocabulary to a multiple of this times TP (Megatron --make-vocab-size-divisible-by);
  /// 0: the config's vocab_size as it is.
  std::int64_t vocab_divisible_by = 0;
  /// Where a repeated loop's layers sit on the pipeline (docs/cluster.md, "Loops across pipeline
  /// stages"): in_chunk (the loop inside one model chunk, chunks split the physical layers), wrap or
  /// replicated (chunks split the executed sequence, the loop unrolled). No Megatron-LM argument
  /// (budget's --loop-placement).
  LoopPlacement loop_placement = LoopPlacement::in_chunk;
  /// Activation model switches, for comparison with Korthikanti et al. 2022 (who assume neither):
  /// FlashAttention (no s² softmax terms; Megatron-Core with Transformer Engine, --use-flash-attn or
  /// --attention-backend) and dropout masks (--hidden-dropout and --attention-dropout > 0; modern LLM
  /// recipes use 0).
  bool flash_attention = true;
  bool dropout = false;
  /// Weight gradients accumulated straight into the fp32 main gradients (Megatron's default
  /// --gradient-accumulation-fusion; off with --no-gradient-accumulation-fusion). With it, Transformer
  /// Engine keeps one cached bf16 placeholder gradient per distinct weight shape (docs/cluster.md).
  bool gradient_accumulation_fusion = true;
  FsdpKind fsdp = FsdpKind::none;  ///< --use-megatron-fsdp, --use-torch-fsdp2
  /// --data-parallel-sharding-strategy (Megatron-FSDP).
  FsdpSharding fsdp_sharding = FsdpSharding::optim_grads_params;
  /// --num-distributed-optimizer-instances: the optimizer is sharded within DP·CP / instances ranks.
  std::int64_t distributed_optimizer_instances = 1;
  Fp8Recipe fp8 = Fp8Recipe::none;  ///< --fp8-format with --fp8-recipe (none without --fp8-format)
  bool fp8_param_gather = false;  ///< --fp8-param-gather: the parameters themselves are FP8
  std::int64_t fp8_amax_history = 1;  ///< --fp8-amax-history-len (delayed scaling)
  /// --cpu-offloading-num-layers: layer executions per chunk whose activations live in host memory.
  std::int64_t cpu_offload_layers = 0;
  MoeDispatcher dispatcher = MoeDispatcher::alltoall;  ///< --moe-token-dispatcher-type
  /// Megatron --moe-permute-fusion: Transformer Engine's fused permutation keeps one int32 row map
  /// of (2E + 1) entries per token instead of an int64 index per routed row (docs/cluster.md).
  bool moe_permute_fusion = false;
  /// --grad-reduce-in-bf16 / --main-grads-dtype, --use-precision-aware-optimizer,
  /// --main-params-dtype, --exp-avg-dtype, --exp-avg-sq-dtype.
  OptimizerDtypes optimizer_dtypes;
  /// --moe-flex-dispatcher-backend, --moe-expert-rank-capacity-factor, --moe-grouped-gemm,
  /// --overlap-moe-expert-parallel-comm.
  MoeMemoryRecipe moe_memory;
};

/// The recipe's bytes per parameter: parameter_bytes(recipe.precision) with its gradient and
/// optimizer dtypes (recipe.optimizer_dtypes; the formula and sources in training_recipe.cpp).
ParameterBytes parameter_bytes(const TrainingRecipe& recipe);
/// Bytes of one main-gradient element (the DDP grad buffer Megatron accumulates weight gradients into
/// and reduces): parameter_bytes(recipe).gradients, the one rule memory and time both price. A plain
/// --bf16 run: 4 (fp32, --accumulate-allreduce-grads-in-fp32, which arguments.py:1207-1216 sets for
/// --bf16); 2 with bf16 main gradients (--grad-reduce-in-bf16, --main-grads-dtype bf16) or fp16.
double main_grad_bytes(const TrainingRecipe& recipe);

}  // namespace budget
