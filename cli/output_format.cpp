#include "output_format.hpp"

namespace budget::cli {

std::map<std::string, OutputFormat> all_formats() {
  return {{"table", OutputFormat::table}, {"json", OutputFormat::json},
          {"markdown", OutputFormat::markdown}, {"csv", OutputFormat::csv}};
}

CLI::Option* add_format_option(CLI::App& command, OutputFormat& target,
                               const std::map<std::string, OutputFormat>& allowed) {
  std::string names;
  for (const auto& [name, value] : allowed) names += (names.empty() ? "" : "|") + name;
  return command.add_option("--format", target, "Output format: " + names)
      ->transform(CLI::CheckedTransformer(allowed, CLI::ignore_case))
      ->option_text("FORMAT");
}

}  // namespace budget::cli
