#include "output_format.hpp"

#include <cctype>
#include <iostream>

#include <CLI/CLI.hpp>

namespace budget::cli {

std::map<std::string, OutputFormat> all_formats() {
  return {{"table", OutputFormat::table}, {"json", OutputFormat::json},
          {"markdown", OutputFormat::markdown}, {"csv", OutputFormat::csv}};
}

std::map<std::string, OutputFormat> document_formats() {
  std::map<std::string, OutputFormat> formats = all_formats();
  formats.erase("csv");
  return formats;
}

CLI::Option* add_format_option(CLI::App& command, OutputFormat& target,
                               const std::map<std::string, OutputFormat>& allowed) {
  std::string names;
  for (const auto& [name, value] : allowed) names += (names.empty() ? "" : "|") + name;
  // Maps the (case-insensitive) name to the enum's integer, or fails with a readable message:
  // "value \"csv\" is not allowed; allowed: json|markdown|table".
  const CLI::Validator to_enum(
      [allowed, names](std::string& value) -> std::string {
        std::string lower;
        for (char ch : value) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        const auto it = allowed.find(lower);
        if (it == allowed.end()) return "value \"" + value + "\" is not allowed; allowed: " + names;
        value = std::to_string(static_cast<int>(it->second));
        return {};
      },
      "", "format name");
  return command.add_option("--format", target, "Output format: " + names)->transform(to_enum)->option_text("FORMAT");
}

void print(const Document& document, OutputFormat format) { std::cout << document.render(format); }

}  // namespace budget::cli
