#pragma once
// Layer executions of one pipeline rank per micro-batch, by kind (private to the cluster domain).
#include <cstdint>
#include <vector>

#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"

namespace budget {

inline bool is_moe_layer(const ArchConfig& c, std::int64_t layer) {
  return c.ffn.is_moe() && layer > c.ffn.first_dense_layers;
}

/// Executions of one rank's chunks per micro-batch, and how many of them full recompute runs
/// forward a second time (the block method: the first `full_layers` of each chunk; 0: all).
struct StageExecutions {
  double layers = 0.0;
  double moe_layers = 0.0;
  double ffn_tp_layers = 0.0;  ///< executions whose FFN is TP-split (dense FFN, or MoE with shared experts)
  double recomputed_layers = 0.0;
  double recomputed_moe_layers = 0.0;
  double recomputed_ffn_tp_layers = 0.0;
  double dense_layers() const { return layers - moe_layers; }
  double recomputed_dense_layers() const { return recomputed_layers - recomputed_moe_layers; }
};

inline StageExecutions stage_executions(const ArchConfig& c, const ParallelLayout& l,
                                        const std::vector<ModelChunk>& chunks, std::int64_t rank) {
  StageExecutions e;
  for (std::int64_t v = 0; v < l.virtual_stages; ++v) {
    const ModelChunk& chunk = chunks[static_cast<std::size_t>(v * l.pp + rank)];
    for (std::size_t i = 0; i < chunk.executed_layers.size(); ++i) {
      const std::int64_t layer = chunk.executed_layers[i];
      const bool moe = is_moe_layer(c, layer);
      const bool ffn_tp = !moe || c.ffn.num_shared_experts > 0;
      const bool recomputed = l.recompute.kind == RecomputeKind::full &&
                              (l.recompute.method == RecomputeMethod::uniform || l.recompute.full_layers == 0 ||
                               static_cast<std::int64_t>(i) < l.recompute.full_layers);
      e.layers += 1.0;
      e.moe_layers += moe ? 1.0 : 0.0;
      e.ffn_tp_layers += ffn_tp ? 1.0 : 0.0;
      if (recomputed) {
        e.recomputed_layers += 1.0;
        e.recomputed_moe_layers += moe ? 1.0 : 0.0;
        e.recomputed_ffn_tp_layers += ffn_tp ? 1.0 : 0.0;
      }
    }
  }
  return e;
}

}  // namespace budget
