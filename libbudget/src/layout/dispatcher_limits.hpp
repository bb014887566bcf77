#pragma once
// Private to the layout domain and those above it: the dispatcher limits of a layout that depend on
// the cluster (dispatcher_limits.cpp; docs/kernels.md, "Expert-parallel layouts"). The limits that
// do not are in ParallelLayout::validation_error().
#include <cstdint>
#include <string>

#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"

namespace budget::detail {

/// Why the layout's dispatcher refuses it on a cluster whose NVLink domains hold `nvlink_domain`
/// GPUs: HybridEP's rules (hybridep_layout_refusal()) with that domain and the micro-batch's b·s/CP
/// tokens a rank (the tokens Megatron sizes HybridEP's buffer with: fused_a2a.py:400-414, as
/// memory/moe_memory.cpp's hybridep_buffer_bytes()). Empty for another dispatcher, a dense model or
/// a layout HybridEP runs. Assumes validation_error() is empty.
std::string dispatcher_cluster_error(const ParallelLayout& l, const ArchConfig& config, std::int64_t nvlink_domain);

}  // namespace budget::detail
