// The Hugging Face family table: one entry per supported `model_type`, with the keys it reads,
// what each absent key means (required, the transformers default said in a note, or derived) and
// the traits no key changes. The defaults are those of the transformers config classes,
// src/transformers/models/<family>/configuration_<family>.py at commit 008e5743 (phimoe and
// granitemoe: 040e1a7e); docs/config.md ("Supported families") is the same table for users.
// To add a family, add its entry here and a test in tests/unit/config/test_config_hf_keys.cpp.

#include "config/hf_families.hpp"

#include <array>
#include <string>
#include <vector>

namespace budget::detail {
namespace {

using A = Absent;

// Keys shared by many families, spelled once. A default "=<rule>" is computed from other keys, as
// the transformers class does (num_key_value_heads = None → num_attention_heads).
constexpr HfKey kv_heads_derived{"num_key_value_heads", A::noted_default, "=num_attention_heads", "KV heads"};
// head_dim absent is hidden_size / num_attention_heads: the definition of the classes that have no
// head_dim field, and the __post_init__ rule of those that do; nothing is taken.
constexpr HfKey head_dim_derived{"head_dim", A::derived, "", "the head width (absent: hidden_size / heads)"};
constexpr HfKey tie_false{"tie_word_embeddings", A::noted_default, "false", "a tied LM head"};
constexpr HfKey attention_bias_false{"attention_bias", A::noted_default, "false", "attention biases"};
constexpr HfKey sliding_off{"sliding_window", A::derived, "", "sliding-window attention (absent: none)"};
constexpr HfKey qwen_use_sliding{"use_sliding_window", A::derived, "", "sliding-window attention (absent: off)"};
constexpr HfKey qwen_window{"sliding_window", A::derived, "",
                            "the window of use_sliding_window (then required)"};
constexpr HfKey qwen_window_layers{"max_window_layers", A::derived, "",
                                   "the full-attention layers of use_sliding_window (then required)"};
constexpr HfKey sparse_step{"decoder_sparse_step", A::derived, "", "MoE on every k-th layer (absent: 1)"};
constexpr HfKey mlp_only{"mlp_only_layers", A::derived, "", "dense layers (absent: none)"};
constexpr HfKey moe_layer_freq{"moe_layer_freq", A::derived, "", "MoE on every k-th layer (absent: 1)"};
constexpr HfKey top_k_required{"num_experts_per_tok", A::required, "", "the experts each token uses"};
// DeepSeek-style MoE keys of the remote-code families (deepseek, kimi_k2): every one required.
constexpr HfKey routed_required{"n_routed_experts", A::required, "", "routed experts"};
constexpr HfKey expert_width_required{"moe_intermediate_size", A::required, "", "the routed expert width"};
constexpr HfKey shared_required{"n_shared_experts", A::required, "", "shared experts (null: none)"};
constexpr HfKey first_dense_required{"first_k_dense_replace", A::required, "", "the leading dense layers"};
constexpr HfKey attention_bias_required{"attention_bias", A::required, "", "attention biases"};
constexpr HfKey tie_required{"tie_word_embeddings", A::required, "", "a tied LM head"};

constexpr std::array llama_keys{kv_heads_derived, head_dim_derived, attention_bias_false,
                                HfKey{"mlp_bias", A::noted_default, "false", "MLP biases"}, tie_false};
constexpr std::array granite_keys = llama_keys;
constexpr std::array mistral_keys{HfKey{"num_key_value_heads", A::noted_default, "8", "KV heads"}, head_dim_derived,
                                  HfKey{"sliding_window", A::noted_default, "4096", "the sliding window"},
                                  tie_false};
constexpr std::array mixtral_keys{HfKey{"num_local_experts", A::required, "8", "routed experts"},
                                  HfKey{"num_experts_per_tok", A::required, "2", "the experts each token uses"},
                                  HfKey{"num_key_value_heads", A::noted_default, "8", "KV heads"},
                                  head_dim_derived, sliding_off, tie_false};
constexpr std::array qwen2_keys{HfKey{"num_key_value_heads", A::noted_default, "32", "KV heads"}, head_dim_derived,
                                qwen_use_sliding, qwen_window, qwen_window_layers, tie_false};
constexpr std::array qwen2_moe_keys{
    HfKey{"num_experts", A::required, "60", "routed experts"},
    HfKey{"num_experts_per_tok", A::required, "4", "the experts each token uses"},
    HfKey{"moe_intermediate_size", A::required, "1408", "the routed expert width"},
    HfKey{"shared_expert_intermediate_size", A::required, "5632", "the shared expert width"},
    HfKey{"qkv_bias", A::noted_default, "true", "q/k/v biases"},
    sparse_step, mlp_only,
    HfKey{"num_key_value_heads", A::noted_default, "16", "KV heads"}, head_dim_derived,
    qwen_use_sliding, qwen_window, qwen_window_layers, tie_false};
constexpr std::array qwen3_keys{HfKey{"num_key_value_heads", A::noted_default, "32", "KV heads"},
                                HfKey{"head_dim", A::noted_default, "128", "the head width"},
                                attention_bias_false, qwen_use_sliding, qwen_window, qwen_window_layers, tie_false};
constexpr std::array qwen3_moe_keys{
    HfKey{"num_experts", A::required, "128", "routed experts"},
    HfKey{"num_experts_per_tok", A::required, "8", "the experts each token uses"},
    HfKey{"moe_intermediate_size", A::required, "768", "the routed expert width"},
    sparse_step, mlp_only,
    HfKey{"num_key_value_heads", A::noted_default, "4", "KV heads"},
    // Qwen3MoeConfig has no head_dim field; the released models set one that is not
    // hidden_size / num_attention_heads (Qwen3-30B-A3B: 128, not 64), so it is required.
    HfKey{"head_dim", A::required, "", "the head width"},
    attention_bias_false, qwen_use_sliding, qwen_window, qwen_window_layers, tie_false};
constexpr std::array olmoe_keys{HfKey{"num_experts", A::required, "64", "routed experts"},
                                HfKey{"num_experts_per_tok", A::required, "8", "the experts each token uses"},
                                kv_heads_derived, head_dim_derived, attention_bias_false, tie_false};
// DeepseekForCausalLM (DeepSeek-MoE) has no transformers class: its remote code decides, so every
// key that decides a count is required.
constexpr std::array deepseek_keys{
    routed_required, top_k_required, expert_width_required, shared_required, first_dense_required, moe_layer_freq,
    HfKey{"num_key_value_heads", A::required, "", "KV heads"}, head_dim_derived,
    attention_bias_required, tie_required};
// MLA: num_key_value_heads and head_dim size no weight (the MLA dims do); read and ignored.
constexpr HfKey mla_kv_heads{"num_key_value_heads", A::derived, "", "ignored with MLA"};
constexpr HfKey mla_head_dim{"head_dim", A::derived, "", "ignored with MLA (transformers: qk_rope_head_dim)"};
// The MLA dims of DeepseekV2Config and DeepseekV3Config (the same keys and defaults in both).
constexpr HfKey mla_q_lora_rank{"q_lora_rank", A::required, "1536", "the query compression rank (null: none)"};
constexpr HfKey mla_kv_lora_rank{"kv_lora_rank", A::required, "512", "the KV latent rank"};
constexpr HfKey mla_qk_nope_head_dim{"qk_nope_head_dim", A::required, "128",
                                     "the per-head query/key width without rotary embedding"};
constexpr HfKey mla_qk_rope_head_dim{"qk_rope_head_dim", A::required, "64", "the rotary query/key width"};
constexpr HfKey mla_v_head_dim{"v_head_dim", A::required, "128", "the per-head value width"};
constexpr std::array deepseek_v2_keys{
    HfKey{"n_routed_experts", A::required, "64", "routed experts"},
    top_k_required,  // DeepseekV2Config: num_experts_per_tok = None
    HfKey{"moe_intermediate_size", A::required, "1407", "the routed expert width"},
    HfKey{"n_shared_experts", A::noted_default, "2", "shared experts"},
    HfKey{"first_k_dense_replace", A::noted_default, "0", "the leading dense layers"}, moe_layer_freq,
    mla_q_lora_rank, mla_kv_lora_rank, mla_qk_nope_head_dim, mla_qk_rope_head_dim, mla_v_head_dim,
    HfKey{"topk_method", A::derived, "", "the router bias (noaux_tc; absent: greedy, none)"},
    mla_kv_heads, mla_head_dim, attention_bias_false, tie_false};
constexpr std::array deepseek_v3_keys{
    HfKey{"n_routed_experts", A::required, "256", "routed experts"},
    HfKey{"num_experts_per_tok", A::required, "8", "the experts each token uses"},
    HfKey{"moe_intermediate_size", A::required, "2048", "the routed expert width"},
    HfKey{"n_shared_experts", A::noted_default, "1", "shared experts"},
    HfKey{"first_k_dense_replace", A::noted_default, "3", "the leading dense layers"}, moe_layer_freq,
    mla_q_lora_rank, mla_kv_lora_rank, mla_qk_nope_head_dim, mla_qk_rope_head_dim, mla_v_head_dim,
    HfKey{"num_nextn_predict_layers", A::noted_default, "1", "multi-token-prediction modules"},
    mla_kv_heads, mla_head_dim, attention_bias_false, tie_false};
// Kimi-K2 ships the DeepSeek-V3 architecture as remote code (no transformers class): required.
constexpr std::array kimi_k2_keys{
    routed_required, top_k_required, expert_width_required, shared_required, first_dense_required, moe_layer_freq,
    HfKey{"q_lora_rank", A::required, "", "the query compression rank (null: none)"},
    HfKey{"kv_lora_rank", A::required, "", "the KV latent rank"},
    HfKey{"qk_nope_head_dim", A::required, "", "the per-head query/key width without rotary embedding"},
    HfKey{"qk_rope_head_dim", A::required, "", "the rotary query/key width"},
    HfKey{"v_head_dim", A::required, "", "the per-head value width"},
    HfKey{"num_nextn_predict_layers", A::required, "", "multi-token-prediction modules"},
    mla_kv_heads, mla_head_dim, attention_bias_required, tie_required};
constexpr std::array phi3_keys{kv_heads_derived, head_dim_derived, sliding_off, tie_false};
constexpr std::array phimoe_keys{HfKey{"num_local_experts", A::required, "16", "routed experts"},
                                 HfKey{"num_experts_per_tok", A::required, "2", "the experts each token uses"},
                                 HfKey{"num_key_value_heads", A::noted_default, "8", "KV heads"},
                                 head_dim_derived, sliding_off, attention_bias_false,
                                 HfKey{"lm_head_bias", A::noted_default, "false", "an LM-head bias"}, tie_false};
constexpr std::array granitemoe_keys{HfKey{"num_local_experts", A::required, "8", "routed experts"},
                                     HfKey{"num_experts_per_tok", A::required, "2", "the experts each token uses"},
                                     kv_heads_derived, head_dim_derived, attention_bias_false, tie_false};
// GPT-NeoX: multi-head attention with head width hidden_size / num_attention_heads; it reads no
// num_key_value_heads or head_dim (set, they are refused).
constexpr std::array gpt_neox_keys{HfKey{"attention_bias", A::noted_default, "true", "attention biases"}, tie_false};

// attribute_map spellings transformers accepts.
constexpr std::array mixtral_aliases{HfAlias{"num_experts", "num_local_experts"}};
constexpr std::array qwen3_moe_aliases{HfAlias{"num_local_experts", "num_experts"}};
constexpr std::array olmoe_aliases{HfAlias{"num_local_experts", "num_experts"}};
constexpr std::array deepseek_v2_aliases{HfAlias{"num_experts", "n_routed_experts"}};
constexpr std::array deepseek_v3_aliases{HfAlias{"num_local_experts", "n_routed_experts"},
                                         HfAlias{"num_mtp_layers", "num_nextn_predict_layers"}};

HfTraits moe_traits(std::string_view expert_count_key, bool expert_width_key) {
  HfTraits t;
  t.moe = true;
  t.expert_count_key = expert_count_key;
  t.expert_width_key = expert_width_key;
  return t;
}

std::array<HfFamily, 17> make_families() {
  HfTraits plain;
  HfTraits mistral = plain;
  mistral.sliding_all_layers = true;
  HfTraits mixtral = moe_traits("num_local_experts", false);
  mixtral.sliding_all_layers = true;
  HfTraits qwen2 = plain;
  qwen2.qkv_bias_always = true;
  qwen2.qwen_sliding = true;
  HfTraits qwen2_moe = moe_traits("num_experts", true);
  qwen2_moe.qwen_shared = true;
  qwen2_moe.qkv_bias_key = true;
  qwen2_moe.qwen_sliding = true;
  qwen2_moe.refuse_use_sliding_window = true;
  HfTraits qwen3 = plain;
  qwen3.qk_norm = QkNorm::per_head;
  qwen3.qwen_sliding = true;
  HfTraits qwen3_moe = moe_traits("num_experts", true);
  qwen3_moe.qk_norm = QkNorm::per_head;
  qwen3_moe.qwen_sliding = true;
  qwen3_moe.refuse_use_sliding_window = true;
  HfTraits olmoe = moe_traits("num_experts", false);
  olmoe.qk_norm = QkNorm::full;
  HfTraits deepseek = moe_traits("n_routed_experts", true);
  deepseek.deepseek_shared = true;
  HfTraits deepseek_v2 = deepseek;
  deepseek_v2.mla = true;
  deepseek_v2.router_bias_from_topk_method = true;
  HfTraits deepseek_v3 = deepseek_v2;
  deepseek_v3.router_bias_from_topk_method = false;
  deepseek_v3.router_bias = true;
  HfTraits phimoe = moe_traits("num_local_experts", false);
  phimoe.sliding_all_layers = true;
  phimoe.norm = NormKind::layernorm;
  HfTraits granitemoe = moe_traits("num_local_experts", false);
  HfTraits gpt_neox = plain;
  gpt_neox.gated = false;
  gpt_neox.mlp_bias = true;
  gpt_neox.norm = NormKind::layernorm;
  return {{
      {"llama", "LlamaForCausalLM", "transformers LlamaConfig (llama/configuration_llama.py)", plain, llama_keys},
      {"mistral", "MistralForCausalLM", "transformers MistralConfig (mistral/configuration_mistral.py)", mistral,
       mistral_keys},
      {"mixtral", "MixtralForCausalLM", "transformers MixtralConfig (mixtral/configuration_mixtral.py)", mixtral,
       mixtral_keys, mixtral_aliases},
      {"qwen2", "Qwen2ForCausalLM", "transformers Qwen2Config (qwen2/configuration_qwen2.py)", qwen2, qwen2_keys},
      {"qwen2_moe", "Qwen2MoeForCausalLM", "transformers Qwen2MoeConfig (qwen2_moe/configuration_qwen2_moe.py)",
       qwen2_moe, qwen2_moe_keys},
      {"qwen3", "Qwen3ForCausalLM", "transformers Qwen3Config (qwen3/configuration_qwen3.py)", qwen3, qwen3_keys},
      {"qwen3_moe", "Qwen3MoeForCausalLM", "transformers Qwen3MoeConfig (qwen3_moe/configuration_qwen3_moe.py)",
       qwen3_moe, qwen3_moe_keys, qwen3_moe_aliases},
      {"olmoe", "OlmoeForCausalLM", "transformers OlmoeConfig (olmoe/configuration_olmoe.py)", olmoe, olmoe_keys,
       olmoe_aliases},
      {"deepseek", "DeepseekForCausalLM", "the model's remote code (no transformers class)", deepseek,
       deepseek_keys},
      {"deepseek_v2", "DeepseekV2ForCausalLM",
       "transformers DeepseekV2Config (deepseek_v2/configuration_deepseek_v2.py)", deepseek_v2, deepseek_v2_keys,
       deepseek_v2_aliases},
      {"deepseek_v3", "DeepseekV3ForCausalLM",
       "transformers DeepseekV3Config (deepseek_v3/configuration_deepseek_v3.py)", deepseek_v3, deepseek_v3_keys,
       deepseek_v3_aliases},
      {"kimi_k2", "DeepseekV3ForCausalLM", "the model's remote code (no transformers class)", deepseek_v3,
       kimi_k2_keys},
      {"phi3", "Phi3ForCausalLM", "transformers Phi3Config (phi3/configuration_phi3.py)", mistral, phi3_keys},
      {"phimoe", "PhiMoEForCausalLM", "transformers PhimoeConfig (phimoe/configuration_phimoe.py)", phimoe,
       phimoe_keys},
      {"granite", "GraniteForCausalLM", "transformers GraniteConfig (granite/configuration_granite.py)", plain,
       granite_keys},
      {"granitemoe", "GraniteMoeForCausalLM",
       "transformers GraniteMoeConfig (granitemoe/configuration_granitemoe.py)", granitemoe, granitemoe_keys},
      {"gpt_neox", "GPTNeoXForCausalLM", "transformers GPTNeoXConfig (gpt_neox/configuration_gpt_neox.py)",
       gpt_neox, gpt_neox_keys},
  }};
}

/// The families above, then those of 2025 (hf_families_2025.cpp).
const std::vector<HfFamily>& family_table() {
  static const std::vector<HfFamily> table = [] {
    const std::array<HfFamily, 17> first = make_families();
    std::vector<HfFamily> all(first.begin(), first.end());
    for (const HfFamily& f : hf_families_2025()) all.push_back(f);
    return all;
  }();
  return table;
}

constexpr std::array<HfCountingKey, 64> counting_keys{{
    {"num_local_experts", false, "routed experts"},
    {"num_experts", false, "routed experts"},
    {"n_routed_experts", false, "routed experts"},
    {"num_experts_per_tok", false, "experts per token"},
    {"moe_intermediate_size", false, "expert width"},
    {"shared_expert_intermediate_size", false, "a shared expert"},
    {"shared_intermediate_size", false, "a shared expert"},
    {"n_shared_experts", false, "shared experts"},
    {"first_k_dense_replace", false, "leading dense layers"},
    {"moe_layer_freq", true, "MoE on every k-th layer"},
    {"decoder_sparse_step", true, "MoE on every k-th layer"},
    {"interleave_moe_layer_step", true, "MoE on every k-th layer"},
    {"mlp_only_layers", false, "dense layers at given positions"},
    {"q_lora_rank", false, "multi-head latent attention"},
    {"kv_lora_rank", false, "multi-head latent attention"},
    {"qk_nope_head_dim", false, "multi-head latent attention"},
    {"qk_rope_head_dim", false, "multi-head latent attention"},
    {"v_head_dim", false, "multi-head latent attention"},
    {"num_nextn_predict_layers", false, "multi-token-prediction layers"},
    {"sliding_window", false, "sliding-window attention"},
    {"use_sliding_window", false, "sliding-window attention"},
    {"full_attention_interval", false, "hybrid linear/full attention layers"},
    {"attention_chunk_size", false, "chunked local attention"},
    {"attention_bias", false, "attention biases"},
    {"mlp_bias", false, "MLP biases"},
    {"qkv_bias", false, "attention biases"},
    {"lm_head_bias", false, "an LM-head bias"},
    {"use_qk_norm", false, "query/key norms"},
    {"qk_layernorm", false, "query/key norms"},
    {"kv_channels", false, "mixture of attention heads (JetMoE)"},
    {"moe_num_experts", false, "mixture-of-experts layers of another family"},
    {"moe_topk", false, "mixture-of-experts layers of another family"},
    {"parallel_attn", false, "a parallel attention block"},
    {"num_key_value_heads", false, "grouped-query attention"},
    {"head_dim", false, "a head width other than hidden_size / num_attention_heads"},
    {"max_window_layers", false, "sliding-window attention"},
    // The families of 2025 (hf_families_2025.cpp): their keys, refused in any other family.
    {"intermediate_size_mlp", false, "dense MLP layers between MoE layers (Llama-4)"},
    {"moe_layers", false, "MoE layers at given positions (Llama-4)"},
    {"hybrid_override_pattern", false, "a hybrid Mamba/attention/MLP stack (Nemotron-H)"},
    {"layers_block_type", false, "a hybrid Mamba/attention/MLP stack (Nemotron-H)"},
    {"mtp_hybrid_override_pattern", false, "multi-token-prediction layers of a hybrid stack"},
    {"mamba_num_heads", false, "Mamba-2 layers"},
    {"mamba_head_dim", false, "Mamba-2 layers"},
    {"ssm_state_size", false, "Mamba-2 layers"},
    {"n_groups", false, "Mamba-2 layers"},
    {"conv_kernel", false, "Mamba-2 layers"},
    {"use_conv_bias", false, "Mamba-2 layers"},
    {"mamba_proj_bias", false, "Mamba-2 projection biases"},
    {"use_bias", false, "biases on every linear layer"},
    {"moe_shared_expert_intermediate_size", false, "a shared expert"},
    {"moe_latent_size", false, "latent MoE (experts in a projected latent space)"},
    {"index_n_heads", false, "DeepSeek sparse attention's indexer"},
    {"index_head_dim", false, "DeepSeek sparse attention's indexer"},
    {"index_topk", false, "DeepSeek sparse attention's indexer"},
    {"qk_norm_type", false, "query/key norms"},
    {"use_routing_bias", false, "a router bias"},
    {"use_mtp", false, "multi-token-prediction modules"},
    {"num_mtp_modules", false, "multi-token-prediction modules"},
    {"moe_k", false, "experts per token (ERNIE)"},
    {"moe_num_shared_experts", false, "shared experts (ERNIE)"},
    {"moe_layer_start_index", false, "MoE layers from a given layer (ERNIE)"},
    {"moe_layer_end_index", false, "MoE layers up to a given layer (ERNIE)"},
    {"moe_layer_interval", true, "MoE on every k-th layer (ERNIE)"},
    {"zero_expert_num", false, "zero-computation experts (LongCat-Flash), not modelled"},
}};

// Spellings of one quantity: the families' keys, other tools' names and likely slips. Names that
// are also generation or runtime settings elsewhere (top_k, topk) are left out.
constexpr std::array<std::string_view, 10> routed_experts{"num_local_experts", "num_experts", "n_routed_experts",
                                                          "num_routed_experts", "num_expert", "n_experts",
                                                          "moe_num_experts", "num_moe_experts", "n_routed_expert",
                                                          "num_local_expert"};
constexpr std::array<std::string_view, 9> experts_per_token{
    "num_experts_per_tok", "num_experts_per_token", "num_expert_per_tok", "n_experts_per_tok", "moe_topk",
    "moe_top_k", "num_selected_experts", "experts_per_token", "moe_router_topk"};
constexpr std::array<std::string_view, 7> expert_width{"moe_intermediate_size", "moe_intermediate",
                                                       "expert_intermediate_size", "moe_ffn_hidden_size",
                                                       "moe_hidden_size", "moe_intermediate_dim", "expert_dim"};
constexpr std::array<std::string_view, 6> shared_experts{"n_shared_experts", "num_shared_experts",
                                                         "num_shared_expert", "n_shared_expert", "shared_experts",
                                                         "n_shared_expert_num"};
constexpr std::array<std::string_view, 5> shared_width{"shared_expert_intermediate_size", "shared_intermediate_size",
                                                       "moe_shared_expert_intermediate_size", "shared_expert_dim",
                                                       "shared_expert_intermediate"};
constexpr std::array<std::string_view, 5> dense_layers{"first_k_dense_replace", "first_k_dense", "num_dense_layers",
                                                       "n_dense_layers", "first_dense_layers"};
constexpr std::array<std::string_view, 4> mtp_layers{"num_nextn_predict_layers", "num_mtp_layers", "n_mtp_layers",
                                                     "mtp_num_layers"};
constexpr std::array<std::string_view, 4> kv_heads{"num_key_value_heads", "num_kv_heads", "n_kv_heads",
                                                   "multi_query_group_num"};
constexpr std::array<std::string_view, 4> dense_width{"intermediate_size", "ffn_hidden_size", "ffn_dim",
                                                      "intermediate_dim"};
constexpr std::array<std::string_view, 3> layers{"num_hidden_layers", "num_layers_hidden", "n_layers"};
constexpr std::array<std::string_view, 3> kv_lora{"kv_lora_rank", "kv_lora", "kv_latent_rank"};
constexpr std::array<std::string_view, 3> q_lora{"q_lora_rank", "q_lora", "query_lora_rank"};

constexpr std::array<std::span<const std::string_view>, 12> spelling_groups{
    routed_experts, experts_per_token, expert_width, shared_experts, shared_width, dense_layers,
    mtp_layers,     kv_heads,          dense_width,  layers,         kv_lora,      q_lora};

// Keys of released configs that change no count (transformers' runtime, training and rope
// settings, the DeepSeek router's grouping, Granite's multipliers, ...).
constexpr std::array<std::string_view, 77> non_counting_keys{
    "_name_or_path", "architectures", "attention_dropout", "attention_multiplier", "auto_map", "aux_loss_alpha",
    "bos_token_id", "classifier_dropout", "clip_qkv", "dtype", "embd_pdrop", "embedding_multiplier", "eos_token_id",
    "ep_size", "hidden_act", "hidden_dropout", "initializer_range", "input_jitter_noise", "is_decoder",
    "layer_norm_eps", "logits_scaling", "model_type", "n_group", "norm_topk_prob",
    "original_max_position_embeddings", "output_router_logits", "pad_token_id", "partial_rotary_factor",
    "pretraining_tp", "quantization_config", "residual_multiplier", "resid_pdrop", "rms_norm_eps",
    "rope_interleave", "rope_parameters", "rope_scaling", "rope_theta", "rotary_emb_base", "rotary_pct",
    "routed_scaling_factor", "router_aux_loss_coef", "router_jitter_noise", "router_z_loss_coef", "scoring_func",
    "seq_aux", "topk_group", "topk_method", "torch_dtype", "transformers_version", "use_cache", "use_mrope",
    "use_parallel_residual",
    // The families of 2025: activation clamps, attention temperature, Mamba's time-step init and
    // cache dtype, norms' epsilons under other names, routing groups, runtime settings.
    "swiglu_limit", "swiglu_alpha", "initial_context_length", "no_rope_layers", "no_rope_layer_interval",
    "attn_temperature_tuning", "floor_scale", "attn_scale", "expand", "time_step_min", "time_step_max",
    "time_step_floor", "time_step_limit", "time_step_rank", "mamba_hidden_act", "mlp_hidden_act",
    "mamba_ssm_cache_dtype", "num_logits_to_keep", "use_mamba_kernels", "norm_eps", "layer_norm_epsilon",
    "residual_in_fp32", "rescale_prenorm_residual", "moe_shared_expert_overlap", "moe_norm_min"};

}  // namespace

std::span<const HfFamily> hf_families() { return family_table(); }

const HfFamily* find_hf_family_by_model_type(std::string_view model_type) {
  for (const auto& f : family_table()) {
    if (f.model_type == model_type) return &f;
  }
  return nullptr;
}

const HfFamily* find_hf_family_by_architecture(std::string_view architecture) {
  for (const auto& f : family_table()) {
    if (f.architecture == architecture) return &f;
  }
  return nullptr;
}

std::string supported_hf_families() {
  std::string out;
  for (const auto& f : family_table()) out += (out.empty() ? "" : ", ") + std::string(f.model_type);
  return out;
}

std::span<const HfCountingKey> hf_counting_keys() { return counting_keys; }

std::span<const std::span<const std::string_view>> hf_spelling_groups() { return spelling_groups; }

bool is_hf_non_counting_key(std::string_view key) {
  for (const auto k : non_counting_keys) {
    if (k == key) return true;
  }
  return false;
}

}  // namespace budget::detail
