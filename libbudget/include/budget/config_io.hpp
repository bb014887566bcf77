#pragma once
/// \file
/// Native config files (JSON): reading with strict validation, and writing. The schema is in
/// docs/config.md. Unknown keys are errors, with a "did you mean" suggestion.
///
/// Thread safety: parse_arch_config(), load_arch_config() and arch_config_to_json() are reentrant:
/// concurrent calls are safe (two threads writing one file is the caller's business).

#include <string>
#include <string_view>

#include "budget/config.hpp"

namespace budget {

/// Parses and validates a config from JSON text; `source` names it in errors. A Hugging Face
/// config.json (an object with "num_hidden_layers" and no "num_layers") is read by
/// parse_hf_config() (config_hf.hpp).
ArchConfig parse_arch_config(std::string_view json_text, const std::string& source);

/// Reads, parses and validates a config file.
ArchConfig load_arch_config(const std::string& path);

/// The config as native JSON (the format parse_arch_config reads), pretty-printed with `indent`
/// spaces. Loops are written as {"first", "last", "repeats"}.
std::string arch_config_to_json(const ArchConfig& config, int indent = 2);

}  // namespace budget
