#pragma once
// Private to the memory domain: the MoE memory terms of issue 42 (docs/cluster.md, "MoE memory
// terms"), each one named function with its math and source, used by training_memory.cpp and
// layer_activations.cpp. Sources: Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553,
// TransformerEngine c188b533c (v2.11), DeepEP hybrid-ep@94a9f8f.
#include <cstdint>

#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"

namespace budget::memory_detail {

/// Rows of H per token sent that the most loaded expert rank holds, as allocated: with a HybridEP
/// rank budget (MoeMemoryRecipe::rank_capacity_factor f) the permuted buffers are top_k · f rows per
/// token whatever the routing; otherwise top_k · min(F, G) with a capacity factor F, top_k · G
/// dropless (G = ParallelLayout::imbalance, the stated routing assumption, default 1).
double routed_rows_per_token(const ArchConfig& c, const ParallelLayout& l);

/// The factor by which Transformer Engine's per-expert token padding grows the rows a rank's expert
/// MLPs compute and keep, under the layout's precision (its FP8 recipe): `rows` routed rows over
/// `local_experts` experts, each at the mean count m, padded to a = expert_token_alignment():
/// a·ceil(m/a) / m; 1 for BF16, no rows or no expert.
double expert_row_padding_factor(const ParallelLayout& l, double rows, std::int64_t local_experts);

// The dispatcher's buffers outside PyTorch's allocator: memory/dispatcher_buffers.hpp.

/// HybridEP's routing handle that each MoE layer execution keeps until its backward, bytes per token
/// of the rank's dispatch input: EP·ETP·(4 + 5·E/EP) (0 without HybridEP or an MoE layer).
double hybridep_handle_bytes_per_token(const ArchConfig& c, const ParallelLayout& l);

/// Transformer Engine's cuBLAS workspaces of one GPU for grouped GEMMs (MoE layers with
/// --moe-grouped-gemm), bytes, in PyTorch's allocator: one per compute stream.
double te_grouped_gemm_workspace_bytes();

/// Whether the stage holds one more layer execution's activations for the combined 1F1B schedule of
/// EP overlap (MoeMemoryRecipe::ep_overlap_schedule).
bool holds_ep_overlap_layer(const ParallelLayout& l);

}  // namespace budget::memory_detail
