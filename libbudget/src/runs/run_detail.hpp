#pragma once
// Private to the runs domain: the run reader's Megatron-LM part (run_megatron.cpp), the options a run
// is priced with.
#include <string>
#include <vector>

#include "budget/cluster_time.hpp"
#include "budget/run_fit.hpp"

namespace budget::runs_detail {

/// Sets the run's layout (with its recipe), overlap, CUDA graphs and MoE dispatcher settings from its
/// Megatron-LM arguments (command-line words) through the interop reader, for the run's config on its
/// cluster's GPUs; budget::Error naming `where` and the argument.
void read_run_megatron_words(const std::vector<std::string>& words, const std::string& where, MeasuredRun& run);

/// The step-time options a run is priced with: its overlap and MoE dispatcher settings.
inline ClusterTimeOptions run_time_options(const MeasuredRun& run) {
  ClusterTimeOptions options;
  options.communication.overlap = run.overlap;
  options.communication.moe = run.moe;
  return options;
}

}  // namespace budget::runs_detail
