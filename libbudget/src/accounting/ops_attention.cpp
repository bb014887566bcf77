// The attention part of the op list: projections, scores, output projection.

#include <algorithm>

#include "accounting/op_builders.hpp"

namespace budget::accounting_detail {
namespace {

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

/// MLA, the projections as trained (not absorbed): q down/up (or one q projection), kv down
/// (latent + shared rotary key), kv up (per-head no-rope keys and values). GQA: one fused QKV.
void add_projections(std::vector<Op>& ops, const OpListContext& x) {
  const auto& a = x.c.attention;
  const std::int64_t H = x.H, L = x.L, q = a.query_width();
  if (a.mla) {
    const MlaConfig& mla = *a.mla;
    if (mla.q_lora_rank > 0) {
      add_matmul(ops, OpKind::q_down_projection, H, mla.q_lora_rank, 1, 1, L, x.executed, x.passes);
      add_matmul(ops, OpKind::q_up_projection, mla.q_lora_rank, q, 1, 1, L, x.executed, x.passes);
    } else {
      add_matmul(ops, OpKind::q_up_projection, H, q, 1, 1, L, x.executed, x.passes);
    }
    add_matmul(ops, OpKind::kv_down_projection, H, mla.kv_lora_rank + mla.qk_rope_head_dim, 1, 1, L, x.executed,
               x.passes);
    add_matmul(ops, OpKind::kv_up_projection, mla.kv_lora_rank, a.num_heads * (mla.qk_nope_head_dim + mla.v_head_dim),
               1, 1, L, x.executed, x.passes);
  } else {
    const std::int64_t kv = a.kv_width();
    Op& qkv = add_matmul(ops, OpKind::qkv_projection, H, q + 2 * kv, 1, 1, L, x.executed, x.passes);
    if (a.qkv_bias) add_bias(qkv, q + 2 * kv, q + 2 * kv);
  }
}

/// QKᵀ over qk head dims and PV over value head dims for every head: 2·heads·(qk + v)·A
/// (GQA: qk = v = head_dim, 4·q·A). One op for the full-attention layers, one for the sliding ones.
void add_scores(std::vector<Op>& ops, const OpListContext& x) {
  const auto& a = x.c.attention;
  const Workload& w = x.w;
  const std::int64_t value_dim = a.mla ? a.mla->v_head_dim : a.head_dim;
  const double score_width = 2.0 * static_cast<double>(a.num_heads * (a.head_dim + value_dim));
  const double forward_keys =
      w.kernel_forward_attended_keys > 0.0 ? w.kernel_forward_attended_keys : w.executed_attended_keys();
  const auto add = [&](double keys, double kernel_forward_keys, double kernel_training_keys, std::int64_t physical,
                       std::int64_t executions) {
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
  if (x.L > x.sliding_physical) {
    add(w.attended_keys, forward_keys, w.executed_attended_keys(), x.L - x.sliding_physical,
        x.executed - x.sliding_executed);
  }
  if (x.sliding_physical > 0) {
    // Kernel keys of sliding layers: the full-attention kernel keys scaled by A_w / A, keeping
    // the tile overhead ratio (an approximation, for time prediction only).
    const double keys = sliding_keys(w.attended_keys, a.sliding_window, w);
    const double ratio = keys / w.attended_keys;
    add(keys, ratio * forward_keys, ratio * w.executed_attended_keys(), x.sliding_physical, x.sliding_executed);
  }
}

}  // namespace

void add_attention_ops(std::vector<Op>& ops, const OpListContext& x) {
  add_projections(ops, x);
  add_scores(ops, x);
  const auto& a = x.c.attention;
  Op& out = add_matmul(ops, OpKind::output_projection, a.value_width(), x.H, 1, 1, x.L, x.executed, x.passes);
  if (a.output_bias) add_bias(out, x.H, x.H);
}

}  // namespace budget::accounting_detail
