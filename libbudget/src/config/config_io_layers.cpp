// The native JSON of hybrid stacks (docs/config.md, "Hybrid stacks"): the per-layer lists
// (layer_mixers, layer_ffns, attention.layer_types), the linear_attention and mamba objects, the
// attention features of the 2025 families (sinks, output gate, chunked attention, the indexer), and
// the settings they carry (partial RoPE, no-RoPE layers). Read by config_io.cpp's reader, written by
// its writer; every key is written only when it differs from its default, so configs without them
// are written as before.

#include "config/config_layers_json.hpp"

#include <fmt/format.h>

#include "budget/error.hpp"
#include "config/config_names.hpp"

namespace budget::detail {

namespace {

/// An array of enum names, one per layer, each error at its own element's path (layers from 1).
template <class Enum, std::size_t N>
std::vector<Enum> read_layer_list(const ObjectReader& object, const char* key, const EnumNames<Enum, N>& names) {
  const nlohmann::json& list = object.raw(key);
  std::string allowed;
  for (const auto& row : names) allowed += (allowed.empty() ? "\"" : ", \"") + std::string(row.name) + "\"";
  if (!list.is_array()) object.fail(key, fmt::format("expected an array of {}, one per layer", allowed));
  std::vector<Enum> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& t = list[i];
    const std::optional<Enum> kind = t.is_string() ? enum_named(names, t.get<std::string>()) : std::nullopt;
    if (!kind) {
      throw Error(fmt::format("layer {} is {}; allowed: {}", i + 1, describe_value(t), allowed), object.source(),
                  object.pointer_to(key) + "/" + std::to_string(i));
    }
    out.push_back(*kind);
  }
  return out;
}

template <class Enum, std::size_t N>
nlohmann::ordered_json layer_list_json(const std::vector<Enum>& list, const EnumNames<Enum, N>& names) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (Enum kind : list) out.push_back(std::string(name_of(names, kind)));
  return out;
}

LinearAttentionConfig read_linear_attention(const ObjectReader& o) {
  o.reject_unknown_keys({"num_key_heads", "num_value_heads", "key_head_dim", "value_head_dim", "conv_kernel",
                         "chunk_size"});
  LinearAttentionConfig l;
  l.num_key_heads = o.integer("num_key_heads", 1, max_dimension);
  l.num_value_heads = o.integer("num_value_heads", 1, max_dimension);
  l.key_head_dim = o.integer("key_head_dim", 1, max_dimension);
  l.value_head_dim = o.integer("value_head_dim", 1, max_dimension);
  l.conv_kernel = o.integer_or("conv_kernel", l.conv_kernel, 1, 1024);
  l.chunk_size = o.integer_or("chunk_size", l.chunk_size, 1, 1 << 20);
  return l;
}

MambaConfig read_mamba(const ObjectReader& o) {
  o.reject_unknown_keys({"num_heads", "head_dim", "state_size", "num_groups", "conv_kernel", "chunk_size",
                         "conv_bias", "projection_bias"});
  MambaConfig m;
  m.num_heads = o.integer("num_heads", 1, max_dimension);
  m.head_dim = o.integer("head_dim", 1, max_dimension);
  m.state_size = o.integer("state_size", 1, max_dimension);
  m.num_groups = o.integer_or("num_groups", m.num_groups, 1, max_dimension);
  m.conv_kernel = o.integer_or("conv_kernel", m.conv_kernel, 1, 1024);
  m.chunk_size = o.integer_or("chunk_size", m.chunk_size, 1, 1 << 20);
  m.conv_bias = o.boolean_or("conv_bias", m.conv_bias);
  m.projection_bias = o.boolean_or("projection_bias", m.projection_bias);
  return m;
}

}  // namespace

void read_attention_features(const ObjectReader& attention, AttentionConfig& a) {
  a.chunk_size = attention.integer_or("chunk_size", 0, 0, max_dimension);
  a.sinks = attention.boolean_or("sinks", false);
  a.output_gate = attention.boolean_or("output_gate", false);
  if (attention.has("layer_types")) a.layer_types = read_layer_list(attention, "layer_types", layer_attention_names);
  if (attention.has("indexer")) {
    const ObjectReader idx = attention.object("indexer");
    idx.reject_unknown_keys({"num_heads", "head_dim", "top_k"});
    IndexerConfig x;
    x.num_heads = idx.integer("num_heads", 1, max_dimension);
    x.head_dim = idx.integer("head_dim", 1, max_dimension);
    x.top_k = idx.integer("top_k", 1, max_dimension);
    a.indexer = x;
  }
}

void write_attention_features(const AttentionConfig& a, nlohmann::ordered_json& attention) {
  if (a.chunk_size > 0) attention["chunk_size"] = a.chunk_size;
  if (!a.layer_types.empty()) attention["layer_types"] = layer_list_json(a.layer_types, layer_attention_names);
  if (a.sinks) attention["sinks"] = true;
  if (a.output_gate) attention["output_gate"] = true;
  if (a.indexer) {
    attention["indexer"] = nlohmann::ordered_json{
        {"num_heads", a.indexer->num_heads}, {"head_dim", a.indexer->head_dim}, {"top_k", a.indexer->top_k}};
  }
}

void read_layer_kinds(const ObjectReader& root, ArchConfig& c) {
  if (root.has("layer_mixers")) c.layer_mixers = read_layer_list(root, "layer_mixers", layer_mixer_names);
  if (root.has("layer_ffns")) c.layer_ffns = read_layer_list(root, "layer_ffns", layer_ffn_names);
  if (root.has("linear_attention")) c.linear_attention = read_linear_attention(root.object("linear_attention"));
  if (root.has("mamba")) c.mamba = read_mamba(root.object("mamba"));
}

void write_layer_kinds(const ArchConfig& c, nlohmann::ordered_json& j) {
  if (!c.layer_mixers.empty()) j["layer_mixers"] = layer_list_json(c.layer_mixers, layer_mixer_names);
  if (!c.layer_ffns.empty()) j["layer_ffns"] = layer_list_json(c.layer_ffns, layer_ffn_names);
  if (c.linear_attention) {
    const LinearAttentionConfig& l = *c.linear_attention;
    j["linear_attention"] = nlohmann::ordered_json{
        {"num_key_heads", l.num_key_heads}, {"num_value_heads", l.num_value_heads},
        {"key_head_dim", l.key_head_dim},   {"value_head_dim", l.value_head_dim},
        {"conv_kernel", l.conv_kernel},     {"chunk_size", l.chunk_size}};
  }
  if (c.mamba) {
    const MambaConfig& m = *c.mamba;
    j["mamba"] = nlohmann::ordered_json{{"num_heads", m.num_heads},     {"head_dim", m.head_dim},
                                        {"state_size", m.state_size},   {"num_groups", m.num_groups},
                                        {"conv_kernel", m.conv_kernel}, {"chunk_size", m.chunk_size},
                                        {"conv_bias", m.conv_bias},     {"projection_bias", m.projection_bias}};
  }
}

void read_rope_layout_settings(const ObjectReader& settings, ModelSettings& s) {
  if (settings.has("partial_rotary_factor")) {
    s.partial_rotary_factor = settings.number("partial_rotary_factor", 1e-6, 1.0);
  }
  if (settings.has("nope_layers")) {
    const nlohmann::json& list = settings.raw("nope_layers");
    if (!list.is_array()) settings.fail("nope_layers", "expected an array of layer numbers (1-based)");
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_number_integer() || list[i].get<std::int64_t>() < 1) {
        throw Error(fmt::format("{} is not a layer number; allowed: an integer >= 1", describe_value(list[i])),
                    settings.source(), settings.pointer_to("nope_layers") + "/" + std::to_string(i));
      }
      s.nope_layers.push_back(list[i].get<std::int64_t>());
    }
  }
}

void write_rope_layout_settings(const ModelSettings& s, nlohmann::ordered_json& j) {
  if (s.partial_rotary_factor) j["partial_rotary_factor"] = *s.partial_rotary_factor;
  if (!s.nope_layers.empty()) j["nope_layers"] = s.nope_layers;
}

}  // namespace budget::detail
