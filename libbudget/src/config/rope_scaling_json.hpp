#pragma once
// Private: RopeScaling from and to the JSON object transformers calls `rope_scaling`
// (rope_scaling_json.cpp). One spelling for both the Hugging Face reader and native configs'
// settings.rope_scaling (docs/config.md, "settings").

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_reader.hpp"
#include "budget/config.hpp"

namespace budget::detail {

/// The type of `object`: its "rope_type" (transformers ≥ 4.45), else "type" (older files, the
/// DeepSeek and Kimi releases). "default" and absent mean no scaling (std::nullopt). A type other
/// than linear, dynamic, yarn, llama3, longrope: with `unknown_notes` (the Hugging Face reader,
/// whose settings change no budget) one line there and std::nullopt; without it (native configs)
/// an Error naming the key and the allowed types.
///
/// The parameters read per type are those of transformers' rope init functions
/// (modeling_rope_utils.py): factor (all but longrope), original_max_position_embeddings,
/// beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor (yarn), low_freq_factor,
/// high_freq_factor (llama3), short_factor, long_factor, attention_factor (longrope). A key outside
/// its type's list is refused in a native config and noted in a Hugging Face one.
std::optional<RopeScaling> read_rope_scaling(const ObjectReader& object, std::vector<std::string>* unknown_notes);

/// The object read_rope_scaling reads back: `type_key` ("rope_type" or "type") holds the type,
/// then the parameters that are set.
nlohmann::ordered_json rope_scaling_json(const RopeScaling& scaling, const std::string& type_key);

/// "yarn (factor 40, original_max_position_embeddings 4096, beta_fast 32, ...)", for messages.
std::string describe_rope_scaling(const RopeScaling& scaling);

}  // namespace budget::detail
