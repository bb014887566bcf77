#pragma once
// How layer_ops() builds its list (ops.cpp): the layer counts every part needs, the part builders
// (one file each: ops_attention.cpp, ops_ffn.cpp, ops_stack.cpp) and the op constructors they share.
// Each op is built in place at the end of the list (emplace_back) and returned: building an Op on
// the stack and copying its 104 bytes in made layer_ops() take 400 ns instead of 240 ns for the
// paper baseline (bench/bench_accounting; docs/accounting.md, "Cost").

#include <algorithm>
#include <cstdint>
#include <vector>

#include "budget/config.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"

namespace budget::accounting_detail {

/// What every part of the op list reads: the config, the workload and its layer counts.
struct OpListContext {
  OpListContext(const ArchConfig& config, const Workload& workload)
      : c(config), w(workload), H(config.hidden_size), L(config.num_layers), executed(config.executed_layers()),
        n(config.layer_counts()), attention(n.attention()), dense_physical(n.dense.physical),
        dense_executed(n.dense.executed), moe_physical(n.moe.physical), moe_executed(n.moe.executed),
        matrices_per_mlp(config.ffn.matrices_per_mlp()), passes(static_cast<double>(workload.training_passes)) {}

  const ArchConfig& c;
  const Workload& w;
  std::int64_t H, L, executed;
  LayerCounts n;                                ///< layers of every kind (ArchConfig::layer_counts())
  LayerCount attention;                         ///< layers with softmax attention (any kind)
  std::int64_t dense_physical, dense_executed;  ///< layers with a dense FFN
  std::int64_t moe_physical, moe_executed;      ///< layers with an MoE FFN
  std::int64_t matrices_per_mlp;
  double passes;  ///< training passes (3 = forward + backward)
};

/// QKV (or MLA) projections, attention scores (full, sliding and chunked layers), output projection,
/// DeepSeek-V3.2's indexer.
void add_attention_ops(std::vector<Op>& ops, const OpListContext& x);
/// Linear-attention and Mamba-2 layers: projections, convolution, scan (ops_mixers.cpp).
void add_mixer_ops(std::vector<Op>& ops, const OpListContext& x);
/// Memory-bound ops of attention: the indexer's top-k and the attention gate (bytes only).
void add_attention_memory_ops(std::vector<Op>& ops, const OpListContext& x);
/// MoE layers (router, routed and shared experts) and dense FFN layers.
void add_ffn_ops(std::vector<Op>& ops, const OpListContext& x);
/// Memory-bound FFN ops: router top-k, dispatch, combine, activations (bytes only).
void add_ffn_memory_ops(std::vector<Op>& ops, const OpListContext& x);
/// Per-layer norms and the final norm.
void add_norm_ops(std::vector<Op>& ops, const OpListContext& x);
/// The multi-token-prediction module, summed from the ops already in `ops` (call after the
/// attention, FFN and norm parts).
void add_mtp_op(std::vector<Op>& ops, const OpListContext& x);
/// Embedding and LM head.
void add_head_ops(std::vector<Op>& ops, const OpListContext& x);

/// A new op at the end of `ops` (value-initialised in place): its kind and layer counts set.
inline Op& new_op(std::vector<Op>& ops, OpKind kind, std::int64_t physical, std::int64_t executed) {
  Op& op = ops.emplace_back();
  op.kind = kind;
  op.physical_layers = physical;
  op.executed_layers = executed;
  return op;
}

/// A weight-matmul op: `matrices_stored` matrices of in×out held per layer, `matrices_active` of
/// them used per token; forward FLOPs = 2·in·out per used matrix.
inline Op& add_matmul(std::vector<Op>& ops, OpKind kind, std::int64_t in, std::int64_t out,
                      std::int64_t matrices_stored, std::int64_t matrices_active, std::int64_t physical,
                      std::int64_t executed, double passes) {
  Op& op = new_op(ops, kind, physical, executed);
  op.in_features = in;
  op.out_features = out;
  op.matrices = matrices_active;
  op.params_per_layer = matrices_stored * in * out;
  op.active_params_per_layer = matrices_active * in * out;
  op.forward_flops = 2.0 * static_cast<double>(op.active_params_per_layer);
  op.kernel_forward_flops = op.forward_flops;
  op.kernel_training_flops = passes * op.forward_flops;
  return op;
}

/// Biases: stored and active parameters only (a bias add is elementwise; no counted FLOPs).
inline void add_bias(Op& op, std::int64_t stored, std::int64_t active) {
  op.params_per_layer += stored;
  op.active_params_per_layer += active;
}

/// Parameters without FLOPs (norms, embedding).
inline Op& add_parameters(std::vector<Op>& ops, OpKind kind, std::int64_t params, std::int64_t physical,
                          std::int64_t executed) {
  Op& op = new_op(ops, kind, physical, executed);
  op.params_per_layer = params;
  op.active_params_per_layer = params;
  return op;
}

/// A memory-bound op: `rows` rows of `width` elements per token, moving `bytes` per token in the
/// forward pass; no FLOPs, no parameters.
inline Op& add_memory(std::vector<Op>& ops, OpKind kind, std::int64_t width, std::int64_t rows, double bytes,
                      std::int64_t physical, std::int64_t executed) {
  Op& op = new_op(ops, kind, physical, executed);
  op.in_features = width;
  op.matrices = rows;
  op.forward_bytes = bytes;
  return op;
}

}  // namespace budget::accounting_detail
