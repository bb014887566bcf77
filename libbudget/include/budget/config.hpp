#pragma once
/// \file
/// ArchConfig: the architecture of a (possibly looped) decoder-only MoE transformer, and its
/// validation. Field meanings, units and defaults are documented in docs/config.md.
///
/// Thread safety: validate(), centred_loop() and the ArchConfig member functions are reentrant:
/// concurrent calls are safe, including on one shared const config.

#include <cstdint>
#include <optional>
#include <string>

namespace budget {

/// Grouped-query attention. Query width q = num_heads·head_dim, KV width kv = num_kv_heads·head_dim.
/// The query width need not equal hidden_size.
struct AttentionConfig {
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t num_kv_heads = 0;

  std::int64_t query_width() const { return num_heads * head_dim; }
  std::int64_t kv_width() const { return num_kv_heads * head_dim; }
};

/// The feed-forward block. A layer is MoE when num_experts > 0 and it is not one of the first
/// `first_dense_layers` layers; otherwise it is a dense FFN of width dense_dim. An expert (routed
/// or shared) and a dense FFN are MLPs with (gated ? 3 : 2) weight matrices of hidden × width.
struct FfnConfig {
  std::int64_t num_experts = 0;         ///< routed experts per MoE layer (0: dense model)
  std::int64_t top_k = 0;               ///< routed experts each token uses
  std::int64_t expert_dim = 0;          ///< routed expert width
  bool gated = true;                    ///< SwiGLU-style (3 matrices) or plain (2)
  std::int64_t num_shared_experts = 0;  ///< always-active experts per MoE layer
  std::int64_t shared_expert_dim = 0;   ///< width of each shared expert
  std::int64_t first_dense_layers = 0;  ///< leading layers with a dense FFN instead of MoE
  std::int64_t dense_dim = 0;           ///< dense FFN width (dense layers / dense models)

  bool is_moe() const { return num_experts > 0; }
  std::int64_t matrices_per_mlp() const { return gated ? 3 : 2; }
};

/// Layers [first, last] (1-based, inclusive) run `repeats` times in a row with shared weights.
struct LoopConfig {
  std::int64_t first = 1;
  std::int64_t last = 1;
  std::int64_t repeats = 1;

  std::int64_t span() const { return last - first + 1; }
  /// Executed layers added by the loop: (repeats − 1)·span.
  std::int64_t extra_executed_layers() const { return (repeats - 1) * span(); }
};

struct ArchConfig {
  std::string name;
  std::int64_t hidden_size = 0;
  std::int64_t num_layers = 0;            ///< physical layers (distinct weights)
  std::int64_t vocab_size = 0;            ///< 0: embedding and LM head not modelled
  bool tie_embeddings = false;            ///< LM head shares the embedding matrix
  AttentionConfig attention;
  FfnConfig ffn;
  std::optional<LoopConfig> loop;         ///< absent: unlooped

  /// How many times physical layer `layer` (1-based) is executed per token.
  std::int64_t executions_of_layer(std::int64_t layer) const;
  /// Executed ("effective") depth: num_layers + (repeats − 1)·span.
  std::int64_t executed_layers() const;
  /// Layers with a dense FFN (all of them for a dense model).
  std::int64_t dense_ffn_layers() const;
  /// Executions of the dense-FFN layers (the first dense_ffn_layers() layers), loops included.
  std::int64_t executed_dense_ffn_layers() const;
};

/// Upper bound accepted for every size field (hidden_size, head_dim, widths, counts): 2^31 − 1.
/// Totals are computed in 64-bit integers and validate() rejects configs whose parameter count or
/// per-token FLOPs would not fit.
inline constexpr std::int64_t max_dimension = 2147483647;

/// The centred loop of SMELT: span = round(fraction·L) layers, first = floor((L − span)/2) + 1.
/// L = 10, 12, 20, 30 at 0.5 give layers 3–7, 4–9, 6–15, 8–22. Throws budget::Error if the
/// fraction is outside (0, 1], the span rounds to 0, or repeats < 1.
LoopConfig centred_loop(std::int64_t num_layers, double span_fraction, std::int64_t repeats);

/// Checks every constraint of docs/config.md; throws budget::Error naming `source`, the JSON
/// path of the offending field, its value and what is allowed.
void validate(const ArchConfig& config, const std::string& source = {});

}  // namespace budget
