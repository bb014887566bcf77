#pragma once
// Private: the names of the config domain's enums (base/enum_names.hpp), written once: to_string()
// (config.cpp, rope_scaling_json.cpp) prints from these tables and the native JSON reader
// (config_io.cpp) and the HF reader parse with them.

#include "budget/config.hpp"
#include "base/enum_names.hpp"

namespace budget::detail {

inline constexpr auto qk_norm_names =
    enum_names<QkNorm::full>({{QkNorm::none, "none"}, {QkNorm::per_head, "per_head"}, {QkNorm::full, "full"}});

inline constexpr auto layer_attention_names = enum_names<LayerAttention::chunked>(
    {{LayerAttention::full, "full"}, {LayerAttention::sliding, "sliding"}, {LayerAttention::chunked, "chunked"}});

inline constexpr auto layer_mixer_names = enum_names<LayerMixer::none>(
    {{LayerMixer::attention, "attention"}, {LayerMixer::linear_attention, "linear_attention"},
     {LayerMixer::mamba, "mamba"}, {LayerMixer::none, "none"}});

inline constexpr auto layer_ffn_names =
    enum_names<LayerFfn::none>({{LayerFfn::moe, "moe"}, {LayerFfn::dense, "dense"}, {LayerFfn::none, "none"}});

inline constexpr auto norm_kind_names =
    enum_names<NormKind::layernorm>({{NormKind::rmsnorm, "rmsnorm"}, {NormKind::layernorm, "layernorm"}});

inline constexpr auto router_score_names =
    enum_names<RouterScore::sigmoid>({{RouterScore::softmax, "softmax"}, {RouterScore::sigmoid, "sigmoid"}});

inline constexpr auto rope_scaling_type_names = enum_names<RopeScalingType::longrope>({
    {RopeScalingType::linear, "linear"}, {RopeScalingType::dynamic, "dynamic"}, {RopeScalingType::yarn, "yarn"},
    {RopeScalingType::llama3, "llama3"}, {RopeScalingType::longrope, "longrope"}});

}  // namespace budget::detail
