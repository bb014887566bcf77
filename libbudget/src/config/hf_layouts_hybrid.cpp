// The hybrid stacks of 2025: Qwen3-Next (Gated DeltaNet and gated full attention) and Nemotron-H /
// Nemotron-3 (Mamba-2, attention, MLP and MoE blocks). Layer kinds, mixer sizes and what is refused.

#include <algorithm>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "config/hf_key_pass.hpp"
#include "config/hf_layouts.hpp"

namespace budget::detail {

using hf_layout::refuse;
using hf_layout::required_integer;

/// Qwen3NextConfig and Qwen3NextGatedDeltaNet / Qwen3NextAttention (configuration_qwen3_next.py at
/// transformers 008e5743, modular_qwen3_next.py at 043bb8dd): layer_types of linear_attention and
/// full_attention, else every full_attention_interval-th layer full (default 4, said); the linear_*
/// sizes; the full layers' q_proj emits the output gate. The chunked kernel's chunk is 64
/// (torch_chunk_gated_delta_rule's chunk_size; FLOPs only).
void read_hf_layout_qwen3_next(const HfLayoutInput& in, ArchConfig& c) {
  const std::int64_t L = c.num_layers;
  std::vector<LayerMixer> mixers;
  if (hf_key_present(in.doc, "layer_types")) {
    const nlohmann::json& list = in.root.raw("layer_types");
    if (!list.is_array() || static_cast<std::int64_t>(list.size()) != L) {
      refuse(in, "layer_types", fmt::format("expected an array of {} layer kinds (num_hidden_layers)", L));
    }
    for (const auto& v : list) {
      const std::string kind = v.is_string() ? v.get<std::string>() : describe_value(v);
      if (kind != "linear_attention" && kind != "full_attention") {
        refuse(in, "layer_types", fmt::format("layer kind \"{}\" is not one Qwen3-Next has (linear_attention, "
                                              "full_attention)",
                                              kind));
      }
      mixers.push_back(kind == "full_attention" ? LayerMixer::attention : LayerMixer::linear_attention);
    }
  } else {
    std::int64_t interval = 4;
    if (hf_key_present(in.doc, "full_attention_interval")) {
      interval = in.root.integer("full_attention_interval", 1, 1'000'000);
    } else {
      c.notes.push_back(fmt::format("full_attention_interval: absent, taken as 4 (the default of {}) for which "
                                    "layers have full attention",
                                    in.family.defaults_source));
    }
    for (std::int64_t i = 0; i < L; ++i) {
      mixers.push_back((i + 1) % interval == 0 ? LayerMixer::attention : LayerMixer::linear_attention);
    }
  }
  c.attention.output_gate = true;
  if (hf_key_present(in.doc, "partial_rotary_factor")) {
    c.settings.partial_rotary_factor = in.root.number("partial_rotary_factor", 1e-6, 1.0);
  }
  if (std::find(mixers.begin(), mixers.end(), LayerMixer::linear_attention) == mixers.end()) return;
  LinearAttentionConfig l;
  l.num_key_heads = in.root.integer("linear_num_key_heads", 1, max_dimension);
  l.num_value_heads = in.root.integer("linear_num_value_heads", 1, max_dimension);
  l.key_head_dim = in.root.integer("linear_key_head_dim", 1, max_dimension);
  l.value_head_dim = in.root.integer("linear_value_head_dim", 1, max_dimension);
  l.conv_kernel = in.root.integer("linear_conv_kernel_dim", 1, 1024);
  l.chunk_size = 64;
  c.linear_attention = l;
  c.layer_mixers = std::move(mixers);
}

namespace {

/// A block kind of Nemotron-H: the letters of hybrid_override_pattern (NemotronHConfig._pattern_to_list
/// at transformers 13923c63: M Mamba-2, * attention, - MLP, E MoE) or layers_block_type's names (and
/// their legacy spellings mamba / attention).
struct NemotronBlock {
  LayerMixer mixer;
  LayerFfn ffn;
};

std::vector<NemotronBlock> nemotron_blocks(const HfLayoutInput& in) {
  std::vector<NemotronBlock> blocks;
  const auto add = [&](std::string_view name, const char* key) {
    if (name == "M" || name == "mamba" || name == "linear_attention") {
      blocks.push_back({LayerMixer::mamba, LayerFfn::none});
    } else if (name == "*" || name == "attention" || name == "full_attention") {
      blocks.push_back({LayerMixer::attention, LayerFfn::none});
    } else if (name == "-" || name == "mlp") {
      blocks.push_back({LayerMixer::none, LayerFfn::dense});
    } else if (name == "E" || name == "moe") {
      blocks.push_back({LayerMixer::none, LayerFfn::moe});
    } else {
      refuse(in, key, fmt::format("block kind \"{}\" is not one Nemotron-H has (M mamba, * attention, - mlp, E "
                                  "moe)",
                                  name));
    }
  };
  if (hf_key_present(in.doc, "layers_block_type")) {
    const nlohmann::json& list = in.root.raw("layers_block_type");
    if (!list.is_array()) refuse(in, "layers_block_type", "expected an array of block kinds");
    for (const auto& v : list) add(v.is_string() ? v.get<std::string>() : describe_value(v), "layers_block_type");
  } else if (hf_key_present(in.doc, "hybrid_override_pattern")) {
    const std::string pattern = in.root.string("hybrid_override_pattern");
    for (const char ch : pattern) add(std::string_view(&ch, 1), "hybrid_override_pattern");
  } else {
    in.root.fail("hybrid_override_pattern", "required key is missing: the family \"nemotron_h\" builds its layers "
                                            "from it (or from layers_block_type); transformers' default pattern "
                                            "is not read from a file that does not say it");
  }
  return blocks;
}

/// NemotronHMoE (modular_nemotron_h.py at transformers 008d9e95): DeepseekV3TopkRouter (weights and
/// e_score_correction_bias), n_routed_experts non-gated experts of moe_intermediate_size, one
/// non-gated shared MLP of moe_shared_expert_intermediate_size; a latent projection when
/// moe_latent_size is set (refused).
void read_nemotron_moe(const HfLayoutInput& in, ArchConfig& c) {
  if (hf_key_set(in.doc, "moe_latent_size")) {
    refuse(in, "moe_latent_size", "latent MoE (experts computed in a projected latent space) is not modelled");
  }
  FfnConfig& f = c.ffn;
  f.num_experts = required_integer(in, "n_routed_experts", 1, max_dimension);
  f.top_k = required_integer(in, "num_experts_per_tok", 1, f.num_experts);
  f.expert_dim = required_integer(in, "moe_intermediate_size", 1, max_dimension);
  f.router_bias = true;
  if (c.ffn.bias) {
    refuse(in, "mlp_bias", "MLP biases with MoE layers: NemotronHExperts have none while mlp_bias puts them on the "
                           "shared and dense MLPs, which is not modelled; allowed: false");
  }
  if (hf_key_present(in.doc, "n_shared_experts") && in.root.integer("n_shared_experts", 0, max_dimension) != 1) {
    refuse(in, "n_shared_experts", "transformers builds one shared MLP of moe_shared_expert_intermediate_size "
                                   "whatever n_shared_experts says; allowed: 1 or absent");
  }
  const std::int64_t shared = required_integer(in, "moe_shared_expert_intermediate_size", 0, max_dimension);
  if (shared > 0) {
    f.num_shared_experts = 1;
    f.shared_expert_dim = shared;
  }
}

}  // namespace

/// NemotronHConfig (configuration_nemotron_h.py at transformers 13923c63) and its blocks
/// (modular_nemotron_h.py at 008d9e95): one norm and one mixer per block; Mamba-2 of mamba_num_heads
/// × mamba_head_dim (not expand·H), n_groups, ssm_state_size, conv_kernel, chunk_size, use_conv_bias,
/// use_bias on the projections; MLPs of intermediate_size, non-gated; attention without RoPE.
void read_hf_layout_nemotron_h(const HfLayoutInput& in, ArchConfig& c) {
  const std::vector<NemotronBlock> blocks = nemotron_blocks(in);
  if (static_cast<std::int64_t>(blocks.size()) != c.num_layers) {
    refuse(in, "num_hidden_layers", fmt::format("num_hidden_layers {} differs from the {} blocks of the layer "
                                                "pattern; transformers counts the pattern: correct one of them",
                                                c.num_layers, blocks.size()));
  }
  if (hf_key_present(in.doc, "num_nextn_predict_layers") && in.root.integer("num_nextn_predict_layers", 0, 1024) > 0) {
    refuse(in, "num_nextn_predict_layers", "multi-token prediction of a hybrid stack is not modelled");
  }
  if (hf_key_set(in.doc, "sliding_window")) refuse(in, "sliding_window", "sliding-window attention is not modelled here");
  if (hf_layout::boolean(in, "mamba_proj_bias", false)) {
    refuse(in, "mamba_proj_bias", "transformers reads use_bias for the Mamba-2 projections; a true mamba_proj_bias "
                                  "contradicts it");
  }
  std::vector<LayerFfn> ffns;
  for (const NemotronBlock& b : blocks) {
    c.layer_mixers.push_back(b.mixer);
    ffns.push_back(b.ffn);
  }
  c.layer_ffns = std::move(ffns);
  if (std::count(c.layer_ffns.begin(), c.layer_ffns.end(), LayerFfn::moe) > 0) read_nemotron_moe(in, c);
  if (std::count(c.layer_mixers.begin(), c.layer_mixers.end(), LayerMixer::mamba) > 0) {
    MambaConfig m;
    m.num_heads = in.root.integer("mamba_num_heads", 1, max_dimension);
    m.head_dim = in.root.integer("mamba_head_dim", 1, max_dimension);
    m.state_size = in.root.integer("ssm_state_size", 1, max_dimension);
    m.num_groups = in.root.integer("n_groups", 1, max_dimension);
    m.conv_kernel = in.root.integer("conv_kernel", 1, 1024);
    m.chunk_size = in.root.integer("chunk_size", 1, 1 << 20);
    m.conv_bias = hf_layout::boolean(in, "use_conv_bias", true);
    m.projection_bias = hf_layout::boolean(in, "use_bias", false);
    c.mamba = m;
  }
}

}  // namespace budget::detail
