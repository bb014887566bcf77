#pragma once
/// \file
/// The op-traits table: one row per OpKind (budget/ops.hpp) holding what the library decides by an
/// op's kind, so that no other file switches on it: where its FLOPs and parameters go in the
/// budgets, which kernel runs it, the part of the layer it is timed with, how its weights are held
/// across GPUs, whether an FP8 recipe runs it as an FP8 linear and whether Megatron-Core runs it
/// at all. The table is checked complete
/// at compile time (accounting/op_traits.cpp, as the enum name tables are): a new op kind adds its
/// enumerator, its name (ops.cpp) and its row, plus its cost formula.
///
/// What follows from a trait lives with its reader: the time class of the layer correction is the
/// kernel class's (time_model.hpp, time_class_of()), the memory-bound predicates of ops.hpp agree
/// with the kernel classes (checked at compile time in op_traits.cpp).
///
/// Thread safety: op_traits() reads a constant table: safe from any thread.

#include <cstddef>
#include <cstdint>

#include "budget/accounting.hpp"
#include "budget/kernel_class.hpp"
#include "budget/ops.hpp"

namespace budget {

/// Op kinds, for per-kind arrays (OpKind's enumerators, in order).
inline constexpr std::size_t op_kind_count = static_cast<std::size_t>(OpKind::attention_gate) + 1;

/// The part of a layer an op belongs to, as the cluster step time groups ops: attention (and the
/// other mixers, norms, residual adds), a dense layer's FFN, the MoE part replicated over TP (router,
/// shared experts), the routed experts with their dispatch and combine, the embedding, LM head and
/// final norm; none for what the step does not time (MTP modules).
enum class LayerPart { attention, dense, moe_tp, routed, embedding, head, final_norm, none };

/// How one physical layer's weights of an op are held across GPUs, as the memory model sums them
/// (docs/cluster.md, "Memory terms"; Megatron-Core's sharding, sources at cluster/layer_activations.cpp).
enum class WeightShard {
  none,                  ///< no weights summed (memory-bound ops, the indexer's scores)
  attention_tp,          ///< the attention block's, split over TP: q/k/v/o, MLA up projections, the
                         ///< linear-attention and Mamba-2 mixers, the indexer projections, attention sinks
  attention_replicated,  ///< the attention block's, whole on every TP rank: MLA down projections, norms
  moe_replicated,        ///< the MoE block's, whole on every TP rank: the router
  moe_tp,                ///< the MoE block's, split over TP: the shared experts (their gate replicated)
  experts,               ///< the routed experts', split over EP and ETP
  dense_tp,              ///< a dense FFN's, split over TP
  final_norm,            ///< the final norm (last stage)
  embedding,             ///< the embedding (first stage)
  lm_head,               ///< the LM head's own weights (untied)
  mtp,                   ///< the multi-token-prediction modules (all their layers)
};

/// Where a non-embedding op's forward FLOPs and parameters are summed in the budgets
/// (accounting.hpp): its FlopsByComponent and ParamsByComponent members (null: none). Embedding,
/// LM head and MTP modules are reported apart (ops.hpp is_non_embedding()) and have neither.
struct OpBudget {
  double FlopsByComponent::*flops = nullptr;
  std::int64_t ParamsByComponent::*params = nullptr;
};

/// One row of the table.
struct OpTraits {
  OpKind kind{};
  OpBudget budget;
  KernelClass kernel = KernelClass::not_timed;
  LayerPart part = LayerPart::none;
  WeightShard weights = WeightShard::none;
  /// Its GEMMs are Transformer Engine linear layers: FP8 under an FP8 recipe (the time model times
  /// them with the recipe's GEMM rows; the others at bf16).
  bool fp8_linear = false;
  /// Megatron-Core with Transformer Engine does not run it (its fused kernels do the work): the
  /// attention layout copies, the routing-weight products, the zeroed combine buffer.
  bool megatron_skips = false;
};

/// The row of `kind`. Precondition: `kind` is an enumerator (not a cast integer).
const OpTraits& op_traits(OpKind kind);

}  // namespace budget
