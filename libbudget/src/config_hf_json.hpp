#pragma once
// Private: Hugging Face config detection and reading from parsed JSON (config_hf.cpp).

#include <string>

#include <nlohmann/json.hpp>

#include "budget/config.hpp"

namespace budget::detail {

/// A JSON object with "num_hidden_layers" and no "num_layers".
bool looks_like_hf_config(const nlohmann::json& document);

ArchConfig read_hf_config(const nlohmann::json& document, const std::string& source);

}  // namespace budget::detail
