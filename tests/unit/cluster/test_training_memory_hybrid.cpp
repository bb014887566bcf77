// Training memory of hybrid stacks (memory/memory_shapes.cpp): each layer's own parameters (the
// sum over the stored layers is the accounting's N), the activations of Mamba-2 and linear-attention
// blocks by hand (their step time on a cluster: test_cluster_time_hybrid.cpp).

#include <string>

#include <catch2/catch.hpp>

#include "budget/accounting.hpp"
#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "budget/calibration.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {
ClusterSpec roomy_cluster() { return test::test_nodes(8, 8, std::int64_t{1} << 42); }

/// DP 1 (one GPU); TP 1 and one sequence of 4096 a micro-batch are the defaults.
ParallelLayout one_gpu() {
  ParallelLayout l;
  l.dp = 1;
  return l;
}
}  // namespace

TEST_CASE("hybrid memory: the stored layers' parameters are the accounting's", "[cluster][hybrid]") {
  for (const char* file : {"nemotron-3-nano-30b-a3b.json", "qwen3-next-80b-a3b-thinking.json", "gpt-oss-20b.json",
                           "llama-4-maverick-17b-128e-instruct.json"}) {
    INFO(file);
    const ArchConfig c = test::hf_test_config(file);
    const TrainingMemory m = training_memory(c, one_gpu(), roomy_cluster());
    REQUIRE(m.stages.size() == 1);
    const Budgets b = account(c, paper_workload());
    // Every layer, the final norm, embedding and LM head (the padded vocabulary is the file's: a
    // multiple of 128), on the one GPU.
    const double padding = 2.0 * static_cast<double>((m.padded_vocab - c.vocab_size) * c.hidden_size);
    CHECK(m.stages.front().dense_params + m.stages.front().expert_params ==
          Approx(static_cast<double>(b.non_embedding_params_total + b.embedding_params) + padding).epsilon(1e-12));
  }
}

TEST_CASE("hybrid memory: a Mamba-2 block's activations by hand", "[cluster][hybrid]") {
  const ArchConfig c = test::hf_test_config("nemotron-3-nano-30b-a3b.json");
  const ParallelLayout l = one_gpu();
  // Layer 1 is Mamba-2 (no FFN): per token 4H = 10,752 bytes of norm and projection inputs, and 2 ·
  // (in_proj output 10,304 + conv output 6,144 + scan output 4,096 + gated-norm output 4,096) =
  // 49,280 bytes, + the chunk states 4·64·64·128/128 = 16,384 bytes; 4096 tokens.
  const LayerActivationBytes mamba = layer_activation_bytes(c, 1, l, false);
  CHECK(mamba.ffn == 0.0);
  CHECK(mamba.attention == Approx(4096.0 * (10'752.0 + 49'280.0 + 16'384.0)));
  // Layer 2 is an MoE block: no mixer activations.
  CHECK(layer_activation_bytes(c, 2, l, false).attention == 0.0);
  CHECK(layer_activation_bytes(c, 2, l, false).ffn > 0.0);
}
