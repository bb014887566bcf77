// budget-match plan [--grid FILE] [--recipe R.json] [--format table|csv|json|markdown]
// The training-run plan of a grid: for every cell, architecture (baseline and matched looped)
// and decay branch, the tokens seen and the training compute C = F × D of that endpoint.

#include <sstream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "budget/grid.hpp"
#include "budget/plan.hpp"
#include "budget/text_escape.hpp"
#include "budget/version.hpp"
#include "budget_render/budgets.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"
#include "options.hpp"
#include "output_format.hpp"
#include "budget_render/table.hpp"

namespace budget::cli {
namespace {

struct PlanOptions {
  std::string grid_path;  // empty: the built-in paper grid
  std::string recipe_path;
  WorkloadOption workload;
  std::string data_template_path;
  OutputFormat format = OutputFormat::table;
};

/// The scaling-law data file of the plan, loss left empty: one row per endpoint with the columns
/// `budget-match fit` reads (docs/scaling.md). Fill in the measured losses, then fit.
void write_data_template(const Plan& plan, const std::string& path) {
  std::ostringstream out;
  out << "# Scaling-law data of a budget-match plan: fill in `loss` (validation loss at each endpoint),\n"
         "# then run `budget-match fit " << comment_text(path) << "`. D = branch_step · tokens_per_step + decay_tokens.\n";
  out << "arch,cell,F,S,D,loss\n";
  // Names from the grid as CSV fields a spreadsheet keeps as text (csv_cell: quoted, formulas neutralised).
  for (const auto& e : plan.endpoints) {
    out << fmt::format("{},{},{:.17g},{:.17g},{:.17g},\n", csv_cell(e.arch), csv_cell(e.cell), e.flops_per_token,
                       e.sparsity, e.tokens);
  }
  write_output_file(path, out.str());
}

std::string cell_label(const GridCell& cell) {
  return fmt::format("{}-E{}", cell.size, cell.baseline.ffn.num_experts);
}

/// The plan as one result: JSON, the aligned / Markdown table with its summary, and a CSV table
/// of raw numbers (one row per endpoint, no separators).
Document plan_document(const Plan& plan, const Recipe& recipe, std::size_t run_count) {
  using json = nlohmann::ordered_json;
  json endpoints = json::array();
  for (const auto& e : plan.endpoints) {
    endpoints.push_back({{"cell", e.cell}, {"arch", e.arch}, {"branch_step", e.branch_step}, {"tokens", e.tokens},
                         {"flops_per_token", e.flops_per_token}, {"sparsity", e.sparsity}, {"compute", e.compute}});
  }
  json steps = recipe.branch_steps;
  Document doc;
  doc.set_json(json{{"schema_version", output_schema_version},
                    {"budget_version", version_string},
                    {"recipe", {{"sequences_per_step", recipe.sequences_per_step}, {"seq_len", recipe.seq_len},
                                {"stable_steps", recipe.stable_steps}, {"branch_steps", steps},
                                {"decay_tokens", recipe.decay_tokens}}},
                    {"total_compute", plan.total_compute},
                    {"total_tokens", plan.total_tokens},
                    {"min_endpoint_compute", plan.min_endpoint_compute},
                    {"max_endpoint_compute", plan.max_endpoint_compute},
                    {"endpoints", endpoints}});
  Table text;
  Table csv;
  for (Table* t : {&text, &csv}) {
    t->add_column("arch", Align::left);
    t->add_column("cell", Align::left);
    for (const char* h : {"F", "S", "branch step", "D", "C"}) t->add_column(h);
  }
  std::string last_run;
  for (const auto& e : plan.endpoints) {
    csv.add_row({e.arch, e.cell, fmt::format("{:.6e}", e.flops_per_token), fmt::format("{:.6f}", e.sparsity),
                 std::to_string(e.branch_step), fmt::format("{:.6e}", e.tokens), fmt::format("{:.6e}", e.compute)});
    if (e.cell + e.arch != last_run && !last_run.empty()) text.add_separator();
    last_run = e.cell + e.arch;
    text.add_row({e.arch, e.cell, si(e.flops_per_token, "FLOP"), percent(e.sparsity, 1), grouped(e.branch_step),
                  si(e.tokens, "tok"), si(e.compute, "FLOP")});
  }
  doc.table(std::move(text), Forms::text);
  doc.table(std::move(csv), Forms::csv);
  doc.text(fmt::format(
               "\n{} runs × {} branches = {} endpoints; {} tokens per step, stable phase {} steps ({}), decay {} per "
               "branch\ntotal compute of the grid: {} ({} tokens); endpoint budgets from {} to {}\n",
               run_count, recipe.branch_steps.size(), plan.endpoints.size(), grouped(recipe.tokens_per_step()),
               grouped(recipe.stable_steps),
               si(static_cast<double>(recipe.stable_steps) * static_cast<double>(recipe.tokens_per_step()), "tok"),
               si(recipe.decay_tokens, "tok"), si(plan.total_compute, "FLOP"), si(plan.total_tokens),
               si(plan.min_endpoint_compute, "FLOP"), si(plan.max_endpoint_compute, "FLOP")),
           Forms::text);
  return doc;
}

void run_plan(const PlanOptions& o) {
  const Grid grid = o.grid_path.empty() ? paper_grid() : load_grid(o.grid_path);
  const Recipe recipe = o.recipe_path.empty() ? paper_recipe() : load_recipe(o.recipe_path);
  const Workload workload = o.workload.load();
  const std::vector<GridRow> rows = match_grid(grid, LoopSpec::smelt(), workload);
  std::vector<PlannedRun> runs;
  for (const GridRow& row : rows) {
    const std::string cell = cell_label(*row.cell);
    runs.push_back({cell, "baseline", row.result.baseline_budgets.training_flops_per_token, row.result.baseline_budgets.sparsity});
    if (!row.result.candidates.empty()) {
      const Budgets& b = row.result.candidates.front().budgets;
      runs.push_back({cell, "looped", b.training_flops_per_token, b.sparsity});
    }
  }
  const Plan plan = plan_runs(runs, recipe);
  if (!o.data_template_path.empty()) write_data_template(plan, o.data_template_path);

  print(plan_document(plan, recipe, runs.size()), o.format);
}

void add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "Training-run plan of a grid: tokens and compute C = F·D at every decay-branch endpoint");
  cmd->add_option("--grid", o->grid_path, "Grid file (default: the built-in SMELT paper grid, as in examples/grids/paper_grid.json)");
  cmd->add_option("--recipe", o->recipe_path, "Recipe JSON (default: the paper's WSD recipe)");
  add_workload_option(*cmd, o->workload);
  cmd->add_option("--data-template", o->data_template_path,
                  "Also write the endpoints as a scaling-law data CSV (arch,cell,F,S,D,loss) with empty losses")
      ->check(output_path());
  add_format_option(*cmd, o->format, all_formats());
  cmd->callback([o] { run_plan(*o); });
}

const CommandRegistration plan_registration{"plan", 30, &add_plan_command};

}  // namespace
}  // namespace budget::cli
