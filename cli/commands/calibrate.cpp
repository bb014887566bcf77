// budget-match calibrate --from-jsonl FILE [--out P.json] [--created T] [--notes N]
//                        [--validate] [--seed S] [--format table|json|markdown]
// Converts PyTorch-eager measurement lines into a calibration profile (docs/calibration.md), and
// reports the time model's held-out accuracy on a profile's own rows (--validate).

#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/calibration.hpp"
#include "budget/error.hpp"
#include "budget/time_model.hpp"
#include "budget/version.hpp"
#include "budget_render/budgets.hpp"
#include "command_registry.hpp"
#include "output_file.hpp"
#include "option_checks.hpp"
#include "output_format.hpp"
#include "budget_render/table.hpp"

namespace budget::cli {
namespace {

struct CalibrateOptions {
  std::string from_jsonl;
  std::string profile_path;
  std::string out_path;
  std::string created;
  std::string notes;
  bool validate = false;
  std::uint64_t seed = 1;
  int neighbours = TimeModelOptions{}.neighbours;
  OutputFormat format = OutputFormat::table;
};

Table validation_table(const std::vector<TimeValidation>& rows) {
  Table t;
  t.add_column("op", Align::left);
  t.add_column("fit rows");
  t.add_column("held-out rows");
  t.add_column("median rel. error");
  t.add_column("p90 rel. error");
  t.add_column("max rel. error");
  for (const auto& v : rows) {
    if (v.op == "all") t.add_separator();
    t.add_row({v.op, std::to_string(v.fit_rows), std::to_string(v.test_rows), percent(v.median_relative_error, 1),
               percent(v.p90_relative_error, 1), percent(v.max_relative_error, 1)});
  }
  return t;
}

void run_calibrate(const CalibrateOptions& o) {
  if (o.from_jsonl.empty() == o.profile_path.empty()) {
    throw Error("give exactly one of --from-jsonl FILE (PyTorch-eager measurement lines) and --profile P.json",
                "calibrate");
  }
  CalibrationProfile profile =
      o.from_jsonl.empty() ? load_calibration_profile(o.profile_path) : load_torch_measurements(o.from_jsonl);
  if (!o.created.empty()) profile.source.created = o.created;
  if (!o.notes.empty()) profile.source.notes = o.notes;
  if (!o.out_path.empty()) {
    write_output_file(o.out_path, calibration_profile_to_json(profile));
    if (o.format != OutputFormat::json) {
      std::cerr << fmt::format("wrote {} rows ({}, {}) to {}\n", profile.rows.size(), profile.device.name,
                               profile.source.tool, o.out_path);
    }
  }
  if (!o.validate) {
    if (o.out_path.empty()) std::cout << calibration_profile_to_json(profile);
    return;
  }
  TimeModelOptions model_options;
  model_options.neighbours = o.neighbours;
  const auto rows = validate_time_model(profile, o.seed, model_options);
  if (o.format == OutputFormat::json) {
    nlohmann::ordered_json out{{"schema_version", output_schema_version},
                               {"budget_version", version_string},
                               {"device", profile.device.name},
                               {"source", profile.source.tool},
                               {"seed", o.seed},
                               {"validation", nlohmann::ordered_json::array()}};
    for (const auto& v : rows) {
      out["validation"].push_back({{"op", v.op},
                                   {"fit_rows", v.fit_rows},
                                   {"test_rows", v.test_rows},
                                   {"median_relative_error", v.median_relative_error},
                                   {"p90_relative_error", v.p90_relative_error},
                                   {"max_relative_error", v.max_relative_error}});
    }
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  const Table t = validation_table(rows);
  std::cout << fmt::format("Time model, held-out accuracy: fit on a random half of the measured shapes (seed {}), "
                           "predict the other half; {} neighbours\n{} ({})\n\n",
                           o.seed, o.neighbours, profile.device.name, profile.source.tool)
            << (o.format == OutputFormat::markdown ? t.render_markdown() : t.render_text());
}

void add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Make a calibration profile from PyTorch-eager measurements; check the time model on it");
  auto* from = cmd->add_option("--from-jsonl", o->from_jsonl,
                               "PyTorch-eager measurement lines, one JSON object a line (docs/calibration.md)");
  cmd->add_option("--profile", o->profile_path, "A calibration profile JSON (instead of --from-jsonl)")->excludes(from);
  cmd->add_option("--out", o->out_path, "Write the profile here (without it and --validate: to standard output)");
  cmd->add_option("--created", o->created, "source.created of the written profile (ISO 8601 UTC)");
  cmd->add_option("--notes", o->notes, "source.notes of the written profile");
  cmd->add_flag("--validate", o->validate,
                "Fit the time model on a random half of the measured shapes and print its error on the other half");
  cmd->add_option("--seed", o->seed, "Seed of the random halves (default 1)")
      ->check(unsigned_decimal(UINT64_MAX));
  cmd->add_option("--neighbours", o->neighbours,
                  "With --validate: nearest measured shapes whose residuals correct the fit (default 6; 0: the fit alone)")
      ->check(CLI::Range(0, 1000));
  add_format_option(*cmd, o->format,
                    {{"table", OutputFormat::table}, {"json", OutputFormat::json}, {"markdown", OutputFormat::markdown}});
  cmd->callback([o] { run_calibrate(*o); });
}

const CommandRegistration registration{"calibrate", 60, &add_calibrate_command};

}  // namespace
}  // namespace budget::cli
