#include "options.hpp"

#include <charconv>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/calibration.hpp"
#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "budget/megatron_args.hpp"
#include "option_checks.hpp"

namespace budget::cli {

Workload WorkloadOption::load() const { return path.empty() ? paper_workload() : load_workload(path); }

CLI::Option* add_workload_option(CLI::App& command, WorkloadOption& target, const std::string& help) {
  return command.add_option("--workload", target.path, help);
}

namespace {
/// The kernel target's explicit attention backends (--attention-backend without --calibration).
bool is_kernel_backend(const std::string& name) {
  return name == "fa2" || name == "fa3" || name == "fa4" || name == "cudnn" || name == "unfused" ||
         name == "te-default";
}

/// The profile rows a kernel backend name reads: FlashAttention's for fa2/fa3/fa4, the profile's
/// own choice (auto) for unfused and te-default (a profile has no unfused rows).
std::string profile_backend(const std::string& name) {
  if (name == "fa2" || name == "fa3" || name == "fa4") return "flash";
  if (name == "unfused" || name == "te-default") return "auto";
  return name;
}
}  // namespace

TimeModel CalibrationOptions::load(const TrainingRecipe& recipe, const std::optional<KernelTarget>& kernels,
                                   const MegatronKernelOptions* graphs) const {
  TimeModelOptions options{profile_backend(attention_backend)};
  options.kernels = kernels;
  options.recipe = recipe;
  if (graphs != nullptr) set_cuda_graphs(options, *graphs);
  return TimeModel(load_calibration_profile(path), options);
}

std::optional<TimeModel> CalibrationOptions::load_if_given() const {
  if (!given()) return std::nullopt;
  return load();
}

CLI::Option* add_calibration_options(CLI::App& command, CalibrationOptions& target, const std::string& help,
                                     bool kernel_backends) {
  CLI::Option* calibration = command.add_option("--calibration", target.path, help);
  if (!kernel_backends) {
    command
        .add_option("--attention-backend", target.attention_backend,
                    "With --calibration: auto (default), cudnn, flash, default or fallback-<name>")
        ->needs(calibration);
    return calibration;
  }
  command.add_option("--attention-backend", target.attention_backend,
                     "The kernel target's attention: fa2, fa3, fa4, cudnn or unfused (default: Transformer Engine's "
                     "choice for the GPU; docs/kernels.md); with --calibration also a profile's auto, flash, default "
                     "or fallback-<name>");
  return calibration;
}

void add_kernel_options(CLI::App& command, KernelOptions& target) {
  command.add_option("--gpu", target.gpu,
                     "Target these GPUs' kernels (h100-sxm, h200, b200, gb200-nvl72, a100-80gb, ...; --cluster implies "
                     "its GPU): head dims they run, padded sizes charged (docs/kernels.md)");
  auto* portable = command.add_flag("--portable-shapes", target.portable,
                                    "The default without --gpu: search only shapes every kernel target runs natively "
                                    "(head dims 64, 128, 256; GEMM widths multiples of 128, or 32 for a baseline off "
                                    "128; docs/kernels.md)");
  command
      .add_flag("--all-trainable-shapes", target.all_trainable,
                "Without --gpu: search every shape some fused kernel trains (head dims multiples of 8 up to 256, GEMM "
                "widths multiples of 8) instead of the portable set: head_dim 168 runs on cuDNN on Hopper, padded to "
                "192 by FlashAttention-3, and is refused for training on Blackwell (docs/kernels.md)")
      ->excludes(portable);
  command.add_option("--precision", target.precision,
                     "GEMM precision of the kernel target: bf16 (default), fp8-tensorwise, fp8-delayed, "
                     "fp8-blockwise, mxfp8, nvfp4 (--megatron-args implies its recipe)");
}

ShapeSpace KernelOptions::space(bool free_shapes, const std::optional<KernelTarget>& target) const {
  if (all_trainable && target) {
    throw_option_dependency_error("--all-trainable-shapes",
                                  fmt::format("--all-trainable-shapes applies without a kernel target; the target ({}) "
                                              "decides the shapes",
                                              describe(*target)));
  }
  return default_shape_space(free_shapes, all_trainable, target.has_value());
}

std::optional<KernelTarget> KernelOptions::target(const CalibrationOptions& calibration, const std::string& cluster_gpu,
                                                  const std::string& megatron_args, bool bridge_config) const {
  const std::string& backend = calibration.attention_backend;
  if (!calibration.given() && backend != "auto" && !is_kernel_backend(backend)) {
    throw_option_dependency_error("--attention-backend",
                                  fmt::format("--attention-backend requires --calibration for a profile's rows "
                                              "(\"{}\"); the kernel target takes fa2, fa3, fa4, cudnn or unfused",
                                              backend));
  }
  const bool kernel_backend = is_kernel_backend(backend);
  const std::string gpu_name = !gpu.empty() ? gpu : cluster_gpu;
  if (gpu_name.empty()) {
    if (!precision.empty() || kernel_backend) {
      throw_option_dependency_error(!precision.empty() ? "--precision" : "--attention-backend",
                                    "a kernel target needs a GPU: give --gpu NAME (or --cluster)");
    }
    return std::nullopt;
  }
  KernelTarget t;
  t.gpu = gpu_name;
  t.arch = parse_gpu_arch(gpu_name, gpu.empty() ? "--cluster" : "--gpu");
  t.precision = !precision.empty()        ? parse_precision(precision, "--precision")
                : !megatron_args.empty()  ? kernel_precision(load_team_training_recipe(megatron_args, bridge_config).fp8)
                                          : Precision::bf16;
  if (kernel_backend) {
    t.attention = parse_attention_backend(backend, "--attention-backend");
  } else if (!megatron_args.empty()) {
    t.attention = load_team_attention_backend(megatron_args, bridge_config);
  }
  if (const std::string why = precision_refusal(t.arch, t.precision); !why.empty()) {
    throw Error(why + "; allowed: a precision the GPU runs", precision.empty() ? "--megatron-args" : "--precision");
  }
  return t;
}

LoopSpec LoopOptions::spec() const {
  LoopSpec spec;
  spec.repeats = repeats;
  spec.span_fraction = span_fraction;
  if (range.empty()) return spec;
  const auto range_parts = LoopSpec::range_digits(range);
  if (!range_parts) {
    throw Error(
        fmt::format("value \"{}\" is not a layer range; allowed: FIRST-LAST, 1-based inclusive (e.g. 4-9)",
                    printable_text(range, 80)),
        "--loop");
  }
  const auto layer = [&](const std::string& digits) {
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || value > max_dimension) {
      throw Error(
          fmt::format("layer {} in \"{}\" is out of range; allowed: layers 1 to {}", printable_text(digits, 40),
                      printable_text(range, 80), max_dimension),
          "--loop");
    }
    return value;
  };
  spec.first = layer(range_parts->first);
  spec.last = layer(range_parts->second);
  if (spec.first < 1 || spec.last < spec.first) {
    throw Error(fmt::format("layer range {}–{} is empty or starts below 1", spec.first, spec.last), "--loop");
  }
  return spec;
}

void add_loop_options(CLI::App& command, LoopOptions& target) {
  CLI::Option* loop = command.add_option("--loop", target.range, "Loop layers FIRST-LAST (1-based, inclusive)");
  command
      .add_option("--span-fraction", target.span_fraction,
                  "Loop the centred span of round(f·L) layers (default 0.5: the middle half)")
      ->check(CLI::Range(0.0, 1.0))
      ->excludes(loop);
  command.add_option("--repeats", target.repeats, "Times the loop runs (default 2)")->check(CLI::Range(1, 1024));
}

}  // namespace budget::cli
