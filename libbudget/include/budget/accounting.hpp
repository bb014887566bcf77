#pragma once
/// \file
/// The three budgets that compute-matched comparisons lock (per-token training FLOPs,
/// non-embedding parameters, KV cache), and what goes with them, summed from the op list
/// (ops.hpp). Conventions: docs/accounting.md.
///
/// Thread safety: account() and relative_deviation() are reentrant: they read their arguments only,
/// so concurrent calls are safe.

#include <cstdint>
#include <vector>

#include "budget/config.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"

namespace budget {

/// Forward FLOPs per token by component (exact attention count), summed over executed layers.
struct FlopsByComponent {
  double qkv_projection = 0;     ///< x·[W_q W_k W_v] (MLA: the query and KV down and up projections)
  double attention_scores = 0;   ///< QKᵀ and PV over the attended keys
  double output_projection = 0;  ///< attn·W_o
  double router = 0;             ///< x·W_router
  double routed_experts = 0;     ///< the top_k routed experts a token uses
  double shared_experts = 0;     ///< the shared experts every token uses
  double dense_ffn = 0;          ///< the dense FFN of dense layers
  /// Linear-attention and Mamba-2 layers: projections, convolution and scan. (DeepSeek-V3.2's
  /// indexer is attention: its projections in qkv_projection, its scores in attention_scores.)
  double mixers = 0;

  double total() const {
    return qkv_projection + attention_scores + output_projection + router + routed_experts +
           shared_experts + dense_ffn + mixers;
  }
};

/// Non-embedding parameters by component (each stored weight once).
struct ParamsByComponent {
  std::int64_t attention = 0;  ///< W_q, W_k, W_v, W_o (and sinks, the indexer)
  std::int64_t router = 0;
  std::int64_t routed_experts = 0;
  std::int64_t shared_experts = 0;
  std::int64_t dense_ffn = 0;
  std::int64_t norms = 0;      ///< per-layer and final RMSNorm weights
  std::int64_t mixers = 0;     ///< linear-attention and Mamba-2 layers (projections, convolution, scan)

  std::int64_t total() const {
    return attention + router + routed_experts + shared_experts + dense_ffn + norms + mixers;
  }
};

struct Budgets {
  // --- FLOPs per token (F): the non-embedding forward, × training_passes for training.
  double forward_flops_per_token = 0;
  double training_flops_per_token = 0;           ///< F, the matched budget
  FlopsByComponent forward_by_component;
  /// With attention counted as tiled kernels execute it (whole tiles): for time prediction.
  double kernel_forward_flops_per_token = 0;
  double kernel_training_flops_per_token = 0;
  /// LM head forward FLOPs per token (2·H·V), not part of F.
  double lm_head_forward_flops_per_token = 0;

  // --- Parameters.
  std::int64_t non_embedding_params_total = 0;   ///< the matched budget
  std::int64_t non_embedding_params_active = 0;  ///< non-expert weights + top_k routed + shared
  ParamsByComponent params_by_component;
  ParamsByComponent active_params_by_component;
  std::int64_t embedding_params = 0;             ///< token embedding + untied LM head (+ its bias)

  // --- Multi-token-prediction modules (ArchConfig::mtp_layers), apart from every budget above.
  std::int64_t mtp_params = 0;
  std::int64_t mtp_active_params = 0;
  double mtp_forward_flops_per_token = 0;        ///< one pass through every module, LM head excluded

  // --- KV cache: per token, executed full-attention layers × (2 · kv_heads · head_dim for GQA,
  // kv_lora_rank + qk_rope_head_dim for MLA); sliding-window and chunked layers hold a bounded cache
  // apart.
  std::int64_t kv_elements_per_token = 0;        ///< the matched budget
  /// Sliding-window and chunked layers: executions × per-layer elements × min(window or chunk,
  /// seq_len), per sequence.
  std::int64_t kv_window_elements_per_sequence = 0;
  std::int64_t kv_bytes_per_token = 0;
  /// One full seq_len window: per-token bytes × seq_len + the sliding-window caches.
  std::int64_t kv_bytes_per_sequence = 0;

  // --- Recurrent state (linear-attention and Mamba-2 layers), per sequence, beside the KV cache: it
  // does not grow with the context, but each execution of a looped layer keeps its own.
  std::int64_t state_elements_per_sequence = 0;  ///< ArchConfig::state_elements_per_sequence()
  std::int64_t state_bytes_per_sequence = 0;     ///< × the workload's kv_bytes

  // --- Depth and sparsity.
  std::int64_t physical_layers = 0;
  std::int64_t executed_layers = 0;
  /// Active parameters counted once per execution (a looped layer r times): the compute-
  /// equivalent active size N_act^eq. Equals non_embedding_params_active without a loop.
  double executed_active_params = 0;
  /// Compute-equivalent sparsity 1 − N_act^eq / N (docs/accounting.md, "Sparsity").
  double sparsity = 0;
  /// Plain parameter sparsity 1 − N_active / N (looped layers once).
  double param_sparsity = 0;
};

/// Sums the op list. Preconditions: `ops` came from layer_ops(config, workload).
Budgets account(const std::vector<Op>& ops, const ArchConfig& config, const Workload& workload);

/// validate()s both inputs and checks that the KV cache of one seq_len window fits in 64 bits
/// (budget::Error on failure), builds the op list and sums it.
Budgets account(const ArchConfig& config, const Workload& workload);

/// Relative deviation (candidate − reference)/reference, signed.
inline double relative_deviation(double candidate, double reference) {
  return (candidate - reference) / reference;
}

}  // namespace budget
