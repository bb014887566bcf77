#pragma once
// Private: Hugging Face config detection and reading from parsed JSON (hf_reader.cpp; the families: hf_families.cpp).

#include <string>

#include <nlohmann/json.hpp>

#include "budget/config.hpp"

namespace budget::detail {

/// A JSON object without "num_layers" that has "num_hidden_layers", "model_type", "architectures"
/// or "text_config".
bool looks_like_hf_config(const nlohmann::json& document);

ArchConfig read_hf_config(const nlohmann::json& document, const std::string& source);

}  // namespace budget::detail
