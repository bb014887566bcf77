#pragma once
// Private: the native JSON of hybrid stacks and of the 2025 families' attention features
// (config_io_layers.cpp), read and written by config_io.cpp.

#include <nlohmann/json.hpp>

#include "budget/config.hpp"
#include "base/json_reader.hpp"

namespace budget::detail {

/// attention: chunk_size, layer_types (full / sliding / chunked), sinks, output_gate, indexer.
void read_attention_features(const ObjectReader& attention, AttentionConfig& a);
void write_attention_features(const AttentionConfig& a, nlohmann::ordered_json& attention);
/// Top level: layer_mixers, layer_ffns, linear_attention, mamba.
void read_layer_kinds(const ObjectReader& root, ArchConfig& c);
void write_layer_kinds(const ArchConfig& c, nlohmann::ordered_json& j);
/// settings: partial_rotary_factor, nope_layers.
void read_rope_layout_settings(const ObjectReader& settings, ModelSettings& s);
void write_rope_layout_settings(const ModelSettings& s, nlohmann::ordered_json& j);

}  // namespace budget::detail
