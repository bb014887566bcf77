// Layouts teams run (docs/cluster.md): Megatron's pipeline layout string, first/last-stage counts,
// the embedding and loss in the split, per-module recompute, FSDP, FP8, offload and NVLink domains,
// each by hand.
#include <catch2/catch.hpp>

#include "budget/communication.hpp"
#include "budget/training_memory.hpp"
#include "layout/pipeline_split.hpp"
#include "support/pipeline_split_brute.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

ClusterSpec plan_cluster(std::int64_t nodes = 128) {
  ClusterSpec c = test::test_nodes(nodes, 8, std::int64_t{1} << 42);
  c.intra_node.bandwidth_bytes_per_s = 900e9;
  return c;
}

/// `layers` layers of H 1024, 8 heads of 128 (multi-head), SwiGLU 4096, vocabulary 4096.
ArchConfig plan_dense(std::int64_t layers) { return test::gated_dense("dense", 1024, layers, {8, 128, 8}, 4096, 4096); }

/// `gpus` GPUs of DP, one sequence of 1024 tokens, the vocabulary unpadded.
ParallelLayout sequence_of_1024(std::int64_t gpus) {
  ParallelLayout l;
  l.gpus = gpus;
  l.seq_len = 1024;
  l.vocab_divisible_by = 1;
  return l;
}

using Splits = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// The layout search's pipeline splits of `total` layers on PP × V as (first, last) pairs.
Splits splits(std::int64_t total, std::int64_t pp, std::int64_t v) {
  Splits out;
  for (const PipelineSplit& s : pipeline_splits(total, pp, v)) out.emplace_back(s.first_stage_layers.value_or(-1), s.last_stage_layers.value_or(-1));
  return out;
}

}  // namespace

TEST_CASE("layout: Megatron's layout grammar unrolled", "[cluster][pipeline]") {
  // parse_str_to_list's own example (pipeline_parallel_layer_layout.py:288-289).
  const std::vector<std::string> s = parse_pipeline_layout("Ettt|(tt|)*29,m|L", "t");
  REQUIRE(s.size() == 32);
  CHECK(s.front() == "Ettt");
  CHECK(s[1] == "tt");
  CHECK(s[30] == "m");
  CHECK(s[31] == "L");
  // "(|tt)*2,tL" → "|tt|tttL" (the docstring's "(|ab)*2,cd" → "|ab|abcd" with valid letters).
  CHECK(parse_pipeline_layout("(|tt)*2,tL", "t") == std::vector<std::string>{"", "tt", "tttL"});
  CHECK(parse_pipeline_layout("Et*3|t*2L", "t") == std::vector<std::string>{"Ettt", "ttL"});
  CHECK_THROWS_WITH(parse_pipeline_layout("Etx|L", "t"), Catch::Contains("invalid layer character 'x'"));
}

TEST_CASE("layout: DeepSeek-V3's Et|(tt|)*30mL on PP 8: V 4, 61 layers, MTP with the loss", "[cluster][pipeline]") {
  ArchConfig c = plan_dense(61);
  c.mtp_layers = 1;
  ParallelLayout l = test::pipeline_of(8, 8);
  l.split = PipelineSplit::per_stage("Et|(tt|)*30mL", "t");
  const TrainingMemory m = training_memory(c, l, plan_cluster());
  CHECK(m.layout.virtual_stages == 4);  // 32 stages / PP 8
  const std::vector<ModelChunk> chunks = model_chunks(c, m.layout);
  REQUIRE(chunks.size() == 32);
  CHECK(chunks[0].executed_layers == std::vector<std::int64_t>{1});
  CHECK(chunks[0].embedding);
  CHECK(chunks[1].executed_layers == std::vector<std::int64_t>{2, 3});
  CHECK(chunks[30].executed_layers == std::vector<std::int64_t>{60, 61});
  CHECK(chunks[31].executed_layers.empty());
  CHECK(chunks[31].loss);
  CHECK(chunks[31].mtp_layers == 1);
  // Rank 0 holds chunks 0, 8, 16, 24: 1 + 2 + 2 + 2 layers; rank 7 chunks 7, 15, 23, 31: 6.
  CHECK(m.stages[0].executed_layers == 7);
  CHECK(m.stages[7].executed_layers == 6);
  CHECK(m.stages[7].has_lm_head);
  l.split = PipelineSplit::per_stage("Et|(tt|)*30tmL", "t");
  CHECK_THROWS_WITH(training_memory(c, l, plan_cluster()), Catch::Contains("has 62 transformer layers t; the config has 61"));
}

TEST_CASE("layout: first/last-stage counts and the embedding/loss in the split", "[cluster][pipeline]") {
  const ArchConfig c = plan_dense(30);
  ParallelLayout l = test::pipeline_of(4, 4);
  l.split = PipelineSplit::first_last(6, 6);
  const TrainingMemory m = training_memory(c, l, plan_cluster());
  // (30 − 6 − 6) / 2 = 9 on each middle rank (get_num_layers_to_build).
  CHECK(m.stages[0].stored_layers.size() == 6);
  CHECK(m.stages[1].stored_layers.size() == 9);
  CHECK(m.stages[3].stored_layers.size() == 6);
  l.split = PipelineSplit::first_last(6, 5);
  CHECK_THROWS_WITH(training_memory(c, l, plan_cluster()), Catch::Contains("do not divide over the other 2"));
  // Qwen3-235B's split: 94 + embedding + loss = 96 = 8·4·3; chunk 0 and chunk 31 build 2.
  const ArchConfig q = plan_dense(94);
  ParallelLayout s = test::pipeline_of(8, 8);
  s.virtual_stages = 4;
  s.embedding_in_split = true;
  s.loss_in_split = true;
  const std::vector<ModelChunk> chunks = model_chunks(q, s);
  CHECK(chunks.front().executed_layers.size() == 2);
  CHECK(chunks[1].executed_layers.size() == 3);
  CHECK(chunks.back().executed_layers.size() == 2);
  CHECK(training_memory(q, s, plan_cluster()).stages[0].executed_layers == 2 + 3 + 3 + 3);
}

TEST_CASE("layout: Megatron refuses a first or last stage of 0 layers and middle ranks without layers",
          "[cluster][pipeline]") {
  // transformer_config.py:2293-2368 at d98e8a64.
  const ArchConfig c = plan_dense(12);
  ParallelLayout l = test::pipeline_of(4, 4);
  l.split = PipelineSplit::first_last(0, std::nullopt);
  CHECK_THAT(l.validation_error(c), Catch::Contains("the first pipeline stage of 0 layers (--decoder-first-pipeline-num-layers 0): Megatron asks for at least 1"));
  l.split = PipelineSplit::first_last(6, 6);  // 0 left for the two middle ranks
  CHECK_THAT(l.validation_error(c), Catch::Contains("do not divide over the other 2"));
  l.pp = 2;
  l.gpus = 2;
  l.micro_batches = 2;
  CHECK(l.validation_error(c).empty());  // no middle rank, no middle layers
  l.split = PipelineSplit::first_last(5, 6);  // 1 layer left and no middle rank for it
  CHECK_THAT(l.validation_error(c), Catch::Contains("do not divide over the other 0"));
}

TEST_CASE("layout search's pipeline splits: by hand, and the most balanced Megatron accepts by brute force",
          "[cluster][pipeline][search]") {
  CHECK(splits(12, 4, 1) == Splits{{-1, -1}});          // even
  CHECK(splits(61, 8, 1) == Splits{{6, 7}, {7, 6}});    // DeepSeek-V3: 6 + 6·8 + 7
  CHECK(splits(61, 16, 1) == Splits{{2, 3}, {3, 2}});   // 2 + 14·4 + 3
  CHECK(splits(12, 8, 1) == Splits{{3, 3}});            // 2 a middle rank leaves nothing for the ends: 3 + 6·1 + 3
  CHECK(splits(12, 4, 2) == Splits{{2, 2}});            // V 2: 2 + 2·4 + 2, each rank's count even
  CHECK(splits(94, 8, 4).empty());                      // V 4 does not divide 94 layers
  CHECK(splits(61, 1, 1) == Splits{{-1, -1}});
  CHECK(splits(61, 2, 1) == Splits{{30, 31}, {31, 30}});
  CHECK(splits(3, 4, 1).empty());                       // fewer layers than ranks: no middle rank can hold one
  for (std::int64_t total = 1; total <= 70; ++total) {
    for (std::int64_t pp = 1; pp <= 40; ++pp) {
      for (const std::int64_t v : {1, 2, 3, 4}) {
        INFO(total << " layers, PP " << pp << ", V " << v);
        CHECK(splits(total, pp, v) == test::brute_pipeline_splits(total, pp, v));
      }
    }
  }
  // Every split returned is one Megatron accepts: the layout validates and its ranks hold `total`.
  const ArchConfig c = plan_dense(61);
  for (const std::int64_t pp : {2, 4, 8, 16, 32}) {
    for (const PipelineSplit& s : pipeline_splits(61, pp, 1)) {
      ParallelLayout l = test::pipeline_of(pp, pp);
      l.split = s;
      INFO("PP " << pp);
      REQUIRE(l.validation_error(c).empty());
      std::int64_t layers = 0;
      for (const ModelChunk& chunk : model_chunks(c, l)) layers += static_cast<std::int64_t>(chunk.executed_layers.size());
      CHECK(layers == 61);
    }
  }
}

TEST_CASE("layout search's pipeline splits: 10^6 layers at once (issue 44: the search was O(L^2))",
          "[cluster][pipeline][search]") {
  // 600,000 ranks of 2 chunks need 1,200,000 layers: none for 10^6 (before: every largest count
  // up to 10^6 tried against every middle count, about 10^11 steps, minutes).
  CHECK(splits(1'000'000, 600'000, 2).empty());
  // 200,000 ranks of 4 chunks: the middle ranks can hold 4 each at most (199,998·8 > 10^6 − 8), the
  // ends the rest 10^6 − 199,998·4 = 200,008, as even as whole chunks allow: 100,004 each.
  CHECK(splits(1'000'000, 200'000, 4) == Splits{{100'004, 100'004}});
  // 999,999 layers on 1,000 ranks: 1,000 a middle rank leaves 1,999 for the ends (999 and 1,000).
  CHECK(splits(999'999, 1'000, 1) == Splits{{999, 1'000}, {1'000, 999}});
}

TEST_CASE("memory: per-module selective recompute frees what each module rebuilds", "[cluster][recompute]") {
  const ArchConfig c = plan_dense(2);
  ParallelLayout l;
  l.gpus = 1;
  l.seq_len = 1024;
  const double T = 1024, H = 1024;
  const auto layer = [&](std::vector<RecomputeModule> modules) {
    l.recompute.kind = RecomputeKind::selective;
    l.recompute.modules = std::move(modules);
    return layer_activation_bytes(c, 1, l, false);
  };
  const LayerActivationBytes core = layer({RecomputeModule::core_attn});
  // Attention with core_attn recomputed: norm input 2H, QKV input 2H, Q K V 2·3·1024, output 2·1024.
  CHECK(core.attention == Approx(T * (2 * H + 2 * H + 6 * 1024.0 + 2 * 1024.0)));
  // mlp: the dense MLP keeps only its input (the norm input, 2H); layernorm frees the QKV input too.
  CHECK(layer({RecomputeModule::core_attn, RecomputeModule::mlp}).ffn == Approx(T * 2 * H));
  CHECK(layer({RecomputeModule::core_attn, RecomputeModule::layernorm}).attention ==
        Approx(core.attention - T * 2 * H));
  // Without core_attn the LSE (4 bytes per head and token) stays: 8 heads.
  CHECK(layer({RecomputeModule::layernorm}).attention == Approx(core.attention - T * 2 * H + T * 4 * 8));
}

TEST_CASE("memory: FSDP and FP8 by hand", "[cluster][fsdp]") {
  const ArchConfig c = plan_dense(2);
  ParallelLayout l;
  l.gpus = 8;
  l.micro_batches = 1;
  l.vocab_divisible_by = 1;
  const TrainingMemory ddp = training_memory(c, l, plan_cluster());
  const double P = ddp.stages[0].dense_params;
  CHECK(ddp.stages[0].by_component.weights == Approx(2.0 * P));
  l.fsdp = FsdpKind::torch_fsdp2;  // fp32 shards 4/d, gradients 4/d, Adam 8/d, d = 8
  const TrainingMemory f2 = training_memory(c, l, plan_cluster());
  CHECK(f2.stages[0].by_component.weights == Approx(4.0 * P / 8));
  CHECK(f2.stages[0].by_component.gradients == Approx(4.0 * P / 8));
  CHECK(f2.stages[0].by_component.optimizer_states == Approx(8.0 * P / 8));
  l.fsdp = FsdpKind::megatron_fsdp;
  l.fsdp_sharding = FsdpSharding::optim_grads;  // ZeRO-2: weights whole, gradients and optimizer ÷ 8
  const TrainingMemory z2 = training_memory(c, l, plan_cluster());
  CHECK(z2.stages[0].by_component.weights == Approx(2.0 * P));
  CHECK(z2.stages[0].by_component.gradients == Approx(4.0 * P / 8));
  CHECK(z2.stages[0].by_component.optimizer_states == Approx(12.0 * P / 8));
  // FP8 tensorwise: each linear weight adds a rowwise and a columnwise FP8 copy, 2 bytes in all.
  // Linear weights of a layer: QKV 3·1024·1024, output 1024·1024, fc1 2·4096·1024, fc2 4096·1024.
  l.fsdp = FsdpKind::none;
  l.fp8 = Fp8Recipe::tensorwise;
  const double linear = 2 * (4.0 * 1024 * 1024 + 3.0 * 4096 * 1024);
  CHECK(training_memory(c, l, plan_cluster()).stages[0].by_component.weights == Approx(2.0 * P + 2.0 * linear));
  l.fp8_param_gather = true;  // the FP8 parameter replaces the bf16 weight: 1 + 1 bytes
  CHECK(training_memory(c, l, plan_cluster()).stages[0].by_component.weights ==
        Approx(2.0 * P + 2.0 * linear - 2.0 * linear));
}

TEST_CASE("communication: an NVLink domain of 72 GPUs keeps EP 64 on NVLink", "[cluster][nvl72]") {
  ClusterSpec nvl = plan_cluster(18);
  nvl.gpus_per_node = 4;
  nvl.nvlink_domain_gpus = 72;
  CHECK(nvl.nvlink_domain() == 72);
  CHECK(nvl.validation_error().empty());
  // EP 64 with stride 1 inside a 72-GPU domain: one "node" of the domain, intra-domain links.
  const GroupPlacement g = group_placement(64, 1, nvl.nvlink_domain());
  CHECK_FALSE(g.inter_node());
  CHECK(group_placement(64, 1, nvl.gpus_per_node).inter_node());
  nvl.nvlink_domain_gpus = 70;
  CHECK(nvl.validation_error() == "nvlink_domain_gpus 70 is not a multiple of gpus_per_node 4");
}

TEST_CASE("memory: uniform full recompute and CPU offload by hand", "[cluster][recompute]") {
  const ArchConfig c = plan_dense(4);
  ParallelLayout l = sequence_of_1024(1);
  const double T = 1024, H = 1024;
  const double whole = layer_activation_bytes(c, 1, l, false).total();
  l.recompute = parse_recompute("full-uniform:2", "t");
  const TrainingMemory u = training_memory(c, l, plan_cluster());
  // Two groups of two: each keeps its first layer's input 2H·T, plus the token ids 8·T.
  CHECK(u.stages[0].by_component.activations == Approx(2 * 2 * H * T + 8 * T));
  // The backward rebuilds one group: two layers' activations, beside TE's dummy gradients and the
  // bf16 logits made beside their fp32 copy (2·V·T, V = 4096).
  CHECK(u.stages[0].by_component.buffers ==
        Approx(std::max(2 * whole, 2.0 * 4096 * T) + u.stages[0].te_dummy_wgrad_bytes));
  l.recompute = {};
  l.cpu_offload_layers = 3;  // layers 1-3 in host memory: layer 4 kept, one layer in transit
  const TrainingMemory o = training_memory(c, l, plan_cluster());
  CHECK(o.stages[0].by_component.activations == Approx(whole + 8 * T));
}

TEST_CASE("memory: FP8 saved inputs, amax history and FSDP buffers by hand", "[cluster][fsdp]") {
  const ArchConfig c = plan_dense(2);
  ParallelLayout l = sequence_of_1024(8);
  const double T = 1024, H = 1024;
  const double bf16 = layer_activation_bytes(c, 1, l, false).attention;
  l.fp8 = Fp8Recipe::mxfp8;
  // QKV input (H) and output-projection input (1024) at 1 + 1/32 bytes instead of 2.
  CHECK(layer_activation_bytes(c, 1, l, false).attention == Approx(bf16 - T * (2 * H) * (1.0 - 1.0 / 32)));
  l.fp8 = Fp8Recipe::delayed;
  l.fp8_amax_history = 1024;
  const double with_history = training_memory(c, l, plan_cluster()).stages[0].by_component.weights;
  l.fp8_amax_history = 1;
  const double short_history = training_memory(c, l, plan_cluster()).stages[0].by_component.weights;
  // 2 layers × 4 GEMMs × 3 tensors × 1023 more fp32 entries.
  CHECK(with_history - short_history == Approx(2 * 4 * 3 * 1023 * 4.0));
  l.fp8 = Fp8Recipe::none;
  l.cross_entropy_fusion = true;  // no bf16-beside-fp32 logits transient to compare against
  l.fsdp = FsdpKind::torch_fsdp2;
  const TrainingMemory f = training_memory(c, l, plan_cluster());
  // The largest layer per GPU: QKV 3·1024², output 1024², fc1 2·4096·1024, fc2 4096·1024, 2 norms.
  const double layer = 4.0 * 1024 * 1024 + 3.0 * 4096 * 1024 + 2 * 1024;
  l.fsdp = FsdpKind::none;
  const TrainingMemory d = training_memory(c, l, plan_cluster());
  // Two gathered bf16 layers (4 bytes a parameter) and one layer's fp32 gradients (4).
  CHECK(f.stages[0].by_component.buffers - d.stages[0].by_component.buffers == Approx(layer * 8.0));
  // ZeRO-3 gathers the weights before each micro-batch's forward and backward: 2m calls.
  l.fsdp = FsdpKind::torch_fsdp2;
  l.micro_batches = 4;
  const std::vector<StageCommunication> comm = test::communication_of(c, l, plan_cluster());
  bool found = false;
  for (const CommTerm& t : comm[0].terms) {
    if (t.name == "dp_param") {
      CHECK(t.calls_per_step == 8.0);
      found = true;
    }
    if (t.name == "dp_grad") CHECK(t.calls_per_step == 4.0);
  }
  CHECK(found);
}
