// budget-match export CFG.json --to hf|megatron|torchtitan|native [--out FILE]
// Writes a config (native or Hugging Face) in the format a trainer reads. What each target gets,
// its implied defaults and what it cannot express: docs/export.md.

#include <memory>

#include "budget/export.hpp"
#include "command_registry.hpp"
#include "config_export.hpp"

namespace budget::cli {
namespace {

struct ExportCommandOptions {
  std::string config_path;
  std::string target;
  std::string out_path;
};

void run_export(const ExportCommandOptions& o) {
  const SourcedConfig input = load_sourced_config(o.config_path);
  ExportOptions options;
  options.hf_template = input.hf_text;
  options.hf_template_source = o.config_path;
  write_exported_config(input.config, parse_export_target(o.target, "--to"), options, o.out_path);
}

void add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a config for a trainer: Hugging Face config.json, Megatron-LM arguments, torchtitan model args");
  cmd->add_option("config", o->config_path, "Config to export (native JSON or Hugging Face config.json)")->required();
  add_export_target_option(*cmd, "to", o->target,
                           "Target: hf (a Hugging Face input keeps its other keys), megatron, torchtitan, torch (docs/torch.md), native")
      ->required();
  cmd->add_option("--out", o->out_path, "Write to this file (default: stdout)");
  cmd->callback([o] { run_export(*o); });
}

const CommandRegistration registration{"export", 15, &add_export_command};

}  // namespace
}  // namespace budget::cli
