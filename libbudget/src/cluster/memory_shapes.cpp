// The op list's shapes as training memory reads them (docs/cluster.md): parameters per layer split
// as Megatron-LM holds them (theoretical_memory_usage.py at d98e8a64, lines 214-230), activation
// widths, and, for hybrid stacks, each layer's own parameters and the activations of linear-attention
// and Mamba-2 blocks.

#include "cluster/memory_shapes.hpp"

#include <map>
#include <tuple>

#include "budget/ops.hpp"
#include "budget/workload.hpp"

namespace budget::cluster_detail {

OpListShapes read_shapes(const ArchConfig& c) {
  OpListShapes s;
  const auto& a = c.attention;
  const std::vector<Op> ops = layer_ops(c, paper_workload());  // parameters and widths do not depend on the workload
  for (const Op& op : ops) {
    const double p = static_cast<double>(op.params_per_layer);
    switch (op.kind) {
      case OpKind::qkv_projection:
        s.attention.tp_sharded += p;
        break;
      case OpKind::q_up_projection:
      case OpKind::kv_up_projection:
      case OpKind::output_projection:
        s.attention.tp_sharded += p;
        break;
      case OpKind::q_down_projection:
      case OpKind::kv_down_projection:
        // Megatron-Core MLA builds the down projections as TELinear with parallel_mode='duplicated'
        // (megatron/core/transformer/multi_latent_attention.py lines 526-527, 573-574): replicated.
        s.attention.replicated += p;
        break;
      case OpKind::norms: s.attention.replicated += p; break;
      // The 2025 layer kinds: linear-attention and Mamba-2 mixers (Megatron-Core's Mamba mixer
      // shards its projections, convolution and heads over TP), the indexer, attention sinks.
      case OpKind::mixer_in_projection:
      case OpKind::short_convolution:
      case OpKind::delta_rule_scan:
      case OpKind::ssd_scan:
      case OpKind::mixer_out_projection:
      case OpKind::indexer_projection:
      case OpKind::attention_scores: s.attention.tp_sharded += p; break;
      case OpKind::router: s.moe_ffn.replicated += p; break;
      case OpKind::routed_experts: s.moe_ffn.expert += p; break;
      case OpKind::shared_experts: {
        const double gate = c.ffn.shared_expert_gate ? static_cast<double>(c.hidden_size) : 0.0;
        s.moe_ffn.tp_sharded += p - gate;
        s.moe_ffn.replicated += gate;  // theoretical_memory_usage.py line 225: the gate is replicated
        break;
      }
      case OpKind::dense_ffn: s.dense_ffn.tp_sharded += p; break;
      case OpKind::final_norm: s.final_norm += p; break;
      case OpKind::embedding: s.embedding += p; break;
      case OpKind::lm_head: s.lm_head_own += p; break;
      case OpKind::mtp_module: s.mtp_params += p * static_cast<double>(op.physical_layers); break;
      default: break;
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


namespace {

/// Physical layer `layer` of `c` alone: its mixer, attention kind and FFN, no loop, no vocabulary,
/// no MTP (what a stored copy of that layer holds).
ArchConfig one_layer(const ArchConfig& c, std::int64_t layer) {
  ArchConfig one = c;
  one.num_layers = 1;
  one.loop.reset();
  one.mtp_layers = 0;
  one.vocab_size = 0;
  const LayerMixer mixer = c.mixer_of_layer(layer);
  const LayerAttention kind = mixer == LayerMixer::attention ? c.attention_of_layer(layer) : LayerAttention::full;
  one.layer_mixers = {mixer};
  one.layer_ffns = {c.ffn_of_layer(layer)};
  one.attention.layer_types = {kind};
  if (kind != LayerAttention::sliding) one.attention.sliding_window = 0;
  if (kind != LayerAttention::chunked) one.attention.chunk_size = 0;
  one.ffn.first_dense_layers = 0;
  if (mixer != LayerMixer::linear_attention) one.linear_attention.reset();
  if (mixer != LayerMixer::mamba) one.mamba.reset();
  return one;
}

}  // namespace

std::vector<LayerParams> per_layer_params(const ArchConfig& c) {
  std::vector<LayerParams> out;
  if (!c.has_per_layer_kinds()) return out;
  // One op list per kind of layer (a few), not per layer.
  std::map<std::tuple<int, int, int>, LayerParams> by_kind;
  for (std::int64_t layer = 1; layer <= c.num_layers; ++layer) {
    const auto key = std::make_tuple(static_cast<int>(c.mixer_of_layer(layer)), static_cast<int>(c.attention_of_layer(layer)),
                                     static_cast<int>(c.ffn_of_layer(layer)));
    auto it = by_kind.find(key);
    if (it == by_kind.end()) {
      const OpListShapes s = read_shapes(one_layer(c, layer));
      LayerParams params = s.attention;  // the mixer (attention, linear attention, Mamba-2) and the norms
      params += s.moe_ffn;
      params += s.dense_ffn;
      it = by_kind.emplace(key, params).first;
    }
    out.push_back(it->second);
  }
  return out;
}

MixerActivationBytes mixer_activation_bytes(const ArchConfig& c, LayerMixer mixer) {
  // As Korthikanti et al. 2022 count a layer (every tensor its backward reads, 2 bytes an element,
  // bf16): the norm's input and the input projection's input (2H each, on every TP rank without
  // sequence parallelism), then inside the TP region the input projection's output, the
  // convolution's output, the scan's output and the gated norm's output (the output projection's
  // input), and the chunked scan's per-chunk states in fp32 (4 bytes an element, one state of
  // heads × key × value dims, or heads × head dim × state, per chunk of C tokens).
  const double H = static_cast<double>(c.hidden_size);
  MixerActivationBytes b;
  b.replicated = 4.0 * H;
  if (mixer == LayerMixer::linear_attention && c.linear_attention) {
    const LinearAttentionConfig& l = *c.linear_attention;
    const double v = static_cast<double>(l.value_width());
    b.sharded = 2.0 * (static_cast<double>(l.in_projection_width()) + static_cast<double>(l.conv_width()) + 2.0 * v) +
                4.0 * static_cast<double>(l.num_value_heads * l.key_head_dim * l.value_head_dim) /
                    static_cast<double>(l.chunk_size);
  } else if (mixer == LayerMixer::mamba && c.mamba) {
    const MambaConfig& m = *c.mamba;
    const double inner = static_cast<double>(m.inner());
    b.sharded = 2.0 * (static_cast<double>(m.in_projection_width()) + static_cast<double>(m.conv_width()) + 2.0 * inner) +
                4.0 * static_cast<double>(m.num_heads * m.head_dim * m.state_size) / static_cast<double>(m.chunk_size);
  }
  return b;
}

}  // namespace budget::cluster_detail
