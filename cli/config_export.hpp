#pragma once
// Writing a config in one of the export targets (budget/export.hpp), shared by `export` and
// `--baseline ... --out FILE --out-format TARGET`.

#include <string>

#include "budget/config.hpp"
#include "budget/export.hpp"

#include "cli11_fwd.hpp"

namespace budget::cli {

/// Adds `--<name>` (native|hf|megatron|torchtitan, case-insensitive), checked while parsing;
/// `target` receives the name (parse_export_target() turns it into an ExportTarget).
CLI::Option* add_export_target_option(CLI::App& command, const std::string& name, std::string& target,
                                      const std::string& help);

/// Exports `config` and writes it to `path` ("-" or empty: stdout). Each sentence of what the
/// target cannot express goes to stderr as "note: ..." (it is also inside the written text).
void write_exported_config(const ArchConfig& config, ExportTarget target, const ExportOptions& options,
                           const std::string& path);

}  // namespace budget::cli
