#pragma once
/// \file
/// The per-layer operation list: the one place where the shapes and costs of a config are
/// written down. Accounting (budgets), the matcher, the GPU profiler and time prediction all read
/// this list, so no formula exists twice. Conventions (docs/accounting.md):
///
///  - A matmul of an m×k by a k×n matrix costs 2·m·k·n FLOPs (one multiply-add = 2 FLOPs).
///    Per token (m = 1) a weight matrix of k×n costs 2·k·n forward FLOPs.
///  - Attention scores: QKᵀ and PV each cost 2·q·A per token, A = mean keys attended per query,
///    q = num_heads·head_dim: 4·q·A in all. Grouped-query attention does not change this (every
///    query head still attends over A keys of head_dim). With MLA, QKᵀ runs over qk_nope + qk_rope
///    dims and PV over v_head_dim: 2·heads·(qk_nope + qk_rope + v_head_dim)·A. Sliding-window
///    layers attend to A_w keys (docs/accounting.md, "Hybrid attention").
///  - Linear attention, Mamba-2 and DeepSeek-V3.2's indexer: projections as matmuls, the depthwise
///    convolution at 2·taps FLOPs per channel, the chunked scans as their reference algorithms'
///    matmuls (docs/accounting.md, "Linear attention and Mamba-2").
///  - Not counted in FLOPs: norms, softmax, activations, residual adds, rotary embeddings, router
///    softmax/top-k, and the embedding lookup. The LM head is an op but is kept out of the
///    non-embedding budgets (reported apart).
///  - Parameters: every stored weight once, however often a looped layer runs. Biases only where
///    the config says so (attention, MLP, router, LM head); they cost no counted FLOPs.
///    Norms: one H-vector (RMSNorm; 2·H with LayerNorm's bias) before attention and one before the
///    FFN per layer, a final norm, plus query/key norms and MLA's latent norms.
///
/// Thread safety: layer_ops() and to_string() are reentrant: concurrent calls are safe.

#include <cstdint>
#include <string_view>
#include <vector>

#include "budget/config.hpp"
#include "budget/workload.hpp"

namespace budget {

enum class OpKind {
  qkv_projection,     ///< x·[W_q W_k W_v]: k = H, n = q + 2·kv (+ q + 2·kv biases)
  attention_scores,   ///< QKᵀ and PV: 4·q·A per token
  output_projection,  ///< attn·W_o: k = q (MLA: heads·v_head_dim), n = H
  router,             ///< x·W_router: k = H, n = num_experts
  routed_experts,     ///< top_k experts, each (gated ? 3 : 2) matrices of H×expert_dim
  shared_experts,     ///< num_shared_experts, each (gated ? 3 : 2) matrices of H×shared_expert_dim
  dense_ffn,          ///< (gated ? 3 : 2) matrices of H×dense_dim
  norms,              ///< 2 norms per layer + q/k norms + MLA latent norms (parameters only)
  final_norm,         ///< the norm before the LM head (parameters only)
  embedding,          ///< token embedding, V×H (parameters only; lookup costs no FLOPs)
  lm_head,            ///< logits, H×V (own parameters unless tied; + V with lm_head_bias)
  q_down_projection,  ///< MLA: x·W_dq, k = H, n = q_lora_rank
  q_up_projection,    ///< MLA: k = q_lora_rank (H without q_lora_rank), n = heads·(qk_nope + qk_rope)
  kv_down_projection, ///< MLA: x·W_dkv, k = H, n = kv_lora_rank + qk_rope_head_dim
  kv_up_projection,   ///< MLA: k = kv_lora_rank, n = heads·(qk_nope + v_head_dim)
  mtp_module,         ///< multi-token-prediction modules (reported apart, like the embedding)
  // Memory-bound ops: no FLOPs counted, no parameters; `forward_bytes` says what they move. They
  // exist for time prediction (time_model.hpp); the budgets do not change with them.
  router_topk,        ///< softmax over the E router logits and top-k selection (MoE layers)
  expert_dispatch,    ///< gather of each token's row into its top_k experts' order: top_k rows of H
  expert_combine,     ///< weighted scatter-add of the top_k expert outputs back to the token: top_k rows of H
  expert_activation,  ///< SwiGLU (gated) or the activation of the routed experts: top_k rows of expert_dim
  shared_activation,  ///< the same for the shared experts: one row of num_shared·shared_expert_dim
  dense_activation,   ///< the same for a dense FFN: one row of dense_dim
  // Memory-bound glue a real (eager) layer runs between the ops above (ops_glue.cpp; bytes and
  // their conventions there). Time only: no FLOPs, no parameters.
  residual_add,         ///< the two residual adds of a layer (after attention, after the FFN)
  attention_layout,     ///< q/k/v copied out of the fused QKV into (docs, heads, len, head_dim); output back to tokens × q
  routing_weights,      ///< each token's top_k routing weights gathered into dispatch order and multiplied into its expert rows
  combine_zero,         ///< zeroing the combine buffer the expert rows are scatter-added into: one row of H
  router_softmax_fp32,  ///< the router logits cast to fp32 and their fp32 softmax (top-k selection: router_topk)
  // Hybrid stacks and sparse attention (docs/accounting.md, "Linear attention and Mamba-2", "DeepSeek
  // sparse attention"); per layer of their kind.
  mixer_in_projection,   ///< linear attention / Mamba-2: x·W_in, k = H, n = in_projection_width()
  short_convolution,     ///< depthwise causal conv1d: in_features = channels, out_features = taps
  delta_rule_scan,       ///< Gated DeltaNet's chunked gated delta rule (value heads, key/value dims, chunk)
  ssd_scan,              ///< Mamba-2's chunked SSD scan (heads, head dim, state size, chunk)
  mixer_out_projection,  ///< value width (Mamba: inner) → H
  indexer_projection,    ///< DeepSeek-V3.2 indexer: index queries from the query latent, key and head weights from x
  indexer_scores,        ///< the indexer's q·k over every attended key, ReLU, weighted over its heads
  // Memory-bound, timed as layer glue (no profile rows).
  indexer_topk,          ///< top-k selection of the keys each query attends to, from the index scores
  attention_gate,        ///< sigmoid(gate)·attention output of gated attention (Qwen3-Next)
};

/// True for the layer glue ops (residual_add … router_softmax_fp32, indexer_topk, attention_gate):
/// memory-bound ops with no per-op profile rows, timed from their bytes (docs/calibration.md, "Layer
/// glue").
constexpr bool is_layer_glue(OpKind kind) {
  return kind == OpKind::residual_add || kind == OpKind::attention_layout || kind == OpKind::routing_weights ||
         kind == OpKind::combine_zero || kind == OpKind::router_softmax_fp32 || kind == OpKind::indexer_topk ||
         kind == OpKind::attention_gate;
}

/// True for the memory-bound ops (no FLOPs, no parameters, bytes only): router_topk …
/// router_softmax_fp32, indexer_topk and attention_gate.
constexpr bool is_memory_bound(OpKind kind) {
  return kind == OpKind::router_topk || kind == OpKind::expert_dispatch || kind == OpKind::expert_combine ||
         kind == OpKind::expert_activation || kind == OpKind::shared_activation || kind == OpKind::dense_activation ||
         is_layer_glue(kind);
}

std::string_view to_string(OpKind kind);

/// True for ops counted in the non-embedding budgets (everything but embedding, LM head and the
/// multi-token-prediction modules, which are reported apart).
constexpr bool is_non_embedding(OpKind kind) {
  return kind != OpKind::embedding && kind != OpKind::lm_head && kind != OpKind::mtp_module;
}

/// One operation, repeated over a group of layers.
///
/// Shapes describe the per-token matmul: `matrices` weight matrices of `in_features` ×
/// `out_features` (for attention_scores: `matrices` = num_heads, `in_features` = head_dim,
/// `out_features` = 0, the key count being the workload's A, `value_features` = the value head
/// width: head_dim, or v_head_dim with MLA). Costs are per token and per
/// execution of one layer; totals multiply by `executed_layers` (FLOPs) or `physical_layers`
/// (parameters).
///
/// Memory-bound ops and the norms use `in_features` for the row width (H, expert_dim, E),
/// `matrices` for the rows per token (top_k for expert rows, 2 for the two norms of a layer) and
/// `out_features` for router_topk's k; `forward_bytes` is the fewest bytes their forward pass moves
/// per token and execution (bf16 activations, 2 bytes an element; formulas in ops.cpp).
struct Op {
  OpKind kind{};
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  std::int64_t matrices = 0;
  std::int64_t value_features = 0;           ///< attention_scores: value head width (else 0)
  std::int64_t params_per_layer = 0;         ///< stored weights in one physical layer
  std::int64_t active_params_per_layer = 0;  ///< weights one token uses in one layer
  double forward_flops = 0.0;                ///< exact forward FLOPs per token and execution
  double kernel_forward_flops = 0.0;         ///< forward as executed by tiled kernels (attention), else = forward
  /// All training passes as executed by tiled kernels (attention: forward and backward kernels
  /// with their own tiles, docs/attention.md), else training_passes × forward.
  double kernel_training_flops = 0.0;
  double forward_bytes = 0.0;                 ///< memory-bound ops and norms: bytes per token and execution
  std::int64_t physical_layers = 0;          ///< layers holding this op (1 for model-level ops)
  std::int64_t executed_layers = 0;          ///< executions per token, loops included

  double total_forward_flops() const { return forward_flops * static_cast<double>(executed_layers); }
  double total_kernel_forward_flops() const { return kernel_forward_flops * static_cast<double>(executed_layers); }
  double total_kernel_training_flops() const { return kernel_training_flops * static_cast<double>(executed_layers); }
  std::int64_t total_params() const { return params_per_layer * physical_layers; }
  std::int64_t total_active_params() const { return active_params_per_layer * physical_layers; }
};

/// The operation list of `config` under `workload`. Preconditions: both are valid (validate()).
/// Ops with no cost (a dense model's router, absent shared experts, vocab_size = 0) are left out.
/// Attention scores appear once per attention kind present (full, sliding-window, chunked layers);
/// every other part once per group of layers that has it (layer_counts()).
std::vector<Op> layer_ops(const ArchConfig& config, const Workload& workload);

}  // namespace budget
