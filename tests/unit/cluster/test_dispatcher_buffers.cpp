// Issue 42 item 1: the flex dispatcher's buffers outside PyTorch's allocator (memory/
// dispatcher_buffers.cpp; docs/cluster.md, "MoE memory terms"), each checked against a hand count
// from DeepEP's sources (hybrid-ep branch at 94a9f8f) as Megatron-LM d98e8a64 sizes them.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/communication.hpp"
#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "budget/run_fit.hpp"
#include "budget/training_memory.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

const std::string buffers_source_dir = BUDGET_SOURCE_DIR;

ClusterSpec h100_nodes(std::int64_t nodes) {
  return load_cluster_spec(buffers_source_dir + "/examples/clusters/h100-sxm.json", nodes);
}

/// EP `ep` over `ep` GPUs (DP `ep`), one micro-batch of one sequence of 4096, the flex dispatcher.
ParallelLayout flex_layout(std::int64_t ep) {
  ParallelLayout l = test::expert_parallel(ep, 1);
  l.etp = 1;
  l.dispatcher = MoeDispatcher::flex;
  l.moe_permute_fusion = true;
  return l;
}

bool has_note(const TrainingMemory& m, const std::string& text) {
  for (const std::string& n : m.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("dispatcher buffers: DeepEP across nodes, a DeepSeek-V3 layer on EP 64 over 8-GPU nodes",
          "[cluster][memory][moe]") {
  const ArchConfig c = test::hf_test_config("deepseek-v3.json");  // H 7168, 256 experts, top 8
  ParallelLayout l = flex_layout(64);
  const TrainingMemory m = training_memory(c, l, h100_nodes(8));
  const DispatcherBufferBytes& b = m.stages[0].dispatcher_buffers;
  // Hand count (DeepEP hybrid-ep@94a9f8f; Megatron fused_a2a.py:36-68): n = 64 ranks, 20 SMs (Megatron's
  // default) = 10 channels, hidden_bytes = 7168 · 2 = 14,336. get_dispatch_config(64) = Config(20, 20,
  // 288, 28, 128) and get_combine_config(64) = Config(20, 1, 288, 20, 128) (buffer.py:247, 275): NVLink
  // receive chunk 288 for both; the RDMA receive chunk 128 rounds up to a multiple of 28 (dispatch) or
  // 20 (combine): 140 either way (config.hpp:40-41).
  // NVLink hint (config.hpp:51-73): 8 NVLink ranks, 8 RDMA ranks: 10·8·(2·8 + 3)·4 = 6,080 plus
  // 10·8·288 = 23,040 slots of 14,336 + 8 + 128·8 + 128·4 + 128·4 = 16,392 B = 377,671,680: 377,677,760,
  // rounded up to 128 B = 377,677,824; the Buffer adds 8·4 + 16·8 = 160 B of barrier and pointers.
  CHECK(b.nvlink == 377677984.0);
  // RDMA hint (config.hpp:75-100): 10·8·(8·2 + 2)·2·4 = 11,520 plus 10·8·140 = 11,200 slots of
  // 2·(16,392 + 16) = 32,816 B = 367,539,200: 367,550,720 (a multiple of 128).
  CHECK(b.rdma == 367550720.0);
  CHECK(b.workspace == 33554432.0);  // 32 MiB (configs.cuh:5)
  CHECK(m.stages[0].outside_allocator_bytes == 377677984.0 + 367550720.0 + 33554432.0);  // 778,783,136 B
  CHECK(has_note(m, "the flex dispatcher's DeepEP buffers, 0.73 GiB a GPU (NVLink 0.35, RDMA 0.34, workspace 0.03)"));
  // Not in the allocator's peak, in the headroom: the same layout on the alltoall dispatcher has the
  // same peak (the flex dispatcher on DeepEP keeps the alltoall's activations here).
  ParallelLayout alltoall = l;
  alltoall.dispatcher = MoeDispatcher::alltoall;
  const TrainingMemory a = training_memory(c, alltoall, h100_nodes(8));
  CHECK(a.stages[0].outside_allocator_bytes == 0.0);
  CHECK(m.peak_bytes == a.peak_bytes);
  CHECK(m.headroom_bytes == Approx(a.headroom_bytes - 778783136.0).epsilon(1e-12));
  // --moe-flex-dispatcher-num-sms 32: 16 channels: NVLink 16·8·19·4 = 9,728 + 16·8·288·16,392 =
  // 604,274,688: 604,284,416 (a multiple of 128) + 160; RDMA 16·8·18·8 = 18,432 + 16·8·140·32,816 =
  // 588,062,720: 588,081,152.
  l.moe_memory.flex_num_sms = 32;
  const DispatcherBufferBytes b32 = training_memory(c, l, h100_nodes(8)).stages[0].dispatcher_buffers;
  CHECK(b32.nvlink == 604284576.0);
  CHECK(b32.rdma == 588081152.0);
  // DeepEP's Buffer.set_num_sms asserts an even count (buffer.py:160).
  l.moe_memory.flex_num_sms = 33;
  CHECK_THROWS_WITH(training_memory(c, l, h100_nodes(8)), Catch::Contains("even SM count; 33 SMs"));
}

TEST_CASE("dispatcher buffers: DeepEP within 8 ranks has no RDMA buffer, a rank count without a config is refused",
          "[cluster][memory][moe]") {
  const ArchConfig c = test::hf_test_config("qwen3-30b-a3b.json");  // H 2048, 128 experts, top 8
  const DispatcherBufferBytes b = training_memory(c, flex_layout(8), h100_nodes(1)).stages[0].dispatcher_buffers;
  // n = 8: get_dispatch_config(8) = Config(20, 6, 256, 6, 128), combine Config(20, 4, 256, 6, 128):
  // NVLink receive chunk 256; 1 RDMA rank: 10·8·(2 + 3)·4 = 1,600 plus 10·8·256 = 20,480 slots of
  // 4,096 + 8 + 1,024 + 512 + 512 = 6,152 B = 125,992,960: 125,994,560, rounded up to 125,994,624;
  // + 160. The RDMA hint is 0 for n <= 8 (config.hpp:77-78).
  CHECK(b.nvlink == 125994784.0);
  CHECK(b.rdma == 0.0);
  CHECK(b.workspace == 33554432.0);
  // 48 ranks: DeepEP's hybrid-ep branch has no config for them (buffer.py:240-251 asserts).
  ParallelLayout l48 = flex_layout(16);
  l48.gpus = 48;
  l48.etp = 3;
  CHECK_THAT(l48.validation_error(test::hf_test_config("qwen3-30b-a3b.json")),
             Catch::Contains("configs for 2, 4, 8, 16, 24, 32, 64, 128, 144, 160 ranks only") &&
                 Catch::Contains("TP·EP = 48"));
}

TEST_CASE("dispatcher buffers: HybridEP's RDMA buffers between NVLink domains, none within one",
          "[cluster][memory][moe]") {
  const ArchConfig c = test::hf_test_config("qwen3-30b-a3b.json");
  ParallelLayout l = flex_layout(16);
  l.moe_memory.hybridep = true;
  // EP 16 over two 8-GPU nodes: R = 8 ranks a domain, N = 2 domains, t' = 4096 tokens a rank (a
  // multiple of 64 above 512), E_l = 8, H = 2048, ⌊H/128⌋ = 16 scales.
  const DispatcherBufferBytes two = training_memory(c, l, h100_nodes(2)).stages[0].dispatcher_buffers;
  // NVLink (intranode.cu; dispatch shares combine's buffers, use_shared_buffer True): 65,536 tokens ×
  // (2048·2 + 8·8·4 + 16·4) = 65,536 × 4,416 = 289,406,976, plus the all-gather map 128 experts ×
  // 4096 × 16 ranks = 8,388,608 bools: 297,795,584.
  CHECK(two.nvlink == 297795584.0);
  // RDMA (internode_doca.cu): dispatch 4096 × (4096 + 8·16·4 + 64) = 4096 × 4,672 = 19,136,512 plus
  // the other domain's 4096 × (4096 + 256 + 64) = 18,087,936; combine 2 × 4096 × (4096 + 256) =
  // 35,651,584: 72,876,032.
  CHECK(two.rdma == 72876032.0);
  CHECK(two.workspace == 0.0);
  // Under TP 2 with sequence parallelism a rank dispatches its T/TP = 2048 tokens (fused_a2a.py:400-414,
  // x.shape): NVLink 32,768 tokens × 4,416 = 144,703,488 + 128 × 2048 × 16 = 4,194,304; RDMA
  // 2048 × 4,672 = 9,568,256 + 2048 × 4,416 = 9,043,968 + 2 × 2048 × 4,352 = 17,825,792.
  ParallelLayout sp = l;
  sp.gpus = 32;
  sp.tp = 2;
  sp.sequence_parallel = true;
  const DispatcherBufferBytes halved = training_memory(c, sp, h100_nodes(4)).stages[0].dispatcher_buffers;
  CHECK(halved.nvlink == 148897792.0);
  CHECK(halved.rdma == 36438016.0);
  // EP 8 in one node: one domain, no RDMA buffer; E_l = 16: NVLink 32,768 tokens × (4096 + 16·8·4 +
  // 64) = 32,768 × 4,672 = 153,092,096 plus the map of 16·8 = 128 experts × 4096 × 8 ranks =
  // 4,194,304: 157,286,400.
  ParallelLayout one_node = flex_layout(8);
  one_node.moe_memory.hybridep = true;
  const DispatcherBufferBytes one = training_memory(c, one_node, h100_nodes(1)).stages[0].dispatcher_buffers;
  CHECK(one.rdma == 0.0);
  CHECK(one.nvlink == 157286400.0);
  // Fewer than 512 tokens a rank are sized as 512 (config.cuh:383-386): 256 tokens a micro-batch on
  // EP 8: 4096 tokens × 4,672 + 128 × 512 × 8 = 19,136,512 + 524,288.
  one_node.seq_len = 256;
  CHECK(training_memory(c, one_node, h100_nodes(1)).stages[0].dispatcher_buffers.nvlink == 19660800.0);
}

TEST_CASE("dispatcher buffers: the flex dispatcher's SMs and backend read from Megatron-LM arguments",
          "[cluster][memory][moe][megatron]") {
  const ArchConfig c = test::hf_test_config("qwen3-30b-a3b.json");
  const std::vector<std::string> base{"--expert-model-parallel-size", "8",  "--moe-token-dispatcher-type", "flex",
                                      "--micro-batch-size",           "1",  "--global-batch-size",         "8",
                                      "--seq-length",                 "4096"};
  std::vector<std::string> words = base;
  words.insert(words.end(), {"--moe-flex-dispatcher-num-sms", "24"});
  const MegatronRun run = read_megatron_args(words, c, 8, "args");
  CHECK(run.layout.moe_memory.flex_num_sms == 24);
  CHECK_FALSE(run.layout.moe_memory.hybridep);
  // The deprecated --moe-deepep-num-sms is taken when the unified count is not given; two deprecated
  // counts that differ are refused as Megatron refuses them (transformer_config.py:1805-1810).
  words = base;
  words.insert(words.end(), {"--moe-deepep-num-sms", "32"});
  CHECK(read_megatron_args(words, c, 8, "args").layout.moe_memory.flex_num_sms == 32);
  words.insert(words.end(), {"--moe-hybridep-num-sms", "16"});
  CHECK_THROWS_WITH(read_megatron_args(words, c, 8, "args"), Catch::Contains("conflicts with --moe-deepep-num-sms 32"));
  // Written back as it was read (one argument and its value a line).
  bool written = false;
  for (const std::string& line : megatron_layout_args(run.layout, CommOverlap{})) {
    written = written || line == "--moe-flex-dispatcher-num-sms 24";
  }
  CHECK(written);
}

TEST_CASE("dispatcher buffers: a run file's flex backend and SMs reach the memory recipe", "[cluster][memory][moe][runs]") {
  // data/runs/measured_runs.jsonl's Qwen3-30B-A3B run on 16 H100 gives "layout" {"dispatcher": "flex"}
  // and "time" {"moe_flex_backend": "hybridep", "moe_comm_sms": 32}: its memory is HybridEP's (the
  // routing handles, the buffers above), not DeepEP's.
  bool found = false;
  for (const MeasuredRun& run : load_measured_runs(buffers_source_dir + "/data/runs/measured_runs.jsonl")) {
    if (run.id != "mbridge-qwen3-30b-a3b-h100-bf16-n16") continue;
    found = true;
    CHECK(run.layout.moe_memory.hybridep);
    CHECK(run.layout.moe_memory.flex_num_sms == 32);
    const TrainingMemory m = training_memory(run.config, run.layout, run.cluster);
    CHECK(m.stages[0].dispatcher_buffers.nvlink == 297795584.0);  // as the EP 16 case above
    CHECK(m.stages[0].dispatcher_buffers.rdma == 72876032.0);
  }
  CHECK(found);
}
