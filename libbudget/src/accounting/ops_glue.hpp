#pragma once
// Private: the layer glue ops of the op list (ops_glue.cpp).

#include <vector>

#include "budget/config.hpp"
#include "budget/ops.hpp"

namespace budget {

/// Appends the memory-bound glue a real eager layer runs between the ops layer_ops() lists
/// (OpKind::residual_add … router_softmax_fp32; is_layer_glue()): no FLOPs, no parameters, only
/// `forward_bytes`, so the budgets do not change. Precondition: `config` is valid and `n` is its
/// layer_counts() (computed once by layer_ops()).
void append_glue_ops(const ArchConfig& config, const LayerCounts& n, std::vector<Op>& ops);

}  // namespace budget
