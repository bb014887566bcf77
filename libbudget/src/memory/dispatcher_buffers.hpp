#pragma once
// Private to the memory domain: the flex dispatcher's communication buffers of one GPU, outside
// PyTorch's caching allocator (docs/cluster.md, "MoE memory terms"; issue 42 item 1). DeepEP's
// Buffer and HybridEP's HybridEPBuffer as Megatron-LM d98e8a64 creates them (fused_a2a.py), sized
// from DeepEP's hybrid-ep branch at 94a9f8f; each formula in dispatcher_buffers.cpp with its lines.
#include <string>

#include "budget/cluster.hpp"
#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/training_memory.hpp"

namespace budget::memory_detail {

/// The buffers of the layout's flex dispatcher on one GPU of `cluster` (zero without the flex
/// dispatcher or an MoE layer): DeepEP's (the default backend) or HybridEP's
/// (MoeMemoryRecipe::hybridep). Expects a layout that validated (a DeepEP rank count it has a
/// config for; HybridEP's TP·EP a multiple of its ranks in an NVLink domain).
DispatcherBufferBytes dispatcher_buffer_bytes(const ArchConfig& c, const ParallelLayout& l, const ClusterSpec& cluster);

/// Why DeepEP's Buffer refuses the buffer sizes the layout needs (empty when it takes them): its
/// NVLink buffer at most INT_MAX bytes when an RDMA buffer is used, and the RDMA buffer at most
/// INT_MAX bytes in normal mode (csrc/deep_ep.cpp:150-151 at hybrid-ep 94a9f8f).
std::string deepep_buffer_refusal(const ArchConfig& c, const ParallelLayout& l);

}  // namespace budget::memory_detail
