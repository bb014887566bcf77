// Hybrid stacks on a cluster (docs/cluster.md, "Hybrid stacks on a cluster"): the layer kinds of a
// stack whose layers differ, each timed at its own TP shard, the layout checks Megatron-Core makes
// of Mamba-2 and Gated DeltaNet layers, and their context-parallel all-to-alls. Sources:
// Megatron-LM at d98e8a64 (megatron/core/ssm/), as cited at each function.
#include "cluster/layer_kinds.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "cluster/step_compute.hpp"

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

/// A CP all-to-all term of `calls` calls whose send buffers sum to `bytes_per_pass` per pass
/// (`calls_per_pass` calls a pass); nccl-tests' all-to-all time (communication.hpp).
CommTerm mixer_cp_term(const char* name, const GroupPlacement& g, const ClusterSpec& cluster, double bytes_per_pass,
                       double calls_per_pass, double passes, bool overlapped) {
  CommTerm t;
  t.name = name;
  t.kind = CollectiveKind::all_to_all;
  t.group = g;
  t.size_bytes = bytes_per_pass / calls_per_pass;
  t.calls_per_step = passes * calls_per_pass;
  t.bytes_per_step = t.calls_per_step * t.size_bytes * bus_factor(t.kind, g.size);
  t.inter_node_bytes_per_step = g.inter_node() ? t.bytes_per_step : 0.0;
  const LinkSpec& link = g.inter_node() ? cluster.inter_node : cluster.intra_node;
  t.seconds_per_step = t.calls_per_step * collective_seconds(t.kind, t.size_bytes, g.size, link);
  t.overlapped = overlapped;
  return t;
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

void add_mixer_cp_comm_terms(std::vector<CommTerm>& terms, const ArchConfig& config, const ParallelLayout& l,
                             const ClusterSpec& cluster, const GroupPlacement& cp_group, double tokens,
                             double activation_bytes, double mamba_passes, double linear_attention_passes,
                             bool overlapped) {
  if (l.cp <= 1) return;
  const double tp = static_cast<double>(l.tp);
  if (mamba_passes > 0.0 && config.mamba) {
    // Before the scan z and x (inner/TP each), B and C (groups/TP · state each, repeated CP/(groups/TP)
    // times when a TP rank holds fewer groups than CP ranks) and dt (heads/TP); after it y (inner/TP).
    const MambaConfig& m = *config.mamba;
    const std::int64_t groups = m.num_groups / l.tp;
    const double repeat = groups < l.cp ? static_cast<double>(l.cp / groups) : 1.0;
    const double inner = static_cast<double>(m.inner()) / tp;
    const double width = 3.0 * inner + 2.0 * static_cast<double>(groups * m.state_size) * repeat +
                         static_cast<double>(m.num_heads) / tp;
    terms.push_back(
        mixer_cp_term("cp_mamba", cp_group, cluster, tokens * width * activation_bytes, 6.0, mamba_passes, overlapped));
  }
  if (linear_attention_passes > 0.0 && config.linear_attention) {
    // Before the recurrence the whole input projection (q, k, v, z, β, a: in_projection_width()/TP),
    // after it the gated norm's output (value width/TP).
    const LinearAttentionConfig& a = *config.linear_attention;
    const double width = static_cast<double>(a.in_projection_width() + a.value_width()) / tp;
    terms.push_back(mixer_cp_term("cp_linear_attention", cp_group, cluster, tokens * width * activation_bytes, 2.0,
                                  linear_attention_passes, overlapped));
  }
}

double mixer_recompute_seconds(const StageExecutions& e, const LayerTimes& times) {
  if (times.kinds.empty()) return e.recomputed_layers * (times.base4.attention - times.base3.attention);
  double seconds = 0.0;
  for (const LayerKindTimes& k : times.kinds) {
    seconds += e.kind_recomputed_layers[static_cast<std::size_t>(k.kind)] * (k.times4.attention - k.times3.attention);
  }
  return seconds;
}

double mixer_op_recompute_seconds(const StageExecutions& e, const LayerTimes& times, std::size_t op) {
  if (times.kinds.empty()) return e.layers * (times.base4.by_kind[op] - times.base3.by_kind[op]);
  double seconds = 0.0;
  for (const LayerKindTimes& k : times.kinds) {
    seconds += e.kind_layers[static_cast<std::size_t>(k.kind)] * (k.times4.by_kind[op] - k.times3.by_kind[op]);
  }
  return seconds;
}

}  // namespace budget
