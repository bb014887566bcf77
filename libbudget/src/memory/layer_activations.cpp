// One layer execution's activations and the op list's shapes (docs/cluster.md, "Memory terms").
// Sources: Korthikanti et al. 2022 (arXiv 2205.05198) §4 and Table 2; Megatron-LM d98e8a64 as cited.
#include <algorithm>
#include <cmath>

#include "budget/op_traits.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"
#include "memory/memory_shapes.hpp"
#include "memory/moe_memory.hpp"

namespace budget::memory_detail {

OpListShapes read_shapes(const ArchConfig& c) {
  OpListShapes s;
  const auto& a = c.attention;
  const std::vector<Op> ops = layer_ops(c, paper_workload());  // parameters and widths do not depend on the workload
  for (const Op& op : ops) {
    const double p = static_cast<double>(op.params_per_layer);
    switch (op_traits(op.kind).weights) {
      case WeightShard::attention_tp: s.attention.tp_sharded += p; break;
      case WeightShard::attention_replicated: s.attention.replicated += p; break;
      case WeightShard::moe_replicated: s.moe_ffn.replicated += p; break;
      case WeightShard::experts: s.moe_ffn.expert += p; break;
      case WeightShard::moe_tp: {
        const double gate = c.ffn.shared_expert_gate ? static_cast<double>(c.hidden_size) : 0.0;
        s.moe_ffn.tp_sharded += p - gate;
        s.moe_ffn.replicated += gate;  // theoretical_memory_usage.py line 225: the gate is replicated
        break;
      }
      case WeightShard::dense_tp: s.dense_ffn.tp_sharded += p; break;
      case WeightShard::final_norm: s.final_norm += p; break;
      case WeightShard::embedding: s.embedding += p; break;
      case WeightShard::lm_head: s.lm_head_own += p; break;
      case WeightShard::mtp: s.mtp_params += p * static_cast<double>(op.physical_layers); break;
      case WeightShard::none: break;
    }
  }
  const bool last_is_moe = c.ffn.is_moe() && c.num_layers > c.dense_ffn_layers();
  if (c.mtp_layers > 0 && last_is_moe) s.mtp_expert_params = s.moe_ffn.expert * static_cast<double>(c.mtp_layers);
  if (a.mla) {
    const MlaConfig& m = *a.mla;
    s.query_width = static_cast<double>(a.num_heads * m.qk_head_dim());
    s.key_width = s.query_width;
    s.value_width = static_cast<double>(a.num_heads * m.v_head_dim);
    s.mla_latent = static_cast<double>(m.q_lora_rank + m.kv_lora_rank);
    s.mla_rope = static_cast<double>(m.qk_rope_head_dim);
  } else {
    s.query_width = static_cast<double>(a.query_width());
    s.key_width = static_cast<double>(a.kv_width());
    s.value_width = s.key_width;
  }
  s.output_width = static_cast<double>(a.value_width());
  s.dense_dim = static_cast<double>(c.ffn.dense_dim);
  s.expert_dim = static_cast<double>(c.ffn.expert_dim);
  s.shared_width = static_cast<double>(c.ffn.num_shared_experts * c.ffn.shared_expert_dim);
  return s;
}

bool layer_is_moe(const ArchConfig& c, std::int64_t layer) { return c.ffn_of_layer(layer) == LayerFfn::moe; }

/// Tokens of one micro-batch on one GPU before sequence parallelism: b·s/CP.
double micro_batch_tokens(const ParallelLayout& l) {
  return static_cast<double>(l.micro_batch_size) * static_cast<double>(l.seq_len / l.cp);
}

double fp8_saved_input_bytes(const ParallelLayout& l) {
  switch (l.fp8) {
    case Fp8Recipe::none: return 2.0;
    case Fp8Recipe::tensorwise:
    case Fp8Recipe::delayed: return 1.0;
    case Fp8Recipe::blockwise: return 1.0 + 4.0 / 128.0;
    case Fp8Recipe::mxfp8: return 1.0 + 1.0 / 32.0;
  }
  return 2.0;
}

namespace {

/// The attention block's kept bytes per token (replicated class ÷ r, sharded ÷ t). Per-module
/// selective recompute (Megatron-Core, transformer_config.py:560-580 at d98e8a64): core_attn drops
/// the core's saved softmax terms; layernorm drops the norm output (the QKV / MLA down-projection
/// input; the norm input stays as the checkpoint's input); mla_up_proj drops Q, K and V, which the
/// up projections rebuild from the kept latents. FP8 stores the linear inputs quantized (f8 bytes an
/// element instead of 2).
double attention_kept_per_token(const ArchConfig& c, const OpListShapes& s, const ParallelLayout& l, double r,
                                double t) {
  const RecomputeSpec& rc = l.recompute;
  const double H = static_cast<double>(c.hidden_size);
  const double heads = static_cast<double>(c.attention.num_heads);
  const double f8 = fp8_saved_input_bytes(l);
  const double dropout_mask = l.dropout ? 1.0 : 0.0;  // one byte an element (Korthikanti: sbh per mask)
  double replicated = 2.0 * H  // input norm's input
                      + (rc.recomputes(RecomputeModule::layernorm) ? 0.0 : f8 * H)  // QKV (MLA: down) input
                      + dropout_mask * H;
  // MLA: latent norm inputs (2 bytes) and up-projection inputs (f8), and the shared rotary key.
  replicated += (2.0 + f8) * s.mla_latent + 2.0 * s.mla_rope;
  double sharded = f8 * s.output_width;  // output projection input
  if (!rc.recomputes(RecomputeModule::mla_up_proj)) sharded += 2.0 * (s.query_width + s.key_width + s.value_width);
  if (c.attention.qk_norm != QkNorm::none) sharded += 2.0 * (s.query_width + s.key_width);  // q/k norm inputs
  if (!rc.recomputes(RecomputeModule::core_attn)) {
    if (l.flash_attention) {
      sharded += 4.0 * heads;  // FlashAttention keeps the fp32 softmax log-sum-exp per head and query
    } else {
      // Softmax output 2as (kept for P·V's backward); with dropout its mask as and output 2as.
      sharded += heads * static_cast<double>(l.seq_len) * (l.dropout ? 5.0 : 2.0);
    }
  }
  return replicated / r + sharded / t;
}

/// One MLP's fc1 output and fc2 input per unit of width: gate and up 4 (plain 2) bytes, and the
/// activation's output, fc2's input, f8 bytes (0 when `drop_activation`: moe_act recompute).
double mlp_kept_per_width(const ArchConfig& c, const ParallelLayout& l, bool drop_activation) {
  return (c.ffn.gated ? 4.0 : 2.0) + (drop_activation ? 0.0 : fp8_saved_input_bytes(l));
}

/// The FFN block's kept bytes for T tokens: dense MLP (mlp recompute keeps only the norm input) or
/// MoE (moe recompute keeps only the norm input; shared_experts drops the shared MLP; moe_act the
/// experts' activation output; layernorm the norm output).
double ffn_kept_bytes(const ArchConfig& c, const OpListShapes& s, std::int64_t layer, const ParallelLayout& l,
                      double T, double r, double t) {
  const RecomputeSpec& rc = l.recompute;
  const double H = static_cast<double>(c.hidden_size);
  const double f8 = fp8_saved_input_bytes(l);
  const double dropout_mask = l.dropout ? 1.0 : 0.0;
  const double norm_output = rc.recomputes(RecomputeModule::layernorm) ? 0.0 : f8 * H;
  if (!layer_is_moe(c, layer)) {
    if (rc.recomputes(RecomputeModule::mlp)) return T * 2.0 * H / r;
    const double replicated = 2.0 * H + norm_output + dropout_mask * H;  // norm input, fc1 input, mask
    return T * (replicated / r + mlp_kept_per_width(c, l, false) * s.dense_dim / t);
  }
  if (rc.recomputes(RecomputeModule::moe)) return T * 2.0 * H / r;
  const double E = static_cast<double>(c.ffn.num_experts);
  // MoE (Megatron-Core, alltoall dispatcher): the norm input and output (the router's, the shared
  // experts' and the dispatch's input), fp32 router probabilities (4E) and the boolean routing map
  // (E), on the rank's tokens (T / r).
  const double moe_replicated = 2.0 * H + norm_output + 4.0 * E + E + dropout_mask * H;
  const double shared =
      rc.recomputes(RecomputeModule::shared_experts) ? 0.0 : mlp_kept_per_width(c, l, false) * s.shared_width / t;
  // Routed experts: rows received per token sent, top_k · min(F, G); ETP all-gathers the rows of
  // its group (etp×), each rank computing d / etp of each: fc1 input H·etp (f8 bytes), fc1 output
  // and activation output (d / etp wide, etp× the rows). The router's probabilities weight the
  // activation's output before fc2 (the weighted SwiGLU, TEGroupedMLP.forward, moe/experts.py:943-1027
  // at d98e8a64), so the experts' output is not kept: the combine unpermutes without probabilities
  // (token_dispatcher.py:891-899), which keeps only its index map (TransformerEngine c188b533
  // permutation.py, _moe_unpermute_mask_map: save_for_backward(row_id_map)). The permutation's index:
  // unfused an int64 per row (moe_utils.permute's sorted indices, kept by index_select); fused
  // (--moe-permute-fusion) TE's int32 row map of 2E + 1 entries per token (triton/permutation.py,
  // make_row_id_map), shared by the permutation and the unpermutation.
  // Under FP8 each local expert's rows are padded to the recipe's alignment before fc1
  // (expert_row_padding_factor(), moe_memory.cpp): the rank's T/r · rows · etp rows over E / EP experts.
  const double etp = static_cast<double>(l.expert_tp());
  const double rows = routed_rows_per_token(c, l);
  const double padding = expert_row_padding_factor(l, (T / r) * rows * etp, c.ffn.num_experts / l.ep);
  const double index_per_row = l.moe_permute_fusion ? 0.0 : 8.0;
  const double index_per_token = l.moe_permute_fusion ? 4.0 * (2.0 * E + 1.0) : 0.0;
  const double expert_mlp =
      f8 * H * etp + mlp_kept_per_width(c, l, rc.recomputes(RecomputeModule::moe_act)) * s.expert_dim;
  // HybridEP keeps its routing handle per layer execution (hybridep_handle_bytes_per_token()).
  const double routed =
      rows * (padding * expert_mlp + index_per_row) + index_per_token + hybridep_handle_bytes_per_token(c, l);
  return T * (moe_replicated / r + shared) + (T / r) * routed;
}

}  // namespace

LayerActivationBytes activation_bytes(const ArchConfig& c, const OpListShapes& s, std::int64_t layer,
                                      const ParallelLayout& l, bool recomputed) {
  // Korthikanti et al. 2022 §4.1 and Table 2, per layer and micro-batch, s·b tokens, 2 bytes an
  // element (bf16). Their GPT layer (hidden h, FFN 4h, a heads, dropout, no FlashAttention) keeps
  //   attention 11sbh + 5as²b, MLP 19sbh, the two LayerNorms 4sbh: sbh(34 + 5as/h) in all.
  // Terms of two classes:
  //   "replicated": norm inputs 4sbh, QKV input 2sbh, fc1 input 2sbh, dropout masks 2sbh — the
  //     10sbh whole on every TP rank without sequence parallelism, divided by t with it (§4.2.2);
  //   "sharded": everything inside the TP region, divided by t: sbh(10 + 24/t + 5as/(ht)) (Table 2).
  // Generalised here to the op list's widths: Q/K/V of q, kv, kv (GQA), MLA's latents, SwiGLU's
  // fc1 output of 2d and product of d, MoE layers. Full recompute keeps only the layer input 2sbh
  // (Table 2, "full"), divided by t under SP; selective recompute drops what its modules rebuild.
  const double T = micro_batch_tokens(l);
  const double t = static_cast<double>(l.tp);
  const double r = l.sequence_parallel_active() ? t : 1.0;  // divisor of the replicated class
  const double H = static_cast<double>(c.hidden_size);
  LayerActivationBytes bytes;
  if (recomputed) {
    bytes.attention = 2.0 * H * T / r;
    return bytes;
  }
  const LayerMixer mixer = c.mixer_of_layer(layer);
  if (mixer == LayerMixer::attention) {
    bytes.attention = T * attention_kept_per_token(c, s, l, r, t);
  } else if (mixer != LayerMixer::none) {
    // Linear-attention and Mamba-2 blocks (memory_shapes.cpp); a single-FFN block keeps none here.
    const MixerActivationBytes m = mixer_activation_bytes(c, mixer);
    bytes.attention = T * (m.replicated / r + m.sharded / t);
  }
  if (c.ffn_of_layer(layer) != LayerFfn::none) bytes.ffn = ffn_kept_bytes(c, s, layer, l, T, r, t);
  return bytes;
}

/// Transient bytes of one layer execution (the largest is the stage's `buffers`): the MoE
/// dispatch's all-to-all send and receive buffers, 2H·(top_k + rows) per token of the rank, and
/// under sequence parallelism the all-gathered layer input 2H·T.
double layer_transient_bytes(const ArchConfig& c, const ParallelLayout& l, std::int64_t layer) {
  const double T = micro_batch_tokens(l);
  const double r = l.sequence_parallel_active() ? static_cast<double>(l.tp) : 1.0;
  const double H = static_cast<double>(c.hidden_size);
  double bytes = l.sequence_parallel_active() ? 2.0 * H * T : 0.0;
  if (layer_is_moe(c, layer)) {
    bytes = std::max(bytes, (T / r) * 2.0 * H * (static_cast<double>(c.ffn.top_k) + routed_rows_per_token(c, l)));
  }
  return bytes;
}


}  // namespace budget::memory_detail
