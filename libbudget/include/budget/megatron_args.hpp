#pragma once
/// \file
/// Megatron-LM interop (docs/megatron.md): ONE table of Megatron-LM's training arguments at commit
/// d98e8a64 (every argument's names, value arity, type, choices and declaring source line, listed
/// from Megatron's own parser by scripts/megatron_arguments.py), joined with what each argument
/// means here (modelled, checked against the config, read but not modelled, or changing nothing
/// here). The reader (--megatron-args), the writer (export --to megatron) and the tests share it.
///
/// Thread safety: every function here is reentrant; the tables are built once, thread-safely.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "budget/communication.hpp"
#include "budget/config.hpp"
#include "budget/kernel_stack.hpp"
#include "budget/layout_search.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"

namespace budget {

/// The Megatron-LM commit the table lists (full hash).
std::string_view megatron_arguments_commit();

/// What an argument means here.
enum class MegatronUse {
  modelled,      ///< sets a field of the layout, the overlap, the batch or a run's kernel settings
                 ///< (MegatronKernelOptions), and changes memory or time
  shape,         ///< a model-shape argument: must agree with the config (refused naming both values)
  read,          ///< read and reported: changes memory, communication or time in Megatron, not modelled here
  not_modelled,  ///< accepted, changes nothing here (logging, data, checkpoints, ...)
};
std::string_view to_string(MegatronUse use);

/// One Megatron-LM argument.
struct MegatronArgument {
  std::vector<std::string> names;  ///< option strings, aliases included ("--no-x", "--disable-x")
  std::string dest;                ///< argparse destination
  std::string arity;               ///< values it takes: "0", "1", "?", "+", "*"
  std::string type;                ///< int, float, str, callable (a converter) or empty (flags)
  std::vector<std::string> choices;
  std::string source;              ///< file:line at the commit
  MegatronUse use = MegatronUse::not_modelled;
  std::string meaning;             ///< what it sets here (empty for not_modelled)
};

/// Every argument of Megatron-LM's training parser at the commit, in parser order.
const std::vector<MegatronArgument>& megatron_arguments();
/// The argument one of whose names is `flag` (with its leading dashes), or nullptr.
const MegatronArgument* find_megatron_argument(std::string_view flag);

/// Splits `text` into words by POSIX shell quoting rules, without running a shell: blanks (space,
/// tab, newline) separate words; 'single quotes' keep everything literally; "double quotes" keep
/// everything but \" \\ \$ \` and backslash-newline; an unquoted backslash quotes the next
/// character (backslash-newline joins lines); a '#' that begins a word starts a comment to the end
/// of the line. Anything a shell would expand or run ($, `, unquoted ( ) ; & | < >, globbing
/// characters * ? [ outside quotes, ~ at a word's start) is refused (budget::Error naming `source`
/// and the line), except a bash array: NAME=( ... ) whose words are taken (megatron_words()).
std::vector<std::string> split_shell_words(std::string_view text, const std::string& source);

/// The arguments of a --megatron-args file: the words of every bash array NAME=( ... ) in it (the
/// file `export --to megatron` writes), or, when it has none, all its words (arguments as shell
/// words). A leading launcher (python, torchrun and their options, a .py script) is not accepted:
/// give the arguments alone.
std::vector<std::string> megatron_words(std::string_view text, const std::string& source);

/// The settings of a Megatron-Bridge config that no Megatron-LM argument can say (docs/megatron.md,
/// "Megatron-Bridge configs"): read, recorded, and listed in MegatronRun::read with what the cost
/// model does with each (none of them is modelled yet).
struct BridgeOnlySettings {
  bool given = false;                                ///< the run was read from a Bridge config
  bool parameter_transpose_cache_disabled = false;   ///< model.disable_parameter_transpose_cache
  std::string tp_comm_overlap_cfg;                   ///< comm_overlap.tp_comm_overlap_cfg (flow YAML; "" none)
  std::vector<std::pair<std::string, std::string>> env_vars;  ///< env_vars in file order
};

/// A training run as Megatron-LM's arguments describe it, resolved for `gpus` GPUs.
struct MegatronRun {
  ParallelLayout layout;      ///< gpus and dp set; micro_batches = GBS / (MBS·DP)
  CommOverlap overlap;        ///< the overlap flags (Megatron's defaults: nothing overlapped)
  std::int64_t global_batch_size = 0;
  std::vector<std::string> modelled;      ///< arguments read into the layout, overlap or batch
  std::vector<std::string> checked;       ///< model-shape arguments that agree with the config
  std::vector<std::string> read;          ///< read, their effect not modelled (with what they change)
  std::vector<std::string> not_modelled;  ///< accepted, change nothing here
  BridgeOnlySettings bridge;              ///< what a Bridge config said beyond Megatron-LM's arguments
  /// The attention mask the arguments say (megatron_attention()): a document mask with
  /// --reset-attention-mask (a Bridge config: dataset.reset_attention_mask or inter_document_masking),
  /// else causal over the whole sequence.
  bool document_mask = false;
  /// Group-limited routing (--moe-router-num-groups, --moe-router-group-topk; 0: not given): priced
  /// through CommOptions::moe (MoeDispatchOptions::router_num_groups, router_group_topk).
  std::int64_t router_num_groups = 0;
  std::int64_t router_group_topk = 0;
};

/// The attention a team's run is priced with (docs/megatron.md, "The attention mask"): Megatron-LM's
/// GPT dataset masks each sample causally over the whole sequence unless --reset-attention-mask resets
/// the mask at every end-of-document token (megatron/core/datasets/gpt_dataset.py:800-870 at d98e8a64,
/// _get_ltor_masks_and_position_ids). Causal: attended_keys 0, the step time's causal window, (s + 1)/2
/// keys a query. Document mask: the workload's document mask (its mean attended keys), which must be
/// at the run's --seq-length. `says` is the line the outputs print.
struct MegatronAttention {
  double attended_keys = 0.0;  ///< TimeModelOptions::attended_keys (0: causal)
  std::string says;
};
/// budget::Error (naming --reset-attention-mask) when the arguments ask for a document mask and the
/// workload has none at the run's sequence length.
MegatronAttention megatron_attention(const MegatronRun& run, const Workload& workload);

/// Reads Megatron-LM arguments (words as megatron_words() gives them) for `config` on `gpus` GPUs.
/// budget::Error naming `source` and the argument: an argument Megatron does not have (with a
/// did-you-mean), a missing or malformed value, a choice Megatron refuses, a model-shape argument
/// that disagrees with the config (both values named), DP = N/(TP·CP·PP) or GBS/(MBS·DP) not whole,
/// a setting the planner cannot price (named).
MegatronRun read_megatron_args(const std::vector<std::string>& words, const ArchConfig& config, std::int64_t gpus,
                               const std::string& source);
/// The kernel settings of Megatron-LM arguments that a measured run's step time needs beyond
/// MegatronRun (docs/calibration.md, "Run files"; TimeModelOptions and CommOptions::moe take them).
struct MegatronKernelOptions {
  /// CUDA graphs over whole layers (--cuda-graph-impl other than none, --enable-cuda-graph,
  /// --external-cuda-graph): no CPU launch gaps. Graphs of some modules only (--cuda-graph-modules or
  /// --cuda-graph-scope without full_iteration): cuda_graphs false and those modules in
  /// `cuda_graph_modules` (their kernels launch nothing; the rest is launched eagerly), said in `notes`.
  bool cuda_graphs = false;
  CudaGraphModules cuda_graph_modules{};
  /// --moe-pad-expert-input-to-capacity, --moe-router-fusion, --moe-flex-dispatcher-backend, the
  /// dispatcher's SMs (--moe-flex-dispatcher-num-sms, --moe-deepep-num-sms, --moe-hybridep-num-sms)
  /// and the group-limited routing of MegatronRun.
  MoeDispatchOptions moe;
  std::vector<std::string> notes;  ///< what the settings assume (CUDA graphs of some modules only, ...)
};
/// A measured run's Megatron-LM arguments read once: the run and its kernel settings.
struct MegatronTimedRun {
  MegatronRun run;
  MegatronKernelOptions kernels;
};
/// read_megatron_args() and the kernel settings of the same arguments; budget::Error as
/// read_megatron_args(), and for --moe-flex-dispatcher-backend ncclep with the flex dispatcher (not
/// modelled) or a dispatcher SM count outside [1, 4096].
MegatronTimedRun read_megatron_timed_run(const std::vector<std::string>& words, const ArchConfig& config,
                                         std::int64_t gpus, const std::string& source);
/// Reads a file (megatron_words, then read_megatron_args).
MegatronRun load_megatron_args(const std::string& path, const ArchConfig& config, std::int64_t gpus);

/// A Megatron-Bridge ConfigContainer YAML (what ConfigContainer.to_yaml() writes, run_config.yaml
/// beside a checkpoint; docs/megatron.md, "Megatron-Bridge configs", NVIDIA-NeMo/Megatron-Bridge at
/// 067f987d) as the Megatron-LM arguments its fields say, field by field (the mapping table of
/// interop/bridge_mapping.cpp), and what no argument can say.
struct BridgeConfigArgs {
  std::vector<std::string> words;     ///< Megatron-LM arguments, as read_megatron_args() takes them
  std::vector<std::string> mapped;    ///< "model.tensor_model_parallel_size 16 → --tensor-model-parallel-size"
  std::vector<std::string> inert;     ///< fields and sections that change nothing here
  std::vector<std::string> left_out;  ///< fields of a feature the config turns off
  BridgeOnlySettings bridge;
};
/// budget::Error naming `source`, the field's YAML path and line: YAML that does not parse, a
/// top-level key or a field that the ConfigContainer's dataclasses at the commit do not have (with a
/// did-you-mean), a value of a kind the field cannot hold, two sections that disagree on one argument.
BridgeConfigArgs bridge_config_args(std::string_view yaml_text, const std::string& source);
/// read_megatron_args() of bridge_config_args()'s words, with the Bridge-only settings and the inert
/// fields listed (budget::Error as both).
MegatronRun read_bridge_config(std::string_view yaml_text, const ArchConfig& config, std::int64_t gpus,
                               const std::string& source);
MegatronRun load_bridge_config(const std::string& path, const ArchConfig& config, std::int64_t gpus);
/// megatron_fp8_recipe() of a Bridge config file's arguments.
Fp8Recipe load_bridge_fp8_recipe(const std::string& path);

/// A team's recipe file as a command takes it: `--megatron-args FILE` (load_megatron_args()) or, with
/// `bridge_config`, `--bridge-config FILE.yaml` (load_bridge_config()); one reader for both options.
MegatronRun load_team_recipe(const std::string& path, bool bridge_config, const ArchConfig& config, std::int64_t gpus);
/// megatron_training_recipe() of a team's recipe file (`bridge_config`: a Bridge config's arguments):
/// the recipe a time model is built with where no one model's arguments are read (match, grid).
TrainingRecipe load_team_training_recipe(const std::string& path, bool bridge_config);
/// The kernel settings of a team's recipe file (read_megatron_timed_run()'s of its arguments, against
/// `config` on `gpus` GPUs): its CUDA graphs (whole layers, or the modules graphed) and the MoE
/// dispatcher's settings, which the step time of one layout prices as the run fit does.
MegatronKernelOptions load_team_kernel_options(const std::string& path, bool bridge_config, const ArchConfig& config,
                                               std::int64_t gpus);
/// `options` priced under the CUDA graphs `kernels` read (TimeModelOptions::cuda_graphs and
/// cuda_graph_modules); nothing else of it.
void set_cuda_graphs(TimeModelOptions& options, const MegatronKernelOptions& kernels);
/// The CUDA graphs alone of Megatron-LM arguments (no config): `cuda_graphs`, `cuda_graph_modules` and
/// their note; budget::Error as read_megatron_args() for arguments the parser refuses.
MegatronKernelOptions megatron_cuda_graphs(const std::vector<std::string>& words, const std::string& source);
/// The CUDA graphs alone of a team's recipe file, read without a config (the same reading as
/// load_team_kernel_options()): `cuda_graphs` and `cuda_graph_modules` set, the rest default. What a
/// time model serving several baselines (match and grid on a cluster) is built with.
MegatronKernelOptions load_team_cuda_graphs(const std::string& path, bool bridge_config);

/// The FP8 recipe of Megatron-LM arguments (--fp8-format with --fp8-recipe, Megatron's default
/// delayed; none without --fp8-format), as read_megatron_args() reads it, without a config: what the
/// time model of a grid of several baselines is built with. budget::Error as read_megatron_args().
Fp8Recipe megatron_fp8_recipe(const std::vector<std::string>& words, const std::string& source);
/// megatron_fp8_recipe() of a --megatron-args file.
Fp8Recipe load_megatron_fp8_recipe(const std::string& path);
/// The training recipe of Megatron-LM's arguments read without a model or GPU count, as
/// read_megatron_args() reads it into its layout: the micro-batch size, recompute, precision and FP8,
/// the gradient and optimizer dtypes and the model settings (budget::Error as read_megatron_args()).
/// Nothing of it depends on the model's shape, so one file's recipe times every candidate of a match
/// or grid alike.
TrainingRecipe megatron_training_recipe(const std::vector<std::string>& words, const std::string& source);
/// The kernel target's attention backend (budget/kernel_stack.hpp) of a --megatron-args file's
/// --attention-backend (Megatron-LM's AttnBackend): fused cudnn, flash fa2 (the flash-attn package
/// TE requires), unfused and local unfused, auto or absent te_default.
AttentionBackend load_megatron_attention_backend(const std::string& path);
/// The same of Megatron-LM arguments as words, and of a team's recipe file (`bridge_config`: a
/// Megatron-Bridge config's arguments).
AttentionBackend megatron_attention_backend(const std::vector<std::string>& words, const std::string& source);
AttentionBackend load_team_attention_backend(const std::string& path, bool bridge_config);

/// The options of a layout search or a cluster ranking under a team's arguments (docs/megatron.md,
/// "The cluster ranking at the team's recipe"): `options` with the recipe held from run.layout (its
/// precision, FP8, gradient and optimizer dtypes, recompute, distributed optimizer and FSDP, offload,
/// dispatcher, micro-batch size; LayoutRecipe), the global batch GBS · seq_len tokens, the sequence
/// length, the overlap and the imbalance of the run; the attended keys the arguments' mask
/// (megatron_attention()); with `price_at_team_layout` the run's layout as the team's
/// (LayoutSearchOptions::team_layout). budget::Error when GBS · seq_len passes 2^50, and as
/// megatron_attention().
LayoutSearchOptions megatron_search_options(const MegatronRun& run, const Workload& workload, LayoutSearchOptions options,
                                            bool price_at_team_layout);

/// The parallelism and training arguments that make Megatron-LM run `layout` (resolved) with
/// `overlap`, one argument and its value a line ("--flag value"); read_megatron_args() of them
/// (with the model arguments) gives the layout back.
std::vector<std::string> megatron_layout_args(const ParallelLayout& layout, const CommOverlap& overlap);

/// What the model-argument writer takes beyond the config (export --to megatron fills it:
/// export/export.cpp).
struct MegatronModelArgsOptions {
  std::int64_t seq_length = 4096;                   ///< --seq-length (the training sequence length)
  RouterScore router_score = RouterScore::softmax;  ///< the router score function written (MoE)
  std::string loop_description;                     ///< the config's loop in words (with a loop)
  /// The training run's arguments, one "--flag value" a line (megatron_layout_args()), written as a
  /// second array TRAINING_ARGS; empty: none.
  std::vector<std::string> training_args;
};
/// The model arguments of `config` for Megatron-LM at the table's commit as a bash array file
/// MODEL_ARGS=( ... ) with header comments (target, use, Megatron defaults left in place, what is not
/// expressed), then TRAINING_ARGS when given (docs/export.md); every flag checked against the table.
/// Appends to `not_expressed` what the arguments cannot say (the loop, ...); budget::Error naming the
/// config's field for a feature Megatron-LM has no argument for.
std::string megatron_model_args_file(const ArchConfig& config, const MegatronModelArgsOptions& options,
                                     std::vector<std::string>& not_expressed);

/// Throws budget::Error (an internal error naming the flag) unless `flag` is one of Megatron's.
void require_megatron_argument(std::string_view flag);

}  // namespace budget
