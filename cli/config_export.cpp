#include "config_export.hpp"

#include <iostream>

#include <CLI/CLI.hpp>

#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "output_file.hpp"

namespace budget::cli {

CLI::Option* add_export_target_option(CLI::App& command, const std::string& name, std::string& target,
                                      const std::string& help) {
  const CLI::Validator known(
      [](std::string& value) -> std::string {
        try {
          parse_export_target(value);
        } catch (const Error& e) {
          return e.message();
        }
        return {};
      },
      "", "export target");
  return command.add_option("--" + name, target, help)->check(known)->option_text("native|hf|megatron|torchtitan|torch");
}

void write_exported_config(const ArchConfig& config, ExportTarget target, const ExportOptions& options,
                           const std::string& path) {
  const ExportedConfig exported = export_config(config, target, options);
  if (path.empty() || path == "-") {
    std::cout << exported.text;
  } else {
    write_output_file(path, exported.text);  // temporary name + rename, checked (docs/reliability.md)
  }
  for (const auto& note : exported.not_expressed) {
    std::cerr << "note: " << to_string(target) << " export: " << printable_text(note) << "\n";
  }
}

}  // namespace budget::cli
