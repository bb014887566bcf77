#pragma once
// `--bridge-config FILE.yaml` beside a command's `--megatron-args FILE` (issue 42 item 3;
// docs/megatron.md, "Megatron-Bridge configs"): the team's recipe from the Megatron-Bridge
// ConfigContainer YAML instead of Megatron-LM's arguments. Both fill the same path; `bridge` says which
// reader reads it (budget::load_team_recipe()). The two exclude each other.
#include <string>

#include "cli11_fwd.hpp"

namespace budget::cli {

/// Adds --bridge-config to `command`, which has --megatron-args bound to `path`; `what` says what the
/// recipe gives in this command (the help's second half).
CLI::Option* add_bridge_config_option(CLI::App& command, std::string& path, bool& bridge, const std::string& what);

/// The option that gave the recipe file, for messages: "--bridge-config" or "--megatron-args".
inline const char* recipe_file_option(bool bridge) { return bridge ? "--bridge-config" : "--megatron-args"; }

}  // namespace budget::cli
