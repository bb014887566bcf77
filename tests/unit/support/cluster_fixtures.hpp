#pragma once
// Clusters, the shipped time model, layouts and look-ups shared by the cluster tests. Each cluster
// is written out field by field (not loaded from a file) so the hand arithmetic in the tests can be
// checked against it; a test that needs other figures sets the fields it names after the call.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/communication.hpp"
#include "budget/config_io.hpp"
#include "budget/layout_search.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "support/error_of.hpp"

namespace budget::test {

/// `nodes` nodes of `gpus_per_node` GPUs named "test GPU", `memory_bytes` each; NVLink 450 GB/s and
/// 3 µs, the network 50 GB/s and 5 µs (per GPU and direction); a dense BF16 peak of 1 PFLOP/s.
inline ClusterSpec test_nodes(std::int64_t nodes, std::int64_t gpus_per_node, std::int64_t memory_bytes) {
  ClusterSpec c;
  c.name = "test";
  c.gpu_name = "test GPU";
  c.memory_bytes = memory_bytes;
  c.gpus_per_node = gpus_per_node;
  c.nodes = nodes;
  c.intra_node = {450e9, 3e-6, ""};
  c.inter_node = {50e9, 5e-6, ""};
  c.compute.peak_bf16_dense_flops_per_s = 1e15;
  return c;
}

/// test_nodes of 8 GPUs named "H200" at the H200's dense BF16 datasheet peak, 989 TFLOP/s.
inline ClusterSpec h200_test_nodes(std::int64_t nodes, std::int64_t memory_bytes) {
  ClusterSpec c = test_nodes(nodes, 8, memory_bytes);
  c.gpu_name = "H200";
  c.compute.peak_bf16_dense_flops_per_s = 989e12;
  return c;
}

/// The layout search's small space: 2 nodes of 4 test GPUs of `memory_bytes`, 989 TFLOP/s.
inline ClusterSpec eight_search_gpus(std::int64_t memory_bytes) {
  ClusterSpec c = test_nodes(2, 4, memory_bytes);
  c.compute.peak_bf16_dense_flops_per_s = 989e12;
  return c;
}

/// The shipped H200 profile (cuda_profiler/profiles/h200-torch-eager.json), loaded once.
inline const TimeModel& h200_eager_model() {
  static const TimeModel model(
      load_calibration_profile(std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/h200-torch-eager.json"));
  return model;
}

/// A Hugging Face config of tests/data/hf/, by file name.
inline ArchConfig hf_test_config(const std::string& file) {
  return load_arch_config(std::string(BUDGET_TEST_DATA_DIR) + "/hf/" + file);
}

/// The first term of the stage named `name` (of the collective `kind` in the second form); nullptr
/// when there is none.
inline const CommTerm* find_term(const StageCommunication& s, const std::string& name) {
  for (const CommTerm& t : s.terms) {
    if (t.name == name) return &t;
  }
  return nullptr;
}
inline const CommTerm* find_term(const StageCommunication& s, const std::string& name, CollectiveKind kind) {
  for (const CommTerm& t : s.terms) {
    if (t.name == name && t.kind == kind) return &t;
  }
  return nullptr;
}

/// Each stage's communication of layout `l` (its memory first: the layout resolved on the cluster).
inline std::vector<StageCommunication> communication_of(const ArchConfig& c, const ParallelLayout& l,
                                                        const ClusterSpec& cluster) {
  return step_communication(c, training_memory(c, l, cluster), cluster);
}

/// The step time of layout `l` on the cluster (its memory first, as the layout command does).
inline ClusterStepTime step_time_of(const TimeModel& model, const ArchConfig& c, const ParallelLayout& l,
                                    const ClusterSpec& cluster) {
  return cluster_step_time(model, c, training_memory(c, l, cluster), cluster);
}

/// `gpus` GPUs of data parallelism, `micro_batches` micro-batches of the default size and sequence
/// (1 × 4096).
inline ParallelLayout on_gpus(std::int64_t gpus, std::int64_t micro_batches) {
  ParallelLayout l;
  l.gpus = gpus;
  l.micro_batches = micro_batches;
  return l;
}

/// Expert parallelism alone: EP `ep` over `ep` GPUs (DP `ep`), as on_gpus.
inline ParallelLayout expert_parallel(std::int64_t ep, std::int64_t micro_batches) {
  ParallelLayout l = on_gpus(ep, micro_batches);
  l.ep = ep;
  return l;
}

/// A pipeline alone: PP `pp` over `pp` GPUs, as on_gpus.
inline ParallelLayout pipeline_of(std::int64_t pp, std::int64_t micro_batches) {
  ParallelLayout l = on_gpus(pp, micro_batches);
  l.pp = pp;
  return l;
}

/// The layout search on 8 GPUs at a global batch of 8 · 4096 · 4 tokens.
inline LayoutSearchOptions search_on_8_gpus() {
  LayoutSearchOptions o;
  o.gpus = 8;
  o.global_batch_tokens = 8 * 4096 * 4;
  return o;
}

/// One layout of the search's space on 8 GPUs as the brute forces build it, field by field:
/// sequence parallelism wherever TP > 1; `pipeline` is (PP, V, first, last), a row of
/// brute_pipeline_space (first = last = −1: the even split).
inline ParallelLayout space_layout(std::int64_t tp, std::int64_t cp, const std::array<std::int64_t, 4>& pipeline,
                                   std::int64_t ep, std::int64_t etp, std::int64_t micro_batch_size,
                                   std::int64_t micro_batches, std::int64_t seq_len) {
  ParallelLayout l;
  l.tp = tp;
  l.sequence_parallel = tp > 1;
  l.cp = cp;
  l.pp = pipeline[0];
  l.virtual_stages = pipeline[1];
  const auto given = [](std::int64_t count) { return count < 0 ? std::nullopt : std::optional<std::int64_t>(count); };
  l.split = PipelineSplit::first_last(given(pipeline[2]), given(pipeline[3]));
  l.gpus = 8;
  l.ep = ep;
  l.etp = etp;
  l.micro_batch_size = micro_batch_size;
  l.micro_batches = micro_batches;
  l.seq_len = seq_len;
  return l;
}

/// `base` renamed with routed experts of width `expert_dim`.
inline ArchConfig with_expert_dim(const ArchConfig& base, const std::string& name, std::int64_t expert_dim) {
  ArchConfig c = base;
  c.name = name;
  c.ffn.expert_dim = expert_dim;
  return c;
}

}  // namespace budget::test
