// budget-match compare REF.json OTHER.json [...] [--workload W.json] [--calibration P.json]
//                      [--format table|json|markdown|csv]
// The three matched budgets of several configs side by side, with signed deviations from the
// first (the reference): a quick check of a hand-made or matched config.

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/gpu_fit.hpp"
#include "budget/time_model.hpp"
#include "budget/error.hpp"
#include "budget/match.hpp"
#include "budget/version.hpp"
#include "budget_render/budgets.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "budget_render/match.hpp"
#include "options.hpp"
#include "output_format.hpp"
#include "budget_render/table.hpp"
#include "budget_render/step_time.hpp"

namespace budget::cli {
namespace {

struct CompareOptions {
  std::vector<std::string> config_paths;
  WorkloadOption workload;
  CalibrationOptions calibration;
  OutputFormat format = OutputFormat::table;
};

/// The configs' budgets beside the reference's as one result (JSON, the candidates table in every
/// form; the aligned text adds the reference line and the legend of the numbered configs).
Document compare_document(const CompareOptions& o) {
  if (o.config_paths.size() < 2) throw_option_dependency_error("compare", "give at least two configs: the reference first");
  const Workload workload = o.workload.load();
  const ArchConfig reference = load_arch_config(o.config_paths.front());
  const Budgets base = account(reference, workload);
  const MatchConstraints weights = default_constraints(reference);  // unit weights for the objective
  std::vector<Candidate> others;
  for (std::size_t i = 1; i < o.config_paths.size(); ++i) {
    others.push_back(evaluate_candidate(load_arch_config(o.config_paths[i]), reference, base, workload, weights));
  }
  // With a profile: each config's predicted step time and its ratio to the reference's.
  std::optional<TimeModel> model;
  std::optional<StepTime> reference_time;
  std::vector<StepTime> times;
  std::vector<double> ratios;
  std::optional<TimeAccuracy> accuracy;  // the ± beside each ratio (time_accuracy())
  std::optional<OneGpuFit> reference_fit;  // whether each fits one GPU of the profile's kind
  std::vector<OneGpuFit> fits;
  if (o.calibration.given()) {
    model = o.calibration.load();
    accuracy = time_accuracy(model->profile(), model->options());
    reference_time = predict_step_time(*model, reference, workload);
    reference_fit = one_gpu_fit(reference, model->profile(), workload);
    for (const auto& c : others) {
      times.push_back(predict_step_time(*model, c.config, workload));
      ratios.push_back(times.back().seconds_per_token / reference_time->seconds_per_token);
      fits.push_back(one_gpu_fit(c.config, model->profile(), workload));
    }
  }
  Document doc;
  SaidNotes said;  // each note once in this output: the reference's, then the configs' in order
  nlohmann::ordered_json ref{{"config", config_json(reference)}, {"budgets", budgets_json(base)}};
  if (model) {
    ref["time"] = step_time_json(*reference_time, *model, &said);
    add_one_gpu_fit_json(ref["time"], *reference_fit);
  }
  if (model) ref["time_accuracy"] = time_accuracy_json(*accuracy);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < others.size(); ++i) {
    list.push_back(candidate_json(others[i]));
    if (model) {
      list.back()["time_ratio"] = ratios[i];
      list.back()["time_ratio_interval"] = time_ratio_interval_json(ratios[i], *accuracy);
      list.back()["time"] = step_time_json(times[i], *model, &said);
      add_one_gpu_fit_json(list.back()["time"], fits[i]);
    }
  }
  doc.set_json({{"schema_version", output_schema_version},
                {"budget_version", version_string},
                {"workload", workload_json(workload)},
                {"reference", ref},
                {"configs", list}});
  MatchResult table_input;
  table_input.baseline = reference;
  table_input.baseline_budgets = base;
  table_input.candidates = others;
  doc.text("reference: " + o.config_paths.front() + "; workload: " + workload.description + "\n\n", Forms::table);
  doc.table(candidates_table(table_input, ratios, accuracy ? &*accuracy : nullptr));
  std::string legend;
  for (std::size_t i = 1; i < o.config_paths.size(); ++i) legend += fmt::format("{:>4}: {}\n", i, o.config_paths[i]);
  if (model) {
    legend += fmt::format("time ×: predicted time per token / the reference's ({}; {} per token)\n",
                          profile_label(*model), si(reference_time->seconds_per_token, "s"));
    legend += "time ± from the " + accuracy->source + "\n";
    legend += "memory: reference " + reference_fit->note() + "\n";
    for (std::size_t i = 0; i < fits.size(); ++i) legend += fmt::format("memory: {} {}\n", i + 1, fits[i].note());
  }
  doc.text(legend, Forms::table);
  return doc;
}

void run_compare(const CompareOptions& o) { print(compare_document(o), o.format); }

void add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Budgets of several configs side by side, with deviations from the first (the reference)");
  cmd->add_option("configs", o->config_paths, "Configs (native or Hugging Face JSON); the first is the reference")
      ->required()
      ->expected(2, -1);
  add_workload_option(*cmd, o->workload);
  add_calibration_options(*cmd, o->calibration,
                          "Calibration profile (docs/calibration.md): add each config's predicted time ratio to the "
                          "reference");
  add_format_option(*cmd, o->format, all_formats());
  cmd->callback([o] { run_compare(*o); });
}

const CommandRegistration compare_registration{"compare", 15, &add_compare_command};

}  // namespace
}  // namespace budget::cli
