#pragma once
/// \file
/// Reading a Megatron-LM or Megatron-Bridge training log (docs/calibration.md, "Megatron-LM logs"):
/// its arguments as command-line words for read_megatron_args() (budget/megatron_args.hpp), its
/// iteration times and its peak memory; a run file's "megatron_log" (budget/run_fit.hpp) reads it.
///
/// Thread safety: reentrant.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "budget/megatron_args.hpp"

namespace budget {

/// What a Megatron-LM training log (the standard output of pretrain_gpt.py, Megatron-LM d98e8a64)
/// says of its run (docs/calibration.md, "Megatron-LM logs"): the "arguments" block as command-line
/// words (by the flag table's destinations: None and flags at their default left out, derived
/// values the parser does not have skipped and listed), or a Megatron-Bridge log's Task Configuration
/// (its ConfigContainer YAML) as the words --bridge-config reads from it, every "elapsed time per iteration (ms)" line
/// with its throughput per GPU and global batch size, and the largest "max allocated" of the memory
/// reports.
struct MegatronLog {
  struct Iteration {
    std::int64_t iteration = 0;
    double elapsed_ms = 0;
    double tflops_per_gpu = -1;      ///< "throughput per GPU (TFLOP/s/GPU)" (−1: not logged)
    std::int64_t global_batch_size = -1;
  };
  std::vector<std::string> arguments;
  std::vector<std::string> derived;  ///< printed destinations Megatron's parser does not have
  /// printed arguments of a feature the block prints off (fp8_recipe with fp8 None, ...), left out
  /// of `arguments`: "dest value (feature value: where Megatron reads it)"
  std::vector<std::string> left_out;
  /// what the log's recipe says that no Megatron-LM argument can say (a Megatron-Bridge Task
  /// Configuration's env_vars, ...): "…: read, not modelled"
  std::vector<std::string> notes;
  BridgeOnlySettings bridge;  ///< a Task Configuration's Bridge-only settings (given = false without one)
  std::vector<Iteration> iterations;
  double max_allocated_mib = -1;
  /// The median elapsed time of the logged iterations after the first (which includes start-up), in
  /// seconds; −1 with fewer than two.
  double step_time_s() const;
};
/// budget::Error naming `source` and the line: no arguments block or Task Configuration (or two, or one
/// without its end), a malformed argument line, a Task Configuration bridge_config_args() refuses, no
/// iteration line, a field that is not a non-negative number.
MegatronLog parse_megatron_log(std::string_view text, const std::string& source);
MegatronLog load_megatron_log(const std::string& path);

}  // namespace budget
