// ArchConfig's per-layer kinds (the mixer, the FFN and the attention kind of every layer), the counts
// the op list is built from, the KV cache and recurrent state they imply, and their validation.

#include <algorithm>

#include "budget/config.hpp"
#include "config/config_checks.hpp"

namespace budget {

LayerAttention ArchConfig::attention_of_layer(std::int64_t layer) const {
  const auto& types = attention.layer_types;
  if (layer < 1 || static_cast<std::size_t>(layer) > types.size()) return LayerAttention::full;
  return types[static_cast<std::size_t>(layer - 1)];
}

LayerMixer ArchConfig::mixer_of_layer(std::int64_t layer) const {
  if (layer < 1 || static_cast<std::size_t>(layer) > layer_mixers.size()) return LayerMixer::attention;
  return layer_mixers[static_cast<std::size_t>(layer - 1)];
}

LayerFfn ArchConfig::ffn_of_layer(std::int64_t layer) const {
  if (!layer_ffns.empty()) {
    if (layer < 1 || static_cast<std::size_t>(layer) > layer_ffns.size()) return LayerFfn::none;
    return layer_ffns[static_cast<std::size_t>(layer - 1)];
  }
  return ffn.is_moe() && layer > ffn.first_dense_layers ? LayerFfn::moe : LayerFfn::dense;
}

LayerCounts ArchConfig::layer_counts() const {
  LayerCounts n;
  const auto add = [](LayerCount& count, std::int64_t executions) {
    count.physical += 1;
    count.executed += executions;
  };
  if (!has_per_layer_kinds()) {
    // One kind of attention layer throughout: the counts in closed form (layer_ops() runs this for
    // every account(), the matcher's inner loop; the loop below would cost O(num_layers)).
    n.full_attention = {num_layers, executed_layers()};
    n.dense = {dense_ffn_layers(), executed_dense_ffn_layers()};
    n.moe = {num_layers - n.dense.physical, executed_layers() - n.dense.executed};
    return n;
  }
  for (std::int64_t layer = 1; layer <= num_layers; ++layer) {
    const std::int64_t e = executions_of_layer(layer);
    switch (mixer_of_layer(layer)) {
      case LayerMixer::attention:
        switch (attention_of_layer(layer)) {
          case LayerAttention::full: add(n.full_attention, e); break;
          case LayerAttention::sliding: add(n.sliding_attention, e); break;
          case LayerAttention::chunked: add(n.chunked_attention, e); break;
        }
        break;
      case LayerMixer::linear_attention: add(n.linear_attention, e); break;
      case LayerMixer::mamba: add(n.mamba, e); break;
      case LayerMixer::none: add(n.no_mixer, e); break;
    }
    switch (ffn_of_layer(layer)) {
      case LayerFfn::moe: add(n.moe, e); break;
      case LayerFfn::dense: add(n.dense, e); break;
      case LayerFfn::none: add(n.no_ffn, e); break;
    }
  }
  return n;
}

std::int64_t ArchConfig::layer_pattern_period() const {
  if (!has_per_layer_kinds()) return 1;
  const auto same_kind = [&](std::int64_t a, std::int64_t b) {
    return mixer_of_layer(a) == mixer_of_layer(b) && ffn_of_layer(a) == ffn_of_layer(b) &&
           (mixer_of_layer(a) != LayerMixer::attention || attention_of_layer(a) == attention_of_layer(b));
  };
  for (std::int64_t p = 1; p <= num_layers / 2; ++p) {
    bool periodic = true;
    for (std::int64_t layer = 1; periodic && layer + p <= num_layers; ++layer) periodic = same_kind(layer, layer + p);
    if (periodic) return p;
  }
  return 0;
}

std::int64_t ArchConfig::sliding_attention_layers() const {
  return attention.layer_types.empty() ? 0 : layer_counts().sliding_attention.physical;
}

std::int64_t ArchConfig::executed_sliding_attention_layers() const {
  return attention.layer_types.empty() ? 0 : layer_counts().sliding_attention.executed;
}

std::int64_t ArchConfig::kv_elements_per_token() const {
  const std::int64_t full = has_per_layer_kinds() ? layer_counts().full_attention.executed : executed_layers();
  return full * attention.kv_elements_per_layer();
}

std::int64_t ArchConfig::state_elements_per_sequence() const {
  if (layer_mixers.empty()) return 0;
  const LayerCounts n = layer_counts();
  return (linear_attention ? n.linear_attention.executed * linear_attention->state_elements() : 0) +
         (mamba ? n.mamba.executed * mamba->state_elements() : 0);
}

namespace detail {
namespace {

using Check = ConfigCheck;

/// Each list empty or one entry per layer; no layer without a mixer and an FFN.
Check check_layer_lists(const ArchConfig& c) {
  if (c.layer_mixers.empty() && c.layer_ffns.empty()) return std::nullopt;  // every layer attention + FFN
  const auto sized = [&](std::size_t size, const char* path, const char* what) {
    return unless(size == 0 || static_cast<std::int64_t>(size) == c.num_layers, path, [&] {
      return fmt::format("{} lists {} layers but num_layers is {}; allowed: one entry per layer, or absent ({})",
                         path + 1, size, c.num_layers, what);
    });
  };
  if (auto p = sized(c.layer_mixers.size(), "/layer_mixers", "every layer has attention")) return p;
  if (auto p = sized(c.layer_ffns.size(), "/layer_ffns", "the FFN of every layer from ffn")) return p;
  for (std::int64_t layer = 1; layer <= c.num_layers; ++layer) {
    if (auto p = unless(c.mixer_of_layer(layer) != LayerMixer::none || c.ffn_of_layer(layer) != LayerFfn::none,
                        "/layer_ffns", [&] {
                          return fmt::format("layer {} has neither a mixer nor an FFN; allowed: at least one", layer);
                        }))
      return p;
    if (auto p = unless(c.mixer_of_layer(layer) == LayerMixer::attention ||
                            c.attention_of_layer(layer) == LayerAttention::full,
                        "/attention/layer_types", [&] {
                          return fmt::format("layer {} is \"{}\" but its mixer is \"{}\", not attention; allowed: "
                                             "\"full\" (ignored) for layers without attention",
                                             layer, to_string(c.attention_of_layer(layer)),
                                             to_string(c.mixer_of_layer(layer)));
                        }))
      return p;
  }
  return std::nullopt;
}

/// The FFN kinds of layer_ffns against the ffn object.
Check check_layer_ffns(const ArchConfig& c, const LayerCounts& n) {
  if (c.layer_ffns.empty()) return std::nullopt;
  if (auto p = unless(c.ffn.first_dense_layers == 0, "/ffn/first_dense_layers", [&] {
        return fmt::format("first_dense_layers {} given with layer_ffns; allowed: 0 (layer_ffns says which layers "
                           "are dense)",
                           c.ffn.first_dense_layers);
      }))
    return p;
  if (auto p = unless(n.moe.physical == 0 || c.ffn.is_moe(), "/layer_ffns", [] {
        return std::string("\"moe\" layers but num_experts is 0; allowed: \"dense\" or \"none\" for a dense model");
      }))
    return p;
  return unless(n.dense.physical == 0 || c.ffn.dense_dim >= 1, "/ffn/dense_dim", [&] {
    return fmt::format("dense_dim {} must be at least 1 when layer_ffns has \"dense\" layers", c.ffn.dense_dim);
  });
}

/// A mixer's settings are given exactly when a layer uses it.
template <typename Settings>
Check check_presence(const std::optional<Settings>& settings, std::int64_t layers, const char* path,
                     const char* kind) {
  return unless(settings.has_value() == (layers > 0), path, [&] {
    return settings ? fmt::format("{} given but no layer of layer_mixers is \"{}\"; allowed: absent, or mark the "
                                  "layers",
                                  path + 1, kind)
                    : fmt::format("layer_mixers has \"{}\" layers but {} is absent; allowed: the {} object",
                                  kind, path + 1, path + 1);
  });
}

Check check_linear_attention(const ArchConfig& c, const LayerCounts& n) {
  if (auto p = check_presence(c.linear_attention, n.linear_attention.physical, "/linear_attention",
                              "linear_attention"))
    return p;
  if (!c.linear_attention) return std::nullopt;
  const LinearAttentionConfig& l = *c.linear_attention;
  if (auto p = first_out_of_range({{l.num_key_heads, 1, max_dimension, "/linear_attention/num_key_heads"},
                                   {l.num_value_heads, 1, max_dimension, "/linear_attention/num_value_heads"},
                                   {l.key_head_dim, 1, max_dimension, "/linear_attention/key_head_dim"},
                                   {l.value_head_dim, 1, max_dimension, "/linear_attention/value_head_dim"},
                                   {l.conv_kernel, 1, 1024, "/linear_attention/conv_kernel"},
                                   {l.chunk_size, 1, 1 << 20, "/linear_attention/chunk_size"}})) {
    return p;
  }
  return unless(l.num_value_heads % l.num_key_heads == 0, "/linear_attention/num_value_heads", [&] {
    return fmt::format("num_value_heads {} is not a multiple of num_key_heads {}; allowed: a multiple (each key "
                       "head serves num_value_heads / num_key_heads value heads)",
                       l.num_value_heads, l.num_key_heads);
  });
}

Check check_mamba(const ArchConfig& c, const LayerCounts& n) {
  if (auto p = check_presence(c.mamba, n.mamba.physical, "/mamba", "mamba")) return p;
  if (!c.mamba) return std::nullopt;
  const MambaConfig& m = *c.mamba;
  if (auto p = first_out_of_range({{m.num_heads, 1, max_dimension, "/mamba/num_heads"},
                                   {m.head_dim, 1, max_dimension, "/mamba/head_dim"},
                                   {m.state_size, 1, max_dimension, "/mamba/state_size"},
                                   {m.num_groups, 1, max_dimension, "/mamba/num_groups"},
                                   {m.conv_kernel, 1, 1024, "/mamba/conv_kernel"},
                                   {m.chunk_size, 1, 1 << 20, "/mamba/chunk_size"}})) {
    return p;
  }
  return unless(m.num_heads % m.num_groups == 0, "/mamba/num_groups", [&] {
    return fmt::format("num_groups {} does not divide num_heads {}; allowed: a divisor of num_heads",
                       m.num_groups, m.num_heads);
  });
}

/// Chunked layers and their chunk; sinks, the output gate and the indexer against MLA.
Check check_attention_features(const ArchConfig& c, const LayerCounts& n) {
  const auto& a = c.attention;
  if (auto p = range(a.chunk_size, 0, max_dimension, "/attention/chunk_size")) return p;
  if (auto p = unless((n.chunked_attention.physical > 0) == (a.chunk_size > 0), "/attention/chunk_size", [&] {
        return a.chunk_size > 0 ? fmt::format("chunk_size {} given but no layer of layer_types is \"chunked\"; "
                                              "allowed: 0 or absent, or mark the chunked layers",
                                              a.chunk_size)
                                : std::string("layer_types has \"chunked\" layers but chunk_size is 0; allowed: the "
                                              "chunk in tokens, >= 1");
      }))
    return p;
  if (auto p = unless(!a.mla || (!a.sinks && !a.output_gate), a.sinks ? "/attention/sinks" : "/attention/output_gate",
                      [] {
                        return std::string("attention sinks and the output gate with multi-head latent attention "
                                           "are not modelled; allowed: false");
                      }))
    return p;
  if (!a.indexer) return std::nullopt;
  const IndexerConfig& x = *a.indexer;
  if (auto p = unless(a.mla && a.mla->q_lora_rank > 0, "/attention/indexer", [] {
        return std::string("an indexer needs multi-head latent attention with q_lora_rank >= 1 (its queries are "
                           "projected from the query latent)");
      }))
    return p;
  if (auto p = unless(n.sliding_attention.physical == 0 && n.chunked_attention.physical == 0, "/attention/indexer",
                      [] { return std::string("an indexer with sliding-window or chunked layers is not modelled"); }))
    return p;
  if (auto p = range(x.num_heads, 1, max_dimension, "/attention/indexer/num_heads")) return p;
  if (auto p = range(x.head_dim, 1, max_dimension, "/attention/indexer/head_dim")) return p;
  return range(x.top_k, 1, max_dimension, "/attention/indexer/top_k");
}

}  // namespace

ConfigCheck check_layer_kinds(const ArchConfig& c) {
  // validate() runs on every account(): a stack of one kind of layer without a mixer's settings, a
  // chunk or an indexer passes every check below (sinks and the gate are refused with MLA only).
  const auto& a = c.attention;
  if (!c.has_per_layer_kinds() && !c.linear_attention && !c.mamba && a.chunk_size == 0 && !a.indexer &&
      !(a.mla && (a.sinks || a.output_gate)))
    return std::nullopt;
  if (auto p = check_layer_lists(c)) return p;
  const LayerCounts n = c.layer_counts();
  if (auto p = check_layer_ffns(c, n)) return p;
  if (auto p = check_linear_attention(c, n)) return p;
  if (auto p = check_mamba(c, n)) return p;
  if (auto p = check_attention_features(c, n)) return p;
  return unless(c.mtp_layers == 0 || (c.layer_mixers.empty() && c.layer_ffns.empty()), "/mtp_layers", [&] {
    return fmt::format("mtp_layers {} with per-layer mixers or FFNs is not modelled (an MTP module is one layer "
                       "like the stack's last); allowed: 0",
                       c.mtp_layers);
  });
}

long double mixer_size_bound(const ArchConfig& c) {
  using R = long double;
  const R H = static_cast<R>(c.hidden_size);
  R bound = 0;
  if (c.linear_attention) {
    const LinearAttentionConfig& l = *c.linear_attention;
    const R kw = static_cast<R>(l.num_key_heads) * static_cast<R>(l.key_head_dim);
    const R vw = static_cast<R>(l.num_value_heads) * static_cast<R>(l.value_head_dim);
    // Weights, and the recurrent state (heads × key × value dims; kept per sequence, bounded here too).
    bound += H * (2 * kw + 2 * vw + 2 * static_cast<R>(l.num_value_heads)) +
             (2 * kw + vw) * static_cast<R>(l.conv_kernel) + vw * H + vw * static_cast<R>(l.key_head_dim);
  }
  if (c.mamba) {
    const MambaConfig& m = *c.mamba;
    const R inner = static_cast<R>(m.num_heads) * static_cast<R>(m.head_dim);
    const R bc = 2 * static_cast<R>(m.num_groups) * static_cast<R>(m.state_size);
    bound += H * (2 * inner + bc + static_cast<R>(m.num_heads)) + (inner + bc) * (static_cast<R>(m.conv_kernel) + 1) +
             inner * H + inner * static_cast<R>(m.state_size);
  }
  if (c.attention.indexer && c.attention.mla) {
    const IndexerConfig& x = *c.attention.indexer;
    const R width = static_cast<R>(x.num_heads) * static_cast<R>(x.head_dim);
    bound += static_cast<R>(c.attention.mla->q_lora_rank) * width + H * static_cast<R>(x.head_dim) +
             H * static_cast<R>(x.num_heads);
  }
  return bound;
}

}  // namespace detail
}  // namespace budget
