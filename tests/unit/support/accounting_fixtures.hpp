#pragma once
// Configs and workloads shared by the accounting and config tests. Each is written out field by
// field (not loaded from a file) so the hand arithmetic in the tests can be checked against it.

#include <string>

#include "budget/config.hpp"
#include "budget/workload.hpp"

namespace budget::test {

/// The SMELT paper's 200M cell at S ≈ 95% (paper Table 1 / worked example): H = 1280, 12 layers,
/// 10 heads × 128 with 2 KV heads, 192 SwiGLU experts of width 432, top-8.
inline ArchConfig paper_200m_baseline() {
  ArchConfig c;
  c.name = "paper-200M-S95-baseline";
  c.hidden_size = 1280;
  c.num_layers = 12;
  c.attention = {10, 128, 2};
  c.ffn.num_experts = 192;
  c.ffn.top_k = 8;
  c.ffn.expert_dim = 432;
  c.ffn.gated = true;
  return c;
}

/// The paper's looped (SMELT) config for the same cell: H = 1056, 12 heads × 88 with 2 KV heads,
/// 288 experts of width 352, layers 4–9 run twice.
inline ArchConfig paper_200m_smelt() {
  ArchConfig c;
  c.name = "paper-200M-S95-smelt";
  c.hidden_size = 1056;
  c.num_layers = 12;
  c.attention = {12, 88, 2};
  c.ffn.num_experts = 288;
  c.ffn.top_k = 8;
  c.ffn.expert_dim = 352;
  c.ffn.gated = true;
  c.loop = LoopConfig{4, 9, 2};
  return c;
}

/// A toy MoE small enough to account by hand: H = 64, 4 layers, 4 heads × 16 (q = 64) with 2 KV
/// heads (kv = 32), 8 gated experts of width 32, top-2.
inline ArchConfig toy_moe() {
  ArchConfig c;
  c.name = "toy-moe";
  c.hidden_size = 64;
  c.num_layers = 4;
  c.attention = {4, 16, 2};
  c.ffn.num_experts = 8;
  c.ffn.top_k = 2;
  c.ffn.expert_dim = 32;
  c.ffn.gated = true;
  return c;
}

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
