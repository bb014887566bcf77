#pragma once
// Private to the memory domain: the per-layer parameter split and activation widths read off the
// op list, and one layer execution's activation and transient bytes (docs/cluster.md, "Memory
// terms"); defined in layer_activations.cpp (hybrid stacks: memory_shapes.cpp), used by
// training_memory.cpp.
#include <cstdint>
#include <vector>

#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/training_memory.hpp"

namespace budget::memory_detail {

/// Parameters of one physical layer by how they are held (Megatron's theoretical_memory_usage.py
/// lines 214-230 split them the same way): sharded by TP, replicated on every TP rank, and routed
/// experts sharded by ETP·EP.
struct LayerParams {
  double tp_sharded = 0.0;
  double replicated = 0.0;
  double expert = 0.0;
  LayerParams& operator+=(const LayerParams& o) {
    tp_sharded += o.tp_sharded;
    replicated += o.replicated;
    expert += o.expert;
    return *this;
  }
};

/// Widths and per-layer parameters read off the op list (layer_ops), so every family the accounting
/// knows (GQA, MLA, dense, MoE, shared experts, first dense layers) is handled the same way here.
struct OpListShapes {
  LayerParams attention;  ///< every layer: projections and the layer's norms
  LayerParams dense_ffn;  ///< a dense-FFN layer's MLP
  LayerParams moe_ffn;    ///< an MoE layer's router, routed and shared experts
  double final_norm = 0.0;
  double embedding = 0.0;      ///< V·H (unpadded; the padded size is used instead)
  double lm_head_own = 0.0;    ///< untied head weights (0 when tied) plus its bias
  double mtp_params = 0.0;     ///< all multi-token-prediction modules
  double mtp_expert_params = 0.0;
  // Activation widths (elements per token).
  double query_width = 0.0;   ///< Q as the attention kernel reads it (MLA: heads·(nope + rope))
  double key_width = 0.0;     ///< K (GQA: kv; MLA: heads·(nope + rope))
  double value_width = 0.0;   ///< V (GQA: kv; MLA: heads·v_head_dim)
  double output_width = 0.0;  ///< attention output = output-projection input
  double mla_latent = 0.0;    ///< MLA: q_lora + kv_lora (each stored twice: norm input, up-projection input) …
  double mla_rope = 0.0;      ///< … and the shared rotary key
  double dense_dim = 0.0;
  double expert_dim = 0.0;
  double shared_width = 0.0;
};

/// The shapes of `c` (every layer alike; the layers of a hybrid stack: per_layer_params()).
OpListShapes read_shapes(const ArchConfig& c);
/// Whether physical layer `layer` (1-based) has an MoE FFN.
bool layer_is_moe(const ArchConfig& c, std::int64_t layer);

/// Stacks with per-layer kinds (ArchConfig::has_per_layer_kinds(): mixers, FFNs, attention kinds):
/// the parameters of each physical layer (index layer − 1), read off the op list of that layer
/// alone, since read_shapes() sums ops that hold different layers; empty for other configs, whose
/// layers are all OpListShapes::attention + the FFN of their kind.
std::vector<LayerParams> per_layer_params(const ArchConfig& c);

/// Activation bytes per token a linear-attention or Mamba-2 block keeps for its backward, in the
/// classes of activation_bytes(): replicated (on every TP rank without sequence parallelism) and
/// TP-sharded.
struct MixerActivationBytes {
  double replicated = 0.0;
  double sharded = 0.0;
};
MixerActivationBytes mixer_activation_bytes(const ArchConfig& c, LayerMixer mixer);
/// Tokens of one micro-batch on one GPU before sequence parallelism: b·s/CP.
double micro_batch_tokens(const ParallelLayout& l);
// routed_rows_per_token(): memory/moe_memory.hpp.
/// Bytes per element of a linear layer's input that Transformer Engine saves for the backward
/// under the layout's FP8 recipe: 2 (bf16) without FP8; 1 with per-tensor scaling (tensorwise,
/// delayed); 1 + 4/128 with blockwise scaling (one fp32 scale per 1×128 tile); 1 + 1/32 with
/// MXFP8 (one E8M0 byte per 32 elements). TransformerEngine v2.11: the quantized input is what
/// linear.py / layernorm_linear.py save for wgrad when FP8 is on (docs/cluster.md, "FP8").
double fp8_saved_input_bytes(const ParallelLayout& l);
/// Activation bytes one execution of `layer` keeps, one micro-batch (docs/cluster.md).
LayerActivationBytes activation_bytes(const ArchConfig& c, const OpListShapes& s, std::int64_t layer,
                                      const ParallelLayout& l, bool recomputed);
/// Transient bytes of one layer execution (the MoE dispatch buffers, the SP all-gathered input).
double layer_transient_bytes(const ArchConfig& c, const ParallelLayout& l, std::int64_t layer);

}  // namespace budget::memory_detail
