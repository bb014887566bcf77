#pragma once
// --format handling shared by subcommands. The CLI prints through the render library
// (render/include/budget_render/): its names (Table, Document, si(), budgets_json(), ...) are
// used unqualified in budget::cli.

#include <map>
#include <string>

#include "budget_render/document.hpp"

#include "cli11_fwd.hpp"

namespace budget::cli {

using namespace budget::render;

/// The --format values: table, json, markdown, csv (budget::render::Format).
using OutputFormat = budget::render::Format;

/// Adds `--format` to `command` accepting `allowed` (names "table", "json", "markdown", "csv"),
/// storing into `target`. Wrong values are rejected by CLI11 with the list of choices.
CLI::Option* add_format_option(CLI::App& command, OutputFormat& target,
                               const std::map<std::string, OutputFormat>& allowed);

/// All four formats.
std::map<std::string, OutputFormat> all_formats();
/// The document formats: table, json, markdown (a command whose output has no one table for CSV).
std::map<std::string, OutputFormat> document_formats();

/// Prints `document` in `format` on standard output.
void print(const Document& document, OutputFormat format);

}  // namespace budget::cli
