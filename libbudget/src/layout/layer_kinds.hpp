#pragma once
// Private to the layout domain and those above it: the kinds of layer of a hybrid stack
// (docs/cluster.md, "Hybrid stacks on a cluster"). A layer kind is its mixer, its attention kind
// (attention layers only; the others are "full") and its FFN: each kind present in a stack is timed
// at its own TP shard (layer_kinds.cpp; step_time/cluster_time.cpp), and a stage sums its
// executions of each kind.
#include <cstdint>
#include <string>
#include <vector>

#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"

namespace budget {

/// Mixers × attention kinds × FFN kinds (LayerMixer, LayerAttention, LayerFfn: 4 · 3 · 3).
inline constexpr int layer_kind_count = 36;
static_assert(static_cast<int>(LayerMixer::none) == 3 && static_cast<int>(LayerAttention::chunked) == 2 &&
                  static_cast<int>(LayerFfn::none) == 2,
              "a new LayerMixer, LayerAttention or LayerFfn changes layer_kind_count and layer_kind_of()");

/// The kind of physical layer `layer` (1-based): (mixer · 3 + attention kind) · 3 + FFN.
inline int layer_kind_of(const ArchConfig& c, std::int64_t layer) {
  const LayerMixer mixer = c.mixer_of_layer(layer);
  const LayerAttention attention = mixer == LayerMixer::attention ? c.attention_of_layer(layer) : LayerAttention::full;
  return (static_cast<int>(mixer) * 3 + static_cast<int>(attention)) * 3 + static_cast<int>(c.ffn_of_layer(layer));
}
inline LayerMixer mixer_of_layer_kind(int kind) { return static_cast<LayerMixer>(kind / 9); }
inline LayerAttention attention_of_layer_kind(int kind) { return static_cast<LayerAttention>(kind / 3 % 3); }
inline LayerFfn ffn_of_layer_kind(int kind) { return static_cast<LayerFfn>(kind % 3); }

/// The PartTimesCache group of kind k's mixer part is layer_kind_group + k (step_compute.hpp; groups
/// 0-2 are the attention/dense/head, the router/shared-expert and the routed-expert parts).
inline constexpr int layer_kind_group = 16;

/// The kinds of `c`'s physical layers, each once, in increasing kind order.
std::vector<int> layer_kinds_present(const ArchConfig& c);

/// One layer of kind `kind` as one GPU of the layout computes it, from `tp_shard_config` (the
/// config's TP shard: one layer, heads and widths divided by TP, the per-layer lists cleared):
/// the kind's mixer, attention kind and FFN; linear attention's key and value heads and Mamba-2's
/// heads and groups divided by TP (Megatron-Core shards them so: mamba_mixer.py:259-271 and
/// gated_delta_net/common.py:183-186 at d98e8a64).
ArchConfig layer_kind_shard(const ArchConfig& tp_shard_config, const ArchConfig& config, int kind,
                            const ParallelLayout& layout);

/// What the layout must satisfy for the linear-attention and Mamba-2 layers of `config` (empty when
/// it has none), as Megatron-Core at d98e8a64 asserts: Mamba-2 heads and groups divide by TP
/// (mamba_mixer.py:262, 270), the heads of a TP rank by CP and its groups by CP or CP by them
/// (mamba_context_parallel.py:106-129); Gated DeltaNet's key and value heads divide by TP·CP
/// (transformer_config.py:1500-1509).
std::string layout_layer_kinds_error(const ParallelLayout& layout, const ArchConfig& config);

}  // namespace budget
