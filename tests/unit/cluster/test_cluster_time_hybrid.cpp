// Step time and communication on a cluster of stacks whose layers differ (layout/layer_kinds.hpp,
// docs/cluster.md "Hybrid stacks on a cluster") against independent references: on one GPU the
// single-GPU step prediction (predict_step_time, which builds the whole per-layer op list through
// the accounting, not the cluster's one-layer-per-kind shards); the TP and CP collectives of
// NVIDIA-Nemotron-3-Nano-30B-A3B counted by hand from its hybrid_override_pattern; the layout
// checks Megatron-Core makes of Mamba-2 layers.

#include <string>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/communication.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "budget/workload.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

const TimeModel& hybrid_time_model() { return test::h200_eager_model(); }

ClusterSpec hybrid_nodes(std::int64_t nodes) { return test::h200_test_nodes(nodes, std::int64_t{1} << 42); }

/// The communication of context parallelism 2 on 2 GPUs of one node (one stage): `micro_batches`
/// micro-batches of one sequence of 4096 tokens.
StageCommunication cp2_communication(const ArchConfig& c, std::int64_t micro_batches) {
  ParallelLayout l;
  l.cp = 2;
  l.gpus = 2;
  l.micro_batch_size = 1;
  l.micro_batches = micro_batches;
  l.seq_len = 4096;
  const std::vector<StageCommunication> stages = test::communication_of(c, l, hybrid_nodes(1));
  REQUIRE(stages.size() == 1);
  return stages[0];
}

/// CP's terms of a stage against hand counts: the ring's `ring_calls` sends of `ring_bytes` bytes,
/// the all-to-all term `mixer` of the other mixers, `mixer_calls` calls of `mixer_bytes` bytes; no
/// term named `absent`.
void check_cp_terms(const StageCommunication& s, double ring_calls, double ring_bytes, const std::string& mixer,
                    double mixer_calls, double mixer_bytes, const std::string& absent) {
  const CommTerm* ring = test::find_term(s, "cp");
  REQUIRE(ring != nullptr);
  CHECK(ring->calls_per_step == ring_calls);
  CHECK(ring->size_bytes == ring_bytes);
  const CommTerm* all_to_all = test::find_term(s, mixer);
  REQUIRE(all_to_all != nullptr);
  CHECK(all_to_all->kind == CollectiveKind::all_to_all);
  CHECK(all_to_all->calls_per_step == mixer_calls);
  CHECK(all_to_all->size_bytes == Approx(mixer_bytes).epsilon(1e-12));
  CHECK(test::find_term(s, absent) == nullptr);
}

}  // namespace

TEST_CASE("hybrid cluster time: one GPU equals the single-GPU step prediction of the per-layer stack",
          "[cluster][time][hybrid]") {
  const ClusterSpec cluster = hybrid_nodes(1);
  // Mamba-2 + attention + MoE; Gated DeltaNet + gated attention; sliding/full alternation;
  // chunked attention with dense and MoE layers.
  for (const char* file : {"nemotron-3-nano-30b-a3b.json", "qwen3-next-80b-a3b-thinking.json", "gpt-oss-20b.json",
                           "llama-4-maverick-17b-128e-instruct.json"}) {
    INFO(file);
    const ArchConfig c = test::hf_test_config(file);
    ParallelLayout l;
    l.dp = 1;
    l.micro_batch_size = 1;
    l.seq_len = 4096;
    const TrainingMemory mem = training_memory(c, l, cluster);
    const ClusterStepTime t = cluster_step_time(hybrid_time_model(), c, mem, cluster);
    Workload w = causal_workload(4096);
    w.tokens_per_step = 4096;
    const StepTime single = predict_step_time(hybrid_time_model(), c, w);
    // The step is the single-GPU prediction of its micro-batch and the optimizer step after it (as
    // for uniform stacks: docs/cluster.md, "Optimizer step"; not in the single-GPU prediction).
    CHECK(t.stages[0].compute_seconds == Approx(single.seconds_per_step).epsilon(1e-9));
    CHECK(t.stages[0].optimizer_seconds > 0.0);
    CHECK(t.seconds_per_step == Approx(single.seconds_per_step + t.stages[0].optimizer_seconds).epsilon(1e-9));
    CHECK(t.communication[0].terms.empty());
  }
}

TEST_CASE("hybrid cluster time: TP collectives of Nemotron-3-Nano by hand", "[cluster][communication][hybrid]") {
  const ArchConfig c = test::hf_test_config("nemotron-3-nano-30b-a3b.json");
  ParallelLayout l;
  l.tp = 2;
  l.sequence_parallel = true;  // MoE with TP needs it (Megatron-Core)
  l.gpus = 2;
  l.micro_batch_size = 1;
  l.micro_batches = 4;
  l.seq_len = 4096;
  const std::vector<StageCommunication> comm = test::communication_of(c, l, hybrid_nodes(1));
  REQUIRE(comm.size() == 1);
  const CommTerm* tp = test::find_term(comm[0], "tp");
  REQUIRE(tp != nullptr);
  // "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME": 23 M (Mamba-2, no FFN), 23 E (MoE with a
  // shared expert: TP-split), 6 * (attention, no FFN). TP regions per forward: 23 + 6 mixers + 23
  // shared-expert FFNs = 52, each one all-reduce forward and one backward: 104, + embedding and LM
  // head = 106 per micro-batch; 4 micro-batches: 424 calls of 4096 tokens · 2688 · 2 bytes, under
  // sequence parallelism each an all-gather and a reduce-scatter.
  CHECK(tp->kind == CollectiveKind::all_gather);
  CHECK(tp->calls_per_step == 424.0);
  CHECK(tp->size_bytes == 4096.0 * 2688.0 * 2.0);
  int tp_terms = 0;
  for (const CommTerm& t : comm[0].terms) tp_terms += t.name == "tp" && t.calls_per_step == 424.0 ? 1 : 0;
  CHECK(tp_terms == 2);
  CHECK(test::find_term(comm[0], "cp") == nullptr);
  CHECK(test::find_term(comm[0], "cp_mamba") == nullptr);
}

TEST_CASE("hybrid cluster time: CP ring and Mamba-2 all-to-alls of Nemotron-3-Nano by hand",
          "[cluster][communication][hybrid]") {
  const ArchConfig c = test::hf_test_config("nemotron-3-nano-30b-a3b.json");
  const StageCommunication comm = cp2_communication(c, 4);
  // Ring attention on the 6 attention layers only: 3 passes (forward, backward's K/V and their
  // gradients) · (CP − 1) = 1 step each, 4 micro-batches: 72 calls of one rank's 2048 tokens of K
  // and V, 2 KV heads · 128 · 2 (K and V) · 2 bytes = 2,097,152 bytes.
  // The 23 Mamba-2 layers: 6 all-to-alls (z, x, B, C, dt before the scan, y after) in the forward
  // and 6 in the backward, 4 micro-batches: 23 · 2 · 6 · 4 = 1,104 calls. Per pass 2048 tokens of
  // z, x, y (4096 each), B, C (8 groups · 128 each) and dt (64): 14,400 values · 2 bytes; one
  // call the mean of the six: 2048 · 14,400 · 2 / 6 = 9,830,400 bytes.
  check_cp_terms(comm, 72.0, 2048.0 * 512.0 * 2.0, "cp_mamba", 1104.0, 9'830'400.0, "cp_linear_attention");
}

TEST_CASE("hybrid cluster time: layouts Megatron-Core refuses for Mamba-2 are refused by name",
          "[cluster][hybrid]") {
  const ArchConfig c = test::hf_test_config("nemotron-3-nano-30b-a3b.json");
  ParallelLayout l;
  l.tp = 2;
  l.sequence_parallel = true;
  l.gpus = 2;
  l.micro_batch_size = 1;
  l.seq_len = 6144;
  // One group over TP = 2 (mamba_mixer.py:270 asserts ngroups % tp == 0).
  ArchConfig one_group = c;
  REQUIRE(one_group.mamba.has_value());
  one_group.mamba->num_groups = 1;
  CHECK_THROWS_WITH(training_memory(one_group, l, hybrid_nodes(1)),
                    Catch::Contains("1 Mamba-2 groups do not divide by TP = 2"));
  // 64 heads / TP 2 = 32 per rank, which CP = 3 does not divide (mamba_context_parallel.py:106-129).
  ParallelLayout cp = l;
  cp.cp = 3;
  cp.gpus = 6;
  CHECK_THROWS_WITH(training_memory(c, cp, hybrid_nodes(1)), Catch::Contains("Mamba-2 heads do not divide by TP·CP"));
}

TEST_CASE("hybrid cluster time: CP of Qwen3-Next's Gated DeltaNet and gated attention layers by hand",
          "[cluster][communication][hybrid]") {
  const ArchConfig c = test::hf_test_config("qwen3-next-80b-a3b-thinking.json");
  const StageCommunication comm = cp2_communication(c, 2);
  // 48 layers, full_attention_interval 4: 12 attention layers, 36 Gated DeltaNet layers.
  // Ring: 12 · 3 passes · (CP − 1) · 2 micro-batches = 72 calls of 2048 tokens · (K and V: 2 · 2
  // heads · 256) · 2 bytes.
  // Gated DeltaNet: 2 all-to-alls a pass (forward, backward): 36 · 2 · 2 · 2 micro-batches = 288
  // calls. Per pass the input projection q, k (16 heads · 128 each), v, z (32 · 128 each), β, a (32
  // each) = 12,352 and the gated norm's output 4,096: 16,448 values of 2048 tokens, 2 bytes; one call
  // the mean of the two: 2048 · 16,448 = 33,685,504 bytes.
  check_cp_terms(comm, 72.0, 2048.0 * 1024.0 * 2.0, "cp_linear_attention", 288.0, 33'685'504.0, "cp_mamba");
}
