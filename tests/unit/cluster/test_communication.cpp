// Communication per step (docs/cluster.md, "Communication") against hand calculations: the
// nccl-tests bus factors, Megatron's rank order deciding intra- vs inter-node groups, the EP
// all-to-all volumes of the paper's 200M pair (+50% calls for the looped config) and of a
// DeepSeek-V3 layout on 1,024 GPUs (with and without node-limited routing), TP with and without
// sequence parallelism, CP, PP, DP with and without the distributed optimizer, the overlap
// options, and the 1F1B bubble.

#include <string>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/communication.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/training_memory.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

using test::find_term;

ClusterSpec nodes_of_8(std::int64_t nodes) { return test::test_nodes(nodes, 8, std::int64_t{1} << 40); }

/// EP 8 on 8 GPUs, 4 micro-batches of one sequence of 4096, the distributed optimizer.
ParallelLayout ep8_layout() {
  ParallelLayout l = test::expert_parallel(8, 4);
  l.distributed_optimizer = true;
  return l;
}

}  // namespace

TEST_CASE("communication: nccl-tests bus factors and ring latency steps", "[cluster][communication]") {
  CHECK(bus_factor(CollectiveKind::all_reduce, 8) == Approx(2.0 * 7.0 / 8.0));
  CHECK(bus_factor(CollectiveKind::all_gather, 8) == Approx(7.0 / 8.0));
  CHECK(bus_factor(CollectiveKind::reduce_scatter, 4) == Approx(3.0 / 4.0));
  CHECK(bus_factor(CollectiveKind::all_to_all, 64) == Approx(63.0 / 64.0));
  CHECK(bus_factor(CollectiveKind::send_recv, 2) == 1.0);
  CHECK(bus_factor(CollectiveKind::all_reduce, 1) == 0.0);
  CHECK(latency_steps(CollectiveKind::all_reduce, 8) == 14);
  CHECK(latency_steps(CollectiveKind::all_gather, 8) == 7);
  CHECK(latency_steps(CollectiveKind::all_reduce, 1) == 0);
  const LinkSpec link{100e9, 2e-6, ""};
  // 1 GB all-reduce on 4 ranks: 1e9 · 1.5 / 100e9 + 6 · 2 µs.
  CHECK(collective_seconds(CollectiveKind::all_reduce, 1e9, 4, link) == Approx(0.015 + 12e-6));
  CHECK(collective_seconds(CollectiveKind::all_gather, 1e9, 1, link) == 0.0);
}

TEST_CASE("communication: Megatron's rank order places groups on nodes", "[cluster][communication]") {
  // TP 8 of stride 1 fills one node of 8.
  GroupPlacement g = group_placement(8, 1, 8);
  CHECK(g.members_per_node == 8);
  CHECK_FALSE(g.inter_node());
  // DP 16 of stride TP = 2: 4 members a node, 4 nodes.
  g = group_placement(16, 2, 8);
  CHECK(g.members_per_node == 4);
  CHECK(g.nodes == 4);
  CHECK(g.inter_node());
  // PP of stride 64: every stage on its own node.
  g = group_placement(16, 64, 8);
  CHECK(g.members_per_node == 1);
  CHECK(g.nodes == 16);
  // EP 64 of stride 1 over nodes of 8: 8 a node, 8 nodes.
  g = group_placement(64, 1, 8);
  CHECK(g.members_per_node == 8);
  CHECK(g.nodes == 8);
  // A stride that does not divide the node: counted as one member a node (conservative).
  g = group_placement(4, 3, 8);
  CHECK(g.members_per_node == 1);
  CHECK(g.nodes == 4);
}

TEST_CASE("communication: paper 200M pair under EP 8, all-to-all volumes by hand (+50% calls looped)",
          "[cluster][communication]") {
  const ClusterSpec cluster = nodes_of_8(1);
  const ArchConfig base = test::paper_200m_baseline();  // H 1280, 12 MoE layers, top-8
  const ArchConfig smelt = test::paper_200m_smelt();    // H 1056, 18 MoE executions, top-8
  const ParallelLayout l = ep8_layout();
  const auto bc = test::communication_of(base, l, cluster);
  const auto sc = test::communication_of(smelt, l, cluster);
  REQUIRE(bc.size() == 1);
  REQUIRE(sc.size() == 1);
  const CommTerm* b = find_term(bc[0], "ep", CollectiveKind::all_to_all);
  const CommTerm* s = find_term(sc[0], "ep", CollectiveKind::all_to_all);
  REQUIRE(b);
  REQUIRE(s);
  // One call's send buffer: 4096 tokens · 8 rows · (H · 2 bytes + the alltoall dispatcher's 4-byte
  // routing probability a row, sent in a second all-to-all: token_dispatch at Megatron-LM d98e8a64).
  CHECK(b->size_bytes == Approx(4096.0 * 8 * (1280 * 2 + 4)));  // 84,017,152
  CHECK(s->size_bytes == Approx(4096.0 * 8 * (1056 * 2 + 4)));  // 69,337,088
  // Calls: 4 micro-batches · MoE executions · (forward + backward) · (dispatch + combine).
  CHECK(b->calls_per_step == Approx(4.0 * 12 * 2 * 2));  // 192
  CHECK(s->calls_per_step == Approx(4.0 * 18 * 2 * 2));  // 288
  CHECK(s->calls_per_step / b->calls_per_step == Approx(1.5));
  // All on one node: 7/8 of each buffer leaves the GPU over NVLink, none over the network.
  CHECK(b->bytes_per_step == Approx(192.0 * 84017152.0 * 7 / 8));  // 14,114,881,536
  CHECK(b->inter_node_bytes_per_step == 0.0);
  CHECK_FALSE(b->group.inter_node());
  // NCCL's all-to-all reaches 0.6 of NVLink (SimuMax's measured B200 efficiency, communication.cpp);
  // two latencies a call (the tokens, then the probabilities).
  CHECK(b->seconds_per_step == Approx(192.0 * (84017152.0 * 7 / 8 / (0.6 * 450e9) + 2 * 7 * 3e-6)));
  CHECK_FALSE(b->overlapped);
  // TP = 1, CP = 1, PP = 1: none of those collectives exist; DP 8 does (dense) and expert DP = 1 not.
  for (const CommTerm& t : bc[0].terms) {
    CHECK(t.name != "tp");
    CHECK(t.name != "cp");
    CHECK(t.name != "pp");
    CHECK(t.name != "expert_dp_grad");
  }
  const CommTerm* grad = find_term(bc[0], "dp_grad", CollectiveKind::reduce_scatter);
  const CommTerm* param = find_term(bc[0], "dp_param", CollectiveKind::all_gather);
  REQUIRE(grad);
  REQUIRE(param);
  const double dense = training_memory(base, l, cluster).stages[0].dense_params;
  CHECK(grad->size_bytes == Approx(dense * 4.0));  // fp32 main gradients
  CHECK(param->size_bytes == Approx(dense * 2.0));  // bf16 weights
  CHECK(grad->overlapped);
  CHECK(param->overlapped);
  CHECK(bc[0].exposed_seconds == Approx(b->seconds_per_step));
  CHECK(bc[0].overlapped_seconds == Approx(grad->seconds_per_step + param->seconds_per_step));
}

TEST_CASE("communication: DeepSeek-V3 on 1,024 GPUs, EP 64 across 8 nodes, node-limited routing",
          "[cluster][communication][mla]") {
  const ArchConfig c = test::hf_test_config("deepseek-v3.json");
  REQUIRE(c.num_layers == 61);
  REQUIRE(c.ffn.first_dense_layers == 3);
  const ClusterSpec cluster = nodes_of_8(128);
  ParallelLayout l = test::expert_parallel(64, 1);  // one sequence of 4096
  l.gpus = 1024;
  l.distributed_optimizer = true;
  const TrainingMemory mem = training_memory(c, l, cluster);
  const auto unlimited = step_communication(c, mem, cluster);
  const CommTerm* ep = find_term(unlimited[0], "ep", CollectiveKind::all_to_all);
  REQUIRE(ep);
  const double S = 4096.0 * 8 * (7168 * 2 + 4);  // 469,893,120 bytes a call (the 4-byte probabilities too)
  CHECK(ep->size_bytes == Approx(S));
  CHECK(ep->calls_per_step == Approx(58.0 * 2 * 2));  // 58 MoE layers (MTP not counted)
  CHECK(ep->group.members_per_node == 8);
  CHECK(ep->group.nodes == 8);
  // Uniform routing: 56/64 of the buffer to other nodes, 7/64 to the node's other GPUs.
  CHECK(ep->inter_node_bytes_per_step == Approx(232.0 * S * 56 / 64));
  CHECK(ep->bytes_per_step == Approx(232.0 * S * 63 / 64));
  // The inter-node part is the longer (NCCL's reach: 0.85 of the NIC, 0.6 of NVLink); two latencies a call.
  CHECK(ep->seconds_per_step == Approx(232.0 * (S * 56 / 64 / (0.85 * 50e9) + 2 * 63 * 5e-6)));
  // Node-limited to M = 4 nodes (DeepSeek-V3): 4 · 7/8 = 3.5 copies of H a token leave the node.
  CommOptions limited;
  limited.max_nodes_per_token = 4;
  const auto nl = step_communication(c, mem, cluster, limited);
  const CommTerm* ep4 = find_term(nl[0], "ep", CollectiveKind::all_to_all);
  REQUIRE(ep4);
  CHECK(ep4->inter_node_bytes_per_step == Approx(232.0 * 4096 * 3.5 * 7168 * 2));
  CHECK(ep4->seconds_per_step == Approx(232.0 * (4096.0 * 3.5 * 7168 * 2 / (0.85 * 50e9) + 2 * 63 * 5e-6)));
  CHECK(ep4->seconds_per_step < ep->seconds_per_step);
  // Expert DP = 1024 / 64 = 16 ranks of stride 64: one a node, inter-node.
  const CommTerm* egrad = find_term(unlimited[0], "expert_dp_grad", CollectiveKind::reduce_scatter);
  REQUIRE(egrad);
  CHECK(egrad->group.size == 16);
  CHECK(egrad->group.inter_node());
  CHECK(egrad->size_bytes == Approx(mem.stages[0].expert_params * 4.0));
  CHECK(egrad->seconds_per_step == Approx(mem.stages[0].expert_params * 4.0 * 15 / 16 / 50e9 + 15 * 5e-6));
  // Dense DP over all 1,024 GPUs.
  const CommTerm* grad = find_term(unlimited[0], "dp_grad", CollectiveKind::reduce_scatter);
  REQUIRE(grad);
  CHECK(grad->group.size == 1024);
  CHECK(grad->group.nodes == 128);
  CommOptions negative;
  negative.max_nodes_per_token = -1;
  CHECK_THROWS_AS(step_communication(c, mem, cluster, negative), Error);
}

TEST_CASE("communication: TP with and without sequence parallelism, PP and CP by hand", "[cluster][communication]") {
  const ArchConfig c = test::toy_dense();
  const ClusterSpec cluster = nodes_of_8(4);
  ParallelLayout l;
  l.tp = 2;
  l.pp = 2;
  l.cp = 2;
  l.dp = 2;
  l.micro_batch_size = 2;
  l.micro_batches = 4;
  l.seq_len = 256;
  const TrainingMemory mem = training_memory(c, l, cluster);
  REQUIRE(mem.layout.gpus == 16);
  const auto comm = step_communication(c, mem, cluster);
  REQUIRE(comm.size() == 2);
  const double H = static_cast<double>(c.hidden_size);
  const double T = 2.0 * 256 / 2;  // b·s/CP
  const double layers_per_stage = static_cast<double>(c.num_layers) / 2;
  const bool stage0_embedding = mem.stages[0].has_embedding;
  // No SP: one all-reduce per TP region (attention, MLP) forward and one backward, per layer and
  // micro-batch, plus the embedding's (stage 0) or the LM head's (stage 1) when there is a vocabulary.
  const CommTerm* ar = find_term(comm[0], "tp", CollectiveKind::all_reduce);
  REQUIRE(ar);
  CHECK(ar->size_bytes == Approx(T * H * 2));
  CHECK(ar->calls_per_step == Approx(4.0 * (layers_per_stage * 4 + (stage0_embedding ? 1 : 0))));
  CHECK_FALSE(ar->group.inter_node());
  // CP ring: K and V (kv width each, heads split by TP) of T tokens, 3 passes · (CP − 1) per layer.
  const CommTerm* cp = find_term(comm[0], "cp", CollectiveKind::send_recv);
  REQUIRE(cp);
  CHECK(cp->size_bytes == Approx(T * 2.0 * static_cast<double>(c.attention.kv_width()) / 2 * 2));
  CHECK(cp->calls_per_step == Approx(4.0 * layers_per_stage * 3));
  CHECK(cp->group.stride == 2);
  // PP: stride TP·CP·DP = 8 = one node: the stages are on different nodes.
  const CommTerm* pp = find_term(comm[1], "pp", CollectiveKind::send_recv);
  REQUIRE(pp);
  CHECK(pp->group.inter_node());
  CHECK(pp->size_bytes == Approx(T * H * 2));
  CHECK(pp->calls_per_step == Approx(4.0 * 2));
  CHECK(pp->seconds_per_step == Approx(8.0 * (T * H * 2 / 50e9 + 5e-6)));
  // DP × CP = 4 ranks of stride TP = 2, without the distributed optimizer: one all-reduce.
  const CommTerm* dp = find_term(comm[0], "dp_grad", CollectiveKind::all_reduce);
  REQUIRE(dp);
  CHECK(dp->group.size == 4);
  CHECK(dp->size_bytes == Approx(mem.stages[0].dense_params * 4.0));
  CHECK(find_term(comm[0], "dp_param", CollectiveKind::all_gather) == nullptr);

  // With SP: an all-gather and a reduce-scatter in place of each all-reduce, the PP message / TP.
  l.sequence_parallel = true;
  const auto sp = test::communication_of(c, l, cluster);
  const CommTerm* ag = find_term(sp[0], "tp", CollectiveKind::all_gather);
  const CommTerm* rs = find_term(sp[0], "tp", CollectiveKind::reduce_scatter);
  REQUIRE(ag);
  REQUIRE(rs);
  CHECK(find_term(sp[0], "tp", CollectiveKind::all_reduce) == nullptr);
  CHECK(ag->calls_per_step == Approx(ar->calls_per_step));
  // Same bytes on the wire as the all-reduce (2(n−1)/n = (n−1)/n + (n−1)/n).
  CHECK(ag->bytes_per_step + rs->bytes_per_step == Approx(ar->bytes_per_step));
  CHECK(find_term(sp[1], "pp", CollectiveKind::send_recv)->size_bytes == Approx(T * H * 2 / 2));

  // Full recompute adds the recomputed forward's TP and CP collectives.
  l.recompute.kind = RecomputeKind::full;
  const auto rc = test::communication_of(c, l, cluster);
  CHECK(find_term(rc[0], "tp", CollectiveKind::all_gather)->calls_per_step ==
        Approx(ag->calls_per_step + 4.0 * layers_per_stage * 2));
  CHECK(find_term(rc[0], "cp", CollectiveKind::send_recv)->calls_per_step ==
        Approx(4.0 * layers_per_stage * 4));

  // Overlap options move a term between exposed and overlapped.
  CommOptions all_overlapped;
  all_overlapped.overlap = {true, true, true, true, true};
  const auto ov = step_communication(c, training_memory(c, l, cluster), cluster, all_overlapped);
  CHECK(ov[0].exposed_seconds == 0.0);
  CHECK(ov[0].overlapped_seconds == Approx(rc[0].exposed_seconds + rc[0].overlapped_seconds));
}

TEST_CASE("communication: the 1F1B bubble is (PP − 1)/V micro-batch times", "[cluster][communication]") {
  CHECK(pipeline_bubble_micro_batches(1, 1) == 0.0);
  CHECK(pipeline_bubble_micro_batches(4, 1) == Approx(3.0));
  CHECK(pipeline_bubble_micro_batches(8, 2) == Approx(3.5));
  CHECK(pipeline_bubble_micro_batches(16, 4) == Approx(15.0 / 4));
}
