// Hugging Face families (config/hf_families.cpp, config/config_hf.cpp): each supported family read from a released config.json
// (tests/data/hf/) and checked twice: exactly against an independent hand count (arithmetic in the
// comments), and against the authors' published totals (±1% total, ±2% active unless a comment
// says why not). Then the refusals: one per unsupported family and one per refused key, each
// message naming the family or the key; and the native round trip (HF → native JSON → read gives
// identical budgets) for every family.

#include <cmath>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "budget/accounting.hpp"
#include "budget/attention_cost.hpp"
#include "budget/config_hf.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/match.hpp"
#include "budget/ops.hpp"
#include "config/config_test_support.hpp"

using namespace budget;
using namespace budget::test;

namespace {
const std::string hf_data = std::string(BUDGET_TEST_DATA_DIR) + "/hf/";

std::int64_t active_with_embeddings(const Budgets& b) { return b.non_embedding_params_active + b.embedding_params; }

std::string error_of(const std::string& text) { return test::config_text_error(text, "hf.json"); }
}  // namespace

// --- Multi-head latent attention: DeepSeek-V2, V2-Lite, V3, Kimi-K2 -------------------------------

TEST_CASE("families: DeepSeek-V3 is 671B total, 37B active, MTP apart (DeepSeek's figures)", "[config][hf][mla]") {
  const ArchConfig c = load_arch_config(hf_data + "deepseek-v3.json");
  REQUIRE(c.attention.mla);
  CHECK(c.attention.mla->q_lora_rank == 1536);
  CHECK(c.attention.head_dim == 192);  // qk_nope 128 + qk_rope 64 (the config's num_key_value_heads is not used)
  CHECK(c.attention.num_kv_heads == 1);
  CHECK(c.ffn.router_bias);
  CHECK(c.mtp_layers == 1);
  const Budgets b = paper_budgets(c);
  // Attention per layer: W_dq 7168·1536 = 11,010,048; q norm 1,536; W_uq 1536·(128·192) =
  // 37,748,736; W_dkv 7168·(512 + 64) = 4,128,768; kv norm 512; W_ukv 512·(128·(128 + 128)) =
  // 16,777,216; W_o (128·128)·7168 = 117,440,512. Sum 187,107,328; + 2 norms 14,336.
  // Expert 3·7168·2048 = 44,040,192. MoE FFN: 256 routed 11,274,289,152 + 1 shared 44,040,192 +
  // router 256·7168 = 1,835,008 + router bias 256 = 11,320,164,608. Dense FFN 3·7168·18432 =
  // 396,361,728. Layers 1–3 dense: 3·(187,107,328 + 14,336 + 396,361,728) = 1,750,450,176;
  // layers 4–61: 58·(187,107,328 + 14,336 + 11,320,164,608) = 667,422,603,776; final norm 7,168.
  CHECK(b.non_embedding_params_total == 669'173'061'120);
  // Embedding and LM head: 2·129,280·7,168 = 1,853,358,080.
  CHECK(b.embedding_params == 1'853'358'080);
  CHECK(total_with_embeddings(b) == 671'026'419'200);
  // Active MoE FFN: 8 + 1 experts 396,361,728 + router 1,835,264 = 398,196,992; per MoE layer
  // 585,318,656 ·58 = 33,948,482,048; + dense layers 1,750,450,176 + final norm = 35,698,939,392.
  CHECK(b.non_embedding_params_active == 35'698'939'392);
  // MTP module: one MoE layer 11,507,286,272 + W_eh 2·7168·7168 = 102,760,448 + 3 norms 21,504.
  CHECK(b.mtp_params == 11'610'068'224);
  // KV cache (absorbed MLA): 61 layers · (512 + 64) = 35,136 elements per token.
  CHECK(b.kv_elements_per_token == 35'136);

  // Published (DeepSeek-V3 technical report, abstract and §4.2): 671B total, 37B activated, the
  // main model without the MTP module. The totals include embedding and LM head; the activated
  // count is reproduced without the input-embedding lookup (a row read, not a matmul) and with
  // the LM head: 35.70B + 0.93B = 36.63B (with the embedding too it would be 37.55B, "38B").
  CHECK(relative_off(total_with_embeddings(b), 671e9) < 0.01);
  CHECK(relative_off(b.non_embedding_params_active + b.embedding_params / 2, 37e9) < 0.02);
  // The Hugging Face checkpoint holds 685B = 671B main + 14B MTP (DeepSeek-V3 README), the MTP
  // weights there including their own copy of embedding and LM head: 671.03 + 11.61 + 1.85 = 684.49B.
  CHECK(relative_off(total_with_embeddings(b) + b.mtp_params + b.embedding_params, 685e9) < 0.01);
}

TEST_CASE("families: DeepSeek-V3 MLA ops, FLOPs and KV by hand", "[config][hf][mla]") {
  const ArchConfig c = load_arch_config(hf_data + "deepseek-v3.json");
  const std::vector<Op> ops = layer_ops(c, paper_workload());
  REQUIRE(find_op(ops, OpKind::q_down_projection) != nullptr);
  CHECK(find_op(ops, OpKind::q_down_projection)->params_per_layer == 11'010'048);
  CHECK(find_op(ops, OpKind::q_up_projection)->params_per_layer == 37'748'736);
  CHECK(find_op(ops, OpKind::kv_down_projection)->out_features == 576);
  CHECK(find_op(ops, OpKind::kv_up_projection)->params_per_layer == 16'777'216);
  CHECK(find_op(ops, OpKind::output_projection)->in_features == 16'384);  // 128 heads · v_head_dim 128
  CHECK(find_op(ops, OpKind::qkv_projection) == nullptr);
  // Scores: QKᵀ over 192 dims and PV over 128 for 128 heads, A = 400:
  // 2·128·(192 + 128)·400 = 32,768,000 per layer.
  const Op* scores = find_op(ops, OpKind::attention_scores);
  CHECK(scores->forward_flops == 32'768'000.0);
  CHECK(scores->value_features == 128);
  // Norms per layer: 2·7168 + q_lora 1536 + kv_lora 512 = 16,384.
  CHECK(find_op(ops, OpKind::norms)->params_per_layer == 16'384);
  // Forward per token: projections 2·(11,010,048 + 37,748,736 + 4,128,768 + 16,777,216 +
  // 117,440,512) = 374,210,560 and scores 32,768,000 on 61 layers; FFN 2·396,361,728 = 792,723,456
  // on 3 dense layers; MoE 2·(8 + 1)·44,040,192 + 2·1,835,008 = 796,393,472 on 58 layers.
  // 61·406,978,560 + 3·792,723,456 + 58·796,393,472 = 24,825,692,160 + 2,378,170,368 +
  // 46,190,821,376 = 73,394,683,904; training (×3) 220,184,051,712.
  const Budgets b = paper_budgets(c);
  CHECK(b.forward_flops_per_token == 73'394'683'904.0);
  CHECK(b.training_flops_per_token == 220'184'051'712.0);
  CHECK(b.forward_by_component.qkv_projection == 61.0 * 2 * (11'010'048 + 37'748'736 + 4'128'768 + 16'777'216));
  // MTP forward apart: one MoE layer 406,978,560 + 796,393,472 + W_eh 2·102,760,448 = 1,408,892,928.
  CHECK(b.mtp_forward_flops_per_token == 1'408'892'928.0);
}

TEST_CASE("families: DeepSeek-V2 is 236B total, 21B active (DeepSeek's figures)", "[config][hf][mla]") {
  const ArchConfig c = load_arch_config(hf_data + "deepseek-v2.json");
  CHECK_FALSE(c.ffn.router_bias);  // topk_method group_limited_greedy: no e_score_correction_bias
  CHECK(c.mtp_layers == 0);
  const Budgets b = paper_budgets(c);
  // Attention: W_dq 5120·1536 = 7,864,320; 1,536; W_uq 1536·24576 = 37,748,736; W_dkv 5120·576 =
  // 2,949,120; 512; W_ukv 512·32768 = 16,777,216; W_o 16384·5120 = 83,886,080: 149,227,520; norms
  // 10,240. Expert 3·5120·1536 = 23,592,960; MoE FFN 160·23,592,960 + 2·23,592,960 + 160·5120 =
  // 3,822,878,720; dense 3·5120·12288 = 188,743,680. Layer 1: 337,981,440; 59 MoE layers:
  // 59·3,972,116,480 = 234,354,872,320; final norm 5,120.
  CHECK(b.non_embedding_params_total == 234'692'858'880);
  CHECK(b.embedding_params == 1'048'576'000);  // 2·102400·5120
  // Active: MoE FFN 6·23,592,960 + 47,185,920 + 819,200 = 189,562,880; 59·338,800,640 +
  // 337,981,440 + 5,120 = 20,327,224,320.
  CHECK(b.non_embedding_params_active == 20'327'224'320);
  CHECK(b.kv_elements_per_token == 60 * 576);
  // Published (DeepSeek-V2 paper, abstract): 236B total, 21B activated; activated counted as for
  // V3 (without the input-embedding lookup): 20.33B + 0.52B = 20.85B.
  CHECK(relative_off(total_with_embeddings(b), 236e9) < 0.01);
  CHECK(relative_off(b.non_embedding_params_active + b.embedding_params / 2, 21e9) < 0.02);
}

TEST_CASE("families: DeepSeek-V2-Lite is 15.7B total, its 2.4B active is reproduced to 2.1%", "[config][hf][mla]") {
  const ArchConfig c = load_arch_config(hf_data + "deepseek-v2-lite.json");
  CHECK(c.attention.mla->q_lora_rank == 0);  // "q_lora_rank": null: queries projected directly
  const Budgets b = paper_budgets(c);
  // Attention: W_q 2048·(16·192) = 6,291,456; W_dkv 2048·576 = 1,179,648; kv norm 512; W_ukv
  // 512·(16·256) = 2,097,152; W_o 2048·2048 = 4,194,304: 13,763,072; norms 4,096. Expert
  // 3·2048·1408 = 8,650,752; MoE FFN 64·8,650,752 + 2·8,650,752 + 64·2048 = 571,080,704; dense
  // 3·2048·10944 = 67,239,936. Layer 1: 81,007,104; 26 MoE layers 26·584,847,872 =
  // 15,206,044,672; final norm 2,048.
  CHECK(b.non_embedding_params_total == 15'287'053'824);
  CHECK(b.embedding_params == 419'430'400);
  // Active: MoE FFN 6·8,650,752 + 17,301,504 + 131,072 = 69,337,088; 26·83,104,256 + 81,007,104
  // + 2,048 = 2,241,719,808.
  CHECK(b.non_embedding_params_active == 2'241'719'808);
  // Forward per token (A = 400): projections 2·(6,291,456 + 1,179,648 + 2,097,152 + 4,194,304) =
  // 27,525,120 and scores 2·16·(192 + 128)·400 = 4,096,000 on 27 layers; dense 2·67,239,936 =
  // 134,479,872; MoE 2·(6 + 2)·8,650,752 + 2·131,072 = 138,674,176 on 26 layers:
  // 853,770,240 + 134,479,872 + 3,605,528,576 = 4,593,778,688.
  CHECK(b.forward_flops_per_token == 4'593'778'688.0);
  CHECK(b.kv_elements_per_token == 27 * 576);
  // Published (DeepSeek-V2 paper, appendix on V2-Lite): 15.7B total, 2.4B activated.
  CHECK(relative_off(total_with_embeddings(b), 15.7e9) < 0.01);
  // Activated: no convention reproduces 2.4B within 2%: without the input embedding 2.45B
  // (+2.1%), with it 2.66B, without embedding and LM head 2.24B. The closest is checked, with
  // the wider bound stated here rather than hidden.
  CHECK(relative_off(b.non_embedding_params_active + b.embedding_params / 2, 2.4e9) < 0.025);
}

TEST_CASE("families: Kimi-K2 (model_type kimi_k2) reads as DeepSeek-V3 architecture", "[config][hf][mla]") {
  const ArchConfig c = load_arch_config(hf_data + "kimi-k2.json");
  CHECK(c.ffn.num_experts == 384);
  CHECK(c.ffn.first_dense_layers == 1);
  CHECK(c.ffn.router_bias);
  CHECK(c.mtp_layers == 0);
  const Budgets b = paper_budgets(c);
  // Attention: W_dq 11,010,048; 1,536; W_uq 1536·(64·192) = 18,874,368; W_dkv 4,128,768; 512;
  // W_ukv 512·(64·256) = 8,388,608; W_o (64·128)·7168 = 58,720,256: 101,124,096; norms 14,336.
  // MoE FFN: 384·44,040,192 + 44,040,192 + 384·7168 + 384 = 16,958,226,816; dense 396,361,728.
  // Layer 1: 497,500,160; 60 MoE layers 60·17,059,365,248 = 1,023,561,914,880; final norm 7,168.
  CHECK(b.non_embedding_params_total == 1'024'059'422'208);
  CHECK(b.embedding_params == 2'348'810'240);  // 2·163840·7168
  // Active: MoE FFN 9·44,040,192 + 2,752,896 = 399,114,624; 60·500,253,056 + 497,500,160 + 7,168.
  CHECK(b.non_embedding_params_active == 30'512'690'688);
  // Published: model card "1T total, 32B activated"; the tech report's comparison table
  // 1.04T. Ours: 1.0264T total (with embeddings), 31.69B activated counted as for DeepSeek-V3.
  // 1.04T is not reproduced within 1% (−1.3%); it would be if all 61 layers were MoE layers
  // (1.043T) or with one MTP layer (1.044T), neither of which the released config has.
  CHECK(relative_off(b.non_embedding_params_active + b.embedding_params / 2, 32e9) < 0.02);
  CHECK(relative_off(total_with_embeddings(b), 1.04e12) < 0.015);
  CHECK(relative_off(total_with_embeddings(b), 1.0e12) < 0.05);  // "1T": the model card's one significant figure
}

// --- Grouped-query families ----------------------------------------------------------------------

TEST_CASE("families: Llama-3.1-8B is 8.03B", "[config][hf]") {
  const Budgets b = paper_budgets(load_arch_config(hf_data + "llama-3.1-8b.json"));
  // Layer: 4096·(4096 + 2·1024) + 4096·4096 = 41,943,040; MLP 3·4096·14336 = 176,160,768; norms
  // 8,192: 218,112,000 ·32 + 4,096 = 6,979,588,096. Embedding + head 2·128256·4096 = 1,050,673,152.
  CHECK(b.non_embedding_params_total == 6'979'588'096);
  CHECK(total_with_embeddings(b) == 8'030'261'248);
  // Published: 8.03B (the checkpoint's count on the Hugging Face hub; Meta's card says "8B").
  CHECK(relative_off(total_with_embeddings(b), 8.03e9) < 0.01);
}

TEST_CASE("families: Mistral-7B-v0.1 is 7.3B with sliding-window attention on every layer", "[config][hf][hybrid]") {
  const ArchConfig c = load_arch_config(hf_data + "mistral-7b-v0.1.json");
  CHECK(c.attention.sliding_window == 4096);  // below max_position_embeddings 32768: it bounds the cache
  CHECK(c.sliding_attention_layers() == 32);
  const Budgets b = paper_budgets(c);
  // Same layer as Llama-3.1-8B: 6,979,588,096; embedding + head 2·32000·4096 = 262,144,000.
  CHECK(total_with_embeddings(b) == 7'241'732'096);
  // Published (Mistral AI, "Mistral 7B" announcement): 7.3B; ours −0.8%.
  CHECK(relative_off(total_with_embeddings(b), 7.3e9) < 0.01);
  // KV: no layer keeps a growing cache; each of 32 layers keeps min(4096, seq_len = 4096) tokens
  // of 2·8·128 elements: 32·2048·4096 = 268,435,456 elements per sequence.
  CHECK(b.kv_elements_per_token == 0);
  CHECK(b.kv_window_elements_per_sequence == 268'435'456);
  CHECK(b.kv_bytes_per_sequence == 2 * 268'435'456);
  // Scores with a causal 8192-token window: a sliding layer attends min(i, 4096) keys, mean
  // (4096·4097/2 + 4096·4096)/8192 = 3072.25 (full attention: 4096.5).
  const std::vector<Op> ops = layer_ops(c, causal_workload(8192));
  CHECK(find_op(ops, OpKind::attention_scores)->forward_flops == 4.0 * 4096 * 3072.25);
  CHECK(causal_context_keys(8192, 4096) == 25'167'872);  // the workload model's count: 3072.25·8192
  CHECK(find_op(ops, OpKind::attention_scores)->physical_layers == 32);
}

TEST_CASE("families: a hybrid of full and sliding layers counts the KV cache of the full ones only", "[config][hf][hybrid]") {
  // Qwen2-style: use_sliding_window with max_window_layers = 2: layers 3–4 (0-based 2, 3) slide.
  const ArchConfig c = parse_arch_config(R"({"model_type": "qwen2", "hidden_size": 256, "num_hidden_layers": 4,
      "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 0,
      "use_sliding_window": true, "sliding_window": 1024, "max_window_layers": 2,
      "max_position_embeddings": 32768})",
                                         "qwen2-hybrid.json");
  CHECK(c.sliding_attention_layers() == 2);
  CHECK(c.attention_of_layer(1) == LayerAttention::full);
  CHECK(c.attention_of_layer(3) == LayerAttention::sliding);
  const Budgets b = paper_budgets(c);
  // KV per token: 2 full layers · 2·(2·64) = 512; window: 2 layers · 256 · min(1024, 4096) = 524,288.
  CHECK(b.kv_elements_per_token == 512);
  CHECK(b.kv_window_elements_per_sequence == 524'288);
  // The same through layer_types (transformers' newer form), and a loop over a sliding layer.
  ArchConfig looped = parse_arch_config(R"({"model_type": "qwen3", "hidden_size": 256, "num_hidden_layers": 4,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "sliding_window": 1024, "max_position_embeddings": 32768, "vocab_size": 0,
      "layer_types": ["full_attention", "full_attention", "sliding_attention", "sliding_attention"]})",
                                        "qwen3-hybrid.json");
  CHECK(looped.sliding_attention_layers() == 2);
  looped.loop = LoopConfig{2, 3, 2};  // executes layers 2 (full) and 3 (sliding) twice
  const Budgets lb = paper_budgets(looped);
  CHECK(lb.kv_elements_per_token == 3 * 256);                   // full executions: 1, 2, 2
  CHECK(lb.kv_window_elements_per_sequence == 3 * 256 * 1024);  // sliding executions: 3, 3, 4
}

TEST_CASE("families: Qwen2.5-7B is 7.61B, 6.53B non-embedding, q/k/v biases counted", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_data + "qwen2.5-7b.json");
  CHECK(c.attention.qkv_bias);
  CHECK_FALSE(c.attention.output_bias);
  CHECK(c.attention.layer_types.empty());  // use_sliding_window false
  const Budgets b = paper_budgets(c);
  // Layer: 3584·(3584 + 2·512) = 16,515,072 + biases 4,608 + W_o 12,845,056 = 29,364,736; MLP
  // 3·3584·18944 = 203,685,888; norms 7,168: 233,057,792 ·28 + 3,584 = 6,525,621,760.
  CHECK(b.non_embedding_params_total == 6'525'621'760);
  CHECK(b.embedding_params == 1'089'994'752);  // 2·152064·3584
  // Published (Qwen2.5-7B model card): 7.61B, non-embedding 6.53B.
  CHECK(relative_off(total_with_embeddings(b), 7.61e9) < 0.01);
  CHECK(relative_off(b.non_embedding_params_total, 6.53e9) < 0.01);
}

TEST_CASE("families: Qwen3-8B is 8.2B, 6.95B non-embedding, q/k norms counted", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_data + "qwen3-8b.json");
  CHECK(c.attention.qk_norm == QkNorm::per_head);
  const Budgets b = paper_budgets(c);
  // Layer: 4096·(4096 + 2·1024) + 4096·4096 = 41,943,040; q/k norms 2·128 = 256; MLP
  // 3·4096·12288 = 150,994,944; norms 8,192: 192,946,432 ·36 + 4,096 = 6,946,075,648.
  CHECK(b.non_embedding_params_total == 6'946'075'648);
  CHECK(total_with_embeddings(b) == 6'946'075'648 + 1'244'659'712);  // 2·151936·4096
  // Published (Qwen3-8B model card): 8.2B, non-embedding 6.95B.
  CHECK(relative_off(total_with_embeddings(b), 8.2e9) < 0.01);
  CHECK(relative_off(b.non_embedding_params_total, 6.95e9) < 0.01);
}

TEST_CASE("families: Qwen3-30B-A3B is 30.5B total, 3.3B active", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_data + "qwen3-30b-a3b.json");
  CHECK(c.ffn.num_experts == 128);
  CHECK(c.ffn.expert_dim == 768);
  CHECK(c.ffn.first_dense_layers == 0);  // mlp_only_layers []
  const Budgets b = paper_budgets(c);
  // Layer: 2048·(4096 + 2·512) + 4096·2048 = 18,874,368; q/k norms 256; experts 128·3·2048·768 =
  // 603,979,776; router 128·2048 = 262,144; norms 4,096: 623,120,640 ·48 + 2,048.
  CHECK(b.non_embedding_params_total == 29'909'792'768);
  // Active: 8 experts 37,748,736: 56,889,600 ·48 + 2,048 = 2,730,702,848.
  CHECK(b.non_embedding_params_active == 2'730'702'848);
  // Published (Qwen3-30B-A3B model card): 30.5B total, 3.3B activated, 29.9B non-embedding.
  CHECK(relative_off(total_with_embeddings(b), 30.5e9) < 0.01);
  CHECK(relative_off(active_with_embeddings(b), 3.3e9) < 0.02);
  CHECK(relative_off(b.non_embedding_params_total, 29.9e9) < 0.01);
}

TEST_CASE("families: OLMoE-1B-7B is 6.9B total, 1.3B active, full-width q/k norms", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_data + "olmoe-1b-7b-0924.json");
  CHECK(c.attention.qk_norm == QkNorm::full);
  const Budgets b = paper_budgets(c);
  // Layer: 4·2048² = 16,777,216; q/k norms 2048 + 2048; experts 64·3·2048·1024 = 402,653,184;
  // router 131,072; norms 4,096: 419,569,664 ·16 + 2,048 = 6,713,116,672.
  CHECK(b.non_embedding_params_total == 6'713'116'672);
  // Active: 8 experts 50,331,648: 67,248,128 ·16 + 2,048 = 1,075,972,096.
  CHECK(b.non_embedding_params_active == 1'075'972'096);
  // Published (OLMoE paper, abstract): 6.9B total, 1.3B active (embeddings 2·50304·2048 included).
  CHECK(relative_off(total_with_embeddings(b), 6.9e9) < 0.01);
  CHECK(relative_off(active_with_embeddings(b), 1.3e9) < 0.02);
}

TEST_CASE("families: Phi-3-mini is 3.8B, sliding window 2047 on every layer", "[config][hf][hybrid]") {
  const ArchConfig c = load_arch_config(hf_data + "phi-3-mini-4k.json");
  CHECK(c.sliding_attention_layers() == 32);
  const Budgets b = paper_budgets(c);
  // Layer: 4·3072² = 37,748,736; MLP 3·3072·8192 = 75,497,472; norms 6,144: 113,252,352 ·32 +
  // 3,072 = 3,624,078,336; embedding + head 2·32064·3072 = 197,001,216.
  CHECK(total_with_embeddings(b) == 3'821'079'552);
  // Published (Phi-3 technical report): 3.8B.
  CHECK(relative_off(total_with_embeddings(b), 3.8e9) < 0.01);
  // 32 layers · 2·3072 elements · min(2047, 4096) tokens.
  CHECK(b.kv_window_elements_per_sequence == 32LL * 6144 * 2047);
}

TEST_CASE("families: Phi-3.5-MoE is 41.9B total, 6.6B active, LayerNorm and biases counted", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_data + "phi-3.5-moe.json");
  CHECK(c.norm == NormKind::layernorm);
  CHECK(c.attention.qkv_bias);
  CHECK(c.attention.output_bias);
  CHECK(c.lm_head_bias);
  CHECK(c.attention.layer_types.empty());  // sliding_window 131072 = max_position_embeddings: never bounds
  const Budgets b = paper_budgets(c);
  // Layer: 4096·(4096 + 2048) + 4096·4096 = 41,943,040 + biases 4096 + 2·1024 + 4096 = 10,240;
  // experts 16·3·4096·6400 = 1,258,291,200; router 65,536; LayerNorms 2·2·4096 = 16,384:
  // 1,300,326,400 ·32 + final LayerNorm 8,192 = 41,610,452,992.
  CHECK(b.non_embedding_params_total == 41'610'452'992);
  // Embedding + head 2·32064·4096 = 262,668,288 + head bias 32,064.
  CHECK(b.embedding_params == 262'700'352);
  // Active: 2 experts 157,286,400: 199,321,600 ·32 + 8,192 = 6,378,299,392.
  CHECK(b.non_embedding_params_active == 6'378'299'392);
  // Published (Phi-3.5-MoE model card): 41.9B total, 6.6B active.
  CHECK(relative_off(total_with_embeddings(b), 41.9e9) < 0.01);
  CHECK(relative_off(active_with_embeddings(b), 6.6e9) < 0.02);
}

TEST_CASE("families: Granite-3.0-8B is 8.1B", "[config][hf]") {
  const Budgets b = paper_budgets(load_arch_config(hf_data + "granite-3.0-8b.json"));
  // Layer: 41,943,040 + MLP 3·4096·12800 = 157,286,400 + 8,192 = 199,237,632 ·40 + 4,096 =
  // 7,969,509,376; tied embedding 49155·4096 = 201,338,880.
  CHECK(total_with_embeddings(b) == 8'170'848'256);
  // Published (Granite 3.0 language models report, model table): 8.1B.
  CHECK(relative_off(total_with_embeddings(b), 8.1e9) < 0.01);
}

TEST_CASE("families: Granite-3.0-3B-A800M is 3.3B total, 800M active", "[config][hf]") {
  const Budgets b = paper_budgets(load_arch_config(hf_data + "granite-3.0-3b-a800m.json"));
  // Layer: 1536·(1536 + 2·512) + 1536² = 6,291,456; experts 40·3·1536·512 = 94,371,840; router
  // 61,440; norms 3,072: 100,727,808 ·32 + 1,536 = 3,223,291,392; tied embedding 75,502,080.
  CHECK(total_with_embeddings(b) == 3'298'793'472);
  // Active: 8 experts 18,874,368: 25,230,336 ·32 + 1,536 = 807,372,288.
  CHECK(b.non_embedding_params_active == 807'372'288);
  // Published (Granite 3.0 report): 3.3B total, 800M active; IBM's active count leaves out the
  // (tied) embedding, ours with it would be 0.88B.
  CHECK(relative_off(total_with_embeddings(b), 3.3e9) < 0.01);
  CHECK(relative_off(b.non_embedding_params_active, 800e6) < 0.02);
}

TEST_CASE("families: GPT-NeoX (Pythia) is a plain MLP with biases and LayerNorm, exact", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_data + "pythia-160m.json");
  CHECK_FALSE(c.ffn.gated);
  CHECK(c.ffn.bias);
  CHECK(c.attention.qkv_bias);
  CHECK(c.norm == NormKind::layernorm);
  const Budgets b = paper_budgets(c);
  // Layer: W_qkv 768·2304 + 2,304; W_o 768² + 768; MLP 2·768·3072 + 3,072 + 768; 2 LayerNorms
  // 3,072: 7,087,872 ·12 + final LayerNorm 1,536 = 85,056,000; embedding + head 2·50304·768.
  // Published (Pythia paper, Table 1): exactly 85,056,000 non-embedding, 162,322,944 total.
  CHECK(b.non_embedding_params_total == 85'056'000);
  CHECK(total_with_embeddings(b) == 162'322'944);
  // Pythia-1B: layer 50,358,272 ·16 + 4,096; published 805,736,448 and 1,011,781,632.
  const Budgets b1 = paper_budgets(load_arch_config(hf_data + "pythia-1b.json"));
  CHECK(b1.non_embedding_params_total == 805'736'448);
  CHECK(total_with_embeddings(b1) == 1'011'781'632);
}

TEST_CASE("families: a multimodal wrapper is read through its text_config (Mistral-Small-3.1)", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_data + "mistral-small-3.1-24b.json");
  CHECK(c.hidden_size == 5120);
  CHECK(c.num_layers == 40);
  CHECK(c.attention.head_dim == 128);
  const Budgets b = paper_budgets(c);
  // Layer: 5120·(4096 + 2048) + 4096·5120 = 52,428,800; MLP 3·5120·32768 = 503,316,480; norms
  // 10,240: 555,755,520 ·40 + 5,120; embedding + head 2·131072·5120 = 1,342,177,280.
  CHECK(total_with_embeddings(b) == 23'572'403'200);
  // Published (Mistral AI): "24B", which also counts the ~0.4B vision encoder we leave out: the
  // text model is within the figure's rounding, [23.5B, 24.5B).
  CHECK(total_with_embeddings(b) >= 23'500'000'000);
  CHECK(total_with_embeddings(b) < 24'500'000'000);
}

TEST_CASE("families: Qwen-MoE leading mlp_only_layers are first dense layers", "[config][hf]") {
  const ArchConfig c = parse_arch_config(R"({"model_type": "qwen3_moe", "hidden_size": 256, "num_hidden_layers": 4,
      "num_attention_heads": 4, "head_dim": 64, "num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 128, "intermediate_size": 1024, "mlp_only_layers": [1, 0], "vocab_size": 0})",
                                         "qwen3-moe.json");
  CHECK(c.ffn.first_dense_layers == 2);
  CHECK(c.ffn.dense_dim == 1024);
}

TEST_CASE("families: the family is read from architectures when model_type is absent", "[config][hf]") {
  const ArchConfig c = parse_arch_config(R"({"architectures": ["MixtralForCausalLM"], "hidden_size": 256,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "num_local_experts": 4,
      "num_experts_per_tok": 2, "intermediate_size": 512, "vocab_size": 0})",
                                         "mixtral.json");
  CHECK(c.ffn.num_experts == 4);
}

// --- Refusals ------------------------------------------------------------------------------------

TEST_CASE("families: unsupported families are refused with the supported list", "[config][hf][refuse]") {
  // Released configs, abridged to the keys that matter here.
  CHECK_THAT(config_file_error(hf_data + "refused/jetmoe-8b.json"),
             Catch::Contains("/model_type: family \"jetmoe\" is not supported") &&
                 Catch::Contains("supported families: llama, mistral"));
  // (qwen3_next and llama4_text, refused here before, are read now: test_config_families_2025.cpp.)
  CHECK_THAT(error_of(R"({"model_type": "llama4", "text_config": {"model_type": "llama4_vision_model",
      "hidden_size": 1408, "num_hidden_layers": 34}})"),
             Catch::Contains("/text_config/model_type: multimodal model \"llama4\": its text model family "
                             "\"llama4_vision_model\" is not supported"));
  CHECK_THAT(error_of(R"({"model_type": "qwen3_5_moe", "text_config": {"model_type": "qwen3_5_moe_text",
      "hidden_size": 2048, "num_hidden_layers": 40}, "vision_config": {}})"),
             Catch::Contains("its text model family \"qwen3_5_moe_text\" is not supported"));
  CHECK_THAT(error_of(R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768})"),
             Catch::Contains("family \"gpt2\" is not supported"));
  CHECK_THAT(error_of(R"({"architectures": ["JetMoEForCausalLM"], "num_hidden_layers": 24})"),
             Catch::Contains("/architectures: architecture \"JetMoEForCausalLM\" is not supported"));
  CHECK_THAT(error_of(R"({"num_hidden_layers": 24, "hidden_size": 1024})"),
             Catch::Contains("/model_type: required key is missing"));
}

TEST_CASE("families: every key that would change a count unmodelled is refused by name", "[config][hf][refuse]") {
  const std::string base = R"("hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
      "intermediate_size": 512, "vocab_size": 0)";
  const auto with = [&](const char* family, const std::string& extra) {
    return error_of(std::string(R"({"model_type": ")") + family + "\", " + base + ", " + extra + "}");
  };
  const std::string moe = R"("num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128, "head_dim": 64)";
  // Hybrid linear attention (Qwen3-Next / Qwen3.5 keys): never a 4× KV cache silently.
  CHECK_THAT(with("qwen3", R"("layer_types": ["full_attention", "linear_attention", "linear_attention",
      "linear_attention"])"),
             Catch::Contains("/layer_types: layer kind \"linear_attention\" is not modelled"));
  CHECK_THAT(with("qwen3", R"("full_attention_interval": 4)"),
             Catch::Contains("/full_attention_interval: sets hybrid linear/full attention layers"));
  CHECK_THAT(with("qwen3", R"("linear_num_key_heads": 16)"),
             Catch::Contains("/linear_num_key_heads: linear-attention layers"));
  // MoE placement.
  CHECK_THAT(with("qwen3_moe", moe + R"(, "decoder_sparse_step": 2)"),
             Catch::Contains("/decoder_sparse_step: MoE on only every k-th layer"));
  // 0 divides by zero in transformers ((layer_idx + 1) % decoder_sparse_step): not "every layer".
  CHECK_THAT(with("qwen3_moe", moe + R"(, "decoder_sparse_step": 0)"),
             Catch::Contains("/decoder_sparse_step: value 0 is out of range; allowed: an integer in [1, "));
  CHECK_THAT(with("qwen3_moe", moe + R"(, "mlp_only_layers": [1, 3])"),
             Catch::Contains("/mlp_only_layers: dense layers other than the leading ones"));
  // DeepSeek-MoE has no transformers class: every key that decides a count is given.
  CHECK_THAT(with("deepseek", R"("n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
      "n_shared_experts": null, "first_k_dense_replace": 0, "num_key_value_heads": 4, "attention_bias": false,
      "tie_word_embeddings": false, "moe_layer_freq": 2)"),
             Catch::Contains("/moe_layer_freq: MoE on only every k-th layer"));
  CHECK_THAT(with("mixtral", R"("num_local_experts": 8, "num_experts_per_tok": 2, "interleave_moe_layer_step": 2)"),
             Catch::Contains("/interleave_moe_layer_step"));
  // Mixture of attention heads (JetMoE's key) under a family without it.
  CHECK_THAT(with("mixtral", R"("num_local_experts": 8, "num_experts_per_tok": 2, "kv_channels": 128)"),
             Catch::Contains("/kv_channels: sets mixture of attention heads (JetMoE)"));
  // Keys of other families.
  CHECK_THAT(with("llama", R"("sliding_window": 4096)"), Catch::Contains("/sliding_window: sets sliding-window"));
  CHECK_THAT(with("llama", R"("use_qk_norm": true)"), Catch::Contains("/use_qk_norm"));
  CHECK_THAT(with("llama", R"("attention_chunk_size": 8192)"), Catch::Contains("/attention_chunk_size"));
  CHECK_THAT(with("mistral", R"("num_nextn_predict_layers": 1)"), Catch::Contains("/num_nextn_predict_layers"));
  CHECK_THAT(with("qwen2", R"("attention_bias": true)"), Catch::Contains("/attention_bias"));
  // MLA with attention biases; plain vs gated MLP activations.
  CHECK_THAT(error_of(R"({"model_type": "deepseek_v3", "hidden_size": 256, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 512, "kv_lora_rank": 32, "qk_nope_head_dim": 16,
      "qk_rope_head_dim": 8, "v_head_dim": 16, "attention_bias": true, "vocab_size": 0, "n_routed_experts": 8,
      "num_experts_per_tok": 2, "moe_intermediate_size": 64, "q_lora_rank": null})"),
             Catch::Contains("/attention_bias: attention biases with multi-head latent attention"));
  CHECK_THAT(with("llama", R"("hidden_act": "relu2")"), Catch::Contains("/hidden_act: activation \"relu2\""));
  // A sliding layer without a window.
  CHECK_THAT(with("qwen3", R"("layer_types": ["full_attention", "sliding_attention", "full_attention",
      "full_attention"])"),
             Catch::Contains("/layer_types: sliding_attention layers but no sliding_window"));
}

// --- Native round trip ---------------------------------------------------------------------------

TEST_CASE("families: HF → native JSON → read gives identical budgets for every family", "[config][hf][roundtrip]") {
  std::vector<std::string> files;
  for (const auto& dir : {hf_data, std::string(BUDGET_SOURCE_DIR) + "/examples/hf/"}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    }
  }
  REQUIRE(files.size() >= 20);
  for (const auto& file : files) {
    INFO(file);
    ArchConfig hf = load_arch_config(file);
    hf.loop = centred_loop(hf.num_layers, 0.5, 2);  // loops round-trip too
    const std::string native = arch_config_to_json(hf);
    const ArchConfig back = parse_arch_config(native, file + " (native)");
    CHECK(arch_config_to_json(back) == native);
    for (const Workload& w : {paper_workload(), causal_workload(8192)}) {
      const Budgets a = account(hf, w), b = account(back, w);
      CHECK(a.training_flops_per_token == b.training_flops_per_token);
      CHECK(a.kernel_training_flops_per_token == b.kernel_training_flops_per_token);
      CHECK(a.non_embedding_params_total == b.non_embedding_params_total);
      CHECK(a.non_embedding_params_active == b.non_embedding_params_active);
      CHECK(a.embedding_params == b.embedding_params);
      CHECK(a.kv_elements_per_token == b.kv_elements_per_token);
      CHECK(a.kv_window_elements_per_sequence == b.kv_window_elements_per_sequence);
      CHECK(a.mtp_params == b.mtp_params);
      CHECK(a.mtp_forward_flops_per_token == b.mtp_forward_flops_per_token);
    }
  }
}

TEST_CASE("families: native MLA and hybrid configs are validated", "[config][mla]") {
  const std::string mla = R"({"hidden_size": 256, "num_layers": 2, "attention": {"num_heads": 4,
      "mla": {"kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16}},
      "ffn": {"dense_dim": 512}})";
  const ArchConfig c = parse_arch_config(mla, "mla.json");
  CHECK(c.attention.head_dim == 24);
  CHECK(c.attention.num_kv_heads == 1);
  CHECK_THAT(error_of(R"({"hidden_size": 256, "num_layers": 2, "attention": {"num_heads": 4, "head_dim": 32,
      "mla": {"kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16}},
      "ffn": {"dense_dim": 512}})"),
             Catch::Contains("/attention/head_dim: head_dim 32 differs from qk_nope_head_dim + qk_rope_head_dim = 24"));
  CHECK_THAT(error_of(R"({"hidden_size": 256, "num_layers": 2, "attention": {"num_heads": 4, "head_dim": 64,
      "layer_types": ["full", "sliding"]}, "ffn": {"dense_dim": 512}})"),
             Catch::Contains("/attention/sliding_window: layer_types has \"sliding\" layers but sliding_window is 0"));
  CHECK_THAT(error_of(R"({"hidden_size": 256, "num_layers": 2, "attention": {"num_heads": 4, "head_dim": 64,
      "sliding_window": 128, "layer_types": ["full"]}, "ffn": {"dense_dim": 512}})"),
             Catch::Contains("/attention/layer_types: layer_types lists 1 layers but num_layers is 2"));
  CHECK_THAT(error_of(R"({"hidden_size": 256, "num_layers": 2, "attention": {"num_heads": 4, "head_dim": 64,
      "sliding_window": 128, "layer_types": ["full", "local"]}, "ffn": {"dense_dim": 512}})"),
             Catch::Contains("/attention/layer_types/1: layer 2 is \"local\""));
}

// --- Matching MLA and hybrid baselines -----------------------------------------------------------

namespace {
/// A small DeepSeek-V2-style MLA baseline: 4 layers, the first dense, 16 experts + 1 shared.
ArchConfig small_mla() {
  return parse_arch_config(R"({"name": "mla-small", "hidden_size": 256, "num_layers": 4,
      "attention": {"num_heads": 4, "mla": {"q_lora_rank": 64, "kv_lora_rank": 32, "qk_nope_head_dim": 16,
                    "qk_rope_head_dim": 8, "v_head_dim": 16}},
      "ffn": {"num_experts": 16, "top_k": 2, "expert_dim": 64, "router_bias": true, "num_shared_experts": 1,
              "shared_expert_dim": 64, "first_dense_layers": 1, "dense_dim": 256}})",
                           "mla-small.json");
}
}  // namespace

TEST_CASE("families: the matcher holds MLA's latent dims and finds the brute-force optimum", "[match][mla]") {
  const ArchConfig base = small_mla();
  const Workload w = paper_workload();
  MatchConstraints c = default_constraints(base);
  CHECK(c.head_dim.is_fixed());
  CHECK_FALSE(c.query_equals_hidden);  // 4·24 = 96 ≠ 256: heads are searched
  c.hidden_size = {128, 384, 32};
  c.num_heads = {1, 8, 1};
  c.num_experts = {2, 40, 2};
  c.expert_dim = {16, 128, 16};
  c.shared_expert_dim = {16, 128, 16};
  c.weight_kv = 0;  // KV is fixed by depth here (executed·(32 + 8)); let F and N decide
  c.tolerance = 0;
  LoopSpec loop;
  loop.first = 2;
  loop.last = 3;
  loop.repeats = 2;
  CHECK(c.kv_lora_rank.values() == std::vector<std::int64_t>{16, 32, 48, 64});  // multiples of 16 in [16, 2·32]
  const MatchResult r = match(base, loop, w, c, 3);
  REQUIRE(r.summary.feasible);
  // Brute force over the same space, each point accounted from scratch.
  const Budgets b0 = account(base, w);
  double best = std::numeric_limits<double>::infinity();
  for (auto latent : c.kv_lora_rank.values())
    for (auto H : c.hidden_size.values())
      for (auto nh : c.num_heads.values())
        for (auto E : c.num_experts.values())
          for (auto W : c.expert_dim.values())
            for (auto S : c.shared_expert_dim.values()) {
              ArchConfig cfg = base;
              cfg.hidden_size = H;
              cfg.attention.num_heads = nh;
              cfg.attention.mla->kv_lora_rank = latent;
              cfg.ffn.num_experts = E;
              cfg.ffn.expert_dim = W;
              cfg.ffn.shared_expert_dim = S;
              cfg.loop = LoopConfig{2, 3, 2};
              // The trainable defaults' proportion factor is part of the space (match.hpp), and
              // the shared experts keep the routed width (tie_shared_expert_dim: 64 = 64).
              if (!within_proportion_factor(cfg, base, c)) continue;
              if (c.tie_shared_expert_dim && S != W) continue;
              best = std::min(best, evaluate_candidate(cfg, base, b0, w, c).objective);
            }
  CHECK(r.candidates.front().objective == Approx(best).margin(1e-12));
  for (const Candidate& cand : r.candidates) {
    REQUIRE(cand.config.attention.mla);
    MlaConfig held = *cand.config.attention.mla;
    held.kv_lora_rank = base.attention.mla->kv_lora_rank;
    CHECK(held == *base.attention.mla);  // q_lora, nope, rope and v dims held
    CHECK(cand.config.attention.head_dim == 24);
    CHECK(cand.config.attention.num_kv_heads == 1);
    CHECK(cand.config.ffn.router_bias);
    // KV: 6 executed layers · (kv_lora_rank + 8).
    CHECK(cand.budgets.kv_elements_per_token == 6 * (cand.config.attention.mla->kv_lora_rank + 8));
  }
  // A head_dim range is not searched for MLA: the dims stay the baseline's.
  c.head_dim = {8, 48, 8};
  const MatchResult r2 = match(base, loop, w, c, 1);
  REQUIRE(r2.summary.feasible);
  CHECK(r2.candidates.front().config.attention.head_dim == 24);
}

TEST_CASE("families: DeepSeek-V2-Lite can be matched as a looped baseline", "[match][mla]") {
  const ArchConfig base = load_arch_config(hf_data + "deepseek-v2-lite.json");
  MatchConstraints c = default_constraints(base);
  CHECK(c.kv_lora_rank.min == 128);
  CHECK(c.kv_lora_rank.max == 1024);
  // Keep the search small in a unit test.
  c.num_heads = {8, 32, 4};
  c.hidden_size = {1024, 3072, 64};
  c.shared_expert_dim = VariableRange::fixed(1408);
  LoopSpec loop;
  loop.span_fraction = 0.5;
  loop.repeats = 2;
  const MatchResult r = match(base, loop, paper_workload(), c, 1);
  REQUIRE(r.summary.feasible);
  const Candidate& best = r.candidates.front();
  CHECK(best.config.loop.has_value());
  // Executed depth 27 + 14 = 41: the KV latent shrinks to keep 41·(r + 64) near 27·576 = 15,552;
  // r = 320 gives 15,744 (+1.2%), the nearest multiple of 16.
  CHECK(best.config.attention.mla->kv_lora_rank == 320);
  CHECK(best.deviation.kv == Approx(15744.0 / 15552.0 - 1.0));
  CHECK(best.objective < 0.02);
}

TEST_CASE("families: an all-sliding baseline cannot have its KV matched", "[match][hybrid]") {
  const ArchConfig base = load_arch_config(hf_data + "mistral-7b-v0.1.json");
  LoopSpec loop;
  loop.span_fraction = 0.5;
  loop.repeats = 2;
  CHECK_THROWS_WITH(match(base, loop, paper_workload(), default_constraints(base), 1),
                    Catch::Contains("keeps no per-token KV cache"));
}

TEST_CASE("families: a hybrid baseline is matched on its full-attention KV cache", "[match][hybrid]") {
  // 8 layers, layers 5–8 sliding (window 512): a loop over 3–6 re-runs two full and two sliding layers.
  const ArchConfig base = parse_arch_config(R"({"name": "hybrid", "hidden_size": 512, "num_layers": 8,
      "attention": {"num_heads": 8, "head_dim": 64, "num_kv_heads": 2, "sliding_window": 512,
                    "layer_types": ["full", "full", "full", "full", "sliding", "sliding", "sliding", "sliding"]},
      "ffn": {"num_experts": 32, "top_k": 4, "expert_dim": 256}})",
                                            "hybrid.json");
  // KV per token: 4 full layers · 2·2·64 = 1,024; windows: 4 · 256 · min(512, 4096) = 524,288.
  const Budgets b = account(base, paper_workload());
  CHECK(b.kv_elements_per_token == 1024);
  CHECK(b.kv_window_elements_per_sequence == 524'288);
  MatchConstraints c = default_constraints(base);
  c.num_layers = {6, 10, 1};  // other depths than the baseline's are skipped (layer kinds are per layer)
  LoopSpec loop;
  loop.first = 3;
  loop.last = 6;
  loop.repeats = 2;
  const MatchResult r = match(base, loop, paper_workload(), c, 3);
  REQUIRE(r.summary.feasible);
  for (const Candidate& cand : r.candidates) {
    CHECK(cand.config.num_layers == 8);
    CHECK(cand.config.attention.layer_types == base.attention.layer_types);
    // Full executions: layers 1, 2 once, 3, 4 twice = 6; KV = 6 · 2·kv_heads·head_dim.
    CHECK(cand.budgets.kv_elements_per_token == 6 * 2 * cand.config.attention.kv_width());
    CHECK(cand.deviation.kv == Approx(static_cast<double>(cand.budgets.kv_elements_per_token) / 1024.0 - 1.0));
  }
}

TEST_CASE("families: architectures must agree with model_type and be a causal LM", "[config][hf][refuse]") {
  const std::string body = R"("hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
      "num_key_value_heads": 4, "intermediate_size": 512, "vocab_size": 1000, "tie_word_embeddings": false,
      "attention_bias": false, "mlp_bias": false)";
  const auto with = [&](const char* model_type, const char* architecture) {
    return std::string(R"({"model_type": ")") + model_type + R"(", "architectures": [")" + architecture + "\"], " +
           body + "}";
  };
  // The family's own class, and another causal-LM class name (remote code), read through model_type.
  CHECK(parse_arch_config(with("llama", "LlamaForCausalLM"), "t.json").num_layers == 4);
  CHECK(parse_arch_config(with("llama", "MyTunedLlamaForCausalLM"), "t.json").num_layers == 4);
  // Another family's class: the file contradicts itself.
  CHECK_THAT(error_of(with("llama", "Qwen3MoeForCausalLM")),
             Catch::Contains("/architectures: architecture \"Qwen3MoeForCausalLM\" is family \"qwen3_moe\"'s class, "
                             "but model_type is \"llama\""));
  // A score head instead of the LM head: refused, never counted as a causal LM.
  CHECK_THAT(error_of(with("llama", "LlamaForSequenceClassification")),
             Catch::Contains("/architectures: architecture \"LlamaForSequenceClassification\" is not a causal "
                             "language model"));
}

TEST_CASE("families: an odd MLA rotary width is refused", "[config][hf][mla][refuse]") {
  const std::string text = R"({"model_type": "deepseek_v3", "hidden_size": 256, "num_hidden_layers": 4,
      "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 512, "moe_intermediate_size": 64,
      "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1,
      "q_lora_rank": 96, "kv_lora_rank": 64, "qk_nope_head_dim": 32, "qk_rope_head_dim": 15, "v_head_dim": 32,
      "vocab_size": 1000, "num_nextn_predict_layers": 0})";
  CHECK_THAT(error_of(text), Catch::Contains("/attention/mla/qk_rope_head_dim: qk_rope_head_dim 15 is odd"));
}
