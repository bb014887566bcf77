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
#include <string>
#include <string_view>
#include <vector>

#include "budget/config.hpp"

namespace budget {

/// What the backward pass recomputes instead of storing (Megatron-Core --recompute-granularity):
/// nothing; selective: the attention core (recompute_modules = core_attn, Megatron's default
/// selective module); full: whole layers, `full_layers` of each model chunk (the block method,
/// --recompute-method block --recompute-num-layers; 0 = every layer of the chunk).
enum class RecomputeKind { none, selective, full };
std::string_view to_string(RecomputeKind kind);

struct RecomputeSpec {
  RecomputeKind kind = RecomputeKind::none;
  std::int64_t full_layers = 0;  ///< full: layer executions recomputed per model chunk (0: all)
};
/// A recompute choice as the CLI (--recompute) and Python (recompute=) write it: none | selective
/// | full | full:N, N ≥ 1 layer executions per model chunk (the names are to_string()'s). Anything
/// else: budget::Error naming `where` (the option or argument), the value and the allowed forms.
RecomputeSpec parse_recompute(std::string_view text, const std::string& where);

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
  /// A loop may span pipeline stages only with this: each stage then stores its own copy of the
  /// shared layers it executes (not Megatron behaviour; docs/cluster.md).
  bool replicate_loop_weights = false;
  /// Activation model switches, for comparison with Korthikanti et al. 2022 (who assume neither):
  /// FlashAttention (no s² softmax terms; Megatron-Core with Transformer Engine) and dropout masks
  /// (hidden and attention dropout > 0; modern LLM recipes use 0).
  bool flash_attention = true;
  bool dropout = false;
  /// Weight gradients accumulated straight into the fp32 main gradients (Megatron's default
  /// --gradient-accumulation-fusion; off with --no-gradient-accumulation-fusion). With it, Transformer
  /// Engine keeps one cached bf16 placeholder gradient per distinct weight shape (docs/cluster.md).
  bool gradient_accumulation_fusion = true;

  std::int64_t expert_tp() const { return etp > 0 ? etp : tp; }
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
  /// 2·CP), a loop that crosses a pipeline chunk without replicate_loop_weights, a value out of
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
  /// Physical layer numbers (1-based) the chunk executes, in execution order (loops unrolled).
  std::vector<std::int64_t> executed_layers;
  /// Physical layers the chunk stores weights of, ascending, each once.
  std::vector<std::int64_t> stored_layers;
};

/// The executed layer sequence of `config`: physical layer numbers (1-based) in execution order,
/// the loop unrolled (layers first..last repeated `repeats` times in a row).
std::vector<std::int64_t> executed_layer_sequence(const ArchConfig& config);

/// The chunks of the layout, in virtual-stage order. Without replicate_loop_weights the physical
/// layers are split evenly (L / (PP·V) per chunk) and a chunk executes every execution of its
/// layers; with it the executed sequence is split evenly instead. Precondition: validation passed.
std::vector<ModelChunk> model_chunks(const ArchConfig& config, const ParallelLayout& layout);

}  // namespace budget
