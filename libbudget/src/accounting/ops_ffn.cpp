// The FFN part of the op list: MoE layers, dense layers, and their memory-bound ops.

#include "accounting/op_builders.hpp"

namespace budget::accounting_detail {
namespace {

/// Fewest forward bytes per token of an FFN activation over `rows` rows of width d (bf16):
/// SwiGLU reads gate and up and writes the product (3 elements), a plain activation reads one and
/// writes one (2 elements); 2 bytes an element.
double activation_bytes(std::int64_t width, std::int64_t rows, bool gated) {
  return (gated ? 6.0 : 4.0) * static_cast<double>(width) * static_cast<double>(rows);
}

void add_moe_ops(std::vector<Op>& ops, const OpListContext& x) {
  const auto& f = x.c.ffn;
  const std::int64_t H = x.H, m = x.matrices_per_mlp;
  Op& router = add_matmul(ops, OpKind::router, H, f.num_experts, 1, 1, x.moe_physical, x.moe_executed, x.passes);
  if (f.router_bias) add_bias(router, f.num_experts, f.num_experts);
  Op& routed = add_matmul(ops, OpKind::routed_experts, H, f.expert_dim, f.num_experts * m, f.top_k * m,
                          x.moe_physical, x.moe_executed, x.passes);
  add_bias(routed, f.num_experts * f.mlp_bias_params(H, f.expert_dim), f.top_k * f.mlp_bias_params(H, f.expert_dim));
  if (f.num_shared_experts > 0) {
    Op& shared = add_matmul(ops, OpKind::shared_experts, H, f.shared_expert_dim, f.num_shared_experts * m,
                            f.num_shared_experts * m, x.moe_physical, x.moe_executed, x.passes);
    const std::int64_t bias = f.num_shared_experts * f.mlp_bias_params(H, f.shared_expert_dim);
    add_bias(shared, bias, bias);
    if (f.shared_expert_gate) {
      // The gate is an H → 1 matmul: H weights, 2·H forward FLOPs.
      add_bias(shared, H, H);
      shared.forward_flops += 2.0 * static_cast<double>(H);
      shared.kernel_forward_flops = shared.forward_flops;
      shared.kernel_training_flops = x.passes * shared.forward_flops;
    }
  }
}

}  // namespace

void add_ffn_ops(std::vector<Op>& ops, const OpListContext& x) {
  if (x.moe_physical > 0) add_moe_ops(ops, x);
  // Dense layers: all layers of a dense model, or the first_dense_layers of an MoE model.
  if (x.dense_physical > 0) {
    const auto& f = x.c.ffn;
    Op& dense = add_matmul(ops, OpKind::dense_ffn, x.H, f.dense_dim, x.matrices_per_mlp, x.matrices_per_mlp,
                           x.dense_physical, x.dense_executed, x.passes);
    add_bias(dense, f.mlp_bias_params(x.H, f.dense_dim), f.mlp_bias_params(x.H, f.dense_dim));
  }
}

/// No FLOPs, no parameters; bytes per token, bf16, 2 bytes an element.
void add_ffn_memory_ops(std::vector<Op>& ops, const OpListContext& x) {
  const auto& f = x.c.ffn;
  if (x.moe_physical > 0) {
    const std::int64_t H = x.H, k = f.top_k;
    const double Hd = static_cast<double>(H);
    const double kd = static_cast<double>(k);
    const std::int64_t physical = x.moe_physical, executed = x.moe_executed;
    // Router: read E logits, write k weights (2 bytes) and k int32 indices (4 bytes): 2E + 6k.
    Op& topk = add_memory(ops, OpKind::router_topk, f.num_experts, 1,
                          2.0 * static_cast<double>(f.num_experts) + 6.0 * kd, physical, executed);
    topk.out_features = k;
    // Dispatch: read and write k rows of H: 4·k·H.
    add_memory(ops, OpKind::expert_dispatch, H, k, 4.0 * kd * Hd, physical, executed);
    // Combine: read k expert rows and k weights, write one row: 2·k·H + 2·k + 2·H.
    add_memory(ops, OpKind::expert_combine, H, k, 2.0 * kd * Hd + 2.0 * kd + 2.0 * Hd, physical, executed);
    add_memory(ops, OpKind::expert_activation, f.expert_dim, k, activation_bytes(f.expert_dim, k, f.gated), physical,
               executed);
    if (f.num_shared_experts > 0) {
      const std::int64_t width = f.num_shared_experts * f.shared_expert_dim;
      add_memory(ops, OpKind::shared_activation, width, 1, activation_bytes(width, 1, f.gated), physical, executed);
    }
  }
  if (x.dense_physical > 0) {
    add_memory(ops, OpKind::dense_activation, f.dense_dim, 1, activation_bytes(f.dense_dim, 1, f.gated),
               x.dense_physical, x.dense_executed);
  }
}

}  // namespace budget::accounting_detail
