// The attention part of the op list: projections, scores, output projection, and DeepSeek-V3.2's
// indexer; its memory-bound ops (the indexer's top-k, the attention gate). On the layers whose mixer
// is attention (ArchConfig::layer_counts()).

#include <algorithm>
#include <cmath>

#include "accounting/op_builders.hpp"

namespace budget::accounting_detail {
namespace {

/// Mean keys a query attends to when it sees at most `window` keys (a sliding window, or the top-k
/// keys an indexer selects), given `keys` without the bound. Causal windows of n = seq_len tokens:
/// exact, query i attends min(i, window) keys, so the mean is (window·(window + 1)/2 + (n −
/// window)·window)/n for window < n. Document masks: min(keys, window), an upper bound (the mean of
/// min(kᵢ, window) is at most min(mean kᵢ, window)).
double bounded_keys(double keys, std::int64_t window, const Workload& w) {
  const double win = static_cast<double>(window);
  if (w.attention_mask == AttentionMask::causal && window < w.seq_len) {
    // K_w(n)/n, K_w(n) = Σ_{i=1..n} min(i, w) as causal_context_keys() (attention_cost.hpp) counts
    // it, in floating point: seq_len may reach 2^40, beyond that function's 2^31.
    const double n = static_cast<double>(w.seq_len);
    return (win * (win + 1.0) / 2.0 + (n - win) * win) / n;
  }
  return std::min(keys, win);
}

/// Mean keys a query of a chunked layer attends to (Llama-4's chunked attention: the earlier keys
/// of its own chunk of `chunk` tokens, chunks counted from the window's start). Causal windows of n
/// = seq_len tokens: m = ⌊n/C⌋ whole chunks of C(C + 1)/2 attended keys each and r = n − m·C tokens
/// of a last partial chunk, r(r + 1)/2: (m·C(C + 1)/2 + r(r + 1)/2)/n, exact ((n + 1)/2 for C ≥ n).
/// Document masks: min(keys, that mean), an upper bound as for sliding windows.
double chunked_keys(double keys, std::int64_t chunk, const Workload& w) {
  if (chunk >= w.seq_len) return keys;
  const double n = static_cast<double>(w.seq_len), C = static_cast<double>(chunk);
  const double m = std::floor(n / C), r = n - m * C;
  const double causal = (m * C * (C + 1.0) / 2.0 + r * (r + 1.0) / 2.0) / n;
  return w.attention_mask == AttentionMask::causal ? causal : std::min(keys, causal);
}

/// MLA, the projections as trained (not absorbed): q down/up (or one q projection), kv down
/// (latent + shared rotary key), kv up (per-head no-rope keys and values). GQA: one fused QKV; with
/// the output gate (Qwen3-Next's q_proj of 2·q outputs, modular_qwen3_next.py Qwen3NextAttention at
/// transformers 043bb8dd) q more outputs: H·(2q + 2kv).
void add_projections(std::vector<Op>& ops, const OpListContext& x) {
  const auto& a = x.c.attention;
  const std::int64_t H = x.H, L = x.attention.physical, E = x.attention.executed, q = a.query_width();
  if (a.mla) {
    const MlaConfig& mla = *a.mla;
    if (mla.q_lora_rank > 0) {
      add_matmul(ops, OpKind::q_down_projection, H, mla.q_lora_rank, 1, 1, L, E, x.passes);
      add_matmul(ops, OpKind::q_up_projection, mla.q_lora_rank, q, 1, 1, L, E, x.passes);
    } else {
      add_matmul(ops, OpKind::q_up_projection, H, q, 1, 1, L, E, x.passes);
    }
    add_matmul(ops, OpKind::kv_down_projection, H, mla.kv_lora_rank + mla.qk_rope_head_dim, 1, 1, L, E, x.passes);
    add_matmul(ops, OpKind::kv_up_projection, mla.kv_lora_rank, a.num_heads * (mla.qk_nope_head_dim + mla.v_head_dim),
               1, 1, L, E, x.passes);
  } else {
    const std::int64_t width = (a.output_gate ? 2 * q : q) + 2 * a.kv_width();
    Op& qkv = add_matmul(ops, OpKind::qkv_projection, H, width, 1, 1, L, E, x.passes);
    if (a.qkv_bias) add_bias(qkv, width, width);
  }
}

/// DeepSeek-V3.2's indexer (DeepSeek-V3.2-Exp inference/model.py:431-444 at 3b99a535): wq_b,
/// q_lora_rank → heads·head_dim, one op; wk, H → head_dim, and weights_proj, H → heads, one op of
/// H → head_dim + heads with k_norm's LayerNorm (2·head_dim) as its bias-like parameters.
void add_indexer_projections(std::vector<Op>& ops, const OpListContext& x) {
  const auto& a = x.c.attention;
  const IndexerConfig& idx = *a.indexer;
  const std::int64_t L = x.attention.physical, E = x.attention.executed;
  add_matmul(ops, OpKind::indexer_projection, a.mla->q_lora_rank, idx.num_heads * idx.head_dim, 1, 1, L, E, x.passes);
  Op& keys = add_matmul(ops, OpKind::indexer_projection, x.H, idx.head_dim + idx.num_heads, 1, 1, L, E, x.passes);
  add_bias(keys, 2 * idx.head_dim, 2 * idx.head_dim);
}

/// QKᵀ over qk head dims and PV over value head dims for every head: 2·heads·(qk + v)·A
/// (GQA: qk = v = head_dim, 4·q·A). One op per attention kind: full, sliding, chunked layers. With
/// sinks, each op holds the heads' sink logits (num_heads a layer). With an indexer the keys are the
/// top_k it selects (bounded_keys()).
void add_scores(std::vector<Op>& ops, const OpListContext& x) {
  const auto& a = x.c.attention;
  const Workload& w = x.w;
  const std::int64_t value_dim = a.mla ? a.mla->v_head_dim : a.head_dim;
  const double score_width = 2.0 * static_cast<double>(a.num_heads * (a.head_dim + value_dim));
  const double forward_keys =
      w.kernel_forward_attended_keys > 0.0 ? w.kernel_forward_attended_keys : w.executed_attended_keys();
  // Kernel keys of bounded layers: the full-attention kernel keys scaled by (their keys) / A, keeping
  // the tile overhead ratio (an approximation, for time prediction only).
  const auto add = [&](double keys, LayerCount layers) {
    if (layers.physical == 0) return;
    const double ratio = keys / w.attended_keys;
    const double kernel_forward_keys = ratio * forward_keys, kernel_training_keys = ratio * w.executed_attended_keys();
    Op& scores = new_op(ops, OpKind::attention_scores, layers.physical, layers.executed);
    scores.in_features = a.head_dim;
    scores.value_features = value_dim;
    scores.matrices = a.num_heads;
    scores.forward_flops = score_width * keys;
    // Kernel-executed: the forward kernel's keys for a forward pass, the pass-weighted keys
    // (forward kernel once, backward kernel for the other passes) for training.
    scores.kernel_forward_flops = score_width * kernel_forward_keys;
    scores.kernel_training_flops = static_cast<double>(w.training_passes) * score_width * kernel_training_keys;
    if (a.sinks) add_bias(scores, a.num_heads, a.num_heads);
  };
  const double full_keys = a.indexer ? bounded_keys(w.attended_keys, a.indexer->top_k, w) : w.attended_keys;
  add(full_keys, x.n.full_attention);
  add(bounded_keys(w.attended_keys, a.sliding_window, w), x.n.sliding_attention);
  add(chunked_keys(w.attended_keys, a.chunk_size, w), x.n.chunked_attention);
}

/// The indexer's scores over every attended key (A, the unbounded count): q·k for each of its heads
/// (2·heads·head_dim·A) and the ReLU'd scores weighted and summed over the heads (2·heads·A).
void add_indexer_scores(std::vector<Op>& ops, const OpListContext& x) {
  const IndexerConfig& idx = *x.c.attention.indexer;
  const Workload& w = x.w;
  Op& scores = new_op(ops, OpKind::indexer_scores, x.attention.physical, x.attention.executed);
  scores.in_features = idx.head_dim;
  scores.matrices = idx.num_heads;
  const double per_key = 2.0 * static_cast<double>(idx.num_heads * idx.head_dim + idx.num_heads);
  scores.forward_flops = per_key * w.attended_keys;
  scores.kernel_forward_flops = per_key * w.executed_attended_keys();
  scores.kernel_training_flops = x.passes * scores.kernel_forward_flops;
  // Bytes (time prediction only): the index queries read (heads·head_dim) and the A index keys
  // (head_dim each), bf16, and the A fp32 scores written.
  const double keys = w.attended_keys, q = static_cast<double>(idx.num_heads * idx.head_dim);
  scores.forward_bytes = 2.0 * q + 2.0 * static_cast<double>(idx.head_dim) * keys + 4.0 * keys;
}

}  // namespace

void add_attention_ops(std::vector<Op>& ops, const OpListContext& x) {
  if (x.attention.physical == 0) return;
  add_projections(ops, x);
  const auto& a = x.c.attention;
  if (a.indexer) add_indexer_projections(ops, x);
  add_scores(ops, x);
  if (a.indexer) add_indexer_scores(ops, x);
  Op& out = add_matmul(ops, OpKind::output_projection, a.value_width(), x.H, 1, 1, x.attention.physical,
                       x.attention.executed, x.passes);
  if (a.output_bias) add_bias(out, x.H, x.H);
}

/// No FLOPs, no parameters; bytes per token, bf16 (2 bytes an element) unless said.
void add_attention_memory_ops(std::vector<Op>& ops, const OpListContext& x) {
  const auto& a = x.c.attention;
  const LayerCount layers = x.attention;
  if (layers.physical == 0) return;
  if (a.indexer) {
    // Top-k over the fp32 index scores of the A attended keys (read 4·A bytes), writing top_k int32
    // indices (4·top_k bytes).
    const double keys = x.w.attended_keys;
    Op& topk = add_memory(ops, OpKind::indexer_topk, a.indexer->top_k, 1,
                          4.0 * keys + 4.0 * static_cast<double>(a.indexer->top_k), layers.physical, layers.executed);
    topk.out_features = a.indexer->top_k;
  }
  if (a.output_gate) {
    // sigmoid(gate)·output: read the gate and the output (q each), write the product (q): 6·q bytes.
    const double q = static_cast<double>(a.query_width());
    add_memory(ops, OpKind::attention_gate, a.query_width(), 1, 6.0 * q, layers.physical, layers.executed);
  }
}

}  // namespace budget::accounting_detail
