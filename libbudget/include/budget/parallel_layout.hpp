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
#include <utility>
#include <vector>

#include "budget/config.hpp"
#include "budget/training_recipe.hpp"

namespace budget {

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

  // The split's printed forms, one function each (layout/pipeline_split.cpp).
  /// Megatron-LM's arguments for the split, each a flag and its value as one shell word, in the order
  /// megatron_layout_args() writes them; read_megatron_args() reads them back to the same split.
  /// even: none; first_last: --decoder-first-pipeline-num-layers N and --decoder-last-pipeline-num-layers
  /// N, each where given; per_stage: --pipeline-model-parallel-layout 'S', the string as given,
  /// single-quoted ('|', '(' and '*' are shell syntax; megatron_words() unquotes it).
  std::vector<std::pair<std::string, std::string>> megatron_arguments() const;
  /// Whether the split sets the model chunks itself (a layout string: its stages give V and place the
  /// embedding and loss), so that neither V nor the embedding/loss-in-split flags go beside it.
  bool sets_chunks() const { return kind == Kind::per_stage; }
  /// The split as a layout's JSON writes it: the rows pipeline_layout, first_stage_layers and
  /// last_stage_layers of the layout's field table (budget/layout_fields.hpp).
  struct Fields {
    std::string pipeline_layout;          ///< per_stage: the layout string; else ""
    std::int64_t first_stage_layers = -1;  ///< first_last: the first rank's layers; -1: not given
    std::int64_t last_stage_layers = -1;   ///< first_last: the last rank's layers; -1: not given
  };
  Fields json_fields() const;
  /// The split in a layout's one-line summary (budget_render's layout_brief()) around `placement`, the
  /// loop placement's words ("" for none): even: `placement`; first_last: " first N last M" (each where
  /// given), then `placement`; per_stage: `placement`, then " (layout string)".
  std::string summary(std::string_view placement) const;

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

/// The parallel sizes and pipeline split of a step, over the recipe it trains with (TrainingRecipe,
/// budget/training_recipe.hpp: precision, FP8, optimizer dtypes, micro-batch size, recompute, ...),
/// which a layout holds as its base: a run is an architecture, these sizes and split, and a recipe.
struct ParallelLayout : TrainingRecipe {
  std::int64_t tp = 1;              ///< tensor parallel size
  bool sequence_parallel = false;   ///< Megatron --sequence-parallel (no effect with tp = 1)
  std::int64_t pp = 1;              ///< pipeline stages
  std::int64_t virtual_stages = 1;  ///< model chunks per pipeline rank (interleaved 1F1B when > 1)
  std::int64_t ep = 1;              ///< expert parallel size
  std::int64_t etp = 0;             ///< expert tensor parallel size (0: equal to tp, Megatron's default)
  std::int64_t cp = 1;              ///< context parallel size
  std::int64_t gpus = 0;            ///< GPU count N; 0: derived from dp
  std::int64_t dp = 0;              ///< data parallel size; 0: derived from gpus (N / (TP·CP·PP))
  std::int64_t micro_batches = 1;     ///< micro-batches per step on each pipeline (m)
  std::int64_t seq_len = 4096;        ///< tokens per sequence (split over CP)
  /// Rows the most loaded expert rank receives over the balanced count (1 = balanced routing).
  double imbalance = 1.0;
  /// The pipeline split (even, Megatron's first/last counts, or a layout string setting PP·V chunks).
  PipelineSplit split;
  /// --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split: the
  /// embedding (loss) counts as one layer of the even split, so the first (last) chunk builds one
  /// transformer layer fewer (transformer_block.py:148-200 at d98e8a64).
  bool embedding_in_split = false;
  bool loss_in_split = false;

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
/// smallest_fitting_layout()): every layout it enumerates takes `base`, the one TrainingRecipe
/// (precision, the FP8 recipe with FP8 parameters and the amax history, the gradient and optimizer
/// dtypes, FSDP and its sharding, the distributed-optimizer instances, CPU offload, the dispatcher and
/// the fused permutation, cross-entropy fusion, the vocabulary padding, dropout, the attention
/// kernel, gradient-accumulation fusion, the capacity factor and the MoE memory settings), except
/// that the micro-batch size, the recompute (kind, method, layers and modules), the distributed
/// optimizer and the loop placement are taken only where held. The search varies the rest: TP (with
/// sequence parallelism), CP, PP, V, EP and ETP, and the held settings' alternatives where not held;
/// the parallel sizes, GPUs, micro-batch count, sequence length and pipeline split are the search's
/// own (it splits evenly) and the imbalance is LayoutSearchOptions::imbalance. The default recipe is
/// the search as it always was: bf16, no FP8, Adam's fp32 states, every micro-batch size, recompute
/// and optimizer choice.
struct LayoutRecipe {
  TrainingRecipe base;
  bool hold_micro_batch_size = false;
  bool hold_recompute = false;
  bool hold_distributed_optimizer = false;
  /// Hold base.loop_placement (--loop-placement); else a looped config tries each placement.
  bool hold_loop_placement = false;
};

/// A ParallelLayout of default sizes and split (the parallel sizes, GPUs, batch, sequence length
/// and an even pipeline split) over `recipe.base`, with the settings not held at TrainingRecipe's
/// defaults: the template of every layout searched.
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
