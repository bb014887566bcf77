#include "recipe_file_option.hpp"

#include <CLI/CLI.hpp>

namespace budget::cli {

CLI::Option* add_bridge_config_option(CLI::App& command, std::string& path, bool& bridge, const std::string& what) {
  CLI::Option* megatron = command.get_option("--megatron-args");
  CLI::Option* option = command.add_option_function<std::string>(
      "--bridge-config",
      [&path, &bridge](const std::string& file) {
        path = file;
        bridge = true;
      },
      "Megatron-Bridge's config YAML (the ConfigContainer its to_yaml() writes, run_config.yaml beside a "
      "checkpoint; docs/megatron.md), read as --megatron-args would read the same recipe: " + what);
  option->excludes(megatron);
  return option;
}

}  // namespace budget::cli
