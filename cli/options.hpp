#pragma once
// Option bundles shared by several subcommands: declared once here (name, help, check) and read
// once (what an empty value means), so `--workload`, `--calibration`/`--attention-backend` and the
// loop options mean the same in every command. --format is in output_format.hpp.

#include <cstdint>
#include <optional>
#include <string>

#include "budget/kernel_stack.hpp"
#include "budget/match.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"

#include "cli11_fwd.hpp"

namespace budget {
struct MegatronKernelOptions;  // budget/megatron_args.hpp
}  // namespace budget

namespace budget::cli {

/// `--workload W.json`; none: the paper's workload (paper_workload()).
struct WorkloadOption {
  std::string path;
  Workload load() const;
};
inline constexpr const char* default_workload_help = "Workload JSON (default: the paper's)";
CLI::Option* add_workload_option(CLI::App& command, WorkloadOption& target, const std::string& help = default_workload_help);

/// `--calibration P.json` and `--attention-backend NAME` (the attention rows of the profile to
/// predict from: auto, cudnn, flash, default or fallback-<name>).
struct CalibrationOptions {
  std::string path;
  std::string attention_backend = "auto";
  bool given() const { return !path.empty(); }
  /// The time model of the profile at `path` (budget::Error naming the file if it is bad) timing
  /// `recipe` (the recipe of --megatron-args: its FP8 GEMMs and gradient bytes; default: bf16).
  /// `kernels`: the kernel target whose padding the model charges (TimeModelOptions::kernels).
  /// `graphs`: a recipe file's CUDA graphs (load_team_cuda_graphs()); none: priced without graphs.
  TimeModel load(const TrainingRecipe& recipe = {}, const std::optional<KernelTarget>& kernels = std::nullopt,
                 const MegatronKernelOptions* graphs = nullptr) const;
  /// load() when --calibration was given, else nothing.
  std::optional<TimeModel> load_if_given() const;
};
/// Adds --calibration (with `help`) and --attention-backend. With `kernel_backends` (the
/// matcher and grid), --attention-backend also takes the kernel target's fa2, fa3, fa4, cudnn,
/// unfused (KernelOptions) without --calibration; a profile's own values (flash, default,
/// fallback-<name>) still need it.
CLI::Option* add_calibration_options(CLI::App& command, CalibrationOptions& target, const std::string& help,
                                     bool kernel_backends = false);

/// `--gpu NAME` and `--precision P` (with --attention-backend of CalibrationOptions): the kernels
/// the search targets (budget/kernel_stack.hpp; docs/kernels.md).
struct KernelOptions {
  std::string gpu;
  std::string precision;
  bool portable = false;       ///< --portable-shapes: the default without a target (kept for scripts)
  bool all_trainable = false;  ///< --all-trainable-shapes: ShapeSpace::trainable without a target
  /// The space without --free-shapes: trainable with a target (its kernels decide), else the
  /// portable set (issue 43), or every trainable shape with --all-trainable-shapes. budget::Error
  /// (naming the option) for --all-trainable-shapes with a target.
  ShapeSpace space(bool free_shapes, const std::optional<KernelTarget>& target) const;
  /// The target, or nothing when neither --gpu, --precision, a kernel --attention-backend, a
  /// cluster's GPU nor a Megatron recipe names one. The GPU: --gpu, else `cluster_gpu` (a cluster
  /// file's gpu.name); precision: --precision, else the recipe of `megatron_args` (a path, or
  /// empty), else bf16; attention: --attention-backend fa2|fa3|fa4|cudnn|unfused, else
  /// `megatron_args`' --attention-backend (fused: cudnn, flash: fa2, unfused/local: unfused), else
  /// TE's default; `bridge_config`: the file is a Megatron-Bridge config (--bridge-config).
  /// budget::Error (naming the option) for a target without a GPU, or a precision the GPU does not run.
  std::optional<KernelTarget> target(const CalibrationOptions& calibration, const std::string& cluster_gpu,
                                     const std::string& megatron_args, bool bridge_config = false) const;
};
void add_kernel_options(CLI::App& command, KernelOptions& target);

/// `--loop FIRST-LAST` (1-based, inclusive) or `--span-fraction f` (the centred span of
/// round(f·L) layers), and `--repeats N`.
struct LoopOptions {
  std::string range;
  double span_fraction = 0.5;
  std::int64_t repeats = 2;
  /// The LoopSpec; budget::Error naming --loop for a range that is not FIRST-LAST with
  /// 1 ≤ FIRST ≤ LAST ≤ max_dimension.
  LoopSpec spec() const;
};
void add_loop_options(CLI::App& command, LoopOptions& target);

}  // namespace budget::cli
