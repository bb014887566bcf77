#pragma once
// --format handling shared by subcommands.

#include <map>
#include <string>

#include <CLI/CLI.hpp>

namespace budget::cli {

enum class OutputFormat { table, json, markdown, csv };

/// Adds `--format` to `command` accepting `allowed` (names "table", "json", "markdown", "csv"),
/// storing into `target`. Wrong values are rejected by CLI11 with the list of choices.
CLI::Option* add_format_option(CLI::App& command, OutputFormat& target,
                               const std::map<std::string, OutputFormat>& allowed);

/// All four formats.
std::map<std::string, OutputFormat> all_formats();

}  // namespace budget::cli
