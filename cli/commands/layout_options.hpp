#pragma once
// The `layout` command's options bundle (docs/cluster.md): the config, the cluster options of
// cluster_options.hpp (declared among the layout's own, with the layout's help), the parallel layout
// and its recipe, the step time's options and the search's; what they mean to the library (the
// attention, the overlap, the recipe, the kernel options); and the command line's checks, which
// read the one table of the flags that set a layout (layout_options.cpp).

#include <cstdint>
#include <string>

#include "budget/cluster_time.hpp"
#include "budget/layout_search.hpp"
#include "budget/megatron_args.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/time_model.hpp"
#include "cli11_fwd.hpp"
#include "cluster_options.hpp"
#include "options.hpp"
#include "output_format.hpp"

namespace budget::cli {

struct LayoutOptions {
  std::string config_path;
  /// --cluster (required), --nodes, --gpus (the layout's GPU count N), --global-batch-tokens (the
  /// search's), --max-nodes-per-token, --min-headroom, --megatron-args / --bridge-config (the
  /// layout and recipe from the team's file) and --loop-placement (held by a search; empty: each tried).
  ClusterRankOptions cluster;
  std::string recompute = "none";
  std::string precision = "bf16";
  ParallelLayout layout;
  OutputFormat format = OutputFormat::table;
  std::string profile_path;
  WorkloadOption workload;
  double attended_keys = 0.0;  ///< 0 until resolved: --attended-keys, else the workload's
  bool attended_keys_given = false;
  bool seq_len_given = false;
  std::string overlap = "dp";
  double run_tokens = 0.0;
  int top = 5;
  std::string megatron_out;  ///< --megatron-out FILE: the layout written as Megatron-LM's arguments
  std::string fp8_recipe = "none";
  bool cuda_graphs = false;
  std::vector<std::string> cuda_graph_modules;  ///< --cuda-graph-modules: graphs of these modules only
  std::string stack = "profile";
  /// --search: search the layouts holding the recipe given (native options or --megatron-args).
  bool search = false;
  /// In a search, whether --micro-batch-size, --recompute and --distributed-optimizer were given
  /// (held) or are searched.
  bool hold_micro_batch_size = false;
  bool hold_recompute = false;
  bool hold_distributed_optimizer = false;
  /// --replicate-loop-weights: --loop-placement replicated.
  bool replicate_loop_weights = false;
  std::string main_params_dtype = "fp32";
  std::string exp_avg_dtype = "fp32";
  std::string exp_avg_sq_dtype = "fp32";
};

/// Declares the layout command's options on `command`, stored into `o`.
void add_layout_options(CLI::App& command, LayoutOptions& o);

/// What the command line asks for: one layout, or the layout search.
enum class LayoutRequest { one_layout, search };

/// Reads what was given on `command` into `o` (the *_given and hold_* fields, the GPU count) and
/// checks the flags against each other (budget::Error naming them): --search refuses the sizes it
/// chooses and needs --gpus; a recipe file refuses the flags it gives and needs --gpus; a layout
/// needs --micro-batch-size and --micro-batches. Without --search, no layout flag asks for a search.
LayoutRequest read_layout_request(const CLI::App& command, LayoutOptions& o);

/// The attention of the step time, the one default of `layout` and of the cluster ranking
/// (layout_attended_keys()): --attended-keys, else the workload's (--workload, default the paper's:
/// a document mask's mean attended keys, a causal window otherwise; a --seq-len other than the
/// workload's: causal); the sequence length: --seq-len, else the workload's. With a team's recipe file
/// (`team`), the mask its arguments say (megatron_attention(): causal unless --reset-attention-mask).
/// Returns what it says.
std::string resolve_attention(LayoutOptions& o, const MegatronRun* team = nullptr);

/// Whether the step time was priced on the workload's document mask (resolve_attention()): then the
/// arguments --megatron-out writes ask Megatron-LM for it (--reset-attention-mask: the mask reset at each
/// end of document), so that --megatron-args of them prices the same attention (megatron_attention()).
bool priced_on_document_mask(const LayoutOptions& o);

/// --overlap: a comma-separated list of tp, ep, cp, pp, dp, or none (default dp).
CommOverlap parse_overlap(const std::string& text);

/// The kernel options of the step time: the layout's recipe (--fp8-recipe, --grad-reduce-in-bf16 ... or
/// --megatron-args: one recipe for memory and time), --cuda-graphs or --cuda-graph-modules (or, with a
/// recipe file, its `kernels`' CUDA graphs), --stack.
TimeModelOptions time_model_options(const LayoutOptions& o, const TrainingRecipe& recipe,
                                    const MegatronKernelOptions* kernels = nullptr);

/// --loop-placement on `l` (--replicate-loop-weights: replicated); neither: in_chunk.
void apply_loop_placement(const LayoutOptions& o, TrainingRecipe& l);

/// Whether the loop placement is given (--loop-placement or --replicate-loop-weights): a search holds it.
bool loop_placement_given(const LayoutOptions& o);

/// The native recipe options on `l`: --recompute, --precision, --fp8-recipe and the optimizer state
/// dtypes (the flags set the rest of the layout's fields directly).
void apply_native_recipe(const LayoutOptions& o, TrainingRecipe& l);

/// The recipe a search holds from the native options: every recipe field as given; the micro-batch
/// size, recompute and distributed optimizer held only where given (--search), else searched.
LayoutRecipe native_recipe(const LayoutOptions& o);

}  // namespace budget::cli
