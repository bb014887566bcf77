// Memory per GPU under a parallel layout (docs/cluster.md) against independent references:
// Korthikanti et al. 2022's per-layer activation formulas (Table 2) by hand, Megatron-LM's
// theoretical_memory_usage.py weight-and-optimizer formula transcribed here, a hand-counted MoE
// layer under EP, a looped stack (weights once, activations per execution), the scaling of every
// component with TP / SP / PP / DP / EP / CP, the 1F1B and interleaved in-flight counts, and the
// refusal messages.

#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/error.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/training_memory.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

/// A cluster with room for anything (1 TiB GPUs, 64 nodes of 8).
ClusterSpec big_cluster() { return test::test_nodes(64, 8, std::int64_t{1} << 40); }

/// Korthikanti et al.'s GPT layer: hidden h, a heads of h/a (multi-head), FFN 4h with GeLU
/// (2 matrices), LayerNorm, biases off (the paper's activation count does not depend on them).
ArchConfig korthikanti_gpt(std::int64_t h, std::int64_t a, std::int64_t layers, std::int64_t vocab = 0) {
  ArchConfig c;
  c.name = "gpt";
  c.hidden_size = h;
  c.num_layers = layers;
  c.attention = {a, h / a, a};
  c.ffn.gated = false;
  c.ffn.dense_dim = 4 * h;
  c.norm = NormKind::layernorm;
  c.vocab_size = vocab;
  return c;
}

ParallelLayout korthikanti_layout(std::int64_t tp, bool sp, RecomputeKind recompute) {
  ParallelLayout l;
  l.tp = tp;
  l.sequence_parallel = sp;
  l.dp = 1;
  l.micro_batch_size = 2;
  l.seq_len = 2048;
  l.flash_attention = false;  // the paper keeps the softmax (s² terms)
  l.dropout = true;           // and dropout masks
  l.recompute.kind = recompute;
  return l;
}

double layer_bytes(const ArchConfig& c, const ParallelLayout& l, bool recomputed = false) {
  return layer_activation_bytes(c, 1, l, recomputed).total();
}

}  // namespace

TEST_CASE("cluster: Korthikanti Table 2, no parallelism: sbh(34 + 5as/h)", "[cluster]") {
  const ArchConfig c = korthikanti_gpt(1024, 16, 4);
  const double s = 2048, b = 2, h = 1024, a = 16;
  CHECK(layer_bytes(c, korthikanti_layout(1, false, RecomputeKind::none)) ==
        Approx(s * b * h * (34.0 + 5.0 * a * s / h)).epsilon(1e-12));
}

TEST_CASE("cluster: Korthikanti Table 2 under TP, SP, selective and full recompute", "[cluster]") {
  const ArchConfig c = korthikanti_gpt(1024, 16, 4);
  const double s = 2048, b = 2, h = 1024, a = 16, t = 4;
  // Tensor parallel, no sequence parallel: sbh(10 + 24/t + 5as/(ht)).
  CHECK(layer_bytes(c, korthikanti_layout(4, false, RecomputeKind::none)) ==
        Approx(s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t))).epsilon(1e-12));
  // Tensor + sequence parallel: sbh(34/t + 5as/(ht)).
  CHECK(layer_bytes(c, korthikanti_layout(4, true, RecomputeKind::none)) ==
        Approx(s * b * h * (34.0 / t + 5.0 * a * s / (h * t))).epsilon(1e-12));
  // Selective recompute, no parallelism: sbh·34; with TP + SP: sbh·34/t.
  CHECK(layer_bytes(c, korthikanti_layout(1, false, RecomputeKind::selective)) == Approx(s * b * h * 34.0).epsilon(1e-12));
  CHECK(layer_bytes(c, korthikanti_layout(4, true, RecomputeKind::selective)) ==
        Approx(s * b * h * 34.0 / t).epsilon(1e-12));
  // Selective with TP only: sbh(10 + 24/t).
  CHECK(layer_bytes(c, korthikanti_layout(4, false, RecomputeKind::selective)) ==
        Approx(s * b * h * (10.0 + 24.0 / t)).epsilon(1e-12));
  // Full recompute keeps the layer input: 2sbh (Table 2), 2sbh/t with SP.
  CHECK(layer_bytes(c, korthikanti_layout(1, false, RecomputeKind::full), true) == Approx(2.0 * s * b * h));
  CHECK(layer_bytes(c, korthikanti_layout(4, true, RecomputeKind::full), true) == Approx(2.0 * s * b * h / t));
}

TEST_CASE("cluster: FlashAttention without dropout, by hand", "[cluster]") {
  // Same layer, no s² terms and no masks: norms 4h, QKV input 2h, Q/K/V 6h, attention output 2h,
  // fp32 log-sum-exp 4a, fc1 input 2h, GeLU input and output 16h: sbh(32 + 4a/h).
  const ArchConfig c = korthikanti_gpt(1024, 16, 4);
  ParallelLayout l = korthikanti_layout(1, false, RecomputeKind::none);
  l.flash_attention = true;
  l.dropout = false;
  const double s = 2048, b = 2, h = 1024, a = 16;
  CHECK(layer_bytes(c, l) == Approx(s * b * h * (32.0 + 4.0 * a / h)).epsilon(1e-12));
  // GQA (4 KV heads of 64 instead of 16) and SwiGLU of width d = 2816: Q 2h, K and V 2·256 each,
  // fc1 output 4d, product 2d: 2h + 2h + 2(h + 512) + 2h + 4a + 2h + 2h + 6d bytes a token.
  ArchConfig g = c;
  g.attention.num_kv_heads = 4;
  g.ffn.gated = true;
  g.ffn.dense_dim = 2816;
  const double per_token = 2 * h + 2 * h + 2 * (h + 2 * 256) + 2 * h + 4 * a + 2 * h + 2 * h + 6 * 2816.0;
  CHECK(layer_bytes(g, l) == Approx(s * b * per_token).epsilon(1e-12));
}

TEST_CASE("cluster: weights and optimizer as Megatron's theoretical_memory_usage.py counts them", "[cluster]") {
  // Dense GPT, RMSNorm, untied embeddings, PP = 1; Megatron's formula transcribed (lines 82-94,
  // 95-103, 127, 248-267, 293-303): bytes = 18 per parameter on the most loaded shard, or
  // 6 + 12/d with the distributed optimizer.
  ArchConfig c = korthikanti_gpt(2048, 16, 8, 32000);
  c.norm = NormKind::rmsnorm;
  c.ffn.gated = true;
  c.ffn.dense_dim = 5632;
  c.attention.num_kv_heads = 4;
  const double H = 2048, heads = 16, groups = 4, ffn = 5632, V = 32000, L = 8, t = 2;
  const double attention = 2 * H * H * ((1 + groups / heads) * 1.0);
  const double mlp = 2 * H * ffn * 1.5;
  const double layernorm = 2 * H * 1;
  const double embedding = H * V;
  const double tp_sharded = ((attention + mlp) * L + embedding) / t + embedding / t;  // untied, PP = 1
  const double replicated = layernorm * L + H;                                        // + final norm
  ParallelLayout l;
  l.tp = 2;
  l.sequence_parallel = true;
  l.gpus = 8;  // DP = 4
  l.seq_len = 4096;
  const TrainingMemory plain = training_memory(c, l, big_cluster());
  const MemoryComponents& p = plain.stages.at(0).by_component;
  CHECK(p.weights + p.gradients + p.optimizer_states == Approx((tp_sharded + replicated) * 18.0).epsilon(1e-12));
  l.distributed_optimizer = true;
  const TrainingMemory sharded = training_memory(c, l, big_cluster());
  const MemoryComponents& d = sharded.stages.at(0).by_component;
  CHECK(d.weights + d.gradients + d.optimizer_states ==
        Approx((tp_sharded + replicated) * (6.0 + 12.0 / 4.0)).epsilon(1e-12));
  // fp16 and fp32 rows of the distributed-optimizer table: 20 / 16 bytes, 4 + 16/d / 8 + 8/d.
  l.precision = TrainingPrecision::fp16;
  const MemoryComponents f = training_memory(c, l, big_cluster()).stages.at(0).by_component;
  CHECK(f.weights + f.gradients + f.optimizer_states == Approx((tp_sharded + replicated) * (4.0 + 16.0 / 4.0)));
  l.precision = TrainingPrecision::fp32;
  l.distributed_optimizer = false;
  const MemoryComponents g = training_memory(c, l, big_cluster()).stages.at(0).by_component;
  CHECK(g.weights + g.gradients + g.optimizer_states == Approx((tp_sharded + replicated) * 16.0));
}

TEST_CASE("cluster: an MoE layer under EP, counted by hand", "[cluster]") {
  // toy_moe: H 64, 4 layers, 4 heads × 16 (q 64), 2 KV heads (kv 32), 8 gated experts of 32, top 2.
  const ArchConfig c = test::toy_moe();
  ParallelLayout l = test::expert_parallel(4, 1);  // DP 4, EDP = 4 / (1·4·1) = 1
  l.etp = 1;
  l.seq_len = 128;
  l.micro_batch_size = 2;
  l.distributed_optimizer = true;
  const TrainingMemory m = training_memory(c, l, big_cluster());
  const StageMemory& s = m.stages.at(0);
  // Per layer: qkv 64·128 + out 64·64 + norms 2·64 + router 64·8 = 12,928 dense; experts
  // 8·3·64·32 / EP 4 = 12,288. 4 layers, final norm 64.
  CHECK(s.dense_params == 4 * 12928.0 + 64.0);
  CHECK(s.expert_params == 4 * 12288.0);
  CHECK(s.by_component.weights == 2.0 * (51776.0 + 49152.0));
  CHECK(s.by_component.gradients == 4.0 * (51776.0 + 49152.0));
  // Dense states sharded over DP·CP = 4, experts' over EDP = 1.
  CHECK(s.by_component.optimizer_states == 51776.0 * 12.0 / 4.0 + 49152.0 * 12.0);
  // Activations a token: attention 4H (norm input, QKV input) + 2(64 + 32 + 32) + 2·64 + 4·4 = 656;
  // MoE: norm input and output 4H + 4E + E = 296; routed rows top_k = 2, each fc1 input 2H +
  // SwiGLU 6·32 + index 8 = 328 (the experts' output is not kept: the probabilities weight the
  // activation before fc2): 656. 1,608 bytes a token, T = 256 tokens.
  CHECK(layer_activation_bytes(c, 1, l, false).total() == Approx(256.0 * 1608.0));
  CHECK(s.by_component.activations == Approx(4 * 256.0 * 1608.0));
  // Fused permutation: TE's int32 row map of 2E + 1 = 17 entries a token (68 bytes) instead of the
  // 8-byte index of each of the 2 rows: 1,608 − 16 + 68 = 1,660.
  ParallelLayout fused = l;
  fused.moe_permute_fusion = true;
  CHECK(layer_activation_bytes(c, 1, fused, false).total() == Approx(256.0 * 1660.0));
  // Imbalance 1.5: the most loaded rank gets 3 rows a token; a capacity factor 1.25 caps it.
  l.imbalance = 1.5;
  CHECK(layer_activation_bytes(c, 1, l, false).total() == Approx(256.0 * (656 + 296 + 3 * 328.0)));
  l.capacity_factor = 1.25;
  CHECK(layer_activation_bytes(c, 1, l, false).total() == Approx(256.0 * (656 + 296 + 2.5 * 328.0)));
  // EP halves expert weights only; activations do not change with EP (balanced routing).
  ParallelLayout e2 = l;
  e2.ep = 2;
  const TrainingMemory m2 = training_memory(c, e2, big_cluster());
  CHECK(m2.stages[0].expert_params == 2.0 * training_memory(c, l, big_cluster()).stages[0].expert_params);
  CHECK(m2.stages[0].dense_params == training_memory(c, l, big_cluster()).stages[0].dense_params);
  CHECK(m2.stages[0].by_component.activations == training_memory(c, l, big_cluster()).stages[0].by_component.activations);
}

TEST_CASE("cluster: a looped stack stores weights once and activations per execution", "[cluster]") {
  const ArchConfig looped = test::paper_200m_smelt();  // layers 4-9 twice: 18 executions of 12 layers
  ArchConfig unlooped = looped;
  unlooped.loop.reset();
  ParallelLayout l;
  l.gpus = 1;
  l.seq_len = 4096;
  const StageMemory a = training_memory(looped, l, big_cluster()).stages.at(0);
  const StageMemory b = training_memory(unlooped, l, big_cluster()).stages.at(0);
  CHECK(a.executed_layers == 18);
  CHECK(a.by_component.weights == b.by_component.weights);
  CHECK(a.by_component.gradients == b.by_component.gradients);
  CHECK(a.by_component.optimizer_states == b.by_component.optimizer_states);
  CHECK(a.by_component.activations == Approx(b.by_component.activations * 18.0 / 12.0));
}

TEST_CASE("cluster: a loop must lie inside one pipeline stage unless its weights are replicated", "[cluster]") {
  const ArchConfig looped = test::paper_200m_smelt();
  ParallelLayout l = test::pipeline_of(2, 4);  // of sequences of 4096
  CHECK_THROWS_WITH(training_memory(looped, l, big_cluster()),
                    Catch::Contains("the loop over layers 4-9 crosses pipeline chunks 0 and 1") &&
                        Catch::Contains("--loop-placement"));
  l.loop_placement = LoopPlacement::replicated;
  const TrainingMemory m = training_memory(looped, l, big_cluster());
  // 18 executions split 9 + 9: stage 0 runs 1-3 then 4-9, stage 1 runs 4-9 then 10-12.
  CHECK(m.stages[0].stored_layers == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(m.stages[1].stored_layers == std::vector<std::int64_t>{4, 5, 6, 7, 8, 9, 10, 11, 12});
  CHECK(m.stages[0].executed_layers == 9);
  CHECK(m.stages[1].executed_layers == 9);
  // A loop inside the first stage: layers 1-3 three times, stage 0 runs 9 + 3, stage 1 runs 6.
  ArchConfig early = looped;
  early.loop = LoopConfig{1, 3, 3};
  l.loop_placement = LoopPlacement::in_chunk;
  const TrainingMemory e = training_memory(early, l, big_cluster());
  CHECK(e.stages[0].executed_layers == 12);
  CHECK(e.stages[1].executed_layers == 6);
  CHECK(e.stages[0].stored_layers.size() == 6);
  // Same weights (the last stage adds the final norm, H), twice the executions.
  CHECK(e.stages[0].dense_params == e.stages[1].dense_params - 1056.0);
}

TEST_CASE("cluster: each component scales with TP, SP, CP, DP and the optimizer as it should", "[cluster]") {
  ArchConfig c = korthikanti_gpt(1024, 16, 4, 32000);
  ParallelLayout l;
  l.gpus = 8;
  l.seq_len = 4096;
  l.micro_batch_size = 1;
  const TrainingMemory t1 = training_memory(c, l, big_cluster());
  ParallelLayout l2 = l;
  l2.tp = 2;
  const TrainingMemory t2 = training_memory(c, l2, big_cluster());
  // Norm weights (2 LayerNorms of 2h per layer, final norm 2h) are replicated; the rest halves.
  const double norms = 4 * 2 * 2 * 1024.0 + 2 * 1024.0;
  CHECK(t2.stages[0].dense_params == Approx((t1.stages[0].dense_params - norms) / 2.0 + norms));
  // Without SP the replicated activation class stays: activations drop by less than half ...
  CHECK(t2.stages[0].by_component.activations > t1.stages[0].by_component.activations / 2.0);
  // ... with SP every layer activation term halves (FlashAttention: no s² terms); the embedding's
  // int64 token ids (8 bytes a token) stay whole on every TP rank.
  l2.sequence_parallel = true;
  const TrainingMemory t2sp = training_memory(c, l2, big_cluster());
  const double token_ids = 8.0 * 4096;
  CHECK(t2sp.stages[0].by_component.activations ==
        Approx((t1.stages[0].by_component.activations - token_ids) / 2.0 + token_ids).epsilon(1e-12));
  CHECK(t2sp.stages[0].by_component.logits == Approx(t1.stages[0].by_component.logits / 2.0));
  // CP halves the tokens of a GPU: activations and logits halve, weights do not.
  ParallelLayout lc = l;
  lc.cp = 2;
  const TrainingMemory c2 = training_memory(c, lc, big_cluster());
  CHECK(c2.stages[0].by_component.activations == Approx(t1.stages[0].by_component.activations / 2.0));
  CHECK(c2.stages[0].by_component.weights == t1.stages[0].by_component.weights);
  // DP without the distributed optimizer changes nothing per GPU; with it only the states shrink.
  ParallelLayout ld = l;
  ld.gpus = 16;
  CHECK(training_memory(c, ld, big_cluster()).peak_bytes == t1.peak_bytes);
  ld.distributed_optimizer = true;
  ParallelLayout l8 = l;
  l8.distributed_optimizer = true;
  const TrainingMemory d16 = training_memory(c, ld, big_cluster());
  const TrainingMemory d8 = training_memory(c, l8, big_cluster());
  CHECK(d16.stages[0].by_component.optimizer_states == Approx(d8.stages[0].by_component.optimizer_states / 2.0));
  CHECK(d16.stages[0].by_component.weights == d8.stages[0].by_component.weights);
  CHECK(d16.stages[0].by_component.gradients == d8.stages[0].by_component.gradients);
  // The micro-batch size scales activations linearly, not weights.
  ParallelLayout lb = l;
  lb.micro_batch_size = 3;
  const TrainingMemory b3 = training_memory(c, lb, big_cluster());
  CHECK(b3.stages[0].by_component.activations == Approx(3.0 * t1.stages[0].by_component.activations));
  CHECK(b3.stages[0].by_component.weights == t1.stages[0].by_component.weights);
}

TEST_CASE("cluster: logits on the last stage, fp32 unless cross-entropy fusion", "[cluster]") {
  const ArchConfig c = korthikanti_gpt(1024, 16, 4, 32000);
  ParallelLayout l = test::pipeline_of(2, 4);
  l.tp = 2;
  l.sequence_parallel = true;
  l.gpus = 4;
  l.seq_len = 2048;
  const TrainingMemory m = training_memory(c, l, big_cluster());
  CHECK(m.stages[0].by_component.logits == 0.0);
  // T = 2048 tokens: final-norm output 2H/t and fp32 logits 4V/t per token.
  CHECK(m.stages[1].by_component.logits == Approx(2048.0 * (2.0 * 1024 / 2 + 4.0 * 32000 / 2)));
  l.cross_entropy_fusion = true;
  CHECK(training_memory(c, l, big_cluster()).stages[1].by_component.logits ==
        Approx(2048.0 * (2.0 * 1024 / 2 + 2.0 * 32000 / 2)));
  // Embedding on stage 0, LM head on stage 1 (untied): V·H/t each.
  CHECK(m.stages[0].has_embedding);
  CHECK(m.stages[1].has_lm_head);
  // Padding the vocabulary: 32000 → multiple of 128·2 = 32000 already; 32001 → 32256.
  ArchConfig odd = c;
  odd.vocab_size = 32001;
  l.cross_entropy_fusion = false;
  CHECK_THROWS_WITH(training_memory(odd, l, big_cluster()), Catch::Contains("vocab_size 32001 does not divide by TP = 2"));
  l.vocab_divisible_by = 128;
  CHECK(training_memory(odd, l, big_cluster()).padded_vocab == 32256);
}

TEST_CASE("cluster: micro-batches in flight, 1F1B min(m, PP - s) and interleaved", "[cluster]") {
  const ArchConfig c = korthikanti_gpt(1024, 16, 8);
  ParallelLayout l = test::pipeline_of(4, 8);
  l.seq_len = 2048;
  const TrainingMemory m = training_memory(c, l, big_cluster());
  const double per_micro_batch_layer = layer_activation_bytes(c, 1, l, false).total();
  for (std::int64_t s = 0; s < 4; ++s) {
    CHECK(m.stages[static_cast<std::size_t>(s)].in_flight_micro_batches == 4 - s);
    CHECK(m.stages[static_cast<std::size_t>(s)].by_component.activations ==
          Approx(static_cast<double>(4 - s) * 2.0 * per_micro_batch_layer));
  }
  l.micro_batches = 2;
  const TrainingMemory few = training_memory(c, l, big_cluster());
  CHECK(few.stages[0].in_flight_micro_batches == 2);
  CHECK(few.stages[3].in_flight_micro_batches == 1);
  // Interleaved, PP 2 × V 2, m = 4: stage 0 warms up 2·1 + 1·2 = 4 chunk forwards, plus one: 5
  // chunks of 2 layers = 10 = L·(1 + (PP − 1)/(PP·V)) layers, Megatron's interleaving penalty.
  ParallelLayout v = test::pipeline_of(2, 4);
  v.virtual_stages = 2;
  v.seq_len = 2048;
  const TrainingMemory iv = training_memory(c, v, big_cluster());
  CHECK(iv.stages[0].in_flight_micro_batches == 5);
  CHECK(iv.stages[1].in_flight_micro_batches == 3);
  CHECK(iv.stages[0].by_component.activations == Approx(8.0 * (1.0 + 1.0 / 4.0) * per_micro_batch_layer));
  CHECK(iv.stages[0].stored_layers == std::vector<std::int64_t>{1, 2, 5, 6});  // chunks 0 and 2
}

TEST_CASE("cluster: full recompute keeps layer inputs and rebuilds one layer", "[cluster]") {
  const ArchConfig c = korthikanti_gpt(1024, 16, 4);
  ParallelLayout l;
  l.gpus = 1;
  l.seq_len = 2048;
  l.recompute.kind = RecomputeKind::full;
  const TrainingMemory all = training_memory(c, l, big_cluster());
  const double full_layer = layer_activation_bytes(c, 1, l, false).total();
  CHECK(all.stages[0].by_component.activations == Approx(4.0 * 2.0 * 2048.0 * 1024.0));
  // The rebuilt layer, plus TE's cached dummy weight gradients (one bf16 tensor per distinct weight
  // shape: QKV 3072×1024, projection 1024×1024, fc1 4096×1024, fc2 1024×4096; no vocabulary here).
  const double dummy_wgrads = 2.0 * (3072.0 * 1024 + 1024.0 * 1024 + 2 * 4096.0 * 1024);
  CHECK(all.stages[0].te_dummy_wgrad_bytes == Approx(dummy_wgrads));
  CHECK(all.stages[0].by_component.buffers == Approx(full_layer + dummy_wgrads));
  l.recompute.full_layers = 1;  // block method: the first layer of the chunk only
  CHECK(training_memory(c, l, big_cluster()).stages[0].by_component.activations ==
        Approx(2.0 * 2048.0 * 1024.0 + 3.0 * full_layer));
  l.recompute.full_layers = 5;
  CHECK_THROWS_WITH(training_memory(c, l, big_cluster()), Catch::Contains("exceeds the 4 layer executions"));
}

TEST_CASE("cluster: layouts that do not divide are refused with the reason", "[cluster]") {
  const ArchConfig moe = test::paper_200m_baseline();  // 10 heads, 2 KV heads, 192 experts, 12 layers
  const ClusterSpec cluster = big_cluster();
  const auto refusal = [&](ParallelLayout l) {
    l.seq_len = 4096;
    return l.validation_error(moe);
  };
  ParallelLayout l;
  l.gpus = 8;
  l.tp = 4;
  l.sequence_parallel = true;
  CHECK_THAT(refusal(l), Catch::Contains("10 attention heads do not divide by TP = 4"));
  l.tp = 2;
  CHECK(refusal(l).empty());
  l.sequence_parallel = false;
  CHECK_THAT(refusal(l), Catch::Contains("needs sequence parallelism"));
  l = {};
  l.gpus = 8;
  l.ep = 5;
  CHECK_THAT(refusal(l), Catch::Contains("192 experts do not divide by EP = 5"));
  l.ep = 16;
  CHECK_THAT(refusal(l), Catch::Contains("8 GPUs do not divide by ETP·EP·PP = 1·16·1 = 16"));
  l = {};
  l.gpus = 8;
  l.pp = 8;
  CHECK_THAT(refusal(l), Catch::Contains("12 layers do not divide by PP·V = 8·1 = 8"));
  l = {};
  l.gpus = 6;
  l.pp = 4;
  CHECK_THAT(refusal(l), Catch::Contains("6 GPUs do not divide by TP·CP·PP = 1·1·4 = 4"));
  l = {};
  l.gpus = 8;
  l.cp = 2;
  l.seq_len = 4097;
  CHECK_THAT(l.validation_error(moe), Catch::Contains("seq_len 4097 does not divide by 2·CP = 4"));
  const ArchConfig dense = korthikanti_gpt(1024, 16, 4);
  l = {};
  l.gpus = 8;
  l.ep = 2;
  CHECK_THAT(l.validation_error(dense), Catch::Contains("EP = 2 on a dense model"));
  l = {};
  l.gpus = 1024;
  CHECK_THROWS_WITH(training_memory(dense, l, cluster), Catch::Contains("the layout needs 1024 GPUs; the cluster has 512"));
  l = {};
  CHECK_THROWS_WITH(resolve_layout(l), Catch::Contains("give the GPU count"));
  l.gpus = 8;
  l.dp = 2;
  CHECK_THROWS_WITH(resolve_layout(l), Catch::Contains("dp = 2 disagrees with 8 GPUs"));
}

TEST_CASE("cluster: MLA and first dense layers from the op list", "[cluster]") {
  // A DeepSeek-like toy: MLA (q_lora 32, kv_lora 16, nope 8, rope 4, v 8), 4 heads, first layer dense.
  ArchConfig c = test::gated_moe("mla", 64, 4, {4, 12, 1}, 8, 2, 16);
  c.attention.mla = MlaConfig{32, 16, 8, 4, 8};
  c.ffn.first_dense_layers = 1;
  c.ffn.dense_dim = 128;
  validate(c);
  ParallelLayout l;
  l.tp = 2;
  l.sequence_parallel = true;
  l.gpus = 2;
  l.seq_len = 64;
  const TrainingMemory m = training_memory(c, l, big_cluster());
  // Per layer: q_down 64·32 and kv_down 64·20 replicated (Megatron duplicates them), q_up 32·48,
  // kv_up 16·64, out 32·64 sharded; norms 2·64 + latent norms 32 + 16 replicated.
  const double attention_sharded = 32 * 48 + 16 * 64 + 32 * 64;
  const double attention_replicated = 64 * 32 + 64 * 20 + 2 * 64 + 48;
  const double dense_mlp = 3 * 64 * 128, experts = 8 * 3 * 64 * 16, router = 64 * 8;
  const double expected_dense = 4 * (attention_sharded / 2 + attention_replicated) + dense_mlp / 2 + 3 * router + 64;
  CHECK(m.stages[0].dense_params == Approx(expected_dense));
  CHECK(m.stages[0].expert_params == Approx(3 * experts / 2));  // ETP = TP = 2
  // Attention activations a token (T = 64, r = t = 2): replicated 2H + 2H + 4·(32 + 16) + 2·4 =
  // 456; sharded Q 2·48, K 2·48, V 2·32, output 2·32, LSE 4·4 = 336.
  CHECK(layer_activation_bytes(c, 1, l, false).attention == Approx(64.0 * (456.0 / 2 + 336.0 / 2)));
}

TEST_CASE("recompute and precision names: parsed as printed, the rest refused naming the option") {
  for (const RecomputeKind kind : {RecomputeKind::none, RecomputeKind::selective, RecomputeKind::full}) {
    const RecomputeSpec spec = parse_recompute(to_string(kind), "--recompute");
    CHECK(spec.kind == kind);
    CHECK(spec.full_layers == 0);
  }
  const RecomputeSpec some = parse_recompute("full:12", "--recompute");
  CHECK(some.kind == RecomputeKind::full);
  CHECK(some.full_layers == 12);
  CHECK(parse_recompute("full:999999999999999", "x").full_layers == 999999999999999);
  // Megatron's per-module selective recompute and the uniform method (issue 31).
  const RecomputeSpec modules = parse_recompute("selective:mla_up_proj,mlp", "x");
  CHECK(modules.modules == std::vector<RecomputeModule>{RecomputeModule::mla_up_proj, RecomputeModule::mlp});
  CHECK(parse_recompute("full-uniform:2", "x").method == RecomputeMethod::uniform);
  CHECK_THROWS_WITH(parse_recompute("selective:attn", "--recompute"), Catch::Contains("recompute module \"attn\""));
  for (const char* bad : {"", "Full", "full:", "full:0", "full:-1", "full:1x", "full:1000000000000000", "partial",
                          "selective:", "full-uniform:0"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_recompute(bad, "--recompute"),
                      Catch::Contains("is not allowed; allowed: none, selective, selective:MODULE") &&
                          Catch::Contains("full:N") && Catch::Contains("--recompute"));
  }
  for (const TrainingPrecision p : {TrainingPrecision::bf16, TrainingPrecision::fp16, TrainingPrecision::fp32}) {
    CHECK(parse_training_precision(to_string(p), "precision") == p);
  }
  CHECK(to_string(TrainingPrecision::fp16) == "fp16");
  CHECK(to_string(RecomputeKind::selective) == "selective");
  CHECK_THROWS_WITH(parse_training_precision("fp8", "precision"),
                    Catch::Contains("value \"fp8\" is not allowed; allowed: bf16, fp16, fp32") && Catch::Contains("precision"));
}
