// Memory to the allocator's peak (docs/cluster.md): Transformer Engine's cached dummy weight
// gradients and context parallelism's logits copy, by hand; and the measured SimuMax B200 runs
// (tests/data/measured/simumax_b200_runs.json) within the bounds.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "budget/training_memory.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

/// One node of 8 test GPUs of 1 TiB, NVLink 900 GB/s, no datasheet peak (memory alone is asked).
ClusterSpec extras_cluster() {
  ClusterSpec c = test::test_nodes(1, 8, std::int64_t{1} << 40);
  c.intra_node.bandwidth_bytes_per_s = 900e9;
  c.compute.peak_bf16_dense_flops_per_s = 0.0;
  return c;
}

/// A Llama-shaped dense model: H 1024, 8 heads of 128, 2 KV heads, SwiGLU 2816, vocab 4000.
ArchConfig extras_llama() { return test::gated_dense("llama-small", 1024, 4, {8, 128, 2}, 2816, 4000); }

}  // namespace

TEST_CASE("memory: TE dummy weight gradients, one bf16 tensor per distinct shard shape", "[cluster][memory]") {
  const ArchConfig c = extras_llama();
  ParallelLayout l;
  l.gpus = 2;
  l.pp = 2;
  l.vocab_divisible_by = 128;  // 4000 → 4096
  const TrainingMemory m = training_memory(c, l, extras_cluster());
  // Every stage: QKV (1024 + 2·256) × 1024, projection 1024 × 1024, fc1 5632 × 1024, fc2 1024 × 2816.
  const double layer = 1536.0 * 1024 + 1024.0 * 1024 + 5632.0 * 1024 + 1024.0 * 2816;
  CHECK(m.stages[0].te_dummy_wgrad_bytes == Approx(2.0 * layer));
  // The last stage adds Megatron's output layer, V × H = 4096 × 1024.
  CHECK(m.stages[1].te_dummy_wgrad_bytes == Approx(2.0 * (layer + 4096.0 * 1024)));
  // TP 2 halves each sharded dimension; the vocabulary pads to 4096 (a multiple of 128·2).
  l.tp = 2;
  l.gpus = 4;
  l.sequence_parallel = true;
  const TrainingMemory t2 = training_memory(c, l, extras_cluster());
  CHECK(t2.stages[1].te_dummy_wgrad_bytes == Approx(2.0 * (layer / 2.0 + 2048.0 * 1024)));
  // Without gradient-accumulation fusion TE returns real gradients, freed after the hook: none kept.
  l.gradient_accumulation_fusion = false;
  CHECK(training_memory(c, l, extras_cluster()).stages[1].te_dummy_wgrad_bytes == 0.0);
}

TEST_CASE("memory: dummy gradients of equal shapes are one tensor", "[cluster][memory]") {
  // Shared expert of width 512 and routed experts of width 512: their fc1 (2·512 × 1024) and fc2
  // (1024 × 512) shapes coincide, and fc1's also equals the output projection's 1024 × 1024, so the
  // MoE layer adds only fc2 (TE caches by (rows, cols, dtype)).
  // extras_llama's attention and layers without a vocabulary, its MLP an MoE of 8 experts, top-2.
  ArchConfig c = test::gated_moe("llama-small", 1024, 4, {8, 128, 2}, 8, 2, 512);
  c.ffn.num_shared_experts = 1;
  c.ffn.shared_expert_dim = 512;
  ParallelLayout l;
  l.gpus = 1;
  const TrainingMemory m = training_memory(c, l, extras_cluster());
  const double attention = 1536.0 * 1024 + 1024.0 * 1024;
  CHECK(m.stages[0].te_dummy_wgrad_bytes == Approx(2.0 * (attention + 1024.0 * 512)));
}

TEST_CASE("memory: context parallelism's logits copy on the last stage", "[cluster][memory]") {
  const ArchConfig c = extras_llama();
  ParallelLayout l;
  l.gpus = 2;
  l.cp = 2;
  l.seq_len = 8192;
  l.cross_entropy_fusion = true;
  const TrainingMemory m = training_memory(c, l, extras_cluster());
  // 4096 tokens a rank: final-norm output 2H, the bf16 logits 2V (fusion), and the copy 2V.
  CHECK(m.stages[0].by_component.logits == Approx(4096.0 * (2.0 * 1024 + 2.0 * 4000 + 2.0 * 4000)));
  l.cp = 1;
  l.seq_len = 4096;
  CHECK(training_memory(c, l, extras_cluster()).stages[0].by_component.logits ==
        Approx(4096.0 * (2.0 * 1024 + 2.0 * 4000)));
}

TEST_CASE("memory: gradient and optimizer dtypes, bytes per parameter by hand", "[cluster][memory]") {
  ParallelLayout l;
  const auto bytes = [&] {
    const ParameterBytes p = parameter_bytes(l);
    return std::vector<double>{p.weights, p.gradients, p.optimizer};
  };
  // Megatron's default for bf16: bf16 weights, fp32 main gradients, fp32 master + m + v.
  CHECK(bytes() == std::vector<double>{2, 4, 12});
  // --grad-reduce-in-bf16: the gradient buffer in bf16.
  l.optimizer_dtypes.bf16_main_grads = true;
  CHECK(bytes() == std::vector<double>{2, 2, 12});
  // The precision-aware optimizer with bf16 moments: TE keeps the fp32 master of bf16 weights as its
  // 16-bit remainder (2 bytes) + m 2 + v 2.
  l.optimizer_dtypes.precision_aware = true;
  l.optimizer_dtypes.exp_avg = l.optimizer_dtypes.exp_avg_sq = StateDtype::bf16;
  CHECK(bytes() == std::vector<double>{2, 2, 6});
  // FP8 moments: 1 byte each.
  l.optimizer_dtypes.exp_avg = l.optimizer_dtypes.exp_avg_sq = StateDtype::fp8;
  CHECK(bytes() == std::vector<double>{2, 2, 4});
  l.optimizer_dtypes.exp_avg = l.optimizer_dtypes.exp_avg_sq = StateDtype::bf16;
  // Current-scaling FP8 with fp32 main parameters: Megatron keeps its own fp32 shard (4 bytes).
  l.fp8 = Fp8Recipe::tensorwise;
  CHECK(bytes() == std::vector<double>{2, 2, 8});
  // Delayed scaling: TE holds the master again (remainders of bf16 weights), but not of FP8 parameters.
  l.fp8 = Fp8Recipe::delayed;
  CHECK(bytes() == std::vector<double>{2, 2, 6});
  l.fp8_param_gather = true;
  CHECK(bytes() == std::vector<double>{2, 2, 8});
  l.fp8_param_gather = false;
  l.fp8 = Fp8Recipe::none;
  // fp16 master parameters: 2 bytes whatever the weights.
  l.optimizer_dtypes.main_params = StateDtype::fp16;
  CHECK(bytes() == std::vector<double>{2, 2, 6});
  // fp16 training: the gradients in fp16 (the flag has no effect) and, precision-aware, no fp32
  // gradient copy: fp32 master (no remainder for fp16 weights) + m + v in fp32 = 12 instead of 16.
  ParallelLayout h;
  h.precision = TrainingPrecision::fp16;
  h.optimizer_dtypes.precision_aware = true;
  CHECK(parameter_bytes(h).optimizer == 12.0);
  CHECK(parameter_bytes(h).gradients == 2.0);

  // In the stage's components: P parameters a GPU, d = DP = 4.
  const ArchConfig c = extras_llama();
  ParallelLayout base;
  base.gpus = 4;
  base.distributed_optimizer = true;
  ParallelLayout lean = base;
  lean.optimizer_dtypes.bf16_main_grads = true;
  lean.optimizer_dtypes.precision_aware = true;
  lean.optimizer_dtypes.exp_avg = lean.optimizer_dtypes.exp_avg_sq = StateDtype::bf16;
  const StageMemory a = training_memory(c, base, extras_cluster()).stages.at(0);
  const StageMemory b = training_memory(c, lean, extras_cluster()).stages.at(0);
  const double P = a.dense_params;
  CHECK(a.by_component.gradients == Approx(4.0 * P));
  CHECK(b.by_component.gradients == Approx(2.0 * P));
  CHECK(a.by_component.optimizer_states == Approx(12.0 * P / 4.0));
  CHECK(b.by_component.optimizer_states == Approx(6.0 * P / 4.0));
  CHECK(b.by_component.weights == a.by_component.weights);
  CHECK(b.by_component.activations == a.by_component.activations);
}

TEST_CASE("memory: gradient and optimizer dtypes Megatron cannot run are refused", "[cluster][memory]") {
  const ArchConfig c = extras_llama();
  ParallelLayout l;
  l.gpus = 4;
  l.precision = TrainingPrecision::fp16;
  l.optimizer_dtypes.bf16_main_grads = true;
  CHECK_THAT(l.validation_error(c), Catch::Contains("apply to bf16 training"));
  l.precision = TrainingPrecision::bf16;
  l.optimizer_dtypes.bf16_main_grads = false;
  l.optimizer_dtypes.exp_avg = StateDtype::bf16;
  CHECK_THAT(l.validation_error(c), Catch::Contains("need the precision-aware optimizer"));
  l.optimizer_dtypes.precision_aware = true;
  CHECK_THAT(l.validation_error(c), Catch::Contains("needs the distributed optimizer"));
  l.distributed_optimizer = true;
  CHECK(l.validation_error(c).empty());
  l.optimizer_dtypes.main_params = StateDtype::bf16;
  CHECK_THAT(l.validation_error(c), Catch::Contains("fp32 or fp16"));
  CHECK(parse_state_dtype("fp8", "x") == StateDtype::fp8);
  CHECK_THROWS_WITH(parse_state_dtype("int4", "--exp-avg-dtype"), Catch::Contains("fp32, bf16, fp16, fp8"));
}
