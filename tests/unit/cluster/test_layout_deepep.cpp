// Issue 43 item 4: the layout check refuses expert layouts DeepEP's kernels refuse when the flex
// dispatcher runs them (budget/kernel_stack.hpp expert_layout_refusal(); docs/kernels.md).

#include <string>

#include <catch2/catch.hpp>

#include "budget/config_io.hpp"
#include "budget/cluster.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/training_memory.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {
/// Qwen3-30B-A3B: top-8 of 128 experts, H 2048.
ArchConfig qwen3_30b_moe() { return test::hf_test_config("qwen3-30b-a3b.json"); }

/// EP `ep` on `gpus` GPUs, one micro-batch of one sequence of 4096, the dispatcher given.
ParallelLayout expert_layout(std::int64_t ep, std::int64_t gpus, MoeDispatcher dispatcher) {
  ParallelLayout l = test::expert_parallel(ep, 1);
  l.gpus = gpus;
  l.dispatcher = dispatcher;
  return l;
}
}  // namespace

TEST_CASE("layout: the flex dispatcher refuses the expert layouts DeepEP refuses, with the reason", "[cluster][kernels]") {
  const ArchConfig c = qwen3_30b_moe();
  // EP 4 on 4 GPUs: 4 ranks (< 8) run; alltoall takes EP 1, DeepEP needs TP·EP > 1.
  CHECK(expert_layout(4, 4, MoeDispatcher::flex).validation_error(c).empty());
  CHECK(expert_layout(1, 1, MoeDispatcher::alltoall).validation_error(c).empty());
  CHECK_THAT(expert_layout(1, 1, MoeDispatcher::flex).validation_error(c), Catch::Contains("DeepEP needs TP·EP > 1"));
  // EP 16 runs (a multiple of 8); 128 experts on EP 32 with DeepEP: 32 ranks, a multiple of 8, runs.
  CHECK(expert_layout(16, 16, MoeDispatcher::flex).validation_error(c).empty());
  // ETP 3 · EP 4 = 12 ranks: neither < 8 nor a multiple of 8 (DeepEP csrc/legacy/buffer.hpp:114).
  ParallelLayout twelve = expert_layout(4, 12, MoeDispatcher::flex);
  twelve.etp = 3;
  CHECK_THAT(twelve.validation_error(c), Catch::Contains("TP·EP = 12"));
  twelve.dispatcher = MoeDispatcher::alltoall;
  CHECK(twelve.validation_error(c).find("DeepEP") == std::string::npos);
  // 128 experts do not divide by EP 12, whatever the dispatcher (Megatron's check comes first).
  CHECK_THAT(expert_layout(12, 12, MoeDispatcher::alltoall).validation_error(c), Catch::Contains("do not divide by EP = 12"));
}

TEST_CASE("layout: HybridEP's limits replace DeepEP's under the flex dispatcher, the NVLink domain from the cluster",
          "[cluster][kernels]") {
  const ArchConfig c = qwen3_30b_moe();
  const ClusterSpec h100 = load_cluster_spec(std::string(BUDGET_SOURCE_DIR) + "/examples/clusters/h100-sxm.json", 2);
  // EP 1: DeepEP needs TP·EP > 1, HybridEP does not (Megatron token_dispatcher.py:1845-1851).
  ParallelLayout one = expert_layout(1, 1, MoeDispatcher::flex);
  one.moe_memory.hybridep = true;
  CHECK(one.validation_error(c).empty());
  CHECK_NOTHROW(training_memory(c, one, h100));
  // ETP 3 · EP 4 = 12 ranks: DeepEP refuses 12 in the layout check; HybridEP's rule needs the
  // cluster: 8 H100s a node share NVLink, and 12 is not a multiple of 8 (hybrid_ep_buffer.py:74-76).
  ParallelLayout twelve = expert_layout(4, 12, MoeDispatcher::flex);
  twelve.etp = 3;
  twelve.moe_memory.hybridep = true;
  CHECK(twelve.validation_error(c).empty());
  CHECK_THROWS_WITH(training_memory(c, twelve, h100), Catch::Contains("HybridEP") && Catch::Contains("TP·EP = 12, 8 in a domain"));
  // EP 16 on the two nodes runs on both backends.
  ParallelLayout sixteen = expert_layout(16, 16, MoeDispatcher::flex);
  sixteen.moe_memory.hybridep = true;
  CHECK_NOTHROW(training_memory(c, sixteen, h100));
}
