// Masks and routing follow the recipe (issue 42 item 6): with Megatron-LM's arguments or a Megatron-Bridge
// config, the attention is causal unless --reset-attention-mask asks for a document mask, and group-limited
// routing (--moe-router-num-groups, --moe-router-group-topk) caps the nodes a token's rows reach through
// the flex dispatcher. Hand numbers in the comments.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/communication.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "budget/training_memory.hpp"
#include "interop/megatron_test_models.hpp"

using namespace budget;

namespace {

ArchConfig qwen3_30b_a3b() {
  return load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/tests/data/hf/qwen3-30b-a3b.json");
}

ClusterSpec four_nodes_of_8() { return test::megatron_test_cluster("test", 4, std::int64_t{1} << 40); }

const CommTerm& ep_term(const std::vector<StageCommunication>& stages) {
  for (const CommTerm& t : stages.front().terms) {
    if (t.name == "ep") return t;
  }
  FAIL("no ep term");
  return stages.front().terms.front();
}

MegatronRun read(const std::string& extra) {
  const std::string words = "--tensor-model-parallel-size 1 --expert-model-parallel-size 32 --micro-batch-size 1 "
                            "--global-batch-size 32 --seq-length 4096 --bf16 --moe-token-dispatcher-type flex " + extra;
  return read_megatron_args(megatron_words(words, "args"), qwen3_30b_a3b(), 32, "args");
}

}  // namespace

TEST_CASE("interop: the attention mask is what the arguments say, causal unless --reset-attention-mask",
          "[interop][mask]") {
  const Workload paper;  // the paper's document mask: 400 mean attended keys at seq_len 4096
  REQUIRE(paper.attention_mask == AttentionMask::document);
  REQUIRE(paper.seq_len == 4096);
  const MegatronRun causal = read("");
  CHECK_FALSE(causal.document_mask);
  const MegatronAttention c = megatron_attention(causal, paper);
  CHECK(c.attended_keys == 0.0);  // the step time's causal window: (4096 + 1)/2 = 2048.5 keys a query
  CHECK(c.says.find("causal") != std::string::npos);
  CHECK(c.says.find("2048.5") != std::string::npos);
  // Before issue 42 a launch was priced on the workload's mask (400 keys) whatever its arguments said.
  CHECK(megatron_search_options(causal, paper, LayoutSearchOptions{}, false).time.attended_keys == 0.0);

  const MegatronRun documents = read("--reset-attention-mask");
  CHECK(documents.document_mask);
  const MegatronAttention d = megatron_attention(documents, paper);
  CHECK(d.attended_keys == 400.0);
  CHECK(d.says.find("document mask (--reset-attention-mask)") != std::string::npos);
  CHECK(megatron_search_options(documents, paper, LayoutSearchOptions{}, false).time.attended_keys == 400.0);
  // A document mask needs the documents' lengths at the run's sequence length.
  Workload longer = paper;
  longer.seq_len = 8192;
  REQUIRE_THROWS_WITH(megatron_attention(documents, longer),
                      Catch::Contains("--reset-attention-mask") && Catch::Contains("seq_len 4096"));
  Workload causal_workload = paper;
  causal_workload.attention_mask = AttentionMask::causal;
  REQUIRE_THROWS_AS(megatron_attention(documents, causal_workload), Error);
}

TEST_CASE("interop: a Megatron-Bridge config's document mask (reset_attention_mask, inter_document_masking)",
          "[interop][mask][bridge]") {
  const std::string head = "model:\n  num_layers: 48\n  tensor_model_parallel_size: 1\n"
                           "  expert_model_parallel_size: 32\n  seq_length: 4096\n"
                           "train:\n  micro_batch_size: 1\n  global_batch_size: 32\n";
  CHECK_FALSE(read_bridge_config(head + "dataset:\n  reset_attention_mask: false\n", qwen3_30b_a3b(), 32, "b.yaml")
                  .document_mask);
  CHECK(read_bridge_config(head + "dataset:\n  reset_attention_mask: true\n", qwen3_30b_a3b(), 32, "b.yaml").document_mask);
  CHECK(read_bridge_config(head + "dataset:\n  reset_attention_mask: false\n  inter_document_masking: true\n",
                           qwen3_30b_a3b(), 32, "b.yaml")
            .document_mask);
}

TEST_CASE("interop: group-limited routing caps the nodes a token reaches through the flex dispatcher (hand numbers)",
          "[interop][routing]") {
  // Qwen3-30B-A3B (128 experts, top-8) with EP 32 on 4 nodes of 8 GPUs, flex dispatcher.
  const MegatronRun plain = read("");
  const MegatronRun grouped = read("--moe-router-num-groups 4 --moe-router-group-topk 2");
  CHECK(grouped.router_num_groups == 4);
  CHECK(grouped.router_group_topk == 2);
  CHECK(grouped.layout.ep == 32);
  const ClusterSpec cluster = four_nodes_of_8();
  const TrainingMemory memory = training_memory(qwen3_30b_a3b(), plain.layout, cluster);
  const LayoutSearchOptions o_plain = megatron_search_options(plain, Workload{}, LayoutSearchOptions{}, false);
  const LayoutSearchOptions o_grouped = megatron_search_options(grouped, Workload{}, LayoutSearchOptions{}, false);
  const CommTerm free = ep_term(step_communication(qwen3_30b_a3b(), memory, cluster, o_plain.time.communication));
  const CommTerm limited = ep_term(step_communication(qwen3_30b_a3b(), memory, cluster, o_grouped.time.communication));
  // Unlimited: DeepEP sends a token once to each remote node its k = 8 rows reach, routing uniform over
  // 4 nodes: (4 − 1)(1 − (3/4)^8) = 3 · (1 − 0.10011292) = 2.69966125 remote copies a token.
  // Grouped: 4 groups of 32 experts = 8 ranks = 1 node each; the top 2 groups: at most 2 nodes, own node
  // among them uniformly: 2 · 3/4 = 1.5 remote copies a token (moe_utils.py:673-733 at d98e8a64).
  const double unlimited_copies = 3.0 * (1.0 - std::pow(0.75, 8));
  CHECK(unlimited_copies == Approx(2.69966125));
  CHECK(limited.inter_node_bytes_per_step / free.inter_node_bytes_per_step == Approx(1.5 / unlimited_copies));
  CHECK(limited.seconds_per_step < free.seconds_per_step);
  // Groups of 2 ranks (G = EP = 16 groups of 8 experts: device-limited) with top 4: a group lies in one
  // node, at most 4 nodes: no cap below the 4 nodes there are (min(2.6997, 4 · 3/4 = 3) = 2.6997).
  const MegatronRun device = read("--moe-router-num-groups 16 --moe-router-group-topk 4");
  const LayoutSearchOptions o_device = megatron_search_options(device, Workload{}, LayoutSearchOptions{}, false);
  const CommTerm device_term = ep_term(step_communication(qwen3_30b_a3b(), memory, cluster, o_device.time.communication));
  CHECK(device_term.inter_node_bytes_per_step == Approx(free.inter_node_bytes_per_step));
  // NCCL's all-to-all (alltoall dispatcher) sends each routed row: the groups change no byte.
  ParallelLayout alltoall = plain.layout;
  alltoall.dispatcher = MoeDispatcher::alltoall;
  const TrainingMemory m2 = training_memory(qwen3_30b_a3b(), alltoall, cluster);
  const CommTerm a_free = ep_term(step_communication(qwen3_30b_a3b(), m2, cluster, o_plain.time.communication));
  const CommTerm a_grouped = ep_term(step_communication(qwen3_30b_a3b(), m2, cluster, o_grouped.time.communication));
  CHECK(a_grouped.bytes_per_step == a_free.bytes_per_step);
  CHECK(a_grouped.inter_node_bytes_per_step == a_free.inter_node_bytes_per_step);

  // Refused as Megatron-Core refuses them.
  REQUIRE_THROWS_WITH(read("--moe-router-num-groups 4"), Catch::Contains("needs both"));
  REQUIRE_THROWS_WITH(read("--moe-router-num-groups 4 --moe-router-group-topk 5"), Catch::Contains("1 ≤ group top-k ≤ groups"));
  REQUIRE_THROWS_WITH(read("--moe-router-num-groups 4 --moe-router-group-topk 3"),
                      Catch::Contains("does not divide --moe-router-topk 8"));
  REQUIRE_THROWS_WITH(read("--moe-router-num-groups 5 --moe-router-group-topk 1 --num-experts 128"),
                      Catch::Contains("5 groups do not divide the 128 experts"));
}
