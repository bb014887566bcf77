#pragma once
// Private: Hugging Face config detection and reading from parsed JSON (config_hf.cpp; the families: hf_families.cpp).

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "budget/config.hpp"

namespace budget::detail {

/// A JSON object without "num_layers" that has "num_hidden_layers", "model_type", "architectures"
/// or "text_config".
bool looks_like_hf_config(const nlohmann::json& document);

ArchConfig read_hf_config(const nlohmann::json& document, const std::string& source);

/// For a text the strict JSON reader refused: the Hugging Face config it is when read with Python's
/// JSON extensions (Infinity, -Infinity, NaN; base/json_reader.hpp), each value of them said in a
/// note naming its key; nullopt when the text holds none of them, is not JSON for another reason
/// or is not a Hugging Face config (a native config never holds them). A key the reader counts or
/// sets with cannot hold one: the reader refuses it by name (ObjectReader's numbers are finite).
std::optional<ArchConfig> read_hf_config_with_python_nonfinite(std::string_view text, const std::string& source);

/// A config file's text read as every surface reads it (parse_arch_config, parse_sourced_config:
/// report, compare, layout, --baseline, export and Python alike): native or Hugging Face, the
/// latter with Python's non-finite numbers where its reader uses no number (above).
struct ReadConfig {
  ArchConfig config;
  bool hugging_face = false;
};
ReadConfig read_config_text(std::string_view text, const std::string& source);

}  // namespace budget::detail
