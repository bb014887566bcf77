#pragma once
// `--cluster C.json --gpus N [--nodes K] [--global-batch-tokens T] [--max-nodes-per-token M]
// [--min-headroom GiB] [--megatron-args FILE] [--loop-placement P]`: the
// options that put a matched candidate (match, grid) or an architecture (ce-gain) at its best layout
// on N GPUs of a cluster (budget/layout_search.hpp, docs/cluster.md). Declared once here so that
// they mean the same in every command; their dependencies are checked with check_option_needs()
// (option_checks.hpp): --cluster needs --gpus and --calibration, and the others need --cluster.

#include <cstdint>
#include <optional>
#include <string>

#include "budget/cluster.hpp"
#include "budget/layout_search.hpp"
#include "budget/megatron_args.hpp"
#include "budget/workload.hpp"

#include "cli11_fwd.hpp"

namespace budget::cli {

struct ClusterRankOptions {
  std::string cluster_path;
  std::int64_t gpus = 0;
  std::int64_t nodes = 0;  ///< 0: the file's
  std::int64_t global_batch_tokens = 4 * 1024 * 1024;
  std::int64_t max_nodes_per_token = 0;  ///< 0: unlimited routing
  double min_headroom_gib = default_min_headroom_gib;  ///< --min-headroom: a layout fits with at least this headroom
  std::string megatron_args;  ///< --megatron-args FILE: the team's recipe and layout (docs/megatron.md)
  bool bridge_config = false;  ///< the file is --bridge-config's Megatron-Bridge YAML (recipe_file_option.hpp)
  std::string loop_placement;  ///< --loop-placement: held by every search; empty: each placement tried
  bool given() const { return !cluster_path.empty(); }
  /// The cluster file (budget::Error naming it when bad), with --nodes applied.
  ClusterSpec load() const;
  /// The layout search's options: --gpus, --global-batch-tokens, node-limited routing, and the
  /// workload's sequence length and mean attended keys (a causal window: 0, the search's default).
  LayoutSearchOptions search_options(const Workload& workload) const;
  /// search_options(workload), under --megatron-args with the file read against `baseline` (its
  /// model-shape flags checked against it, DP from --gpus): the team's recipe held, its batch,
  /// sequence, overlap and imbalance, and its layout as the team's (megatron_search_options()); `run`
  /// (when given) set to what was read. budget::Error naming the file.
  LayoutSearchOptions search_options(const Workload& workload, const ArchConfig& baseline,
                                     std::optional<MegatronRun>* run) const;
  /// --loop-placement on `o`'s recipe, held (nothing when not given); budget::Error for a bad name.
  void hold_loop_placement(LayoutSearchOptions& o) const;
  /// The recipe the time model must time (load_team_training_recipe() of --megatron-args or
  /// --bridge-config: its FP8 recipe and gradient bytes; the default recipe without).
  TrainingRecipe training_recipe() const;
  /// The recipe file's CUDA graphs (load_team_cuda_graphs()); nullopt without --megatron-args.
  std::optional<MegatronKernelOptions> cuda_graphs() const;
};

/// The calibration profile of the cluster file's GPU (its gpu.compute.calibration, issue 32) for
/// a command given --cluster but not --calibration: `calibration_path` is set to it; budget::Error
/// when the cluster file gives datasheet peaks only. Nothing when --cluster is not given or
/// --calibration is.
void default_calibration_from_cluster(const ClusterRankOptions& cluster, std::string& calibration_path);

/// Adds `--min-headroom GiB` (a layout fits with at least this headroom; 0 to 10^6) to `command`;
/// `when` opens the help's parenthesis ("with --cluster; ").
CLI::Option* add_min_headroom_option(CLI::App& command, double& gib, const std::string& when = {});

/// Adds the options above to `command`.
void add_cluster_rank_options(CLI::App& command, ClusterRankOptions& target);

/// Each option of the bundle alone, with its check (the range of a count), for a command that
/// declares them among its own options with help of its own (layout). `add_recipe_file_options`
/// adds --megatron-args and --bridge-config (recipe_file_option.hpp; `bridge_config_when` ends its help).
CLI::Option* add_cluster_option(CLI::App& command, ClusterRankOptions& target, const std::string& help);
CLI::Option* add_gpus_option(CLI::App& command, ClusterRankOptions& target, const std::string& help);
CLI::Option* add_nodes_option(CLI::App& command, ClusterRankOptions& target, const std::string& help);
CLI::Option* add_global_batch_tokens_option(CLI::App& command, ClusterRankOptions& target, const std::string& help);
CLI::Option* add_max_nodes_per_token_option(CLI::App& command, ClusterRankOptions& target, const std::string& help);
void add_recipe_file_options(CLI::App& command, ClusterRankOptions& target, const std::string& megatron_args_help,
                             const std::string& bridge_config_when);
CLI::Option* add_loop_placement_option(CLI::App& command, ClusterRankOptions& target, const std::string& help);

/// Checks the options' dependencies after parsing (budget::Error naming the options):
/// --cluster needs --gpus and --calibration; --gpus, --nodes, --global-batch-tokens,
/// --max-nodes-per-token, --min-headroom, --megatron-args and --loop-placement need --cluster; --megatron-args gives the
/// batch, so --global-batch-tokens is refused beside it.
void check_cluster_rank_options(const CLI::App& command);

}  // namespace budget::cli
