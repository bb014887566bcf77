#include "cluster_options.hpp"

#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/error.hpp"
#include "option_checks.hpp"
#include "recipe_file_option.hpp"

namespace budget::cli {

ClusterSpec ClusterRankOptions::load() const {
  return load_cluster_spec(cluster_path, nodes > 0 ? std::optional<std::int64_t>(nodes) : std::nullopt);
}

LayoutSearchOptions ClusterRankOptions::search_options(const Workload& workload) const {
  LayoutSearchOptions o = cluster_rank_search_options(workload, gpus, global_batch_tokens, max_nodes_per_token);
  o.min_headroom_bytes = min_headroom_gib * static_cast<double>(std::int64_t{1} << 30);
  hold_loop_placement(o);
  return o;
}

void ClusterRankOptions::hold_loop_placement(LayoutSearchOptions& o) const {
  if (loop_placement.empty()) return;
  o.recipe.base.loop_placement = parse_loop_placement(loop_placement, "--loop-placement");
  o.recipe.hold_loop_placement = true;
}

LayoutSearchOptions ClusterRankOptions::search_options(const Workload& workload, const ArchConfig& baseline,
                                                      std::optional<MegatronRun>* run) const {
  LayoutSearchOptions o = search_options(workload);
  if (megatron_args.empty()) return o;
  const MegatronRun read = load_team_recipe(megatron_args, bridge_config, baseline, gpus);
  o = megatron_search_options(read, workload, o, true);
  // The file's MoE dispatcher settings (router fusion, pad-to-capacity, flex backend and SMs, group-
  // limited routing) price each layout's step as `layout` and the run fit price them.
  o.time.communication.moe = load_team_kernel_options(megatron_args, bridge_config, baseline, gpus).moe;
  hold_loop_placement(o);  // not a Megatron-LM argument: --loop-placement alone
  if (run != nullptr) *run = read;
  return o;
}

std::optional<MegatronKernelOptions> ClusterRankOptions::cuda_graphs() const {
  if (megatron_args.empty()) return std::nullopt;
  return load_team_cuda_graphs(megatron_args, bridge_config);
}

TrainingRecipe ClusterRankOptions::training_recipe() const {
  if (megatron_args.empty()) return TrainingRecipe{};
  return load_team_training_recipe(megatron_args, bridge_config);
}

CLI::Option* add_min_headroom_option(CLI::App& command, double& gib, const std::string& when) {
  return command
      .add_option("--min-headroom", gib,
                  "GiB of memory a layout must leave free on its fullest GPU to count as fitting (" + when +
                      fmt::format("default {:g}: the median slack of PyTorch's caching allocator, reserved - "
                                  "allocated, over 19 measured Megatron-Core runs; docs/cluster.md", default_min_headroom_gib) +
                      "; 0: any layout within the usable memory)")
      ->check(non_negative_real(1e6));
}

void default_calibration_from_cluster(const ClusterRankOptions& cluster, std::string& calibration_path) {
  if (!cluster.given() || !calibration_path.empty()) return;
  const ClusterSpec spec = cluster.load();
  if (spec.compute.source != ComputeSource::calibration) {
    throw Error("the cluster file gives datasheet peaks only: give a calibration profile (--calibration P.json, e.g. "
                "cuda_profiler/profiles/h200-torch-eager.json)",
                "--cluster");
  }
  calibration_path = spec.compute.calibration_profile;
}

CLI::Option* add_cluster_option(CLI::App& command, ClusterRankOptions& target, const std::string& help) {
  return command.add_option("--cluster", target.cluster_path, help);
}

CLI::Option* add_gpus_option(CLI::App& command, ClusterRankOptions& target, const std::string& help) {
  return command.add_option("--gpus", target.gpus, help)->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24));
}

CLI::Option* add_nodes_option(CLI::App& command, ClusterRankOptions& target, const std::string& help) {
  return command.add_option("--nodes", target.nodes, help)->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
}

CLI::Option* add_global_batch_tokens_option(CLI::App& command, ClusterRankOptions& target, const std::string& help) {
  return command.add_option("--global-batch-tokens", target.global_batch_tokens, help)
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 50));
}

CLI::Option* add_max_nodes_per_token_option(CLI::App& command, ClusterRankOptions& target, const std::string& help) {
  return command.add_option("--max-nodes-per-token", target.max_nodes_per_token, help)
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
}

void add_recipe_file_options(CLI::App& command, ClusterRankOptions& target, const std::string& megatron_args_help,
                             const std::string& bridge_config_when) {
  command.add_option("--megatron-args", target.megatron_args, megatron_args_help);
  add_bridge_config_option(command, target.megatron_args, target.bridge_config, bridge_config_when);
}

CLI::Option* add_loop_placement_option(CLI::App& command, ClusterRankOptions& target, const std::string& help) {
  return command.add_option("--loop-placement", target.loop_placement, help);
}

void add_cluster_rank_options(CLI::App& command, ClusterRankOptions& target) {
  add_cluster_option(command, target,
                     "Cluster file (docs/cluster.md; examples/clusters/): time each at its own best layout on --gpus "
                     "of it (needs --gpus; the step times from --calibration, else the cluster file's profile)");
  add_gpus_option(command, target, "GPUs of the cluster to lay out on (with --cluster)");
  add_nodes_option(command, target, "Nodes of the cluster (with --cluster; default: the file's)");
  add_global_batch_tokens_option(command, target,
                                 "Tokens per step b·s·m·DP of the layout search (with --cluster; default 4,194,304)");
  add_max_nodes_per_token_option(
      command, target,
      "Node-limited routing: each token to at most M nodes (with --cluster; DeepSeek-V3; default unlimited)");
  add_min_headroom_option(command, target.min_headroom_gib, "with --cluster; ");
  add_recipe_file_options(command, target,
                          "With --cluster: the team's Megatron-LM arguments (shell words or the bash-array file export "
                          "--to megatron writes; docs/megatron.md): every config priced at the team's layout where it "
                          "is valid and fits, else at the best layout with the team's recipe held (precision, FP8, "
                          "recompute, optimizer, batch, overlap); the file's model-shape flags are checked against the "
                          "baseline",
                          "with --cluster, as --megatron-args");
  add_loop_placement_option(command, target,
                            "With --cluster: every layout search holds this loop placement: in_chunk, wrap or "
                            "replicated (default: each tried; docs/cluster.md, \"Loops across pipeline stages\")");
}

void check_cluster_rank_options(const CLI::App& command) {
  check_option_needs(command, "--cluster", {"--gpus"},
                     "the layout search lays out on --gpus GPUs (and times each layout from the cluster file's "
                     "calibration profile, or --calibration)");
  for (const char* option :
       {"--gpus", "--nodes", "--global-batch-tokens", "--max-nodes-per-token", "--min-headroom", "--megatron-args",
        "--bridge-config", "--loop-placement"}) {
    check_option_needs(command, option, {"--cluster"}, "it sets up the cluster layout search");
  }
  for (const char* recipe : {"--megatron-args", "--bridge-config"}) {
    if (command.count(recipe) == 0 || command.count("--global-batch-tokens") == 0) continue;
    throw_option_dependency_error("--global-batch-tokens",
                                  std::string(recipe) + " gives the batch (--global-batch-size x --seq-length); leave "
                                  "--global-batch-tokens out");
  }
}

}  // namespace budget::cli
