// The layer pass of the 2025 Hugging Face families (HfLayout): what their configs say beyond the
// traits the generic pass reads (config/config_hf.cpp). Sources, per family: the transformers
// modeling files at the commits docs/config.md names ("Supported families"), and for MiniMax-M2 the
// released config's own keys.

#include "config/hf_layouts.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "config/hf_key_pass.hpp"

namespace budget::detail {
namespace hf_layout {

void refuse(const HfLayoutInput& in, std::string_view key, const std::string& why) {
  in.root.fail(key, fmt::format("{} (family \"{}\"; docs/config.md lists what each family reads)", why,
                                in.family.model_type));
}

std::int64_t required_integer(const HfLayoutInput& in, std::string_view key, std::int64_t min, std::int64_t max) {
  if (!hf_key_present(in.doc, key)) {
    in.root.fail(key, fmt::format("required key is missing: the family \"{}\" needs it for the layers this file "
                                  "describes",
                                  in.family.model_type));
  }
  return in.root.integer(key, min, max);
}

bool boolean(const HfLayoutInput& in, std::string_view key, bool fallback) {
  if (!hf_key_present(in.doc, key)) return fallback;
  if (!in.root.raw(key).is_boolean()) in.root.fail(key, "expected true or false");
  return in.root.raw(key).get<bool>();
}

/// Every layer MoE: the homogeneous form (no layer_ffns). Else one kind per layer.
void set_layer_ffns(ArchConfig& c, const std::vector<LayerFfn>& ffns) {
  if (std::all_of(ffns.begin(), ffns.end(), [](LayerFfn f) { return f == LayerFfn::moe; })) return;
  // Leading dense layers then MoE: first_dense_layers, as the DeepSeek families write it.
  const auto first_moe = std::find(ffns.begin(), ffns.end(), LayerFfn::moe);
  if (std::all_of(first_moe, ffns.end(), [](LayerFfn f) { return f == LayerFfn::moe; })) {
    c.ffn.first_dense_layers = first_moe - ffns.begin();
    return;
  }
  c.layer_ffns = ffns;
}

}  // namespace hf_layout

namespace {

using hf_layout::refuse;
using hf_layout::required_integer;

/// A per-layer integer list (Llama-4's no_rope_layers, moe_layers; 0-based indices or flags).
std::vector<std::int64_t> integer_list(const HfLayoutInput& in, std::string_view key) {
  const nlohmann::json& list = in.root.raw(key);
  std::vector<std::int64_t> out;
  if (!list.is_array()) in.root.fail(key, "expected an array of integers");
  for (const auto& v : list) {
    if (!v.is_number_integer()) in.root.fail(key, "expected an array of integers");
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

void read_gpt_oss(const HfLayoutInput& in, ArchConfig& c) {
  // GptOssAttention.sinks: one learned logit per head (modeling_gpt_oss.py at transformers 00d4b3d2).
  c.attention.sinks = true;
  if (hf_key_present(in.doc, "experts_per_token") &&
      in.root.integer("experts_per_token", 1, max_dimension) != c.ffn.top_k) {
    refuse(in, "experts_per_token", fmt::format("experts_per_token differs from num_experts_per_tok {}; "
                                                       "transformers reads num_experts_per_tok: correct one of them",
                                                       c.ffn.top_k));
  }
}

/// Llama4TextConfig at transformers 008e5743: moe_layers (default every interleave_moe_layer_step-th
/// layer, 0-based step − 1, 2·step − 1, ...), no_rope_layers (1: RoPE; default 0 on every 4th
/// layer), layer_types (default chunked_attention on RoPE layers, full_attention on the others), a
/// shared expert of intermediate_size beside the routed ones (Llama4TextMoe), dense layers of
/// intermediate_size_mlp (Llama4TextMLP); use_qk_norm is an L2 norm without weights.
void read_llama4(const HfLayoutInput& in, ArchConfig& c) {
  const std::int64_t L = c.num_layers;
  c.ffn.num_shared_experts = 1;
  c.ffn.shared_expert_dim = c.ffn.expert_dim;
  std::vector<LayerFfn> ffns(static_cast<std::size_t>(L), LayerFfn::dense);
  if (hf_key_present(in.doc, "moe_layers")) {
    for (const std::int64_t i : integer_list(in, "moe_layers")) {
      if (i < 0 || i >= L) refuse(in, "moe_layers", fmt::format("layer index {} is outside [0, {}]", i, L - 1));
      ffns[static_cast<std::size_t>(i)] = LayerFfn::moe;
    }
  } else {
    const std::int64_t step = hf_key_present(in.doc, "interleave_moe_layer_step")
                                  ? in.root.integer("interleave_moe_layer_step", 1, 1'000'000)
                                  : 1;
    for (std::int64_t i = step - 1; i < L; i += step) ffns[static_cast<std::size_t>(i)] = LayerFfn::moe;
  }
  hf_layout::set_layer_ffns(c, ffns);
  if (c.ffn.first_dense_layers > 0 || !c.layer_ffns.empty()) c.ffn.dense_dim = required_integer(in, "intermediate_size_mlp", 1, max_dimension);
  std::vector<std::int64_t> rope(static_cast<std::size_t>(L));
  for (std::int64_t i = 0; i < L; ++i) rope[static_cast<std::size_t>(i)] = (i + 1) % 4 != 0 ? 1 : 0;
  if (hf_key_set(in.doc, "no_rope_layers")) rope = integer_list(in, "no_rope_layers");
  if (static_cast<std::int64_t>(rope.size()) != L) {
    refuse(in, "no_rope_layers", fmt::format("expected {} entries (num_hidden_layers)", L));
  }
  for (std::int64_t i = 0; i < L; ++i) {
    if (rope[static_cast<std::size_t>(i)] == 0) c.settings.nope_layers.push_back(i + 1);
  }
  std::vector<LayerAttention> types;
  if (hf_key_present(in.doc, "layer_types")) {
    const nlohmann::json& list = in.root.raw("layer_types");
    if (!list.is_array() || static_cast<std::int64_t>(list.size()) != L) {
      refuse(in, "layer_types", fmt::format("expected an array of {} layer kinds", L));
    }
    for (const auto& v : list) {
      const std::string kind = v.is_string() ? v.get<std::string>() : describe_value(v);
      if (kind != "chunked_attention" && kind != "full_attention") {
        refuse(in, "layer_types", fmt::format("layer kind \"{}\" is not one Llama-4 has (chunked_attention, "
                                                     "full_attention)",
                                                     kind));
      }
      types.push_back(kind == "chunked_attention" ? LayerAttention::chunked : LayerAttention::full);
    }
  } else {
    for (const std::int64_t r : rope) types.push_back(r != 0 ? LayerAttention::chunked : LayerAttention::full);
  }
  // A null chunk, or one of at least max_position_embeddings, never bounds anything: full attention.
  const std::int64_t chunk = hf_key_present(in.doc, "attention_chunk_size")
                                 ? in.root.integer("attention_chunk_size", 1, max_dimension)
                                 : 0;
  const std::int64_t max_positions = hf_key_present(in.doc, "max_position_embeddings")
                                          ? in.root.integer("max_position_embeddings", 1, std::int64_t{1} << 40)
                                          : 0;
  if (chunk > 0 && (max_positions == 0 || chunk < max_positions) &&
      std::find(types.begin(), types.end(), LayerAttention::chunked) != types.end()) {
    c.attention.layer_types = std::move(types);
    c.attention.chunk_size = chunk;
  }
}

}  // namespace

bool hf_generic_layer_types(HfLayout layout) {
  return layout != HfLayout::llama4 && layout != HfLayout::qwen3_next && layout != HfLayout::nemotron_h;
}

void read_hf_layout(const HfLayoutInput& in, ArchConfig& c) {
  switch (in.family.traits.layout) {
    case HfLayout::standard: return;
    case HfLayout::gpt_oss: read_gpt_oss(in, c); return;
    case HfLayout::llama4: read_llama4(in, c); return;
    case HfLayout::qwen3_next: read_hf_layout_qwen3_next(in, c); return;
    case HfLayout::nemotron_h: read_hf_layout_nemotron_h(in, c); return;
    case HfLayout::glm4_moe:
    case HfLayout::deepseek_v32:
    case HfLayout::minimax_m2:
    case HfLayout::ernie4_5_moe: read_hf_layout_moe_2025(in, c); return;
  }
}

}  // namespace budget::detail
