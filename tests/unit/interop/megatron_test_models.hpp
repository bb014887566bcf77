#pragma once
// Small models and clusters that the Megatron-LM interop tests and fuzz targets read arguments
// against (tests/unit/interop, tests/fuzz/fuzz_megatron_*). Written out field by field (not loaded
// from a file) so the sizes the tests derive by hand can be checked against them.

#include <cstdint>
#include <string>

#include "budget/cluster.hpp"
#include "budget/config.hpp"

namespace budget::test {

/// A gated (SwiGLU) transformer with a 32,000-token vocabulary and 8,192 positions, no experts:
/// every FFN dense of width `dense_dim`.
inline ArchConfig megatron_dense_model(const std::string& name, std::int64_t hidden_size, std::int64_t num_layers,
                                       const AttentionConfig& attention, std::int64_t dense_dim) {
  ArchConfig c;
  c.ffn.gated = true;
  c.ffn.dense_dim = dense_dim;
  c.name = name;
  c.hidden_size = hidden_size;
  c.num_layers = num_layers;
  c.attention = attention;
  c.vocab_size = 32000;
  c.settings.max_position_embeddings = 8192;
  return c;
}

/// The same with `num_experts` gated experts of width `expert_dim` in every layer, top-2 routing.
inline ArchConfig megatron_moe_model(const std::string& name, std::int64_t hidden_size, std::int64_t num_layers,
                                     const AttentionConfig& attention, std::int64_t num_experts,
                                     std::int64_t expert_dim) {
  ArchConfig c = megatron_dense_model(name, hidden_size, num_layers, attention, 0);
  c.ffn.num_experts = num_experts;
  c.ffn.top_k = 2;
  c.ffn.expert_dim = expert_dim;
  return c;
}

/// The 8-layer Llama-like model of the argument tests: hidden 1024, 8 heads of 128 with 2 KV heads,
/// a dense FFN of 2816.
inline ArchConfig megatron_small_llama() { return megatron_dense_model("llama-small", 1024, 8, {8, 128, 2}, 2816); }

/// `nodes` nodes of 8 GPUs named "`name` GPU" with `memory_bytes` each; NVLink 900 GB/s and 3 µs,
/// the network 50 GB/s and 5 µs (per GPU and direction).
inline ClusterSpec megatron_test_cluster(const std::string& name, std::int64_t nodes, std::int64_t memory_bytes) {
  ClusterSpec c;
  c.name = name;
  c.gpu_name = name + " GPU";
  c.memory_bytes = memory_bytes;
  c.gpus_per_node = 8;
  c.nodes = nodes;
  c.intra_node = {900e9, 3e-6, ""};
  c.inter_node = {50e9, 5e-6, ""};
  return c;
}

}  // namespace budget::test
