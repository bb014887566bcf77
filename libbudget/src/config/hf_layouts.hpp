#pragma once
// Private: the layer pass's reader of the 2025 families (HfLayout, config/hf_layouts.cpp), called by
// config/config_hf.cpp after its generic attention and FFN reading.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "budget/config.hpp"
#include "base/json_reader.hpp"
#include "config/hf_families.hpp"

namespace budget::detail {

/// What the layout readers read from: the key pass's object, a reader at its pointer, the family.
struct HfLayoutInput {
  const nlohmann::json& doc;
  const ObjectReader& root;
  const HfFamily& family;
};

namespace hf_layout {
/// budget::Error at `key` naming the family.
[[noreturn]] void refuse(const HfLayoutInput& in, std::string_view key, const std::string& why);
/// The integer at `key` in [min, max]; a missing key is an error (the layers the file describes need it).
std::int64_t required_integer(const HfLayoutInput& in, std::string_view key, std::int64_t min, std::int64_t max);
/// The boolean at `key`, `fallback` when absent or null.
bool boolean(const HfLayoutInput& in, std::string_view key, bool fallback);
/// The FFN of every layer: nothing when all are MoE, first_dense_layers when dense layers lead and
/// MoE layers follow, else ArchConfig::layer_ffns.
void set_layer_ffns(ArchConfig& c, const std::vector<LayerFfn>& ffns);
}  // namespace hf_layout

/// The readers of hf_layouts_hybrid.cpp (qwen3_next, nemotron_h) and hf_layouts_moe.cpp (glm4_moe,
/// deepseek_v32, minimax_m2, ernie4_5_moe).
void read_hf_layout_qwen3_next(const HfLayoutInput& in, ArchConfig& c);
void read_hf_layout_nemotron_h(const HfLayoutInput& in, ArchConfig& c);
void read_hf_layout_moe_2025(const HfLayoutInput& in, ArchConfig& c);

/// Whether the generic layer-types reading (layer_types with full/sliding kinds, the families'
/// sliding-window keys) applies to `layout`; llama4, qwen3_next and nemotron_h read their own.
bool hf_generic_layer_types(HfLayout layout);

/// The layers, attention features and FFN kinds of `in.family`'s layout, over what the generic pass
/// read into `c` (nothing for HfLayout::standard). Refuses by name what it does not model.
void read_hf_layout(const HfLayoutInput& in, ArchConfig& c);

}  // namespace budget::detail
