// budget-match compare REF.json OTHER.json [...] [--workload W.json] [--format table|json|markdown|csv]
// The three matched budgets of several configs side by side, with signed deviations from the
// first (the reference): a quick check of a hand-made or matched config.

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/match.hpp"
#include "budget/version.hpp"
#include "budget_render.hpp"
#include "command_registry.hpp"
#include "match_render.hpp"
#include "output_format.hpp"
#include "table.hpp"

namespace budget::cli {
namespace {

struct CompareOptions {
  std::vector<std::string> config_paths;
  std::string workload_path;
  OutputFormat format = OutputFormat::table;
};

void run_compare(const CompareOptions& o) {
  if (o.config_paths.size() < 2) throw Error("give at least two configs: the reference first", "compare");
  const Workload workload = o.workload_path.empty() ? paper_workload() : load_workload(o.workload_path);
  const ArchConfig reference = load_arch_config(o.config_paths.front());
  const Budgets base = account(reference, workload);
  const MatchConstraints weights = default_constraints(reference);  // unit weights for the objective
  std::vector<Candidate> others;
  for (std::size_t i = 1; i < o.config_paths.size(); ++i) {
    others.push_back(evaluate_candidate(load_arch_config(o.config_paths[i]), reference, base, workload, weights));
  }
  if (o.format == OutputFormat::json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& c : others) list.push_back(candidate_json(c));
    std::cout << nlohmann::ordered_json{{"schema_version", output_schema_version},
                                        {"budget_version", version_string},
                                        {"workload", workload_json(workload)},
                                        {"reference", {{"config", config_json(reference)}, {"budgets", budgets_json(base)}}},
                                        {"configs", list}}
                     .dump(2)
              << "\n";
    return;
  }
  MatchResult table_input;
  table_input.baseline = reference;
  table_input.baseline_budgets = base;
  table_input.candidates = others;
  const Table t = candidates_table(table_input);
  switch (o.format) {
    case OutputFormat::markdown: std::cout << t.render_markdown(); break;
    case OutputFormat::csv: std::cout << t.render_csv(); break;
    default:
      std::cout << "reference: " << o.config_paths.front() << "; workload: " << workload.description << "\n\n"
                << t.render_text();
      for (std::size_t i = 1; i < o.config_paths.size(); ++i) {
        std::cout << fmt::format("{:>4}: {}\n", i, o.config_paths[i]);
      }
      break;
  }
}

void add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Budgets of several configs side by side, with deviations from the first (the reference)");
  cmd->add_option("configs", o->config_paths, "Configs (native or Hugging Face JSON); the first is the reference")
      ->required()
      ->expected(2, -1);
  cmd->add_option("--workload", o->workload_path, "Workload JSON (default: the paper's)");
  add_format_option(*cmd, o->format, all_formats());
  cmd->callback([o] { run_compare(*o); });
}

const CommandRegistration registration{"compare", 15, &add_compare_command};

}  // namespace
}  // namespace budget::cli
