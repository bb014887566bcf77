#pragma once
/// \file
/// Reading Hugging Face `config.json` files (transformers) of decoder-only models into an
/// ArchConfig, dispatched on the family (`model_type`, else `architectures`): Llama, Mistral,
/// Mixtral, Qwen2/2-MoE/3/3-MoE, OLMoE, DeepSeek(-MoE, -V2, -V3), Kimi-K2, Phi-3, Phi-3.5-MoE,
/// Granite(-MoE), GPT-NeoX, and multimodal wrappers whose `text_config` is one of them. Which keys
/// each family reads and what is refused: docs/config.md ("Hugging Face configs").
/// parse_arch_config() and load_arch_config() call this for a JSON object without "num_layers"
/// that has "num_hidden_layers", "model_type", "architectures" or "text_config".
///
/// Thread safety: parse_hf_config() is reentrant: concurrent calls are safe.

#include <string>
#include <string_view>

#include "budget/config.hpp"

namespace budget {

/// Parses and validates a Hugging Face config; budget::Error names `source`, the key and why
/// (missing key, an unsupported family with the supported list, or a key that changes a count in
/// a way the accounting does not model, such as linear-attention layers or MoE on every k-th layer).
ArchConfig parse_hf_config(std::string_view json_text, const std::string& source);

/// The key a Hugging Face export adds for the loop: {"first": F, "last": L, "repeats": R}
/// (1-based, inclusive). parse_hf_config() reads it back; transformers ignores unknown keys.
inline constexpr std::string_view hf_loop_key = "budget_loop";

}  // namespace budget
