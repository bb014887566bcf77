#pragma once
// Configs and workloads shared by the accounting and config tests. Each is written out field by
// field (not loaded from a file) so the hand arithmetic in the tests can be checked against it.

#include <cstdint>
#include <string>

#include "budget/config.hpp"
#include "budget/workload.hpp"

namespace budget::test {

/// Gated (SwiGLU) MLPs in every layer: `num_experts` routed experts of width `expert_dim`, top-`top_k`
/// (0 experts: dense); no vocabulary.
inline ArchConfig gated_moe(const std::string& name, std::int64_t hidden_size, std::int64_t num_layers,
                            const AttentionConfig& attention, std::int64_t num_experts, std::int64_t top_k,
                            std::int64_t expert_dim) {
  ArchConfig c;
  c.name = name;
  c.hidden_size = hidden_size;
  c.num_layers = num_layers;
  c.attention = attention;
  c.ffn.num_experts = num_experts;
  c.ffn.top_k = top_k;
  c.ffn.expert_dim = expert_dim;
  c.ffn.gated = true;
  return c;
}

/// A dense model (no experts) with a gated (SwiGLU) MLP of width `dense_dim` and a vocabulary of
/// `vocab_size`.
inline ArchConfig gated_dense(const std::string& name, std::int64_t hidden_size, std::int64_t num_layers,
                              const AttentionConfig& attention, std::int64_t dense_dim, std::int64_t vocab_size) {
  ArchConfig c = gated_moe(name, hidden_size, num_layers, attention, 0, 0, 0);
  c.ffn.dense_dim = dense_dim;
  c.vocab_size = vocab_size;
  return c;
}

/// The SMELT paper's 200M cell at S ≈ 95% (paper Table 1 / worked example): H = 1280, 12 layers,
/// 10 heads × 128 with 2 KV heads, 192 SwiGLU experts of width 432, top-8.
inline ArchConfig paper_200m_baseline() {
  return gated_moe("paper-200M-S95-baseline", 1280, 12, {10, 128, 2}, 192, 8, 432);
}

/// The paper's looped (SMELT) config for the same cell: H = 1056, 12 heads × 88 with 2 KV heads,
/// 288 experts of width 352, layers 4–9 run twice.
inline ArchConfig paper_200m_smelt() {
  ArchConfig c = gated_moe("paper-200M-S95-smelt", 1056, 12, {12, 88, 2}, 288, 8, 352);
  c.loop = LoopConfig{4, 9, 2};
  return c;
}

/// A toy MoE small enough to account by hand: H = 64, 4 layers, 4 heads × 16 (q = 64) with 2 KV
/// heads (kv = 32), 8 gated experts of width 32, top-2.
inline ArchConfig toy_moe() { return gated_moe("toy-moe", 64, 4, {4, 16, 2}, 8, 2, 32); }

/// A toy dense model: H = 64, 2 layers, 4 heads × 16 with 4 KV heads (plain multi-head attention,
/// kv = 64), a plain (non-gated, 2-matrix) FFN of width 256.
inline ArchConfig toy_dense() {
  ArchConfig c;
  c.name = "toy-dense";
  c.hidden_size = 64;
  c.num_layers = 2;
  c.attention = {4, 16, 4};
  c.ffn.num_experts = 0;
  c.ffn.gated = false;
  c.ffn.dense_dim = 256;
  return c;
}

/// A workload with A = 10 attended keys per query (64-token windows, 3 passes, 2-byte KV).
inline Workload toy_workload() {
  Workload w;
  w.seq_len = 64;
  w.attention_mask = AttentionMask::document;
  w.attended_keys = 10.0;
  w.training_passes = 3;
  w.kv_bytes = 2;
  w.description = "toy: A = 10";
  return w;
}

}  // namespace budget::test
