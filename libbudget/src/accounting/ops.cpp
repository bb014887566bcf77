#include "budget/ops.hpp"

#include <algorithm>

#include "accounting/ops_glue.hpp"

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
    case OpKind::q_down_projection: return "q_down_projection";
    case OpKind::q_up_projection: return "q_up_projection";
    case OpKind::kv_down_projection: return "kv_down_projection";
    case OpKind::kv_up_projection: return "kv_up_projection";
    case OpKind::mtp_module: return "mtp_module";
    case OpKind::residual_add: return "residual_add";
    case OpKind::attention_layout: return "attention_layout";
    case OpKind::routing_weights: return "routing_weights";
    case OpKind::combine_zero: return "combine_zero";
    case OpKind::router_softmax_fp32: return "router_softmax_fp32";
  }
  return "?";
}

namespace {
// The helpers below build each op in place at the end of the list (emplace_back) and return it:
// building an Op on the stack and copying its 104 bytes in made layer_ops() take 400 ns instead
// of 240 ns for the paper baseline (bench/bench_accounting; docs/accounting.md, "Cost").

/// A weight-matmul op: `matrices_stored` matrices of in×out held per layer, `matrices_active` of
/// them used per token; forward FLOPs = 2·in·out per used matrix.
Op& add_matmul(std::vector<Op>& ops, OpKind kind, std::int64_t in, std::int64_t out, std::int64_t matrices_stored,
               std::int64_t matrices_active, std::int64_t physical, std::int64_t executed, double passes) {
  Op& op = ops.emplace_back();  // value-initialised in place
  op.kind = kind;
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

/// Biases: stored and active parameters only (a bias add is elementwise; no counted FLOPs).
void add_bias(Op& op, std::int64_t stored, std::int64_t active) {
  op.params_per_layer += stored;
  op.active_params_per_layer += active;
}

/// Mean keys a sliding-window layer of `window` keys attends to, given `keys` for full attention.
/// Causal windows of n = seq_len tokens: exact, query i attends min(i, window) keys, so the mean is
/// (window·(window + 1)/2 + (n − window)·window)/n for window < n. Document masks: min(keys,
/// window), an upper bound (the mean of min(kᵢ, window) is at most min(mean kᵢ, window)).
double sliding_keys(double keys, std::int64_t window, const Workload& w) {
  const double win = static_cast<double>(window);
  if (w.attention_mask == AttentionMask::causal && window < w.seq_len) {
    // K_w(n)/n, K_w(n) = Σ_{i=1..n} min(i, w) as causal_context_keys() (attention_cost.hpp) counts
    // it, in floating point: seq_len may reach 2^40, beyond that function's 2^31.
    const double n = static_cast<double>(w.seq_len);
    return (win * (win + 1.0) / 2.0 + (n - win) * win) / n;
  }
  return std::min(keys, win);
}

Op& add_parameters(std::vector<Op>& ops, OpKind kind, std::int64_t params, std::int64_t physical,
                   std::int64_t executed) {
  Op& op = ops.emplace_back();  // value-initialised in place
  op.kind = kind;
  op.params_per_layer = params;
  op.active_params_per_layer = params;
  op.physical_layers = physical;
  op.executed_layers = executed;
  return op;
}
/// A memory-bound op: `rows` rows of `width` elements per token, moving `bytes` per token in the
/// forward pass; no FLOPs, no parameters.
Op& add_memory(std::vector<Op>& ops, OpKind kind, std::int64_t width, std::int64_t rows, double bytes,
               std::int64_t physical, std::int64_t executed) {
  Op& op = ops.emplace_back();  // value-initialised in place
  op.kind = kind;
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
  const auto& a = c.attention;
  const std::int64_t q = a.query_width();
  const std::int64_t kv = a.kv_width();
  const std::int64_t L = c.num_layers;
  const std::int64_t executed = c.executed_layers();
  const std::int64_t dense_physical = c.dense_ffn_layers();
  const std::int64_t dense_executed = c.executed_dense_ffn_layers();
  const std::int64_t moe_physical = L - dense_physical;
  const std::int64_t moe_executed = executed - dense_executed;
  const std::int64_t sliding_physical = c.sliding_attention_layers();
  const std::int64_t sliding_executed = c.executed_sliding_attention_layers();
  const auto& f = c.ffn;
  const std::int64_t m = f.matrices_per_mlp();

  const double passes = static_cast<double>(w.training_passes);
  std::vector<Op> ops;
  ops.reserve(24);
  // Attention projections (every layer).
  if (a.mla) {
    // MLA, the projections as trained (not absorbed): q down/up (or one q projection), kv down
    // (latent + shared rotary key), kv up (per-head no-rope keys and values).
    const MlaConfig& mla = *a.mla;
    if (mla.q_lora_rank > 0) {
      add_matmul(ops, OpKind::q_down_projection, H, mla.q_lora_rank, 1, 1, L, executed, passes);
      add_matmul(ops, OpKind::q_up_projection, mla.q_lora_rank, q, 1, 1, L, executed, passes);
    } else {
      add_matmul(ops, OpKind::q_up_projection, H, q, 1, 1, L, executed, passes);
    }
    add_matmul(ops, OpKind::kv_down_projection, H, mla.kv_lora_rank + mla.qk_rope_head_dim, 1, 1, L,
               executed, passes);
    add_matmul(ops, OpKind::kv_up_projection, mla.kv_lora_rank,
               a.num_heads * (mla.qk_nope_head_dim + mla.v_head_dim), 1, 1, L, executed, passes);
  } else {
    Op& qkv = add_matmul(ops, OpKind::qkv_projection, H, q + 2 * kv, 1, 1, L, executed, passes);
    if (a.qkv_bias) add_bias(qkv, q + 2 * kv, q + 2 * kv);
  }
  {
    // QKᵀ over qk head dims and PV over value head dims for every head: 2·heads·(qk + v)·A
    // (GQA: qk = v = head_dim, 4·q·A).
    const std::int64_t value_dim = a.mla ? a.mla->v_head_dim : a.head_dim;
    const double score_width = 2.0 * static_cast<double>(a.num_heads * (a.head_dim + value_dim));
    const double forward_keys =
        w.kernel_forward_attended_keys > 0.0 ? w.kernel_forward_attended_keys : w.executed_attended_keys();
    const auto add_scores = [&](double keys, double kernel_forward_keys, double kernel_training_keys,
                                std::int64_t physical, std::int64_t executions) {
      Op& scores = ops.emplace_back();
      scores.kind = OpKind::attention_scores;
      scores.in_features = a.head_dim;
      scores.value_features = value_dim;
      scores.matrices = a.num_heads;
      scores.forward_flops = score_width * keys;
      // Kernel-executed: the forward kernel's keys for a forward pass, the pass-weighted keys
      // (forward kernel once, backward kernel for the other passes) for training.
      scores.kernel_forward_flops = score_width * kernel_forward_keys;
      scores.kernel_training_flops = static_cast<double>(w.training_passes) * score_width * kernel_training_keys;
      scores.physical_layers = physical;
      scores.executed_layers = executions;
    };
    if (L > sliding_physical) {
      add_scores(w.attended_keys, forward_keys, w.executed_attended_keys(), L - sliding_physical,
                 executed - sliding_executed);
    }
    if (sliding_physical > 0) {
      // Kernel keys of sliding layers: the full-attention kernel keys scaled by A_w / A, keeping
      // the tile overhead ratio (an approximation, for time prediction only).
      const double keys = sliding_keys(w.attended_keys, a.sliding_window, w);
      const double ratio = keys / w.attended_keys;
      add_scores(keys, ratio * forward_keys, ratio * w.executed_attended_keys(), sliding_physical,
                 sliding_executed);
    }
  }
  {
    Op& out = add_matmul(ops, OpKind::output_projection, a.value_width(), H, 1, 1, L, executed, passes);
    if (a.output_bias) add_bias(out, H, H);
  }
  // FFN: MoE layers.
  if (moe_physical > 0) {
    Op& router = add_matmul(ops, OpKind::router, H, f.num_experts, 1, 1, moe_physical, moe_executed, passes);
    if (f.router_bias) add_bias(router, f.num_experts, f.num_experts);
    Op& routed = add_matmul(ops, OpKind::routed_experts, H, f.expert_dim, f.num_experts * m, f.top_k * m, moe_physical,
                            moe_executed, passes);
    add_bias(routed, f.num_experts * f.mlp_bias_params(H, f.expert_dim), f.top_k * f.mlp_bias_params(H, f.expert_dim));
    if (f.num_shared_experts > 0) {
      Op& shared = add_matmul(ops, OpKind::shared_experts, H, f.shared_expert_dim, f.num_shared_experts * m,
                              f.num_shared_experts * m, moe_physical, moe_executed, passes);
      const std::int64_t bias = f.num_shared_experts * f.mlp_bias_params(H, f.shared_expert_dim);
      add_bias(shared, bias, bias);
      if (f.shared_expert_gate) {
        // The gate is an H → 1 matmul: H weights, 2·H forward FLOPs.
        add_bias(shared, H, H);
        shared.forward_flops += 2.0 * static_cast<double>(H);
        shared.kernel_forward_flops = shared.forward_flops;
        shared.kernel_training_flops = passes * shared.forward_flops;
      }
    }
  }
  // FFN: dense layers (all layers of a dense model, or the first_dense_layers of an MoE model).
  if (dense_physical > 0) {
    Op& dense = add_matmul(ops, OpKind::dense_ffn, H, f.dense_dim, m, m, dense_physical, dense_executed, passes);
    add_bias(dense, f.mlp_bias_params(H, f.dense_dim), f.mlp_bias_params(H, f.dense_dim));
  }
  const std::int64_t latent_norms = a.mla ? a.mla->q_lora_rank + a.mla->kv_lora_rank : 0;
  {
    // Two norms per layer; each reads and writes one row of H (4·H bytes per norm, bf16). The
    // q/k and MLA latent norms are counted in the parameters but not in the bytes.
    Op& norms = add_parameters(ops, OpKind::norms, 2 * c.norm_params(H) + a.qk_norm_params() + latent_norms, L, executed);
    norms.in_features = H;
    norms.matrices = 2;
    norms.forward_bytes = 2 * 4.0 * static_cast<double>(H);
    Op& final_norm = add_parameters(ops, OpKind::final_norm, c.norm_params(H), 1, 1);
    final_norm.in_features = H;
    final_norm.matrices = 1;
    final_norm.forward_bytes = 4.0 * static_cast<double>(H);
  }
  if (c.mtp_layers > 0) {
    // A multi-token-prediction module (DeepSeek-V3 §2.2): one decoder layer like the stack's last
    // (its ops above, full attention), a 2H × H projection of [norm(h); norm(embedding)] and three
    // norms (the two inputs and the shared head's). Embedding and LM head are shared (not counted).
    const bool last_is_moe = moe_physical > 0;
    Op mtp{OpKind::mtp_module};
    mtp.in_features = 2 * H;
    mtp.out_features = H;
    bool scores_seen = false;
    for (const Op& op : ops) {
      const bool ffn = op.kind == OpKind::router || op.kind == OpKind::routed_experts ||
                       op.kind == OpKind::shared_experts || op.kind == OpKind::dense_ffn;
      const bool moe_op = op.kind != OpKind::dense_ffn;
      if (op.kind == OpKind::final_norm || (ffn && moe_op != last_is_moe)) continue;
      if (op.kind == OpKind::attention_scores && scores_seen) continue;  // the full-attention op only
      scores_seen = scores_seen || op.kind == OpKind::attention_scores;
      mtp.params_per_layer += op.params_per_layer;
      mtp.active_params_per_layer += op.active_params_per_layer;
      mtp.forward_flops += op.forward_flops;
      mtp.kernel_forward_flops += op.kernel_forward_flops;
      mtp.kernel_training_flops += op.kernel_training_flops;
    }
    const std::int64_t projection = 2 * H * H;
    const std::int64_t norms = 3 * c.norm_params(H);
    mtp.params_per_layer += projection + norms;
    mtp.active_params_per_layer += projection + norms;
    mtp.forward_flops += 2.0 * static_cast<double>(projection);
    mtp.kernel_forward_flops += 2.0 * static_cast<double>(projection);
    mtp.kernel_training_flops += passes * 2.0 * static_cast<double>(projection);
    mtp.matrices = 1;
    mtp.physical_layers = c.mtp_layers;
    mtp.executed_layers = c.mtp_layers;
    ops.push_back(mtp);
  }
  if (c.vocab_size > 0) {
    add_parameters(ops, OpKind::embedding, c.vocab_size * H, 1, 1);
    Op& head = add_matmul(ops, OpKind::lm_head, H, c.vocab_size, c.tie_embeddings ? 0 : 1, 1, 1, 1, passes);
    head.active_params_per_layer = c.tie_embeddings ? 0 : head.active_params_per_layer;
    if (c.lm_head_bias) add_bias(head, c.vocab_size, c.vocab_size);
  }
  // Memory-bound ops of the FFN (no FLOPs, no parameters; bytes per token, bf16, 2 bytes an element).
  if (moe_physical > 0) {
    const std::int64_t k = f.top_k;
    const double Hd = static_cast<double>(H);
    const double kd = static_cast<double>(k);
    // Router: read E logits, write k weights (2 bytes) and k int32 indices (4 bytes): 2E + 6k.
    Op& topk = add_memory(ops, OpKind::router_topk, f.num_experts, 1, 2.0 * static_cast<double>(f.num_experts) + 6.0 * kd,
                          moe_physical, moe_executed);
    topk.out_features = k;
    // Dispatch: read and write k rows of H: 4·k·H.
    add_memory(ops, OpKind::expert_dispatch, H, k, 4.0 * kd * Hd, moe_physical, moe_executed);
    // Combine: read k expert rows and k weights, write one row: 2·k·H + 2·k + 2·H.
    add_memory(ops, OpKind::expert_combine, H, k, 2.0 * kd * Hd + 2.0 * kd + 2.0 * Hd, moe_physical, moe_executed);
    add_memory(ops, OpKind::expert_activation, f.expert_dim, k, activation_bytes(f.expert_dim, k, f.gated),
               moe_physical, moe_executed);
    if (f.num_shared_experts > 0) {
      const std::int64_t width = f.num_shared_experts * f.shared_expert_dim;
      add_memory(ops, OpKind::shared_activation, width, 1, activation_bytes(width, 1, f.gated), moe_physical,
                 moe_executed);
    }
  }
  if (dense_physical > 0) {
    add_memory(ops, OpKind::dense_activation, f.dense_dim, 1, activation_bytes(f.dense_dim, 1, f.gated),
               dense_physical, dense_executed);
  }
  append_glue_ops(c, ops);
  return ops;
}

}  // namespace budget
