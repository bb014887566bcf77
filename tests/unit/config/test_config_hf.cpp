// Hugging Face config.json import, checked against the parameter counts the model authors
// published (total and activated, embeddings included).

#include <catch2/catch.hpp>

#include "budget/accounting.hpp"
#include "budget/config_hf.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"

using namespace budget;

namespace {
const std::string hf_dir = std::string(BUDGET_SOURCE_DIR) + "/examples/hf/";

/// Total and active parameters including embeddings, in billions.
std::pair<double, double> totals_B(const ArchConfig& c) {
  const Budgets b = account(c, paper_workload());
  return {static_cast<double>(b.non_embedding_params_total + b.embedding_params) / 1e9,
          static_cast<double>(b.non_embedding_params_active + b.embedding_params) / 1e9};
}
}  // namespace

TEST_CASE("hf: Mixtral-8x7B reads as 46.7B total, 12.9B active (Mistral AI's figures)", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_dir + "mixtral-8x7b.json");
  CHECK(c.hidden_size == 4096);
  CHECK(c.num_layers == 32);
  CHECK(c.attention.head_dim == 128);  // 4096 / 32, no head_dim key
  CHECK(c.attention.num_kv_heads == 8);
  CHECK(c.ffn.num_experts == 8);
  CHECK(c.ffn.top_k == 2);
  CHECK(c.ffn.expert_dim == 14336);  // intermediate_size: Mixtral has no moe_intermediate_size
  CHECK_FALSE(c.tie_embeddings);
  // Hand count: layer 4096·(4096 + 2·1024) + 4096² = 41,943,040; experts 8·3·4096·14336 =
  // 1,409,286,144; router 32,768; norms 8,192: 1,451,270,144 ·32 + 4,096. Active: 2 experts
  // 352,321,536: 394,305,536 ·32 + 4,096.
  const Budgets b = account(c, paper_workload());
  CHECK(b.non_embedding_params_total == 46'440'648'704);
  CHECK(b.non_embedding_params_active == 12'617'781'248);
  const auto [total, active] = totals_B(c);
  CHECK(total == Approx(46.7).margin(0.05));
  CHECK(active == Approx(12.9).margin(0.05));
}

TEST_CASE("hf: Qwen1.5-MoE-A2.7B reads as 14.3B total, 2.7B active (Qwen's figures)", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_dir + "qwen1.5-moe-a2.7b.json");
  CHECK(c.ffn.num_experts == 60);
  CHECK(c.ffn.top_k == 4);
  CHECK(c.ffn.expert_dim == 1408);
  CHECK(c.ffn.num_shared_experts == 1);
  CHECK(c.ffn.shared_expert_dim == 5632);
  CHECK(c.attention.qkv_bias);        // Qwen2-MoE attention: q, k, v biases, no o bias
  CHECK(c.ffn.shared_expert_gate);    // the shared expert's H → 1 sigmoid gate
  // Hand count: layer 4·2048² + q/k/v biases 3·2048 = 16,783,360; experts 60·3·2048·1408 =
  // 519,045,120; router 122,880; shared 3·2048·5632 = 34,603,008 + gate 2,048; norms 4,096:
  // 570,560,512 ·24 + 2,048. Active layer: 16,783,360 + 4 experts 34,603,008 + 122,880 + shared
  // 34,603,008 + 2,048 + 4,096 = 86,118,400; ·24 + 2,048.
  const Budgets b = account(c, paper_workload());
  CHECK(b.non_embedding_params_total == 13'693'454'336);
  CHECK(b.non_embedding_params_active == 2'066'843'648);
  const auto [total, active] = totals_B(c);
  CHECK(total == Approx(14.3).margin(0.05));
  CHECK(active == Approx(2.7).margin(0.05));
}

TEST_CASE("hf: DeepSeekMoE-16B reads as 16.4B total, 2.8B active (DeepSeek's figures)", "[config][hf]") {
  const ArchConfig c = load_arch_config(hf_dir + "deepseek-moe-16b.json");
  CHECK(c.ffn.num_experts == 64);
  CHECK(c.ffn.num_shared_experts == 2);
  CHECK(c.ffn.shared_expert_dim == 1408);
  CHECK(c.ffn.first_dense_layers == 1);
  CHECK(c.ffn.dense_dim == 10944);
  // Hand count: attention 4·2048² = 16,777,216, norms 4,096; layer 1 dense 3·2048·10944 =
  // 67,239,936: 84,021,248; MoE layers (64 + 2)·3·2048·1408 + 64·2048 = 571,080,704:
  // 587,862,016 ·27; + final norm 2,048. Active MoE layer: 8·8,650,752 + 131,072 → 86,118,400 ·27.
  const Budgets b = account(c, paper_workload());
  CHECK(b.non_embedding_params_total == 15'956'297'728);
  CHECK(b.non_embedding_params_active == 2'409'220'096);
  const auto [total, active] = totals_B(c);
  CHECK(total == Approx(16.4).margin(0.05));
  CHECK(active == Approx(2.8).margin(0.05));
}

TEST_CASE("hf: a Llama-style dense config", "[config][hf]") {
  const ArchConfig c = parse_arch_config(R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
      "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 8192,
      "vocab_size": 128256, "tie_word_embeddings": true, "hidden_act": "silu"})",
                                         "llama.json");
  CHECK_FALSE(c.ffn.is_moe());
  CHECK(c.ffn.dense_dim == 8192);
  CHECK(c.tie_embeddings);
  // Per layer: attention 2048·(2048 + 2·512) + 2048·2048 = 10,485,760; MLP 3·2048·8192 =
  // 50,331,648; norms 4,096: 60,821,504 · 16 = 973,144,064, + final norm 2,048.
  CHECK(account(c, paper_workload()).non_embedding_params_total == 973'146'112);
}

TEST_CASE("hf: features the accounting does not model are refused with the key", "[config][hf]") {
  const auto error = [](const std::string& text) {
    try {
      parse_hf_config(text, "hf.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string base = R"("hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "vocab_size": 0)";
  const std::string llama = R"({"model_type": "llama", )" + base;
  CHECK_THAT(error(llama + R"(, "intermediate_size": 4096, "kv_lora_rank": 512})"),
             Catch::Contains("hf.json: /kv_lora_rank: sets multi-head latent attention") &&
                 Catch::Contains("family \"llama\""));
  CHECK_THAT(error(R"({"model_type": "qwen2_moe", )" + base + R"(, "num_experts": 8, "num_experts_per_tok": 2,
                    "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "decoder_sparse_step": 2})"),
             Catch::Contains("/decoder_sparse_step"));
  CHECK_THAT(error(llama + R"(, "intermediate_size": 4096, "hidden_act": "relu"})"), Catch::Contains("/hidden_act"));
  CHECK_THAT(error(R"({"model_type": "llama", "hidden_size": 1000, "num_hidden_layers": 4, "num_attention_heads": 7,
                    "intermediate_size": 64, "vocab_size": 0})"),
             Catch::Contains("not a multiple of num_attention_heads"));
  CHECK_THAT(error(R"({"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4, "intermediate_size": 64, "vocab_size": 0})"),
             Catch::Contains("/num_attention_heads: required key is missing"));
  CHECK_THAT(error(R"({"model_type": "mixtral", )" + base + R"(, "num_local_experts": 8, "intermediate_size": 512})"),
             Catch::Contains("/num_experts_per_tok: required key is missing"));
  CHECK_THAT(error(llama + R"(, "num_key_value_heads": 3, "intermediate_size": 512})"),
             Catch::Contains("num_kv_heads 3 does not divide num_heads 8"));
}
