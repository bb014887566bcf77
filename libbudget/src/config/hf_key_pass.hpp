#pragma once
// The key pass of the Hugging Face reader (hf_key_pass.cpp), and the two key tests the layer pass
// shares with it.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_reader.hpp"
#include "config/hf_families.hpp"

namespace budget::detail {

/// True when `key` is present with a value other than null, false, 0, an empty array or object.
bool hf_key_set(const nlohmann::json& object, std::string_view key);
/// True when `key` is present and not null.
bool hf_key_present(const nlohmann::json& object, std::string_view key);

/// The object `family` reads from `document` (an object at `where`): aliases renamed, misspellings
/// and other families' keys refused (budget::Error at `where`), absent keys given their
/// transformers defaults. What was taken is appended to `notes`.
nlohmann::json run_hf_key_pass(const nlohmann::json& document, const ObjectReader& where, const HfFamily& family,
                                std::vector<std::string>& notes);

}  // namespace budget::detail
