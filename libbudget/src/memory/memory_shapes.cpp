// Hybrid stacks in training memory (docs/cluster.md): each layer's own parameters, read off the op
// list of that layer alone, and the activations of linear-attention and Mamba-2 blocks.

#include "memory/memory_shapes.hpp"

#include <map>
#include <tuple>

namespace budget::memory_detail {

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

}  // namespace budget::memory_detail
