// Step time on N GPUs (docs/cluster.md, "Step time") against independent references: on one GPU
// it is the single-GPU step-time prediction (predict_step_time) of the same micro-batch, the loop's
// executions included; the bubble is (PP − 1)/V of the slowest stage's micro-batch; the step is
// the slowest stage's compute + exposed communication + bubble; imbalance and TP move the time the
// way they must; a run's GPU-hours by hand.

#include <string>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/error.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "budget/workload.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

const TimeModel& shipped_model() { return test::h200_eager_model(); }

ClusterSpec h200_nodes(std::int64_t nodes) { return test::h200_test_nodes(nodes, std::int64_t{1} << 40); }

ParallelLayout one_gpu(std::int64_t seq_len, std::int64_t micro_batch_size) {
  ParallelLayout l;
  l.dp = 1;
  l.micro_batch_size = micro_batch_size;
  l.seq_len = seq_len;
  return l;
}

}  // namespace

TEST_CASE("cluster time: one GPU equals the single-GPU step prediction (baseline and looped)", "[cluster][time]") {
  const ClusterSpec cluster = h200_nodes(1);
  for (const ArchConfig& c : {test::paper_200m_baseline(), test::paper_200m_smelt()}) {
    const ParallelLayout l = one_gpu(4096, 2);
    const TrainingMemory mem = training_memory(c, l, cluster);
    const ClusterStepTime t = cluster_step_time(shipped_model(), c, mem, cluster);
    Workload w = causal_workload(4096);
    w.tokens_per_step = 2 * 4096;
    const StepTime single = predict_step_time(shipped_model(), c, w);
    INFO(c.name);
    // The step is the single-GPU prediction of its micro-batch and the optimizer step after it
    // (issue 32: docs/cluster.md, "Optimizer step"; not in the single-GPU prediction).
    CHECK(t.stages[0].compute_seconds == Approx(single.seconds_per_step).epsilon(1e-9));
    CHECK(t.stages[0].optimizer_seconds > 0.0);
    CHECK(t.seconds_per_step == Approx(single.seconds_per_step + t.stages[0].optimizer_seconds).epsilon(1e-9));
    CHECK(t.bubble_seconds == 0.0);
    CHECK(t.communication[0].terms.empty());
    CHECK(t.tokens_per_step == 2 * 4096);
    CHECK(t.tokens_per_second_per_gpu * t.seconds_per_step ==
          Approx(single.tokens_per_second * single.seconds_per_step).epsilon(1e-9));
    // The cluster's MFU is against the datasheet peak where the profile names one (issue 32), the
    // single-GPU prediction gives the same FLOPs against both denominators.
    REQUIRE(single.mfu_datasheet > 0.0);
    CHECK(t.mfu * t.seconds_per_step == Approx(single.mfu_datasheet * single.seconds_per_step).epsilon(1e-9));
  }
}

TEST_CASE("cluster time: the step is the slowest stage plus the 1F1B bubble", "[cluster][time]") {
  const ArchConfig c = test::paper_200m_baseline();
  const ClusterSpec cluster = h200_nodes(4);
  ParallelLayout l = test::expert_parallel(8, 8);  // micro-batches of 1 × 4096
  l.pp = 2;
  l.gpus = 32;
  l.distributed_optimizer = true;
  const TrainingMemory mem = training_memory(c, l, cluster);
  const ClusterStepTime t = cluster_step_time(shipped_model(), c, mem, cluster);
  REQUIRE(t.stages.size() == 2);
  double slowest_mb = 0.0;
  double slowest = 0.0;
  for (const StageTime& s : t.stages) {
    CHECK(s.compute_seconds == Approx(8.0 * s.micro_batch_compute_seconds));
    CHECK(s.seconds == Approx(s.compute_seconds + s.exposed_communication_seconds + s.late_overlap_seconds +
                              s.optimizer_seconds));
    slowest_mb = std::max(slowest_mb, s.micro_batch_compute_seconds);
    slowest = std::max(slowest, s.seconds);
  }
  CHECK(t.bubble_seconds == Approx(1.0 * slowest_mb));  // (PP − 1)/V = 1
  CHECK(t.seconds_per_step == Approx(slowest + slowest_mb));
  CHECK(t.tokens_per_step == 4096 * 8 * 16);  // b·s·m·DP, DP = 32 / 2
  double sum = 0.0;
  for (const TimeComponent& part : t.by_component) {
    if (!part.overlapped) sum += part.seconds;
  }
  CHECK(sum == Approx(t.seconds_per_step));
  // Interleaving (V = 2, 3 layers a chunk) halves the bubble.
  ParallelLayout v2 = l;
  v2.virtual_stages = 2;
  const ClusterStepTime ti = test::step_time_of(shipped_model(), c, v2, cluster);
  double slowest_mb_v2 = 0.0;
  for (const StageTime& s : ti.stages) slowest_mb_v2 = std::max(slowest_mb_v2, s.micro_batch_compute_seconds);
  CHECK(ti.bubble_seconds == Approx(0.5 * slowest_mb_v2));
}

TEST_CASE("cluster time: imbalance slows the MoE layers, TP shards the compute", "[cluster][time]") {
  const ArchConfig c = test::paper_200m_baseline();
  const ClusterSpec cluster = h200_nodes(1);
  ParallelLayout l = test::expert_parallel(8, 1);  // of sequences of 4096
  l.micro_batch_size = 2;
  const ClusterStepTime balanced = test::step_time_of(shipped_model(), c, l, cluster);
  l.imbalance = 2.0;
  const ClusterStepTime skewed = test::step_time_of(shipped_model(), c, l, cluster);
  CHECK(skewed.stages[0].compute_seconds > balanced.stages[0].compute_seconds * 1.2);
  // The most loaded rank's all-to-all buffers double with G = 2 (the latency does not).
  const auto ep_bytes = [](const ClusterStepTime& t) {
    for (const CommTerm& term : t.communication[0].terms) {
      if (term.name == "ep") return term.bytes_per_step;
    }
    return 0.0;
  };
  CHECK(ep_bytes(balanced) > 0.0);
  CHECK(ep_bytes(skewed) == Approx(2.0 * ep_bytes(balanced)));
  // TP 2 with SP: less compute per GPU than TP 1 at the same micro-batch.
  ParallelLayout tp = l;
  tp.imbalance = 1.0;
  tp.tp = 2;
  tp.sequence_parallel = true;
  tp.ep = 4;
  const ClusterStepTime t2 = test::step_time_of(shipped_model(), c, tp, cluster);
  CHECK(t2.stages[0].compute_seconds < balanced.stages[0].compute_seconds);
  CHECK(t2.stages[0].compute_seconds > 0.4 * balanced.stages[0].compute_seconds);
}

TEST_CASE("cluster time: a run's wall clock and GPU-hours by hand, bad options refused", "[cluster][time]") {
  ClusterStepTime t;
  t.seconds_per_step = 2.0;
  t.tokens_per_step = 1000000;
  const RunCost cost = run_cost(t, 64, 1e9);
  CHECK(cost.steps == Approx(1000.0));
  CHECK(cost.wall_clock_seconds == Approx(2000.0));
  CHECK(cost.gpu_hours == Approx(2000.0 * 64 / 3600));
  CHECK_THROWS_AS(run_cost(t, 64, 0.0), Error);
  const ArchConfig c = test::paper_200m_baseline();
  const ClusterSpec cluster = h200_nodes(1);
  const TrainingMemory mem = training_memory(c, one_gpu(4096, 1), cluster);
  ClusterTimeOptions bad;
  bad.attended_keys = 5000.0;
  CHECK_THROWS_AS(cluster_step_time(shipped_model(), c, mem, cluster, bad), Error);
}

TEST_CASE("cluster time: compute is timed on the profile's GPU, said when the cluster's differs", "[cluster][time]") {
  const ArchConfig c = test::paper_200m_baseline();
  ClusterSpec h200 = h200_nodes(1);
  h200.gpu_name = "NVIDIA H200 SXM 141GB";
  ClusterSpec h100 = h200;
  h100.gpu_name = "NVIDIA H100 SXM5 80GB";
  const ParallelLayout l = one_gpu(4096, 2);
  const ClusterStepTime same = test::step_time_of(shipped_model(), c, l, h200);
  const ClusterStepTime other = test::step_time_of(shipped_model(), c, l, h100);
  CHECK(same.profile_gpu == "NVIDIA H200");
  CHECK(same.profile_gpu_is_cluster_gpu);
  CHECK_FALSE(other.profile_gpu_is_cluster_gpu);
  // Not rescaled: the same op times whatever the cluster's GPU, and the note says so.
  CHECK(other.seconds_per_step == same.seconds_per_step);
  const auto has_note = [](const ClusterStepTime& t) {
    for (const std::string& n : t.notes) {
      if (n.find("not rescaled to the cluster's (NVIDIA H100 SXM5 80GB)") != std::string::npos) return true;
    }
    return false;
  };
  CHECK(has_note(other));
  CHECK_FALSE(has_note(same));
  // The memory-bound share on one GPU, independently: the single-GPU prediction's ops of the
  // memory-bound time classes over all its ops.
  Workload w = causal_workload(4096);
  w.tokens_per_step = 2 * 4096;
  const StepTime single = predict_step_time(shipped_model(), c, w);
  double memory_bound = 0.0;
  double total = 0.0;
  for (const OpStepTime& op : single.by_op) {
    const TimeClass cls = time_class_of(op.kind);
    if (cls == TimeClass::indexed || cls == TimeClass::elementwise || cls == TimeClass::glue) {
      memory_bound += op.seconds_per_step;
    }
    total += op.seconds_per_step;
  }
  REQUIRE(total > 0.0);
  CHECK(memory_bound > 0.0);
  CHECK(same.memory_bound_share == Approx(memory_bound / total).epsilon(1e-9));
  CHECK(other.memory_bound_share == same.memory_bound_share);
}
