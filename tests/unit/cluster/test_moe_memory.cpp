// Issue 42 item 1: the MoE memory terms (memory/moe_memory.cpp; docs/cluster.md, "MoE memory
// terms"), each checked against a hand count on Qwen3-30B-A3B (H 2048, 128 experts of width 768,
// top 8, 48 layers) at Megatron-Bridge's 16-H100 recipe (EP 16, MBS 1, sequence 4096), and read
// from Megatron-LM arguments.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "budget/training_memory.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

const std::string moe_source_dir = BUDGET_SOURCE_DIR;

ArchConfig moe_qwen3() { return test::hf_test_config("qwen3-30b-a3b.json"); }

ClusterSpec moe_h100_nodes() { return load_cluster_spec(moe_source_dir + "/examples/clusters/h100-sxm.json", 2); }

/// The recipe's layout without the memory settings under test: TP 1, EP 16 over 16 GPUs, DP 16,
/// MBS 1, 64 micro-batches of 4096 tokens, flex dispatcher with the fused permutation, balanced.
ParallelLayout moe_layout() {
  ParallelLayout l = test::expert_parallel(16, 64);
  l.etp = 1;
  l.distributed_optimizer = true;
  l.cross_entropy_fusion = true;
  l.dispatcher = MoeDispatcher::flex;
  l.moe_permute_fusion = true;
  return l;
}

}  // namespace

TEST_CASE("MoE memory: HybridEP's NVLink buffers lie outside the allocator's peak, inside the capacity",
          "[cluster][memory][moe]") {
  const ArchConfig c = moe_qwen3();
  ParallelLayout l = moe_layout();
  const TrainingMemory plain = training_memory(c, l, moe_h100_nodes());
  l.moe_memory.hybridep = true;
  const TrainingMemory hybrid = training_memory(c, l, moe_h100_nodes());
  // Hand count (DeepEP hybrid-ep intranode.cu:127-129, 193-261): tokens = 4096 a rank × 8 ranks a node
  // × 2 nodes = 65,536; combine's 65,536 × 2048 bf16 = 268,435,456 B and 65,536 × (8 local experts × 8
  // ranks) fp32 = 16,777,216 B, which dispatch shares (use_shared_buffer, Megatron's default); the
  // scaling factors 65,536 × 2048/128 × 4 = 4,194,304; the all-gather map 128 × 4096 × 16 = 8,388,608;
  // and the RDMA buffers between the two nodes, 72,876,032 B (test_dispatcher_buffers.cpp).
  const double expected = 268435456.0 + 16777216.0 + 4194304.0 + 8388608.0 + 72876032.0;  // 370,671,616 B
  CHECK(hybrid.stages[0].outside_allocator_bytes == Approx(expected).epsilon(1e-12));
  // The flex dispatcher on DeepEP (Megatron's default backend) has its own: at 16 ranks NVLink
  // 141,744,544 B, RDMA 34,543,744 B and the 32 MiB workspace (hand counts as in
  // test_dispatcher_buffers.cpp: 10 channels × 8 NVLink ranks × 288 slots of 6,152 B; 10 × 2 RDMA
  // ranks × 140 slots of 12,336 B).
  const double deepep = 141744544.0 + 34543744.0 + 33554432.0;
  CHECK(plain.stages[0].outside_allocator_bytes == deepep);
  // Not in torch.cuda.max_memory_allocated(): the peak grows only by the routing handle its 48 layer
  // executions keep (2,883,584 B each, the next test case), the headroom by both.
  const double handles = 48.0 * 2883584.0;
  CHECK(hybrid.peak_bytes == Approx(plain.peak_bytes + handles).epsilon(1e-12));
  CHECK(hybrid.headroom_bytes == Approx(plain.headroom_bytes + deepep - expected - handles).epsilon(1e-12));
  bool said = false;
  for (const std::string& n : hybrid.notes) {
    said = said ||
           n.find("HybridEP buffers, 0.35 GiB a GPU (NVLink 0.28, RDMA 0.07), lie outside") != std::string::npos;
  }
  CHECK(said);
  // Without the flex dispatcher the backend is not used: nothing outside.
  l.dispatcher = MoeDispatcher::alltoall;
  CHECK(training_memory(c, l, moe_h100_nodes()).stages[0].outside_allocator_bytes == 0.0);
}

TEST_CASE("MoE memory: HybridEP's rank budget sizes the permuted rows, the imbalance is the stated routing",
          "[cluster][memory][moe]") {
  const ArchConfig c = moe_qwen3();
  ParallelLayout l = moe_layout();
  l.moe_memory.hybridep = true;
  const double balanced = layer_activation_bytes(c, 1, l, false).ffn;
  l.moe_memory.rank_capacity_factor = 1.5;  // --moe-expert-rank-capacity-factor 1.5 (the GB300 recipes)
  const double budget = layer_activation_bytes(c, 1, l, false).ffn;
  // 8 → 12 rows a token; each row keeps fc1's bf16 input 2·2048, fc1's output 4·768 and the weighted
  // activation's output 2·768 (the fused permutation keeps no index per row): 4096 tokens × 4 × 8704.
  CHECK(budget - balanced == Approx(4096.0 * 4.0 * (2.0 * 2048 + 6.0 * 768)).epsilon(1e-12));
  // The budget holds whatever the routing: an imbalance does not add to it.
  l.imbalance = 1.25;
  CHECK(layer_activation_bytes(c, 1, l, false).ffn == Approx(budget).epsilon(1e-12));
  // Without the budget the imbalance is the assumption: 8 × 1.25 = 10 rows.
  l.moe_memory.rank_capacity_factor = 0.0;
  CHECK(layer_activation_bytes(c, 1, l, false).ffn - balanced ==
        Approx(4096.0 * 2.0 * (2.0 * 2048 + 6.0 * 768)).epsilon(1e-12));
  l.moe_memory.rank_capacity_factor = -1.0;
  CHECK_THROWS_WITH(training_memory(c, l, moe_h100_nodes()), Catch::Contains("expert rank capacity factor = -1"));
}

TEST_CASE("MoE memory: HybridEP's routing handle is kept by each MoE layer execution until its backward",
          "[cluster][memory][moe]") {
  const ArchConfig c = moe_qwen3();
  ParallelLayout l = moe_layout();
  const double plain = layer_activation_bytes(c, 1, l, false).ffn;
  const TrainingMemory plain_memory = training_memory(c, l, moe_h100_nodes());
  l.moe_memory.hybridep = true;
  const double hybrid = layer_activation_bytes(c, 1, l, false).ffn;
  // Hand count (DeepEP hybrid-ep@94a9f8f executor.cu:93-126): a rank dispatches t = 4096 tokens to a
  // group of R·N = 8 ranks × 2 nodes = 16 with 128 / 16 = 8 local experts: sparse_to_dense_map 4096·2
  // × 8 int32 = 262,144 B, local_expert_routing_map 65,536 × 8 bool = 524,288 B, dense_to_expert_map
  // 65,536 × 8 int32 = 2,097,152 B; 2,883,584 B a layer execution.
  const double handle = 262144.0 + 524288.0 + 2097152.0;
  CHECK(hybrid - plain == Approx(handle).epsilon(1e-12));
  // 48 layer executions of one micro-batch in flight (1F1B without pipelining).
  const TrainingMemory hybrid_memory = training_memory(c, l, moe_h100_nodes());
  CHECK(hybrid_memory.stages[0].by_component.activations - plain_memory.stages[0].by_component.activations ==
        Approx(48.0 * handle).epsilon(1e-12));
  // The dispatch group is TP×EP (token_dispatcher.py:1846-1851): at EP 8 × ETP 2 a token map spans 16
  // ranks with 16 local experts: 4096 × 16 × (4 + 5·16) = 5,505,024 B.
  ParallelLayout etp2 = l;
  etp2.ep = 8;
  etp2.etp = 2;
  etp2.moe_memory.hybridep = false;
  const double etp2_plain = layer_activation_bytes(c, 1, etp2, false).ffn;
  etp2.moe_memory.hybridep = true;
  CHECK(layer_activation_bytes(c, 1, etp2, false).ffn - etp2_plain == Approx(5505024.0).epsilon(1e-12));
  // The moe recompute drops the layer's autograd context, the handle with it; no flex, no handle.
  l.recompute.modules = {RecomputeModule::moe};
  l.recompute.kind = RecomputeKind::selective;
  ParallelLayout recomputed_plain = l;
  recomputed_plain.moe_memory.hybridep = false;
  CHECK(layer_activation_bytes(c, 1, l, false).ffn == layer_activation_bytes(c, 1, recomputed_plain, false).ffn);
  l = moe_layout();
  l.moe_memory.hybridep = true;
  l.dispatcher = MoeDispatcher::alltoall;
  ParallelLayout alltoall_plain = l;
  alltoall_plain.moe_memory.hybridep = false;
  CHECK(layer_activation_bytes(c, 1, l, false).ffn == layer_activation_bytes(c, 1, alltoall_plain, false).ffn);
}

TEST_CASE("MoE memory: EP overlap holds one more layer, grouped GEMMs four cuBLAS workspaces",
          "[cluster][memory][moe]") {
  const ArchConfig c = moe_qwen3();
  ParallelLayout l = moe_layout();
  const TrainingMemory base = training_memory(c, l, moe_h100_nodes());
  l.moe_memory.ep_overlap_schedule = true;
  const TrainingMemory overlap = training_memory(c, l, moe_h100_nodes());
  // Every layer of Qwen3-30B-A3B keeps the same bytes: one more execution's worth.
  CHECK(overlap.stages[0].by_component.activations - base.stages[0].by_component.activations ==
        Approx(layer_activation_bytes(c, 1, l, false).total()).epsilon(1e-12));
  l.moe_memory.ep_overlap_schedule = false;
  l.moe_memory.grouped_gemm = true;
  const TrainingMemory grouped = training_memory(c, l, moe_h100_nodes());
  // TE gemm.py:31-57: 4 streams × (32 MiB + 1 KiB) on compute capability 9.0 and later.
  CHECK(grouped.stages[0].by_component.buffers - base.stages[0].by_component.buffers ==
        Approx(4.0 * (33554432.0 + 1024.0)).epsilon(1e-12));
}

TEST_CASE("MoE memory: the settings are read from Megatron-LM arguments", "[cluster][memory][moe][megatron]") {
  const ArchConfig c = moe_qwen3();
  const std::vector<std::string> words = {
      "--expert-model-parallel-size", "8", "--micro-batch-size", "8", "--global-batch-size", "512", "--seq-length",
      "4096", "--bf16", "--use-distributed-optimizer", "--moe-grouped-gemm", "--moe-permute-fusion",
      "--moe-token-dispatcher-type", "flex", "--moe-flex-dispatcher-backend", "hybridep",
      "--moe-expert-rank-capacity-factor", "1.5", "--overlap-moe-expert-parallel-comm"};
  const MegatronRun run = read_megatron_args(words, c, 8, "args");
  CHECK(run.layout.moe_memory.hybridep);
  CHECK(run.layout.moe_memory.rank_capacity_factor == 1.5);
  CHECK(run.layout.moe_memory.grouped_gemm);
  CHECK(run.layout.moe_memory.ep_overlap_schedule);
  // DeepEP is not HybridEP; a factor that is not positive is refused by name.
  std::vector<std::string> deepep = words;
  deepep[15] = "deepep";
  CHECK_FALSE(read_megatron_args(deepep, c, 8, "args").layout.moe_memory.hybridep);
  std::vector<std::string> bad = words;
  bad[17] = "0";
  CHECK_THROWS_WITH(read_megatron_args(bad, c, 8, "args"), Catch::Contains("--moe-expert-rank-capacity-factor: is not in (0, 1e6]"));
}

TEST_CASE("MoE memory: FP8 pads each local expert's rows to the recipe's alignment (issue 43)",
          "[cluster][memory][moe][kernels]") {
  // Megatron-LM moe/experts.py:890-903 pads each local expert's rows with TE's Fp8Padding
  // (fp8_padding.py:117-123) before fc1 under FP8; BF16 is not padded. Qwen3-30B-A3B at EP 16:
  // 8 local experts. A micro-batch of 1000 tokens sends 8000 rows, 1000 an expert: FP8 blockwise
  // pads to 1008 (a multiple of 16), 64 rows more a rank; MXFP8 to 1024 (32), 192 rows more. Each
  // padded row keeps fc1's input f8·2048 and its output and the activation's (4 + f8)·768, with
  // f8 = 1 + 4/128 (blockwise) = 1 + 1/32 (MXFP8) = 1.03125 bytes: 2112 + 3864 = 5976 bytes. At 4000
  // tokens (4000 an expert, a multiple of both) nothing is padded, and the rest of the FFN's bytes are
  // linear in the tokens: padding = ffn(1000) − ffn(4000)/4.
  const ArchConfig c = moe_qwen3();
  ParallelLayout l = moe_layout();
  const auto padding_bytes = [&](Fp8Recipe recipe) {
    l.fp8 = recipe;
    l.seq_len = 1000;
    const double small = layer_activation_bytes(c, 1, l, false).ffn;
    l.seq_len = 4000;
    const double large = layer_activation_bytes(c, 1, l, false).ffn;
    return small - large / 4.0;
  };
  CHECK(padding_bytes(Fp8Recipe::blockwise) == Approx(64.0 * 5976.0).epsilon(1e-9));   // 382,464 B
  CHECK(padding_bytes(Fp8Recipe::mxfp8) == Approx(192.0 * 5976.0).epsilon(1e-9));      // 1,147,392 B
  CHECK(padding_bytes(Fp8Recipe::none) == Approx(0.0).margin(1e-6));
}
