#pragma once
// Private to the runs domain: the run reader's Megatron-LM part (run_megatron.cpp).
#include <string>
#include <vector>

#include "budget/run_fit.hpp"

namespace budget::runs_detail {

/// Sets the run's layout, overlap, FP8 recipe, CUDA graphs, MoE dispatcher settings and main-gradient
/// bytes from its Megatron-LM arguments (command-line words) through the interop reader, for the
/// run's config on its cluster's GPUs; budget::Error naming `where` and the argument.
void read_run_megatron_words(const std::vector<std::string>& words, const std::string& where, MeasuredRun& run);

}  // namespace budget::runs_detail
