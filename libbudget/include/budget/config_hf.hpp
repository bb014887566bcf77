#pragma once
/// \file
/// Reading Hugging Face `config.json` files (transformers) of decoder-only models into an
/// ArchConfig: Llama-style dense models and the Mixtral, Qwen-MoE, OLMoE and DeepSeek-MoE
/// families. Which keys are read, their defaults and what is refused: docs/config.md
/// ("Hugging Face configs"). parse_arch_config() and load_arch_config() call this automatically
/// for a JSON object with "num_hidden_layers" and no "num_layers".
///
/// Thread safety: parse_hf_config() is reentrant: concurrent calls are safe.

#include <string>
#include <string_view>

#include "budget/config.hpp"

namespace budget {

/// Parses and validates a Hugging Face config; budget::Error names `source`, the key and why
/// (missing key, an architecture feature the accounting does not model, such as multi-head latent
/// attention or MoE on only some layers).
ArchConfig parse_hf_config(std::string_view json_text, const std::string& source);

}  // namespace budget
