// The MoE memory terms of issue 42 (docs/cluster.md, "MoE memory terms"). Sources at Megatron-LM
// d98e8a64ddf34856e74b24714e3bedb2f5a39553, TransformerEngine c188b533c (v2.11) and DeepEP's
// hybrid-ep branch at 94a9f8f, as cited per term.
#include "memory/moe_memory.hpp"

#include <algorithm>
#include <cmath>

#include "budget/fp8_recipe.hpp"
#include "budget/kernel_stack.hpp"
#include "memory/memory_shapes.hpp"

namespace budget::memory_detail {

// Routed rows as allocated. Megatron's HybridEP dispatcher (token_dispatcher.py:1098-1110) sets
// num_permuted_tokens = tokens · top_k · moe_expert_rank_capacity_factor, rounded up to the
// quantization alignment (at most 32 rows: not counted), when the factor is given; HybridEP then
// allocates the permuted hidden states at that size and drops rows above it (:1167-1171). Without it
// the buffers are sized by the routed rows (:1175-1178): top_k per token, times the most loaded rank's
// excess G (ParallelLayout::imbalance: 1 under --moe-router-force-load-balancing, the stated default
// otherwise), capped by a capacity factor F.
double routed_rows_per_token(const ArchConfig& c, const ParallelLayout& l) {
  const double top_k = static_cast<double>(c.ffn.top_k);
  if (l.moe_memory.hybridep && l.dispatcher == MoeDispatcher::flex && l.moe_memory.rank_capacity_factor > 0.0) {
    return top_k * l.moe_memory.rank_capacity_factor;
  }
  const double factor = l.capacity_factor > 0.0 ? std::min(l.capacity_factor, l.imbalance) : l.imbalance;
  return top_k * factor;
}

// Per-expert token padding (issue 43). Under FP8 (and FP4) Megatron-LM's expert MLPs pad each local
// expert's rows to the quantization alignment before fc1: TEGroupedMLP builds TE's Fp8Padding
// (moe/experts.py:306-313) and pads permuted_local_hidden_states and the probabilities per expert
// (:890-903) unless the router, HybridEP / NCCL-EP or DeepEP's fused permutation padded them already
// (skip_routed_expert_padding, moe_utils.py:1494-1512: the same rows padded earlier); SequentialMLP
// pads each expert's tokens itself (:1453-1465, 1488-1509). TransformerEngine d0067d0da6
// pytorch/module/fp8_padding.py:117-123: m -> (m + a − 1) // a · a with a = the recipe's
// get_align_size_for_quantization (quantization.py:262-278; expert_token_alignment(): FP8 16,
// MXFP8 32); BF16 is not padded (moe_utils.py:1463-1480 returns 0). The padded rows are the fc1
// input, fc1 output and activation output the MLP keeps; fc2's output is unpadded before the
// combine. Each expert is taken at the mean count (the balanced routing the model states), as
// the time model's padded_expert_rows(). TE's grouped-tensor path (256 rows) is not modelled.
double expert_row_padding_factor(const ParallelLayout& l, double rows, std::int64_t local_experts) {
  const double a = static_cast<double>(expert_token_alignment(kernel_precision(l.fp8)));
  if (a <= 1.0 || rows <= 0.0 || local_experts < 1) return 1.0;
  const double mean = rows / static_cast<double>(local_experts);
  return a * std::ceil(mean / a) / mean;
}

// HybridEP's routing handle, kept per MoE layer execution until its backward. Megatron's fused
// dispatch and combine keep the handle DeepEP returns in their autograd context (fused_a2a.py:437,
// 495: ctx.handle = handle) and the dispatcher hands it from dispatch to combine; the handle's
// tensors are torch::empty, in PyTorch's allocator (DeepEP hybrid-ep@94a9f8f,
// deep_ep/hybrid_ep_buffer.py:414-431 returns them; csrc/hybrid_ep/executor/executor.cu, the
// permuting dispatch with enable_permute):
//   sparse_to_dense_map   t·N × R int32                 (:93-95)
//   local_expert_routing_map  t·R·N × E_l bool           (:110-112)
//   dense_to_expert_map   t·R·N × E_l int32              (:124-126)
// with t the tokens of the rank's dispatch input (T/r; fused_a2a.py passes x, the rank's tokens),
// R·N the ranks of the dispatch group (the TP×EP group, token_dispatcher.py:1846-1851: EP·ETP) and
// E_l = E/EP local experts: t·EP·ETP·(4 + 5·E_l) bytes. Not counted: the RDMA maps (t·N and
// t·(N − 1) bools, :97-101), the chunk layout and the per-expert counts (a few KB).
double hybridep_handle_bytes_per_token(const ArchConfig& c, const ParallelLayout& l) {
  if (!l.moe_memory.hybridep || l.dispatcher != MoeDispatcher::flex || !c.ffn.is_moe()) return 0.0;
  const double group_ranks = static_cast<double>(l.ep) * static_cast<double>(l.expert_tp());
  const double local_experts = static_cast<double>(c.ffn.num_experts / l.ep);
  return group_ranks * (4.0 + 5.0 * local_experts);
}

// Transformer Engine's cuBLAS workspaces (transformer_engine/pytorch/cpp_extensions/gemm.py:31-57):
// 32 MiB + 1 KiB each on compute capability 9.0 and later (4 MiB before: A100, not distinguished
// here), allocated with torch.empty and cached for the process; grouped GEMMs take one per compute
// stream, 4 (common/util/multi_stream.cpp:52-55). The single workspace of the other GEMMs (one more,
// every TE model) is not counted yet: it would move every dense figure by 32 MiB.
double te_grouped_gemm_workspace_bytes() { return 4.0 * (32.0 * 1024.0 * 1024.0 + 1024.0); }

// EP overlap's schedule (pipeline_parallel/combined_1f1b.py:35-136 without pipelining, the
// interleaved one alike): a micro-batch's forward runs beside the previous one's backward, layer by
// layer (models/common/model_chunk_schedule_plan.py:556-575): forward layer i with backward layer
// L−1−i, whose state is released after it (release_state). At step i the stage holds the previous
// micro-batch's L − i layers and the new one's i + 1: one layer execution more than 1F1B holds.
bool holds_ep_overlap_layer(const ParallelLayout& l) { return l.moe_memory.ep_overlap_schedule; }

}  // namespace budget::memory_detail
