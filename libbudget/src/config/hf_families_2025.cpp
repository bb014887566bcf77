// The Hugging Face families of 2025 (docs/config.md, "Supported families"): gpt_oss, llama4_text,
// qwen3_next, nemotron_h, glm4_moe, deepseek_v32, minimax_m2, ernie4_5_moe. As in hf_families.cpp,
// each key that decides a count is required, a said default or derived. The defaults are those of
// transformers' config classes at the commits named below, read with the `search` tool's index of
// huggingface/transformers: GptOssConfig (gpt_oss/configuration_gpt_oss.py at 02b8f42b),
// Llama4TextConfig and Qwen3NextConfig (at 008e5743, the commit of the other families), NemotronHConfig
// (nemotron_h/configuration_nemotron_h.py at 13923c63). glm4_moe, deepseek_v32 and ernie4_5_moe
// require every counting key (their config classes changed keys between the versions read), and
// minimax_m2 ships remote code only: no default is taken for them. Their layers are read by
// config/hf_layouts.cpp (HfLayout).

#include <array>

#include "config/hf_families.hpp"

namespace budget::detail {
namespace {

using A = Absent;

constexpr HfKey tie_false_2025{"tie_word_embeddings", A::noted_default, "false", "a tied LM head"};
constexpr HfKey tie_required_2025{"tie_word_embeddings", A::required, "", "a tied LM head"};
constexpr HfKey kv_heads_required{"num_key_value_heads", A::required, "", "KV heads"};
constexpr HfKey head_dim_required{"head_dim", A::required, "", "the head width"};

constexpr std::array gpt_oss_keys{
    HfKey{"num_local_experts", A::required, "128", "routed experts"},
    HfKey{"num_experts_per_tok", A::required, "4", "the experts each token uses"},
    HfKey{"experts_per_token", A::derived, "", "openai's name of num_experts_per_tok (must agree with it)"},
    HfKey{"num_key_value_heads", A::noted_default, "8", "KV heads"},
    HfKey{"head_dim", A::noted_default, "64", "the head width"},
    HfKey{"attention_bias", A::noted_default, "true", "attention biases"},
    HfKey{"sliding_window", A::noted_default, "128", "the sliding window"},
    HfKey{"layer_types", A::required, "[\"sliding_attention\", \"full_attention\", ...]",
          "which layers slide"},
    tie_false_2025};
constexpr std::array gpt_oss_aliases{HfAlias{"num_experts", "num_local_experts"}};

constexpr std::array llama4_keys{
    HfKey{"num_local_experts", A::required, "16", "routed experts"},
    HfKey{"num_experts_per_tok", A::required, "1", "the experts each token uses"},
    HfKey{"intermediate_size_mlp", A::derived, "", "the dense MLP width (required with dense layers)"},
    HfKey{"interleave_moe_layer_step", A::derived, "", "MoE on every k-th layer (absent: 1)"},
    HfKey{"moe_layers", A::derived, "", "the MoE layers (absent: every interleave_moe_layer_step-th)"},
    HfKey{"num_key_value_heads", A::noted_default, "8", "KV heads"},
    HfKey{"head_dim", A::noted_default, "128", "the head width"},
    HfKey{"attention_bias", A::noted_default, "false", "attention biases"},
    HfKey{"attention_chunk_size", A::noted_default, "8192", "the chunk of chunked attention"},
    HfKey{"use_qk_norm", A::derived, "", "q/k L2 norms (no weights)"},
    tie_false_2025};

constexpr std::array qwen3_next_keys{
    HfKey{"num_experts", A::required, "512", "routed experts"},
    HfKey{"num_experts_per_tok", A::required, "10", "the experts each token uses"},
    HfKey{"moe_intermediate_size", A::required, "512", "the routed expert width"},
    HfKey{"shared_expert_intermediate_size", A::required, "512", "the shared expert width"},
    HfKey{"decoder_sparse_step", A::derived, "", "MoE on every k-th layer (absent: 1)"},
    HfKey{"mlp_only_layers", A::derived, "", "dense layers (absent: none)"},
    HfKey{"num_key_value_heads", A::noted_default, "2", "KV heads"},
    HfKey{"head_dim", A::noted_default, "256", "the head width"},
    HfKey{"attention_bias", A::noted_default, "false", "attention biases"},
    HfKey{"linear_num_key_heads", A::required, "16", "linear-attention key heads"},
    HfKey{"linear_num_value_heads", A::required, "32", "linear-attention value heads"},
    HfKey{"linear_key_head_dim", A::required, "128", "the linear-attention key head width"},
    HfKey{"linear_value_head_dim", A::required, "128", "the linear-attention value head width"},
    HfKey{"linear_conv_kernel_dim", A::noted_default, "4", "the linear-attention convolution taps"},
    HfKey{"full_attention_interval", A::derived, "",
          "every k-th layer full attention (absent with no layer_types: transformers' 4, said)"},
    tie_false_2025};

constexpr std::array nemotron_h_keys{
    HfKey{"hybrid_override_pattern", A::derived, "", "the layer pattern (M, *, -, E)"},
    HfKey{"layers_block_type", A::derived, "", "the layer kinds (one of the two is required)"},
    HfKey{"mamba_num_heads", A::required, "128", "Mamba-2 heads"},
    HfKey{"mamba_head_dim", A::required, "64", "the Mamba-2 head width"},
    HfKey{"ssm_state_size", A::required, "128", "the Mamba-2 state size"},
    HfKey{"n_groups", A::required, "8", "the Mamba-2 B/C groups"},
    HfKey{"conv_kernel", A::noted_default, "4", "the Mamba-2 convolution taps"},
    HfKey{"chunk_size", A::noted_default, "128", "the Mamba-2 SSD chunk"},
    HfKey{"use_conv_bias", A::noted_default, "true", "Mamba-2 convolution biases"},
    HfKey{"use_bias", A::noted_default, "false", "Mamba-2 projection biases"},
    HfKey{"mamba_proj_bias", A::derived, "", "not read by transformers (use_bias decides); refused if true"},
    HfKey{"n_routed_experts", A::derived, "", "routed experts (required with E layers)"},
    HfKey{"num_experts_per_tok", A::derived, "", "the experts each token uses (required with E layers)"},
    HfKey{"moe_intermediate_size", A::derived, "", "the routed expert width (required with E layers)"},
    HfKey{"moe_shared_expert_intermediate_size", A::derived, "", "the shared expert width (required with E layers)"},
    HfKey{"n_shared_experts", A::derived, "", "transformers builds one shared MLP: 1 or absent"},
    HfKey{"moe_latent_size", A::derived, "", "latent MoE (refused if set)"},
    HfKey{"num_nextn_predict_layers", A::derived, "", "multi-token prediction (refused if set)"},
    HfKey{"mtp_hybrid_override_pattern", A::derived, "", "multi-token prediction's layers"},
    HfKey{"num_key_value_heads", A::noted_default, "8", "KV heads"},
    HfKey{"head_dim", A::noted_default, "128", "the head width"},
    HfKey{"attention_bias", A::noted_default, "false", "attention biases"},
    HfKey{"mlp_bias", A::noted_default, "false", "MLP biases"},
    HfKey{"sliding_window", A::derived, "", "sliding-window attention (refused if set)"},
    tie_false_2025};
// NemotronHConfig.attribute_map, and the remote code's name of head_dim (Nemotron-H-56B's file).
constexpr std::array nemotron_h_aliases{HfAlias{"num_local_experts", "n_routed_experts"},
                                        HfAlias{"layer_types", "layers_block_type"},
                                        HfAlias{"attention_head_dim", "head_dim"}};

constexpr std::array glm4_moe_keys{
    HfKey{"n_routed_experts", A::required, "", "routed experts"},
    HfKey{"num_experts_per_tok", A::required, "", "the experts each token uses"},
    HfKey{"moe_intermediate_size", A::required, "", "the routed expert width"},
    HfKey{"n_shared_experts", A::required, "", "shared experts (null: none)"},
    HfKey{"first_k_dense_replace", A::required, "", "the leading dense layers"},
    kv_heads_required, head_dim_required,
    HfKey{"attention_bias", A::required, "", "q/k/v biases"},
    HfKey{"use_qk_norm", A::noted_default, "false", "per-head q/k norms"},
    HfKey{"num_nextn_predict_layers", A::derived, "", "multi-token-prediction modules (absent: none)"},
    tie_false_2025};

constexpr std::array deepseek_v32_keys{
    HfKey{"n_routed_experts", A::required, "", "routed experts"},
    HfKey{"num_experts_per_tok", A::required, "", "the experts each token uses"},
    HfKey{"moe_intermediate_size", A::required, "", "the routed expert width"},
    HfKey{"n_shared_experts", A::required, "", "shared experts (null: none)"},
    HfKey{"first_k_dense_replace", A::required, "", "the leading dense layers"},
    HfKey{"moe_layer_freq", A::derived, "", "MoE on every k-th layer (absent: 1)"},
    HfKey{"q_lora_rank", A::required, "", "the query compression rank"},
    HfKey{"kv_lora_rank", A::required, "", "the KV latent rank"},
    HfKey{"qk_nope_head_dim", A::required, "", "the per-head query/key width without rotary embedding"},
    HfKey{"qk_rope_head_dim", A::required, "", "the rotary query/key width"},
    HfKey{"v_head_dim", A::required, "", "the per-head value width"},
    HfKey{"index_n_heads", A::required, "", "the indexer's heads"},
    HfKey{"index_head_dim", A::required, "", "the indexer's head width"},
    HfKey{"index_topk", A::required, "", "the keys each query attends to"},
    HfKey{"num_nextn_predict_layers", A::required, "", "multi-token-prediction modules"},
    HfKey{"num_key_value_heads", A::derived, "", "ignored with MLA"},
    HfKey{"head_dim", A::derived, "", "ignored with MLA"},
    HfKey{"attention_bias", A::required, "", "attention biases"},
    tie_required_2025};

constexpr std::array minimax_m2_keys{
    HfKey{"num_local_experts", A::required, "", "routed experts"},
    HfKey{"num_experts_per_tok", A::required, "", "the experts each token uses"},
    kv_heads_required, head_dim_required,
    HfKey{"use_qk_norm", A::required, "", "q/k norms"},
    HfKey{"qk_norm_type", A::derived, "", "q/k norms per layer (full width) or per head (required with them)"},
    HfKey{"rotary_dim", A::derived, "", "partial RoPE (absent: head_dim)"},
    HfKey{"use_routing_bias", A::required, "", "the router's expert bias"},
    HfKey{"shared_intermediate_size", A::derived, "", "shared experts (absent or 0: none)"},
    HfKey{"use_mtp", A::derived, "", "multi-token-prediction modules (not counted, said)"},
    HfKey{"num_mtp_modules", A::derived, "", "multi-token-prediction modules (not counted, said)"},
    HfKey{"mtp_transformer_layers", A::derived, "", "multi-token-prediction modules (not counted, said)"},
    tie_required_2025};

constexpr std::array ernie4_5_moe_keys{
    HfKey{"moe_num_experts", A::required, "", "routed experts"},
    HfKey{"moe_k", A::required, "", "the experts each token uses"},
    HfKey{"moe_intermediate_size", A::required, "", "the routed expert width"},
    HfKey{"moe_num_shared_experts", A::required, "", "shared experts (0: none)"},
    HfKey{"moe_layer_start_index", A::required, "", "the first MoE layer"},
    HfKey{"moe_layer_end_index", A::required, "", "the last MoE layer (-1: the last layer)"},
    HfKey{"moe_layer_interval", A::derived, "", "MoE on every k-th layer (absent: 1)"},
    HfKey{"use_bias", A::required, "", "biases on every linear layer"},
    kv_heads_required, head_dim_required, tie_required_2025};

HfTraits moe_2025(HfLayout layout, std::string_view expert_count_key, bool expert_width_key) {
  HfTraits t;
  t.layout = layout;
  t.moe = true;
  t.expert_count_key = expert_count_key;
  t.expert_width_key = expert_width_key;
  return t;
}

std::array<HfFamily, 8> make_families_2025() {
  HfTraits gpt_oss = moe_2025(HfLayout::gpt_oss, "num_local_experts", false);
  gpt_oss.mlp_bias = true;     // gate_up_proj_bias and down_proj_bias on every expert
  gpt_oss.router_bias = true;  // the router is an nn.Linear with a bias
  HfTraits llama4 = moe_2025(HfLayout::llama4, "num_local_experts", false);
  HfTraits qwen3_next = moe_2025(HfLayout::qwen3_next, "num_experts", true);
  qwen3_next.qwen_shared = true;
  qwen3_next.qk_norm = QkNorm::per_head;
  HfTraits nemotron_h;  // MoE, when the pattern has E layers, is read by the layout
  nemotron_h.layout = HfLayout::nemotron_h;
  nemotron_h.gated = false;  // up, relu², down in MLPs, experts and the shared expert
  nemotron_h.sigmoid_router = true;
  HfTraits glm4_moe = moe_2025(HfLayout::glm4_moe, "n_routed_experts", true);
  glm4_moe.deepseek_shared = true;
  glm4_moe.router_bias = true;
  glm4_moe.sigmoid_router = true;
  HfTraits deepseek_v32 = moe_2025(HfLayout::deepseek_v32, "n_routed_experts", true);
  deepseek_v32.deepseek_shared = true;
  deepseek_v32.mla = true;
  deepseek_v32.router_bias = true;
  deepseek_v32.sigmoid_router = true;
  HfTraits minimax_m2 = moe_2025(HfLayout::minimax_m2, "num_local_experts", false);
  minimax_m2.sigmoid_router = true;
  HfTraits ernie4_5_moe;  // MoE on layers start..end is read by the layout
  ernie4_5_moe.layout = HfLayout::ernie4_5_moe;
  return {{
      {"gpt_oss", "GptOssForCausalLM", "transformers GptOssConfig (gpt_oss/configuration_gpt_oss.py)", gpt_oss,
       gpt_oss_keys, gpt_oss_aliases},
      {"llama4_text", "Llama4ForCausalLM", "transformers Llama4TextConfig (llama4/configuration_llama4.py)", llama4,
       llama4_keys},
      {"qwen3_next", "Qwen3NextForCausalLM", "transformers Qwen3NextConfig (qwen3_next/configuration_qwen3_next.py)",
       qwen3_next, qwen3_next_keys},
      {"nemotron_h", "NemotronHForCausalLM", "transformers NemotronHConfig (nemotron_h/configuration_nemotron_h.py)",
       nemotron_h, nemotron_h_keys, nemotron_h_aliases},
      {"glm4_moe", "Glm4MoeForCausalLM", "transformers Glm4MoeConfig (no default read: every counting key required)",
       glm4_moe, glm4_moe_keys},
      {"deepseek_v32", "DeepseekV32ForCausalLM",
       "transformers DeepseekV32Config (no default read: every counting key required)", deepseek_v32,
       deepseek_v32_keys},
      {"minimax_m2", "MiniMaxM2ForCausalLM", "the model's remote code (no transformers class)", minimax_m2,
       minimax_m2_keys},
      {"ernie4_5_moe", "Ernie4_5_MoeForCausalLM",
       "transformers Ernie4_5_MoeConfig (no default read: every counting key required)", ernie4_5_moe,
       ernie4_5_moe_keys},
  }};
}

}  // namespace

std::span<const HfFamily> hf_families_2025() {
  static const std::array<HfFamily, 8> table = make_families_2025();
  return table;
}

}  // namespace budget::detail
