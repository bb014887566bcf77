#pragma once
// Layer executions of one pipeline rank per micro-batch, by kind (private to the layout domain and those above it).
#include <array>
#include <cstdint>
#include <vector>

#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"
#include "layout/layer_kinds.hpp"

namespace budget {

/// Whether physical layer `layer` (1-based) has an MoE FFN (layer_ffns, else the first dense layers).
inline bool is_moe_layer(const ArchConfig& c, std::int64_t layer) { return c.ffn_of_layer(layer) == LayerFfn::moe; }

/// Executions of one rank's chunks per micro-batch, and how many of them full recompute runs
/// forward a second time (the block method: the first `full_layers` of each chunk; 0: all).
struct StageExecutions {
  double layers = 0.0;
  double moe_layers = 0.0;
  double no_ffn_layers = 0.0;  ///< executions of single-mixer layers (Nemotron-H's M and *)
  double mixer_layers = 0.0;   ///< executions with a mixer (all but Nemotron-H's single-FFN layers)
  double ffn_tp_layers = 0.0;  ///< executions whose FFN is TP-split (dense FFN, or MoE with shared experts)
  double recomputed_layers = 0.0;
  double recomputed_moe_layers = 0.0;
  double recomputed_no_ffn_layers = 0.0;
  double recomputed_mixer_layers = 0.0;
  double recomputed_ffn_tp_layers = 0.0;
  /// Executions (and recomputed ones) of each layer kind (layer_kinds.hpp), index layer_kind_of().
  std::array<double, layer_kind_count> kind_layers{};
  std::array<double, layer_kind_count> kind_recomputed_layers{};
  double dense_layers() const { return layers - moe_layers - no_ffn_layers; }
  double recomputed_dense_layers() const { return recomputed_layers - recomputed_moe_layers - recomputed_no_ffn_layers; }
  /// Executions (recomputed: their recomputed forwards) of the layers whose mixer is `mixer`.
  double mixer_executions(LayerMixer mixer, bool recomputed) const {
    double n = 0.0;
    for (int k = 0; k < layer_kind_count; ++k) {
      if (mixer_of_layer_kind(k) == mixer) n += recomputed ? kind_recomputed_layers[static_cast<std::size_t>(k)]
                                                          : kind_layers[static_cast<std::size_t>(k)];
    }
    return n;
  }
};

inline StageExecutions stage_executions(const ArchConfig& c, const ParallelLayout& l,
                                        const std::vector<ModelChunk>& chunks, std::int64_t rank) {
  StageExecutions e;
  for (std::int64_t v = 0; v < l.virtual_stages; ++v) {
    const ModelChunk& chunk = chunks[static_cast<std::size_t>(v * l.pp + rank)];
    for (std::size_t i = 0; i < chunk.executed_layers.size(); ++i) {
      const std::int64_t layer = chunk.executed_layers[i];
      const int kind = layer_kind_of(c, layer);
      const LayerFfn ffn = ffn_of_layer_kind(kind);
      const bool moe = ffn == LayerFfn::moe;
      const bool no_ffn = ffn == LayerFfn::none;
      const bool mixer = mixer_of_layer_kind(kind) != LayerMixer::none;
      const bool ffn_tp = ffn == LayerFfn::dense || (moe && c.ffn.num_shared_experts > 0);
      const bool recomputed = l.recompute.kind == RecomputeKind::full &&
                              (l.recompute.method == RecomputeMethod::uniform || l.recompute.full_layers == 0 ||
                               static_cast<std::int64_t>(i) < l.recompute.full_layers);
      // The execution counted into the fields of all executions, and of recomputed ones where it is.
      const auto count = [&](double& all, double& moe_n, double& no_ffn_n, double& mixer_n, double& ffn_tp_n,
                             std::array<double, layer_kind_count>& kinds) {
        all += 1.0;
        moe_n += moe ? 1.0 : 0.0;
        no_ffn_n += no_ffn ? 1.0 : 0.0;
        mixer_n += mixer ? 1.0 : 0.0;
        ffn_tp_n += ffn_tp ? 1.0 : 0.0;
        kinds[static_cast<std::size_t>(kind)] += 1.0;
      };
      count(e.layers, e.moe_layers, e.no_ffn_layers, e.mixer_layers, e.ffn_tp_layers, e.kind_layers);
      if (recomputed) {
        count(e.recomputed_layers, e.recomputed_moe_layers, e.recomputed_no_ffn_layers, e.recomputed_mixer_layers,
              e.recomputed_ffn_tp_layers, e.kind_recomputed_layers);
      }
    }
  }
  return e;
}

}  // namespace budget
