// budget-match export CFG.json --to hf|megatron|torchtitan|native [--template HF.json] [--workload W.json]
//              [--out FILE]
// Writes a config (native or Hugging Face) in the format a trainer reads. What each target gets,
// its implied defaults and what it cannot express: docs/export.md.

#include <memory>

#include <CLI/CLI.hpp>

#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/workload.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "config_export.hpp"

namespace budget::cli {
namespace {

struct ExportCommandOptions {
  std::string config_path;
  std::string target;
  std::string out_path;
  std::string template_path;
  std::string workload_path;
};

void run_export(const ExportCommandOptions& o) {
  const SourcedConfig input = load_sourced_config(o.config_path);
  ExportOptions options;
  options.hf_template = input.hf_text;
  options.hf_template_source = o.config_path;
  if (!o.template_path.empty() && o.target != "hf") {
    throw_option_dependency_error("--template", "applies to --to hf only (the other targets keep no template keys)");
  }
  if (!o.template_path.empty()) {
    options.hf_template = load_sourced_config(o.template_path).hf_text;
    options.hf_template_source = o.template_path;
    if (options.hf_template.empty()) {
      throw Error("--template: the file is a native config, not a Hugging Face config.json", o.template_path);
    }
  }
  options.seq_length = (o.workload_path.empty() ? paper_workload() : load_workload(o.workload_path)).seq_len;
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
  cmd->add_option("--template", o->template_path,
                  "hf: keep every other key of this Hugging Face config.json (or multimodal wrapper); default: the "
                  "input's own keys when it is a Hugging Face file");
  cmd->add_option("--workload", o->workload_path,
                  "Workload JSON whose seq_len is Megatron-LM's --seq-length (default: the paper's)");
  cmd->add_option("--out", o->out_path, "Write to this file (default: stdout)")->check(output_path());
  cmd->callback([o] { run_export(*o); });
}

const CommandRegistration export_registration{"export", 15, &add_export_command};

}  // namespace
}  // namespace budget::cli
