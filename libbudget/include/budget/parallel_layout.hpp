#pragma once
/// \file
/// ParallelLayout: how one training step is spread over GPUs, with Megatron-Core's semantics
/// (docs/cluster.md): tensor parallelism TP (with or without sequence parallelism), pipeline
/// parallelism PP with V virtual stages (interleaved 1F1B), context parallelism CP, data
/// parallelism DP, and MoE parallel folding: attention and dense layers over TP×CP×DP×PP, routed
/// experts over ETP×EP×EDP×PP on the same GPUs. Plus the micro-batching, recompute, optimizer
/// sharding and precision that decide memory. validation_error() says why a layout does not divide.
///
/// Thread safety: every function here is reentrant; a ParallelLayout is a plain value.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "budget/config.hpp"
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
struct ParallelLayout;
/// The layout's bytes per parameter: parameter_bytes(layout.precision) with its gradient and
/// optimizer dtypes (layout.optimizer_dtypes; the formula and sources in optimizer_dtypes.cpp).
ParameterBytes parameter_bytes(const ParallelLayout& layout);

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
/// "Gradient and optimizer dtypes"; bytes per parameter: parameter_bytes(const ParallelLayout&)).
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
  bool operator==(const MoeMemoryRecipe& o) const {
    return hybridep == o.hybridep && rank_capacity_factor == o.rank_capacity_factor && grouped_gemm == o.grouped_gemm &&
           ep_overlap_schedule == o.ep_overlap_schedule;
  }
};

/// How the layers are split over the pipeline ranks: one of Megatron's three forms, parsed once where
/// it is read (Megatron's arguments, the command line, Python's keywords, the layout search).
/// - even: PP·V equal model chunks (the embedding and loss counting as a layer where
///   ParallelLayout::embedding_in_split / loss_in_split say so);
/// - first_last: --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers, either or
///   both given, the middle ranks sharing the rest (transformer_config.py:2293-2368 at d98e8a64);
/// - per_stage: --pipeline-model-parallel-layout, one string of E/t/m/L per virtual stage in
///   Megatron's order (parse_pipeline_layout()); the string is kept as given, to write it back.
struct PipelineSplit {
  enum class Kind { even, first_last, per_stage };
  Kind kind = Kind::even;
  std::optional<std::int64_t> first_stage_layers;  ///< first_last: the first rank's layers, where given
  std::optional<std::int64_t> last_stage_layers;   ///< first_last: the last rank's layers, where given
  std::string layout;               ///< per_stage: Megatron's layout string as given
  std::vector<std::string> stages;  ///< per_stage: `layout` unrolled, one string per virtual stage

  /// The first/last counts; both absent: the even split.
  static PipelineSplit first_last(std::optional<std::int64_t> first, std::optional<std::int64_t> last);
  /// A layout string, parsed (parse_pipeline_layout(): budget::Error naming `where`); empty: even.
  static PipelineSplit per_stage(std::string layout, const std::string& where);

  bool operator==(const PipelineSplit& o) const {
    return kind == o.kind && first_stage_layers == o.first_stage_layers && last_stage_layers == o.last_stage_layers &&
           layout == o.layout;
  }
  bool operator!=(const PipelineSplit& o) const { return !(*this == o); }
  /// An order for map keys (the parsed stages follow from `layout`).
  bool operator<(const PipelineSplit& o) const {
    if (kind != o.kind) return kind < o.kind;
    if (first_stage_layers != o.first_stage_layers) return first_stage_layers < o.first_stage_layers;
    if (last_stage_layers != o.last_stage_layers) return last_stage_layers < o.last_stage_layers;
    return layout < o.layout;
  }
};

struct ParallelLayout {
  std::int64_t tp = 1;              ///< tensor parallel size
  bool sequence_parallel = false;   ///< Megatron --sequence-parallel (no effect with tp = 1)
  std::int64_t pp = 1;              ///< pipeline stages
  std::int64_t virtual_stages = 1;  ///< model chunks per pipeline rank (interleaved 1F1B when > 1)
  std::int64_t ep = 1;              ///< expert parallel size
  std::int64_t etp = 0;             ///< expert tensor parallel size (0: equal to tp, Megatron's default)
  std::int64_t cp = 1;              ///< context parallel size
  std::int64_t gpus = 0;            ///< GPU count N; 0: derived from dp
  std::int64_t dp = 0;              ///< data parallel size; 0: derived from gpus (N / (TP·CP·PP))
  std::int64_t micro_batch_size = 1;  ///< sequences per micro-batch
  std::int64_t micro_batches = 1;     ///< micro-batches per step on each pipeline (m)
  std::int64_t seq_len = 4096;        ///< tokens per sequence (split over CP)
  RecomputeSpec recompute;
  bool distributed_optimizer = false;  ///< optimizer states sharded over DP·CP (experts: over expert DP)
  TrainingPrecision precision = TrainingPrecision::bf16;
  bool cross_entropy_fusion = false;  ///< the loss fused with the logits: no fp32 copy of the logits
  /// Routed-expert capacity factor (Megatron --moe-expert-capacity-factor, token dropping); 0:
  /// dropless (Megatron's default).
  double capacity_factor = 0.0;
  /// Rows the most loaded expert rank receives over the balanced count (1 = balanced routing).
  double imbalance = 1.0;
  /// Pad the vocabulary to a multiple of this times TP (Megatron --make-vocab-size-divisible-by);
  /// 0: the config's vocab_size as it is.
  std::int64_t vocab_divisible_by = 0;
  /// Where a repeated loop's layers sit on the pipeline (docs/cluster.md, "Loops across pipeline
  /// stages"): in_chunk (the loop inside one model chunk, chunks split the physical layers), wrap or
  /// replicated (chunks split the executed sequence, the loop unrolled).
  LoopPlacement loop_placement = LoopPlacement::in_chunk;
  /// Activation model switches, for comparison with Korthikanti et al. 2022 (who assume neither):
  /// FlashAttention (no s² softmax terms; Megatron-Core with Transformer Engine) and dropout masks
  /// (hidden and attention dropout > 0; modern LLM recipes use 0).
  bool flash_attention = true;
  bool dropout = false;
  /// Weight gradients accumulated straight into the fp32 main gradients (Megatron's default
  /// --gradient-accumulation-fusion; off with --no-gradient-accumulation-fusion). With it, Transformer
  /// Engine keeps one cached bf16 placeholder gradient per distinct weight shape (docs/cluster.md).
  bool gradient_accumulation_fusion = true;
  /// The pipeline split (even, Megatron's first/last counts, or a layout string setting PP·V chunks).
  PipelineSplit split;
  /// --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split: the
  /// embedding (loss) counts as one layer of the even split, so the first (last) chunk builds one
  /// transformer layer fewer (transformer_block.py:148-200 at d98e8a64).
  bool embedding_in_split = false;
  bool loss_in_split = false;
  FsdpKind fsdp = FsdpKind::none;
  FsdpSharding fsdp_sharding = FsdpSharding::optim_grads_params;
  /// --num-distributed-optimizer-instances: the optimizer is sharded within DP·CP / instances ranks.
  std::int64_t distributed_optimizer_instances = 1;
  Fp8Recipe fp8 = Fp8Recipe::none;
  bool fp8_param_gather = false;  ///< --fp8-param-gather: the parameters themselves are FP8
  std::int64_t fp8_amax_history = 1;  ///< --fp8-amax-history-len (delayed scaling)
  /// --cpu-offloading-num-layers: layer executions per chunk whose activations live in host memory.
  std::int64_t cpu_offload_layers = 0;
  MoeDispatcher dispatcher = MoeDispatcher::alltoall;
  /// Megatron --moe-permute-fusion: Transformer Engine's fused permutation keeps one int32 row map
  /// of (2E + 1) entries per token instead of an int64 index per routed row (docs/cluster.md).
  bool moe_permute_fusion = false;
  OptimizerDtypes optimizer_dtypes;
  MoeMemoryRecipe moe_memory;

  std::int64_t expert_tp() const { return etp > 0 ? etp : tp; }
  /// Whether the model chunks split the executed sequence (wrap, replicated), not the physical layers.
  bool chunks_split_executions() const { return loop_placement != LoopPlacement::in_chunk; }
  /// N = TP·CP·DP·PP once resolved (resolve_layout()).
  std::int64_t gpu_count() const { return gpus > 0 ? gpus : tp * cp * dp * pp; }
  std::int64_t data_parallel() const { return dp > 0 ? dp : gpus / (tp * cp * pp); }
  /// Expert data parallel size EDP = N / (ETP·EP·PP) (MoE parallel folding).
  std::int64_t expert_data_parallel() const { return gpu_count() / (expert_tp() * ep * pp); }
  /// Effective sequence parallelism (Megatron turns it off at tp = 1).
  bool sequence_parallel_active() const { return sequence_parallel && tp > 1; }
  /// The vocabulary as trained: vocab_size rounded up to a multiple of vocab_divisible_by·TP.
  std::int64_t padded_vocab(std::int64_t vocab_size) const;

  /// Empty when `config` can be trained under this layout, else the first reason it cannot: a
  /// size that does not divide (heads or KV heads by TP, experts by EP, layers by PP·V, the GPU
  /// count by TP·CP·PP or ETP·EP·PP, widths by TP or ETP, the vocabulary by TP, the sequence by
  /// 2·CP), a loop that crosses a pipeline chunk in_chunk or a loop layer on two ranks with wrap, a value out of
  /// range, or MoE with TP > 1 without sequence parallelism (Megatron refuses it too).
  std::string validation_error(const ArchConfig& config) const;
  /// Throws budget::Error naming `source` when validation_error() is not empty.
  void validate(const ArchConfig& config, const std::string& source = {}) const;
};

/// The layout with gpus and dp both set (one derived from the other). Throws budget::Error when
/// neither or both disagree, or when the GPU count is not a multiple of TP·CP·PP.
ParallelLayout resolve_layout(ParallelLayout layout, const std::string& source = {});

/// One model chunk (a virtual pipeline stage): its slice of the executed sequence of layers.
struct ModelChunk {
  std::int64_t index = 0;          ///< virtual stage v·PP + s (Megatron's interleaved order)
  std::int64_t pipeline_rank = 0;  ///< s
  bool embedding = false;          ///< holds the token embedding (chunk 0)
  bool loss = false;               ///< holds the output layer and loss (the last chunk)
  std::int64_t mtp_layers = 0;     ///< multi-token-prediction layers it holds
  /// Physical layer numbers (1-based) the chunk executes, in execution order (loops unrolled).
  std::vector<std::int64_t> executed_layers;
  /// Physical layers the chunk stores weights of, ascending, each once.
  std::vector<std::int64_t> stored_layers;
};

/// The training recipe a layout search holds (docs/cluster.md, "The recipe held"; layout_search.hpp,
/// smallest_fitting_layout()): every layout it
/// enumerates takes from `base` the precision, the FP8 recipe (with FP8 parameters and the amax
/// history), the gradient and optimizer dtypes, FSDP and its sharding, the distributed-optimizer
/// instances, CPU offload, the dispatcher and the fused permutation, cross-entropy fusion, the
/// vocabulary padding, dropout, the attention kernel, gradient-accumulation fusion and the capacity
/// factor; and, where held, the micro-batch size, the recompute (kind, method, layers and modules)
/// and the distributed optimizer. The search varies the rest: TP (with sequence parallelism), CP,
/// PP, V, EP and ETP, and the held settings' alternatives where not held. Not taken from `base`: its
/// parallel sizes, GPUs, micro-batch count and sequence length (the search's own), the pipeline
/// layout string, first/last-stage counts and in-split flags (the search splits evenly) and the
/// imbalance (LayoutSearchOptions::imbalance). The default recipe is the search as it always was:
/// bf16, no FP8, Adam's fp32 states, every micro-batch size, recompute and optimizer choice.
struct LayoutRecipe {
  ParallelLayout base;
  bool hold_micro_batch_size = false;
  bool hold_recompute = false;
  bool hold_distributed_optimizer = false;
  /// Hold base.loop_placement (--loop-placement); else a looped config tries each placement.
  bool hold_loop_placement = false;
};

/// `recipe.base` with everything the search sets cleared to ParallelLayout's defaults (the parallel
/// sizes, GPUs, batch, sequence length and pipeline split): the template of every layout searched.
ParallelLayout recipe_template(const LayoutRecipe& recipe);

/// The executed layer sequence of `config`: physical layer numbers (1-based) in execution order,
/// the loop unrolled (layers first..last repeated `repeats` times in a row).
std::vector<std::int64_t> executed_layer_sequence(const ArchConfig& config);

/// Transformer layers per model chunk, in virtual-stage order (chunk v·PP + s), and where the
/// embedding, loss and MTP layers sit: from the pipeline layout string, the first/last-stage
/// counts (Megatron's get_num_layers_to_build, transformer_block.py:76-200 at d98e8a64: the other
/// ranks share the rest evenly, each rank's count split evenly over its V chunks) or an even split.
/// Counts are of physical layers (in_chunk), or of executed layers (wrap, replicated). Empty with
/// `error` set when the layout string or the counts do not fit the config.
struct ChunkPlan {
  std::vector<std::int64_t> layers;
  std::vector<bool> embedding, loss;
  std::vector<std::int64_t> mtp_layers;
  std::int64_t virtual_stages = 1;
};
ChunkPlan plan_chunks(const ArchConfig& config, const ParallelLayout& layout, std::string* error);

/// Megatron's layout string unrolled to one string of E/t/m/L per virtual stage
/// (PipelineParallelLayerLayout.parse_str_to_list): commas dropped, every "(...)*N" then every
/// "x*N" expanded, split at '|'. budget::Error naming `where` for any other character. Grammar: E
/// embedding, t transformer layer, m MTP layer, L loss, | between virtual stages in Megatron's
/// order, x*N and (...)*N repeats, commas ignored
/// (megatron/core/transformer/pipeline_parallel_layer_layout.py:283-320 at d98e8a64).
std::vector<std::string> parse_pipeline_layout(std::string_view text, const std::string& where);

/// The chunks of the layout, in virtual-stage order (plan_chunks' counts; a chunk executes every
/// execution of its physical layers (in_chunk), or its slice of the executed sequence (wrap,
/// replicated)). Precondition: validation passed.
std::vector<ModelChunk> model_chunks(const ArchConfig& config, const ParallelLayout& layout);

}  // namespace budget
