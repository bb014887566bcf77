// The MoE families of 2025 whose layers are one kind throughout (or leading dense layers then MoE):
// GLM-4.5/4.6/4.7 (glm4_moe), DeepSeek-V3.2 (deepseek_v32), MiniMax-M2 (minimax_m2), ERNIE-4.5 MoE
// (ernie4_5_moe). What their keys add to the generic pass.

#include <fmt/format.h>

#include "budget/error.hpp"
#include "config/hf_key_pass.hpp"
#include "config/hf_layouts.hpp"

namespace budget::detail {
namespace {

using hf_layout::refuse;
using hf_layout::required_integer;

/// partial_rotary_factor (no weights, a setting; GLM-4.5 0.5, Qwen3-Next 0.25).
void read_partial_rotary(const HfLayoutInput& in, ArchConfig& c) {
  if (hf_key_present(in.doc, "partial_rotary_factor")) {
    c.settings.partial_rotary_factor = in.root.number("partial_rotary_factor", 1e-6, 1.0);
  }
}

/// Glm4MoeAttention (modular_glm4_moe.py at transformers 008c726d: Glm4Attention): q, k and v
/// projections with attention_bias, the output projection without; q/k RMSNorms of head_dim with
/// use_qk_norm. The MoE block is DeepSeek-V3's (router bias, n_shared_experts ×
/// moe_intermediate_size shared) and the first first_k_dense_replace layers are dense, as read.
void read_glm4_moe(const HfLayoutInput& in, ArchConfig& c) {
  c.attention.output_bias = false;
  if (hf_layout::boolean(in, "use_qk_norm", false)) c.attention.qk_norm = QkNorm::per_head;
  read_partial_rotary(in, c);
}

/// DeepSeek-V3.2's indexer (DeepSeek-V3.2-Exp inference/model.py:431-444 at 3b99a535): index_n_heads
/// heads of index_head_dim, index_topk keys per query.
void read_deepseek_v32(const HfLayoutInput& in, ArchConfig& c) {
  IndexerConfig x;
  x.num_heads = required_integer(in, "index_n_heads", 1, max_dimension);
  x.head_dim = required_integer(in, "index_head_dim", 1, max_dimension);
  x.top_k = required_integer(in, "index_topk", 1, max_dimension);
  c.attention.indexer = x;
}

/// MiniMax-M2's keys (its remote code, no transformers class): use_routing_bias (the router's
/// e_score_correction_bias), use_qk_norm with qk_norm_type per_layer (one RMSNorm over the whole query
/// width and one over the KV width: QkNorm::full) or per_head, rotary_dim of head_dim rotated.
/// shared_intermediate_size > 0 is refused (its shared expert is not modelled); MTP modules (use_mtp)
/// are said not counted: their structure in the remote code is not modelled, and they are apart
/// from every budget.
void read_minimax_m2(const HfLayoutInput& in, ArchConfig& c) {
  c.ffn.router_bias = hf_layout::boolean(in, "use_routing_bias", false);
  if (hf_layout::boolean(in, "use_qk_norm", false)) {
    if (!hf_key_present(in.doc, "qk_norm_type")) {
      in.root.fail("qk_norm_type", "required key is missing: with use_qk_norm it says whether the q/k norms are "
                                   "per layer (full width) or per head");
    }
    const std::string type = in.root.string("qk_norm_type");
    if (type != "per_layer" && type != "per_head") {
      refuse(in, "qk_norm_type", fmt::format("q/k norm type \"{}\" is not modelled; allowed: per_layer, per_head",
                                             type));
    }
    c.attention.qk_norm = type == "per_layer" ? QkNorm::full : QkNorm::per_head;
  }
  if (hf_key_present(in.doc, "rotary_dim")) {
    const std::int64_t rotary = in.root.integer("rotary_dim", 1, c.attention.head_dim);
    c.settings.partial_rotary_factor = static_cast<double>(rotary) / static_cast<double>(c.attention.head_dim);
  }
  if (hf_key_set(in.doc, "shared_intermediate_size")) {
    refuse(in, "shared_intermediate_size", "a MiniMax shared expert is not modelled; allowed: 0 or absent");
  }
  if (hf_layout::boolean(in, "use_mtp", false)) {
    c.notes.push_back("use_mtp: the multi-token-prediction modules (num_mtp_modules, mtp_transformer_layers) are not "
                      "counted: their structure in MiniMax's remote code is not modelled (they are apart from every "
                      "budget)");
  }
}

/// Ernie4_5_MoeSparseMoeBlock / Ernie4_5_MoeDecoderLayer (transformers' ernie4_5_moe): moe_num_experts
/// gated experts of moe_intermediate_size, top moe_k, one shared MLP of moe_num_shared_experts ×
/// moe_intermediate_size, the router's e_score_correction_bias (moe_statics); MoE on layers
/// moe_layer_start_index … moe_layer_end_index (−1: the last), dense MLPs of intermediate_size on the
/// others; use_bias on every linear layer. moe_layer_interval > 1 is refused.
void read_ernie4_5_moe(const HfLayoutInput& in, ArchConfig& c) {
  FfnConfig& f = c.ffn;
  f.num_experts = required_integer(in, "moe_num_experts", 1, max_dimension);
  f.top_k = required_integer(in, "moe_k", 1, f.num_experts);
  f.expert_dim = required_integer(in, "moe_intermediate_size", 1, max_dimension);
  f.router_bias = true;
  f.num_shared_experts = required_integer(in, "moe_num_shared_experts", 0, max_dimension);
  f.shared_expert_dim = f.num_shared_experts > 0 ? f.expert_dim : 0;
  if (hf_key_present(in.doc, "moe_layer_interval") && in.root.integer("moe_layer_interval", 1, 1 << 20) > 1) {
    refuse(in, "moe_layer_interval", "MoE on only every k-th layer is not modelled; allowed: 1");
  }
  const std::int64_t L = c.num_layers;
  const std::int64_t start = required_integer(in, "moe_layer_start_index", 0, L - 1);
  std::int64_t end = required_integer(in, "moe_layer_end_index", -1, L - 1);
  if (end < 0) end = L - 1;
  std::vector<LayerFfn> ffns(static_cast<std::size_t>(L), LayerFfn::dense);
  for (std::int64_t i = start; i <= end; ++i) ffns[static_cast<std::size_t>(i)] = LayerFfn::moe;
  hf_layout::set_layer_ffns(c, ffns);
  const bool bias = hf_layout::boolean(in, "use_bias", false);
  c.attention.qkv_bias = bias;
  c.attention.output_bias = bias;
  f.bias = bias;
}

}  // namespace

void read_hf_layout_moe_2025(const HfLayoutInput& in, ArchConfig& c) {
  switch (in.family.traits.layout) {
    case HfLayout::glm4_moe: read_glm4_moe(in, c); return;
    case HfLayout::deepseek_v32: read_deepseek_v32(in, c); return;
    case HfLayout::minimax_m2: read_minimax_m2(in, c); return;
    case HfLayout::ernie4_5_moe: read_ernie4_5_moe(in, c); return;
    default: return;
  }
}

}  // namespace budget::detail
