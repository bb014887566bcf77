// The Hugging Face families of 2025 (config/hf_families_2025.cpp, config/hf_layouts*.cpp): each read
// from a released config.json (tests/data/hf/, sources in tests/data/hf/SOURCES.md) and checked
// exactly against a hand count (arithmetic in the comments) and against the authors' published
// totals; then the refusals, each naming what is not modelled.

#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "budget/accounting.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/ops.hpp"
#include "config/config_test_support.hpp"

using namespace budget;
using namespace budget::test;

namespace {
const std::string hf_data = std::string(BUDGET_TEST_DATA_DIR) + "/hf/";

/// Active with the LM head but not the input embedding (a row read, not a matmul): the convention
/// of the DeepSeek, gpt-oss and Nemotron cards.
std::int64_t active_with_head(const Budgets& b) { return b.non_embedding_params_active + b.embedding_params / 2; }
std::string error_of(const std::string& text) { return test::config_text_error(text, "hf.json"); }
}  // namespace

TEST_CASE("families 2025: gpt-oss-120b is 116.83B total, 5.13B active (OpenAI's model card), exact", "[config][hf][2025]") {
  const ArchConfig c = load_arch_config(hf_data + "gpt-oss-120b.json");
  CHECK(c.attention.sinks);
  CHECK(c.attention.qkv_bias);
  CHECK(c.attention.output_bias);
  CHECK(c.ffn.bias);
  CHECK(c.ffn.router_bias);
  CHECK(c.sliding_attention_layers() == 18);
  const Budgets b = paper_budgets(c);
  // H 2880, q 64·64 = 4096, kv 8·64 = 512. Attention a layer: W_qkv 2880·5120 = 14,745,600 + its
  // biases 5,120, W_o 4096·2880 = 11,796,480 + 2,880, sinks 64: 26,550,144. An expert: gate_up
  // 2880·5760 + 5,760 and down 2880·2880 + 2,880 = 24,891,840; 128 of them 3,186,155,520; router
  // 128·2880 + 128 = 368,768; norms 5,760. Layer 3,213,080,192; ×36 + final norm 2,880.
  CHECK(b.non_embedding_params_total == 115'670'889'792);
  CHECK(b.embedding_params == 2 * 201'088 * 2'880);
  CHECK(total_with_embeddings(b) == 116'829'156'672);
  // Active: 36·(26,550,144 + 4·24,891,840 + 368,768 + 5,760) + 2,880 = 4,553,716,032, + the LM head
  // 579,133,440 = 5,132,849,472.
  CHECK(b.non_embedding_params_active == 4'553'716'032);
  CHECK(active_with_head(b) == 5'132'849'472);
  // The gpt-oss model card (Table 1): 116.83B total, 5.13B active; the same at that precision.
  CHECK(std::llround(static_cast<double>(total_with_embeddings(b)) / 1e7) == 11683);
  CHECK(std::llround(static_cast<double>(active_with_head(b)) / 1e7) == 513);
  // KV: 18 full layers · 2·512 = 18,432 per token; 18 sliding layers keep 128 tokens each.
  CHECK(b.kv_elements_per_token == 18'432);
  CHECK(b.kv_window_elements_per_sequence == 18 * 1'024 * 128);
  CHECK(b.state_elements_per_sequence == 0);
}

TEST_CASE("families 2025: gpt-oss-20b is 20.91B total, 3.61B active, exact at that precision", "[config][hf][2025]") {
  const Budgets b = paper_budgets(load_arch_config(hf_data + "gpt-oss-20b.json"));
  // 24 layers of 26,550,144 + 32·24,891,840 + 32·2880 + 32 + 5,760 = 823,186,976, + 2,880.
  CHECK(b.non_embedding_params_total == 19'756'490'304);
  CHECK(total_with_embeddings(b) == 20'914'757'184);
  CHECK(active_with_head(b) == 3'608'307'264);
  CHECK(std::llround(static_cast<double>(total_with_embeddings(b)) / 1e7) == 2091);
  CHECK(std::llround(static_cast<double>(active_with_head(b)) / 1e7) == 361);
}

TEST_CASE("families 2025: Llama-4 Scout, chunked and no-RoPE layers, 17B active (Meta)", "[config][hf][2025]") {
  const ArchConfig c = load_arch_config(hf_data + "llama-4-scout-17b-16e-instruct.json");
  CHECK(c.attention.chunk_size == 8192);
  const LayerCounts n = c.layer_counts();
  CHECK(n.chunked_attention.physical == 36);  // RoPE layers; every 4th layer (4, 8, ..., 48) is NoPE, full
  CHECK(n.full_attention.physical == 12);
  CHECK(c.settings.nope_layers.size() == 12);
  CHECK(c.settings.nope_layers.front() == 4);
  CHECK(c.ffn.num_shared_experts == 1);
  CHECK(c.layer_ffns.empty());  // interleave_moe_layer_step 1: every layer MoE
  const Budgets b = paper_budgets(c);
  // Attention 5120·(5120 + 2048) + 5120·5120 = 62,914,560; norms 10,240; router 16·5120 = 81,920;
  // one expert (or the shared one) 3·5120·8192 = 125,829,120; 17 of them. Layer 2,202,101,760 ×48 + 5,120.
  CHECK(b.non_embedding_params_total == 105'700'889'600);
  CHECK(total_with_embeddings(b) == 107'769'861'120);
  // Active: 48·(62,914,560 + 10,240 + 81,920 + 2·125,829,120) + 5,120 = 15,103,923,200; with embedding
  // and head 17,172,894,720 (Meta counts both: "17B active").
  CHECK(b.non_embedding_params_active == 15'103'923'200);
  CHECK(relative_off(b.non_embedding_params_active + b.embedding_params, 17e9) < 0.011);
  // Meta's 109B total includes the vision encoder and projector, not counted here: the text model is
  // 107.8B, 1.1% below it.
  CHECK(relative_off(total_with_embeddings(b), 109e9) < 0.012);
  // KV: 12 full layers · 2·8·128 = 24,576 per token; the chunked ones keep their chunk, bounded by a
  // 4096-token window: 36·2048·4096.
  CHECK(b.kv_elements_per_token == 24'576);
  CHECK(b.kv_window_elements_per_sequence == 36LL * 2'048 * 4'096);
}

TEST_CASE("families 2025: Llama-4 Maverick, MoE every other layer, 400B total (Meta)", "[config][hf][2025]") {
  const ArchConfig c = load_arch_config(hf_data + "llama-4-maverick-17b-128e-instruct.json");
  REQUIRE(c.layer_ffns.size() == 48);
  CHECK(c.layer_ffns[0] == LayerFfn::dense);  // moe_layers: 1, 3, ..., 47 (0-based)
  CHECK(c.layer_ffns[1] == LayerFfn::moe);
  CHECK(c.ffn.dense_dim == 16'384);
  const Budgets b = paper_budgets(c);
  // MoE layer: 62,914,560 + 10,240 + 128·5120 + 129·125,829,120 = 16,295,536,640; dense layer:
  // 62,914,560 + 10,240 + 3·5120·16384 = 314,583,040; 24 of each, + 5,120.
  CHECK(b.non_embedding_params_total == 24 * 16'295'536'640LL + 24 * 314'583'040LL + 5'120);
  CHECK(relative_off(total_with_embeddings(b), 400e9) < 0.002);
  CHECK(relative_off(b.non_embedding_params_active + b.embedding_params, 17e9) < 0.011);
}

TEST_CASE("families 2025: Qwen3-Next-80B-A3B, 36 Gated DeltaNet and 12 gated full layers", "[config][hf][2025][hybrid]") {
  const ArchConfig c = load_arch_config(hf_data + "qwen3-next-80b-a3b-thinking.json");
  const LayerCounts n = c.layer_counts();
  CHECK(n.linear_attention.physical == 36);
  CHECK(n.full_attention.physical == 12);
  CHECK(c.mixer_of_layer(4) == LayerMixer::attention);  // full_attention_interval 4
  CHECK(c.mixer_of_layer(1) == LayerMixer::linear_attention);
  CHECK(c.attention.output_gate);
  REQUIRE(c.linear_attention);
  CHECK(c.linear_attention->conv_width() == 8'192);
  CHECK(c.settings.partial_rotary_factor == 0.25);
  const Budgets b = paper_budgets(c);
  // Full layer: W_qkv+gate 2048·(2·4096 + 2·512) = 18,874,368, W_o 4096·2048 = 8,388,608.
  // DeltaNet layer: in_proj 2048·(2·2048 + 2·4096 + 2·32) = 25,296,896, conv 8192·4 = 32,768, dt_bias
  // and A_log 64, out_proj 8,388,608: 33,718,336. MoE (every layer): router 512·2048 = 1,048,576,
  // 512 experts of 3·2048·512 = 3,145,728, shared 3,145,728 + gate 2,048: 1,614,809,088. Norms 4,096
  // + q/k norms 512 (full) or the gated norm 128 (DeltaNet).
  CHECK(b.non_embedding_params_total == 12 * (27'262'976LL + 1'614'809'088 + 4'608) +
                                            36 * (33'718'336LL + 1'614'809'088 + 4'224) + 2'048);
  CHECK(b.non_embedding_params_total == 79'052'061'440);
  // Qwen: "80B in total and 3B activated": 79.67B with embedding and head (0.4% below 80B); 3.25B
  // active without them, 3B to the published single digit.
  CHECK(relative_off(total_with_embeddings(b), 80e9) < 0.005);
  CHECK(b.non_embedding_params_active == 3'252'599'552);
  CHECK(std::llround(static_cast<double>(b.non_embedding_params_active) / 1e9) == 3);
  // KV: 12 full layers · 2·2·256 = 12,288 per token. State: 36 layers · (32·128·128 + 8192·3).
  CHECK(b.kv_elements_per_token == 12'288);
  CHECK(b.state_elements_per_sequence == 36 * 548'864);
  CHECK(b.state_bytes_per_sequence == 2 * 36 * 548'864);
}

TEST_CASE("families 2025: Qwen3-Next's delta-rule scan FLOPs by hand", "[config][hf][2025][hybrid]") {
  const ArchConfig c = load_arch_config(hf_data + "qwen3-next-80b-a3b-thinking.json");
  const std::vector<Op> ops = layer_ops(c, paper_workload());
  const Op* scan = find_op(ops, OpKind::delta_rule_scan);
  REQUIRE(scan != nullptr);
  // 32 heads · (6·64·128 + 4·64·128 + 6·128·128 + 63·127/3) = 32 · 182,891 = 5,852,512 (+ 1/3 each).
  CHECK(scan->forward_flops == Approx(32.0 * (49'152 + 32'768 + 98'304 + 63.0 * 127.0 / 3.0)));
  CHECK(scan->executed_layers == 36);
  const Op* conv = find_op(ops, OpKind::short_convolution);
  REQUIRE(conv != nullptr);
  CHECK(conv->forward_flops == 2.0 * 4 * 8'192);
  CHECK(find_op(ops, OpKind::attention_gate) != nullptr);
  // Forward: the gate's 2·2048·4096 more FLOPs in the full layers' QKV projection.
  CHECK(find_op(ops, OpKind::qkv_projection)->forward_flops == 2.0 * 18'874'368);
}

TEST_CASE("families 2025: Nemotron-3-Nano-30B-A3B, a Mamba-2/MoE/attention hybrid (NVIDIA's figures)",
          "[config][hf][2025][hybrid]") {
  const ArchConfig c = load_arch_config(hf_data + "nemotron-3-nano-30b-a3b.json");
  const LayerCounts n = c.layer_counts();
  CHECK(n.mamba.physical == 23);
  CHECK(n.moe.physical == 23);
  CHECK(n.full_attention.physical == 6);
  CHECK(n.no_ffn.physical == 29);
  CHECK_FALSE(c.ffn.gated);
  REQUIRE(c.mamba);
  CHECK(c.mamba->inner() == 4'096);
  const Budgets b = paper_budgets(c);
  // Mamba block: in_proj 2688·(2·4096 + 2·8·128 + 64) = 27,697,152, conv (4096 + 2048)·4 + 6144
  // biases, A_log/D/dt_bias 192, out_proj 4096·2688 = 11,010,048: 38,738,112; norms 2688 + gated 4096.
  // MoE block: router 128·2688 + 128, 128 experts of 2·2688·1856, shared 2·2688·3712: 1,297,465,472;
  // norm 2688. Attention block: 2688·(4096 + 512) + 4096·2688 = 23,396,352; norm 2688.
  CHECK(b.non_embedding_params_total ==
        23 * (38'738'112LL + 6'784) + 23 * (1'297'465'472LL + 2'688) + 6 * (23'396'352LL + 2'688) + 2'688);
  // NVIDIA: 31.6B total, about 3.2B active (3.6B with the embeddings).
  CHECK(total_with_embeddings(b) == 31'577'940'288);
  CHECK(relative_off(total_with_embeddings(b), 31.6e9) < 0.001);
  CHECK(std::llround(static_cast<double>(active_with_head(b)) / 1e8) == 32);
  CHECK(std::llround(static_cast<double>(b.non_embedding_params_active + b.embedding_params) / 1e8) == 36);
  // KV: 6 attention layers · 2·2·128 = 3,072 per token; state: 23 · (64·64·128 + 6144·3).
  CHECK(b.kv_elements_per_token == 3'072);
  CHECK(b.state_elements_per_sequence == 23 * 542'720);
}

TEST_CASE("families 2025: DeepSeek-V3.2 is V3 plus the lightning indexer", "[config][hf][2025]") {
  const ArchConfig c = load_arch_config(hf_data + "deepseek-v3.2.json");
  REQUIRE(c.attention.indexer);
  CHECK(c.attention.indexer->top_k == 2'048);
  const Budgets b = paper_budgets(c);
  // DeepSeek-V3's 669,173,061,120 (test_config_families.cpp) + 61 indexers of wq_b 1536·64·128 =
  // 12,582,912, wk 7168·128 = 917,504, weights_proj 7168·64 = 458,752, k_norm 2·128: 13,959,424.
  CHECK(b.non_embedding_params_total == 669'173'061'120 + 61 * 13'959'424LL);
  // DeepSeek: 671B (V3.2 keeps V3's sizes); with the indexers 671.9B, 0.13% above.
  CHECK(relative_off(total_with_embeddings(b), 671e9) < 0.002);
  // KV: 61 · (512 + 64 + the index key 128) per token.
  CHECK(b.kv_elements_per_token == 61 * 704);
  // Scores: the indexer scores all A keys, attention only the top 2048 (A = 400 here: all of them).
  const std::vector<Op> ops = layer_ops(c, causal_workload(8192));
  const Op* index_scores = find_op(ops, OpKind::indexer_scores);
  REQUIRE(index_scores != nullptr);
  const double A = 8193.0 / 2.0;
  CHECK(index_scores->forward_flops == Approx(2.0 * (64 * 128 + 64) * A));
  // Causal 8192 window, top 2048: (2048·2049/2 + 6144·2048)/8192 = 1,792.125 keys.
  CHECK(find_op(ops, OpKind::attention_scores)->forward_flops == Approx(2.0 * 128 * (192 + 128) * 1'792.125));
}

TEST_CASE("families 2025: MiniMax-M2.5, full-width q/k norms, routing bias, MTP said", "[config][hf][2025]") {
  const ArchConfig c = load_arch_config(hf_data + "minimax-m2.5.json");
  CHECK(c.attention.qk_norm == QkNorm::full);
  CHECK(c.ffn.router_bias);
  CHECK(c.settings.partial_rotary_factor == 0.5);  // rotary_dim 64 of head_dim 128
  CHECK(c.settings.router_score == RouterScore::sigmoid);
  bool mtp_said = false;
  for (const auto& note : c.notes) mtp_said = mtp_said || note.find("use_mtp") != std::string::npos;
  CHECK(mtp_said);
  bool quantization_said = false;
  for (const auto& note : c.notes) quantization_said = quantization_said || note.find("quantization_config") == 0;
  CHECK(quantization_said);
  const Budgets b = paper_budgets(c);
  // Layer: attention 3072·(6144 + 2048) + 6144·3072 = 44,040,192; norms 6,144 + q/k 6,144 + 1,024;
  // 256 experts of 3·3072·1536 = 14,155,776; router 256·3072 + 256. 62 layers + 3,072.
  CHECK(b.non_embedding_params_total == 62 * (44'040'192LL + 13'312 + 256 * 14'155'776LL + 786'688) + 3'072);
  // MiniMax: 230B total, 10B active (one significant digit): 228.7B and 10.4B here.
  CHECK(relative_off(total_with_embeddings(b), 230e9) < 0.006);
  CHECK(std::llround(static_cast<double>(active_with_head(b)) / 1e9) == 10);
}

TEST_CASE("families 2025: glm4_moe by hand (GLM-4.5's published architecture)", "[config][hf][2025]") {
  // No complete released GLM-4.5/4.6/4.7 config was found (tests/data/hf/SOURCES.md): this one is
  // written from the GLM-4.5 report's Table 1 (5120 hidden, 92 layers of which 3 dense, 96 heads of
  // 128, 8 KV heads, 160 experts of 1536, 8 active, 1 shared, dense width 12288, QK-norm, MTP 1).
  const ArchConfig c = parse_arch_config(R"({"model_type": "glm4_moe", "architectures": ["Glm4MoeForCausalLM"],
      "hidden_size": 5120, "num_hidden_layers": 92, "num_attention_heads": 96, "num_key_value_heads": 8,
      "head_dim": 128, "intermediate_size": 12288, "moe_intermediate_size": 1536, "n_routed_experts": 160,
      "num_experts_per_tok": 8, "n_shared_experts": 1, "first_k_dense_replace": 3, "attention_bias": true,
      "use_qk_norm": true, "partial_rotary_factor": 0.5, "num_nextn_predict_layers": 1, "vocab_size": 151552,
      "tie_word_embeddings": false})",
                                         "glm.json");
  CHECK(c.attention.qkv_bias);
  CHECK_FALSE(c.attention.output_bias);
  CHECK(c.attention.qk_norm == QkNorm::per_head);
  CHECK(c.mtp_layers == 1);
  const Budgets b = paper_budgets(c);
  // Attention 5120·(12288 + 2048) + 14,336 biases + 12288·5120 = 136,329,216; norms 10,240 + 256.
  // Expert 3·5120·1536 = 23,592,960. MoE: 161 of them + router 160·5120 + bias 160 = 3,799,285,920.
  // Dense: 3·5120·12288 = 188,743,680.
  const std::int64_t attention = 136'329'216 + 10'496;
  CHECK(b.non_embedding_params_total == 3 * (attention + 188'743'680) + 89 * (attention + 3'799'285'920LL) + 5'120);
  // GLM-4.5: 355B total, 32B active: 352.8B with embedding and head (0.6% below; the MTP layer is
  // apart), 32.08B active without them.
  CHECK(relative_off(total_with_embeddings(b), 355e9) < 0.01);
  CHECK(relative_off(b.non_embedding_params_active, 32e9) < 0.01);
}

TEST_CASE("families 2025: ernie4_5_moe by hand (ERNIE-4.5-21B-A3B's published architecture)", "[config][hf][2025]") {
  // No released ERNIE-4.5 MoE config was found (tests/data/hf/SOURCES.md): written from the ERNIE 4.5
  // report's table for the 21B-A3B model (28 layers, 20 heads, 4 KV heads, 64 experts of which 6
  // active, 2 shared, MoE from layer 1).
  const ArchConfig c = parse_arch_config(R"({"model_type": "ernie4_5_moe", "hidden_size": 2560,
      "num_hidden_layers": 28, "num_attention_heads": 20, "num_key_value_heads": 4, "head_dim": 128,
      "intermediate_size": 12288, "moe_intermediate_size": 1536, "moe_num_experts": 64, "moe_k": 6,
      "moe_num_shared_experts": 2, "moe_layer_start_index": 1, "moe_layer_end_index": 27, "moe_layer_interval": 1,
      "use_bias": false, "vocab_size": 103424, "tie_word_embeddings": true})",
                                         "ernie.json");
  CHECK(c.ffn.first_dense_layers == 1);
  CHECK(c.ffn.num_shared_experts == 2);
  CHECK(c.ffn.router_bias);
  const Budgets b = paper_budgets(c);
  // Attention 2560·(2560 + 1024) + 2560·2560 = 15,728,640; norms 5,120. Layer 0 dense: 3·2560·12288 =
  // 94,371,840. MoE layers 1-27: 66 experts of 3·2560·1536 = 11,796,480, router 64·2560 + 64 bias.
  CHECK(b.non_embedding_params_total ==
        (15'728'640 + 5'120 + 94'371'840) + 27 * (15'728'640 + 5'120 + 66 * 11'796'480LL + 163'904) + 2'560);
  // Tied: the embedding once, 103424·2560.
  CHECK(b.embedding_params == 103'424LL * 2'560);
  CHECK(relative_off(total_with_embeddings(b), 21.8e9) < 0.01);  // the 21B of the name is 21.8B (report: "21B")
}

TEST_CASE("families 2025: what is not modelled is refused by name", "[config][hf][2025][refuse]") {
  // (A released file with Python's Infinity in time_step_limit is read: test_config_hf_python_json.cpp.)
  // aiconfigurator's abridged GLM-4.7: the q/k/v biases are required, not guessed.
  CHECK_THAT(config_file_error(hf_data + "refused/glm-4.7-fp8-abridged.json"),
             Catch::Contains("/attention_bias: required key is missing: the family \"glm4_moe\""));
  const std::string nemotron = R"({"model_type": "nemotron_h", "hidden_size": 256, "num_hidden_layers": 3,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "mamba_num_heads": 8, "mamba_head_dim": 32, "ssm_state_size": 16, "n_groups": 2, "vocab_size": 0,
      "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
      "moe_shared_expert_intermediate_size": 128, )";
  CHECK(parse_arch_config(nemotron + R"("hybrid_override_pattern": "M*E"})", "n.json").num_layers == 3);
  CHECK_THAT(error_of(nemotron + R"("hybrid_override_pattern": "M*E", "moe_latent_size": 64})"),
             Catch::Contains("/moe_latent_size: latent MoE"));
  CHECK_THAT(error_of(nemotron + R"("hybrid_override_pattern": "M*EM"})"),
             Catch::Contains("/num_hidden_layers: num_hidden_layers 3 differs from the 4 blocks"));
  CHECK_THAT(error_of(nemotron + R"("hybrid_override_pattern": "M*X"})"),
             Catch::Contains("/hybrid_override_pattern: block kind \"X\""));
  CHECK_THAT(error_of(nemotron + R"("hybrid_override_pattern": "M*E", "num_nextn_predict_layers": 1})"),
             Catch::Contains("/num_nextn_predict_layers: multi-token prediction of a hybrid stack"));
  // Another family's sparse-attention keys, zero-computation experts: refused as such.
  const std::string qwen3 = R"({"model_type": "qwen3", "hidden_size": 256, "num_hidden_layers": 4,
      "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 0, )";
  CHECK_THAT(error_of(qwen3 + R"("index_topk": 2048})"), Catch::Contains("/index_topk: sets DeepSeek sparse attention"));
  CHECK_THAT(error_of(qwen3 + R"("zero_expert_num": 8})"), Catch::Contains("/zero_expert_num: sets zero-computation experts"));
  CHECK_THAT(error_of(qwen3 + R"("hybrid_override_pattern": "M*M*"})"), Catch::Contains("/hybrid_override_pattern"));
  // Qwen3-Next layer kinds other than its two.
  CHECK_THAT(error_of(R"({"model_type": "qwen3_next", "hidden_size": 256, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 0, "num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 64, "shared_expert_intermediate_size": 64, "linear_num_key_heads": 2,
      "linear_num_value_heads": 4, "linear_key_head_dim": 32, "linear_value_head_dim": 32,
      "layer_types": ["sliding_attention", "full_attention"]})"),
             Catch::Contains("/layer_types: layer kind \"sliding_attention\" is not one Qwen3-Next has"));
  // gpt-oss: openai's experts_per_token must agree with num_experts_per_tok.
  CHECK_THAT(error_of(R"({"model_type": "gpt_oss", "hidden_size": 256, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 0, "num_local_experts": 8,
      "num_experts_per_tok": 2, "experts_per_token": 4, "max_position_embeddings": 4096,
      "layer_types": ["sliding_attention", "full_attention"]})"),
             Catch::Contains("/experts_per_token: experts_per_token differs from num_experts_per_tok 2"));
}
