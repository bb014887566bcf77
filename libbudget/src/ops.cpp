#include "budget/ops.hpp"

namespace budget {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::qkv_projection: return "qkv_projection";
    case OpKind::attention_scores: return "attention_scores";
    case OpKind::output_projection: return "output_projection";
    case OpKind::router: return "router";
    case OpKind::routed_experts: return "routed_experts";
    case OpKind::shared_experts: return "shared_experts";
    case OpKind::dense_ffn: return "dense_ffn";
    case OpKind::norms: return "norms";
    case OpKind::final_norm: return "final_norm";
    case OpKind::embedding: return "embedding";
    case OpKind::lm_head: return "lm_head";
    case OpKind::router_topk: return "router_topk";
    case OpKind::expert_dispatch: return "expert_dispatch";
    case OpKind::expert_combine: return "expert_combine";
    case OpKind::expert_activation: return "expert_activation";
    case OpKind::shared_activation: return "shared_activation";
    case OpKind::dense_activation: return "dense_activation";
  }
  return "?";
}

namespace {
/// A weight-matmul op: `matrices_stored` matrices of in×out held per layer, `matrices_active` of
/// them used per token; forward FLOPs = 2·in·out per used matrix.
Op matmul_op(OpKind kind, std::int64_t in, std::int64_t out, std::int64_t matrices_stored,
             std::int64_t matrices_active, std::int64_t physical, std::int64_t executed, double passes) {
  Op op{kind};
  op.in_features = in;
  op.out_features = out;
  op.matrices = matrices_active;
  op.params_per_layer = matrices_stored * in * out;
  op.active_params_per_layer = matrices_active * in * out;
  op.forward_flops = 2.0 * static_cast<double>(op.active_params_per_layer);
  op.kernel_forward_flops = op.forward_flops;
  op.kernel_training_flops = passes * op.forward_flops;
  op.physical_layers = physical;
  op.executed_layers = executed;
  return op;
}

Op parameter_op(OpKind kind, std::int64_t params, std::int64_t physical, std::int64_t executed) {
  Op op{kind};
  op.params_per_layer = params;
  op.active_params_per_layer = params;
  op.physical_layers = physical;
  op.executed_layers = executed;
  return op;
}
/// A memory-bound op: `rows` rows of `width` elements per token, moving `bytes` per token in the
/// forward pass; no FLOPs, no parameters.
Op memory_op(OpKind kind, std::int64_t width, std::int64_t rows, double bytes, std::int64_t physical,
             std::int64_t executed) {
  Op op{kind};
  op.in_features = width;
  op.matrices = rows;
  op.forward_bytes = bytes;
  op.physical_layers = physical;
  op.executed_layers = executed;
  return op;
}

/// Fewest forward bytes per token of an FFN activation over `rows` rows of width d (bf16):
/// SwiGLU reads gate and up and writes the product (3 elements), a plain activation reads one and
/// writes one (2 elements); 2 bytes an element.
double activation_bytes(std::int64_t width, std::int64_t rows, bool gated) {
  return (gated ? 6.0 : 4.0) * static_cast<double>(width) * static_cast<double>(rows);
}
}  // namespace

std::vector<Op> layer_ops(const ArchConfig& c, const Workload& w) {
  const std::int64_t H = c.hidden_size;
  const std::int64_t q = c.attention.query_width();
  const std::int64_t kv = c.attention.kv_width();
  const std::int64_t L = c.num_layers;
  const std::int64_t executed = c.executed_layers();
  const std::int64_t dense_physical = c.dense_ffn_layers();
  const std::int64_t dense_executed = c.executed_dense_ffn_layers();
  const std::int64_t moe_physical = L - dense_physical;
  const std::int64_t moe_executed = executed - dense_executed;
  const auto& f = c.ffn;
  const std::int64_t m = f.matrices_per_mlp();

  const double passes = static_cast<double>(w.training_passes);
  std::vector<Op> ops;
  ops.reserve(17);
  // Attention (every layer).
  ops.push_back(matmul_op(OpKind::qkv_projection, H, q + 2 * kv, 1, 1, L, executed, passes));
  {
    Op scores{OpKind::attention_scores};
    scores.in_features = c.attention.head_dim;
    scores.matrices = c.attention.num_heads;
    // QKᵀ (2·q·A) + PV (2·q·A).
    scores.forward_flops = 4.0 * static_cast<double>(q) * w.attended_keys;
    // Kernel-executed: the forward kernel's keys for a forward pass, the pass-weighted keys
    // (forward kernel once, backward kernel for the other passes) for training.
    const double forward_keys =
        w.kernel_forward_attended_keys > 0.0 ? w.kernel_forward_attended_keys : w.executed_attended_keys();
    scores.kernel_forward_flops = 4.0 * static_cast<double>(q) * forward_keys;
    scores.kernel_training_flops =
        static_cast<double>(w.training_passes) * 4.0 * static_cast<double>(q) * w.executed_attended_keys();
    scores.physical_layers = L;
    scores.executed_layers = executed;
    ops.push_back(scores);
  }
  ops.push_back(matmul_op(OpKind::output_projection, q, H, 1, 1, L, executed, passes));
  // FFN: MoE layers.
  if (moe_physical > 0) {
    ops.push_back(matmul_op(OpKind::router, H, f.num_experts, 1, 1, moe_physical, moe_executed, passes));
    ops.push_back(matmul_op(OpKind::routed_experts, H, f.expert_dim, f.num_experts * m, f.top_k * m,
                            moe_physical, moe_executed, passes));
    if (f.num_shared_experts > 0) {
      ops.push_back(matmul_op(OpKind::shared_experts, H, f.shared_expert_dim, f.num_shared_experts * m,
                              f.num_shared_experts * m, moe_physical, moe_executed, passes));
    }
  }
  // FFN: dense layers (all layers of a dense model, or the first_dense_layers of an MoE model).
  if (dense_physical > 0) {
    ops.push_back(matmul_op(OpKind::dense_ffn, H, f.dense_dim, m, m, dense_physical, dense_executed, passes));
  }
  {
    // Two RMSNorms per layer; each reads and writes one row of H (4·H bytes per norm).
    Op norms = parameter_op(OpKind::norms, 2 * H, L, executed);
    norms.in_features = H;
    norms.matrices = 2;
    norms.forward_bytes = 2 * 4.0 * static_cast<double>(H);
    ops.push_back(norms);
    Op final_norm = parameter_op(OpKind::final_norm, H, 1, 1);
    final_norm.in_features = H;
    final_norm.matrices = 1;
    final_norm.forward_bytes = 4.0 * static_cast<double>(H);
    ops.push_back(final_norm);
  }
  if (c.vocab_size > 0) {
    ops.push_back(parameter_op(OpKind::embedding, c.vocab_size * H, 1, 1));
    Op head = matmul_op(OpKind::lm_head, H, c.vocab_size, c.tie_embeddings ? 0 : 1, 1, 1, 1, passes);
    head.active_params_per_layer = c.tie_embeddings ? 0 : head.active_params_per_layer;
    ops.push_back(head);
  }
  // Memory-bound ops of the FFN (no FLOPs, no parameters; bytes per token, bf16, 2 bytes an element).
  if (moe_physical > 0) {
    const std::int64_t k = f.top_k;
    const double Hd = static_cast<double>(H);
    const double kd = static_cast<double>(k);
    // Router: read E logits, write k weights (2 bytes) and k int32 indices (4 bytes): 2E + 6k.
    Op topk = memory_op(OpKind::router_topk, f.num_experts, 1, 2.0 * static_cast<double>(f.num_experts) + 6.0 * kd,
                        moe_physical, moe_executed);
    topk.out_features = k;
    ops.push_back(topk);
    // Dispatch: read and write k rows of H: 4·k·H.
    ops.push_back(memory_op(OpKind::expert_dispatch, H, k, 4.0 * kd * Hd, moe_physical, moe_executed));
    // Combine: read k expert rows and k weights, write one row: 2·k·H + 2·k + 2·H.
    ops.push_back(
        memory_op(OpKind::expert_combine, H, k, 2.0 * kd * Hd + 2.0 * kd + 2.0 * Hd, moe_physical, moe_executed));
    ops.push_back(memory_op(OpKind::expert_activation, f.expert_dim, k, activation_bytes(f.expert_dim, k, f.gated),
                            moe_physical, moe_executed));
    if (f.num_shared_experts > 0) {
      const std::int64_t width = f.num_shared_experts * f.shared_expert_dim;
      ops.push_back(memory_op(OpKind::shared_activation, width, 1, activation_bytes(width, 1, f.gated), moe_physical,
                              moe_executed));
    }
  }
  if (dense_physical > 0) {
    ops.push_back(memory_op(OpKind::dense_activation, f.dense_dim, 1, activation_bytes(f.dense_dim, 1, f.gated),
                            dense_physical, dense_executed));
  }
  return ops;
}

}  // namespace budget
