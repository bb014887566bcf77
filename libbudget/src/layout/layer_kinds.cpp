// Hybrid stacks on a cluster (docs/cluster.md, "Hybrid stacks on a cluster"): the layer kinds of a
// stack whose layers differ, each timed at its own TP shard (step_time/cluster_time.cpp), and the
// layout checks Megatron-Core makes of Mamba-2 and Gated DeltaNet layers; their context-parallel
// all-to-alls are communication/mixer_cp_comm.cpp's. Sources: Megatron-LM at d98e8a64
// (megatron/core/ssm/), as cited at each function.
#include "layout/layer_kinds.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace budget {

std::vector<int> layer_kinds_present(const ArchConfig& c) {
  std::array<bool, layer_kind_count> seen{};
  for (std::int64_t layer = 1; layer <= c.num_layers; ++layer) seen[static_cast<std::size_t>(layer_kind_of(c, layer))] = true;
  std::vector<int> kinds;
  for (int k = 0; k < layer_kind_count; ++k) {
    if (seen[static_cast<std::size_t>(k)]) kinds.push_back(k);
  }
  return kinds;
}

ArchConfig layer_kind_shard(const ArchConfig& tp_shard_config, const ArchConfig& config, int kind,
                            const ParallelLayout& layout) {
  ArchConfig s = tp_shard_config;
  const LayerMixer mixer = mixer_of_layer_kind(kind);
  const LayerAttention attention = attention_of_layer_kind(kind);
  const LayerFfn ffn = ffn_of_layer_kind(kind);
  s.layer_mixers = {mixer};
  s.layer_ffns = {ffn};
  s.attention.layer_types = {attention};
  if (attention != LayerAttention::sliding) s.attention.sliding_window = 0;
  if (attention != LayerAttention::chunked) s.attention.chunk_size = 0;
  const std::int64_t tp = layout.tp;
  if (mixer == LayerMixer::linear_attention && config.linear_attention) {
    LinearAttentionConfig la = *config.linear_attention;
    la.num_key_heads /= tp;
    la.num_value_heads /= tp;
    s.linear_attention = la;
  }
  if (mixer == LayerMixer::mamba && config.mamba) {
    MambaConfig m = *config.mamba;
    m.num_heads /= tp;
    m.num_groups /= tp;
    s.mamba = m;
  }
  // The kind's FFN decides the layer's norms and residual adds, which its mixer part holds; the FFN
  // itself is timed with the stack's dense or MoE parts.
  return s;
}

namespace {

std::string mamba_layout_error(const ParallelLayout& l, const MambaConfig& m) {
  if (m.num_heads % l.tp != 0) return fmt::format("{} Mamba-2 heads do not divide by TP = {}", m.num_heads, l.tp);
  if (m.num_groups % l.tp != 0) return fmt::format("{} Mamba-2 groups do not divide by TP = {}", m.num_groups, l.tp);
  const std::int64_t heads = m.num_heads / l.tp, groups = m.num_groups / l.tp;
  if (l.cp > 1 && heads % l.cp != 0) {
    return fmt::format("{} Mamba-2 heads do not divide by TP·CP = {}·{} (Mamba's context parallelism splits heads)",
                       m.num_heads, l.tp, l.cp);
  }
  if (l.cp > 1 && (groups < l.cp ? l.cp % groups : groups % l.cp) != 0) {
    return fmt::format("{} Mamba-2 groups per TP rank and CP = {}: neither divides the other", groups, l.cp);
  }
  return {};
}

std::string linear_attention_layout_error(const ParallelLayout& l, const LinearAttentionConfig& a) {
  const std::int64_t tp_cp = l.tp * l.cp;
  if (a.num_key_heads % tp_cp != 0) {
    return fmt::format("{} linear-attention key heads do not divide by TP·CP = {}·{}", a.num_key_heads, l.tp, l.cp);
  }
  if (a.num_value_heads % tp_cp != 0) {
    return fmt::format("{} linear-attention value heads do not divide by TP·CP = {}·{}", a.num_value_heads, l.tp, l.cp);
  }
  return {};
}

}  // namespace

std::string layout_layer_kinds_error(const ParallelLayout& l, const ArchConfig& config) {
  const LayerCounts n = config.layer_counts();
  if (n.mamba.physical > 0 && config.mamba) {
    if (std::string e = mamba_layout_error(l, *config.mamba); !e.empty()) return e;
  }
  if (n.linear_attention.physical > 0 && config.linear_attention) {
    if (std::string e = linear_attention_layout_error(l, *config.linear_attention); !e.empty()) return e;
  }
  return {};
}

}  // namespace budget
