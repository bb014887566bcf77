// budget-match calibrate --from-jsonl FILE [--layers L.jsonl] [--out P.json] [--created T] [--notes N]
//                        [--validate] [--seed S] [--format table|json|markdown]
// Converts PyTorch-eager measurement lines into a calibration profile (docs/calibration.md), and
// reports the time model's held-out accuracy on a profile's own rows (--validate).

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/calibration.hpp"
#include "budget/error.hpp"
#include "budget/run_fit.hpp"
#include "budget/text_escape.hpp"
#include "budget/time_baselines.hpp"
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
  std::string from_kernels;
  std::string gpu;
  std::string from_runs;
  std::string runs_gpu;
  std::string profile_path;
  std::string layers_path;
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
    if (!v.op) t.add_separator();
    t.add_row({std::string(v.op_name()), std::to_string(v.fit_rows), std::to_string(v.test_rows), percent(v.median_relative_error, 1),
               percent(v.p90_relative_error, 1), percent(v.max_relative_error, 1)});
  }
  return t;
}

nlohmann::ordered_json layer_validation_json(const LayerValidation& v, const LayerCorrection& c) {
  nlohmann::ordered_json correction{{"launch_ms", c.launch_ms}, {"layer_rows", c.layer_rows},
                                    {"median_relative_error", c.median_relative_error},
                                    {"max_relative_error", c.max_relative_error}};
  for (std::size_t k = 0; k < time_class_count; ++k) {
    correction["factor"][std::string(to_string(static_cast<TimeClass>(k)))] = c.factor[k];
  }
  for (const auto& [cls, backend] : c.backend_by_head_dim_class) correction["attention_backend"][cls] = backend;
  nlohmann::ordered_json out{{"correction", correction},
                             {"cells", v.cells},
                             {"median_layer_error", v.median_layer_error},
                             {"max_layer_error", v.max_layer_error},
                             {"median_ratio_error", v.median_ratio_error},
                             {"max_ratio_error", v.max_ratio_error},
                             {"max_baseline_error", v.max_baseline_error},
                             {"entries", nlohmann::ordered_json::array()}};
  for (const auto& e : v.entries) {
    out["entries"].push_back({{"cell", e.cell}, {"tag", e.tag}, {"name", e.name}, {"run", e.run},
                              {"measured_ms", e.measured_ms}, {"predicted_ms", e.predicted_ms},
                              {"measured_ratio", e.measured_ratio}, {"predicted_ratio", e.predicted_ratio},
                              {"attention_backend", e.attention_backend}});
  }
  const BaselineChecks checks = check_baselines(v);
  nlohmann::ordered_json baselines{{"over_predicted", checks.over_predicted},
                                   {"max_error_vs_mean", checks.max_error_vs_mean},
                                   {"max_error_vs_slowest", checks.max_error_vs_slowest},
                                   {"entries", nlohmann::ordered_json::array()}};
  for (const auto& b : checks.baselines) {
    baselines["entries"].push_back({{"cell", b.cell}, {"name", b.name}, {"runs", b.runs}, {"measured_ms", b.measured_ms},
                                    {"predicted_ms", b.predicted_ms}, {"mean_ms", b.mean_ms},
                                    {"error_vs_mean", b.error_vs_mean}, {"error_vs_slowest", b.error_vs_slowest},
                                    {"over_predicted", b.over_predicted}});
  }
  out["baselines"] = baselines;
  return out;
}

/// The whole-layer validation's text blocks (aligned text and Markdown), appended to `doc`.
void add_layer_validation_text(const LayerValidation& v, const LayerCorrection& c, Document& doc) {
  Table t;
  for (const char* name : {"cell", "tag", "run", "backend"}) t.add_column(name, Align::left);
  for (const char* name : {"measured ms", "predicted ms", "error", "measured ×", "predicted ×", "× error"}) t.add_column(name);
  for (const auto& e : v.entries) {
    const bool base = e.tag == "baseline";
    t.add_row({e.cell, e.tag, std::to_string(e.run), e.attention_backend, fmt::format("{:.3f}", e.measured_ms),
               fmt::format("{:.3f}", e.predicted_ms), fmt::format("{:+.1f}%", 100 * (e.predicted_ms / e.measured_ms - 1)),
               e.measured_ratio > 0 ? fmt::format("{:.3f}", e.measured_ratio) : "-",
               e.predicted_ratio > 0 ? fmt::format("{:.3f}", e.predicted_ratio) : "-",
               e.measured_ratio > 0 && !base ? fmt::format("{:+.3f}", e.predicted_ratio - e.measured_ratio) : "-"});
  }
  std::string factors;
  for (std::size_t k = 0; k < time_class_count; ++k) {
    factors += fmt::format("{}{} {:.3f}", k == 0 ? "" : ", ", to_string(static_cast<TimeClass>(k)), c.factor[k]);
  }
  std::string backends;
  for (const auto& [cls, backend] : c.backend_by_head_dim_class) {
    backends += fmt::format("{}{}: {}", backends.empty() ? "" : "; ", cls, backend);
  }
  doc.text(fmt::format("\nWhole layers, leave one cell out: fit the layer correction on the other {} cells, predict "
                       "the held-out cell's layers\n"
                       "correction fitted on all {} layer rows: factors {}; launch {:.2f} µs; in-sample median "
                       "{:.1f}%, max {:.1f}%\nattention backend by the layer rows: {}\n\n",
                       v.cells - 1, c.layer_rows, factors, c.launch_ms * 1e3, 100 * c.median_relative_error,
                       100 * c.max_relative_error, backends.empty() ? "none shown" : backends));
  doc.table(std::move(t), Forms::text);
  doc.text(fmt::format("layer time error: median {:.1f}%, worst {:.1f}%; time ratio error: median {:.3f}, worst "
                       "{:.3f}; baselines: largest over-prediction {:+.1f}%\n",
                       100 * v.median_layer_error, 100 * v.max_layer_error, v.median_ratio_error, v.max_ratio_error,
                       100 * v.max_baseline_error));
  // Each baseline against its runs (budget/time_baselines.hpp): over-predicted = above the slowest run.
  const BaselineChecks checks = check_baselines(v);
  Table b;
  for (const char* name : {"cell", "baseline"}) b.add_column(name, Align::left);
  for (const char* name : {"runs ms", "mean ms", "predicted ms", "vs mean", "vs slowest run", "over-predicted"}) b.add_column(name);
  for (const auto& base : checks.baselines) {
    std::string runs;
    for (std::size_t i = 0; i < base.runs.size(); ++i) {
      runs += fmt::format("{}{:.3f} (run {})", i == 0 ? "" : ", ", base.measured_ms[i], base.runs[i]);
    }
    b.add_row({base.cell, base.name, runs, fmt::format("{:.3f}", base.mean_ms), fmt::format("{:.3f}", base.predicted_ms),
               fmt::format("{:+.1f}%", 100 * base.error_vs_mean), fmt::format("{:+.1f}%", 100 * base.error_vs_slowest),
               base.over_predicted ? "yes" : "no"});
  }
  doc.text("\nBaselines against their runs (over-predicted: the prediction above the slowest run)\n\n");
  doc.table(std::move(b), Forms::text);
  doc.text(fmt::format("baselines over-predicted: {} of {}; worst vs the runs' mean {:+.1f}%, vs the slowest run {:+.1f}%\n",
                       checks.over_predicted, checks.baselines.size(), 100 * checks.max_error_vs_mean,
                       100 * checks.max_error_vs_slowest));
}

/// --validate as one result: JSON, and the held-out table (and the whole-layer one) as text.
Document validation_document(const CalibrateOptions& o, const CalibrationProfile& profile,
                             const std::vector<TimeValidation>& rows, const std::optional<LayerValidation>& layers,
                             const TimeModelOptions& model_options) {
  Document doc;
  nlohmann::ordered_json out{{"schema_version", output_schema_version},
                             {"budget_version", version_string},
                             {"device", profile.device.name},
                             {"source", profile.source.tool},
                             {"seed", o.seed},
                             {"validation", nlohmann::ordered_json::array()}};
  for (const auto& v : rows) {
    out["validation"].push_back({{"op", v.op_name()},
                                 {"fit_rows", v.fit_rows},
                                 {"test_rows", v.test_rows},
                                 {"median_relative_error", v.median_relative_error},
                                 {"p90_relative_error", v.p90_relative_error},
                                 {"max_relative_error", v.max_relative_error}});
  }
  std::optional<LayerCorrection> correction;
  if (layers) correction = TimeModel(profile, model_options).layer_correction();
  if (layers) out["layers"] = layer_validation_json(*layers, *correction);
  doc.set_json(std::move(out));
  doc.text(fmt::format("Time model, held-out accuracy: fit on a random half of the measured shapes (seed {}), "
                       "predict the other half; {} neighbours\n{} ({})\n\n",
                       o.seed, o.neighbours, profile.device.name, profile.source.tool));
  doc.table(validation_table(rows), Forms::text);
  if (layers) add_layer_validation_text(*layers, *correction, doc);
  return doc;
}

/// One precision's line: the factors and the errors, each figure only where runs stand behind it
/// (a fit on no runs prints no factors and no leave-one-run-out figures; no validation figures
/// without validation runs), and how many runs were skipped.
std::string run_fit_summary(const RunFitResult& r) {
  const CalibrationRunFit& f = r.fit;
  const auto skipped = std::count_if(r.runs.begin(), r.runs.end(), [](const RunPrediction& p) { return !p.skipped.empty(); });
  std::string text = fmt::format("\n{}: {} runs fitted, {} validated, {} skipped", to_string(f.precision),
                                 f.fitted_on.size(), f.validated_on.size(), skipped);
  if (f.fitted_on.empty()) {
    text += "; fitted on no runs: no factors fitted (the profile's own, all 1), no leave-one-run-out figures\n";
  } else {
    text += fmt::format(
        "; factors gemm {:.3f}, attention {:.3f}, expert GEMMs {:.3f}, memory-bound {:.3f}, intra-node {:.3f}, "
        "inter-node {:.3f}, all-to-all {:.3f}, {:.2f} µs a launch beyond the stack's own, overhead {:.4f} s\n"
        "leave-one-run-out{} |error| "
        "median {:.1f}%, worst {:.1f}%",
        f.gemm, f.attention, f.expert_gemms, f.memory_bound, f.intra_node, f.inter_node, f.all_to_all, f.launch_us,
        f.overhead_s,
        r.loo_runs < f.fitted_on.size()
            ? fmt::format(" ({} of the {} fitted runs left out, evenly spaced; the others in-sample)", r.loo_runs,
                          f.fitted_on.size())
            : std::string(),
        100 * f.loo_median_error, 100 * f.loo_max_error);
  }
  if (!f.validated_on.empty()) {
    text += fmt::format("{}validation median {:.1f}%, worst {:.1f}%", f.fitted_on.empty() ? "" : "; ",
                        100 * r.validation_median_error, 100 * r.validation_max_error);
  }
  if (f.fitted_on.size() + f.validated_on.size() > 0) {
    text += fmt::format("; before the fit median {:.1f}%, worst {:.1f}%", 100 * r.before_median_error,
                        100 * r.before_max_error);
  }
  return text + "\n\n";
}

/// The runs that give their peak memory: measured and predicted (training_memory's peak at the
/// run's layout), with the error; nothing when no run gives one.
void add_run_memory_text(const RunFitResult& r, Document& doc) {
  Table t;
  for (const char* h : {"run"}) t.add_column(h, Align::left);
  for (const char* h : {"measured GiB", "predicted GiB", "error"}) t.add_column(h);
  bool any = false;
  for (const RunPrediction& p : r.runs) {
    if (p.measured_memory_gib < 0 || !p.skipped.empty()) continue;
    any = true;
    t.add_row({p.id, fmt::format("{:.2f}", p.measured_memory_gib), fmt::format("{:.2f}", p.predicted_memory_gib),
               fmt::format("{:+.1f}%", 100 * (p.predicted_memory_gib / p.measured_memory_gib - 1))});
  }
  if (!any) return;
  doc.text("\npeak allocated memory per GPU (the runs that publish it):\n");
  doc.table(std::move(t), Forms::text);
}

/// --from-runs as one result: per precision the fitted factors, the leave-one-run-out and
/// validation errors, and each run measured, before (the profile alone) and after.
Document runs_document(const CalibrationProfile& profile, const std::vector<RunFitResult>& fits) {
  Document doc;
  nlohmann::ordered_json out{{"schema_version", output_schema_version}, {"budget_version", version_string},
                             {"device", profile.device.name}, {"fits", nlohmann::ordered_json::array()}};
  std::string text = fmt::format("Calibration from measured runs on {} ({})\n", profile.device.name, profile.source.tool);
  for (const RunFitResult& r : fits) {
    const CalibrationRunFit& f = r.fit;
    nlohmann::ordered_json fit{{"precision", std::string(to_string(f.precision))},
                               {"gemm", f.gemm}, {"attention", f.attention},
                               {"expert_gemms", f.expert_gemms}, {"memory_bound", f.memory_bound},
                               {"intra_node", f.intra_node}, {"inter_node", f.inter_node},
                               {"all_to_all", f.all_to_all}, {"launch_us", f.launch_us},
                               {"overhead_s", f.overhead_s}, {"fitted_on", f.fitted_on},
                               {"validated_on", f.validated_on}};
    // An error figure with no runs behind it is null.
    const auto figure = [](bool has_runs, double value) { return has_runs ? nlohmann::ordered_json(value) : nullptr; };
    const bool priced = f.fitted_on.size() + f.validated_on.size() > 0;
    fit["loo_median_error"] = figure(!f.fitted_on.empty(), f.loo_median_error);
    fit["loo_max_error"] = figure(!f.fitted_on.empty(), f.loo_max_error);
    fit["loo_runs"] = r.loo_runs;
    fit["before_median_error"] = figure(priced, r.before_median_error);
    fit["before_max_error"] = figure(priced, r.before_max_error);
    fit["validation_median_error"] = figure(!f.validated_on.empty(), r.validation_median_error);
    fit["validation_max_error"] = figure(!f.validated_on.empty(), r.validation_max_error);
    fit["runs_predicted"] = nlohmann::ordered_json::array();
    Table t;
    for (const char* h : {"run", "role"}) t.add_column(h, Align::left);
    for (const char* h : {"measured s", "before s", "before err", "after s", "after err"}) t.add_column(h);
    for (const RunPrediction& p : r.runs) {
      fit["runs_predicted"].push_back({{"id", p.id}, {"role", p.role}, {"measured_s", p.measured_s},
                                       {"before_s", p.before_s}, {"predicted_s", p.predicted_s}, {"skipped", p.skipped},
                                       {"in_sample", p.in_sample}});
      if (p.measured_memory_gib >= 0) {
        fit["runs_predicted"].back()["measured_memory_gib"] = p.measured_memory_gib;
        fit["runs_predicted"].back()["predicted_memory_gib"] = p.predicted_memory_gib;
      }
      if (!p.skipped.empty()) {
        t.add_row({p.id, p.role, fmt::format("{:.4g}", p.measured_s), "skipped: " + p.skipped, "", "", ""});
        continue;
      }
      t.add_row({p.id, p.role != "fit" ? "validate" : p.in_sample ? "fit (in-sample)" : "fit (LOO)", fmt::format("{:.3f}", p.measured_s),
                 fmt::format("{:.3f}", p.before_s), fmt::format("{:+.1f}%", 100 * (p.before_s / p.measured_s - 1)),
                 fmt::format("{:.3f}", p.predicted_s), fmt::format("{:+.1f}%", 100 * (p.predicted_s / p.measured_s - 1))});
    }
    out["fits"].push_back(fit);
    text += run_fit_summary(r);
    doc.text(text);
    text.clear();
    doc.table(std::move(t), Forms::text);
    add_run_memory_text(r, doc);
  }
  doc.set_json(std::move(out));
  return doc;
}

void run_calibrate(const CalibrateOptions& o) {
  const int sources = (o.from_jsonl.empty() ? 0 : 1) + (o.profile_path.empty() ? 0 : 1) + (o.from_kernels.empty() ? 0 : 1);
  if (sources != 1) {
    throw_option_dependency_error("calibrate",
                                  "give exactly one of --from-jsonl FILE (PyTorch-eager measurement lines), "
                                  "--from-kernels FILE --gpu KEY (published kernel tables) and --profile P.json");
  }
  if (o.from_kernels.empty() != o.gpu.empty()) {
    throw_option_dependency_error("calibrate", "--from-kernels and --gpu go together");
  }
  CalibrationProfile profile = !o.from_kernels.empty() ? load_published_kernels_profile(o.from_kernels, o.gpu)
                               : o.from_jsonl.empty()  ? load_calibration_profile(o.profile_path)
                                                       : load_torch_measurements(o.from_jsonl);
  if (!o.layers_path.empty()) {
    std::vector<CalibrationLayerRow> layers = load_layer_measurements(o.layers_path);
    profile.layers.insert(profile.layers.end(), layers.begin(), layers.end());
  }
  std::optional<Document> runs;
  if (!o.from_runs.empty()) {
    const std::vector<RunFitResult> fits =
        fit_measured_runs(profile, load_measured_runs(o.from_runs), o.from_runs, o.runs_gpu);
    profile.run_fits.clear();
    for (const RunFitResult& r : fits) profile.run_fits.push_back(r.fit);
    runs = runs_document(profile, fits);
  }
  if (!o.created.empty()) profile.source.created = o.created;
  if (!o.notes.empty()) profile.source.notes = o.notes;
  if (!o.out_path.empty()) {
    write_output_file(o.out_path, calibration_profile_to_json(profile));
    if (o.format != OutputFormat::json) {
      std::cerr << fmt::format("wrote {} rows ({}, {}) to {}\n", profile.rows.size(), profile.device.name,
                               printable_text(profile.source.tool), printable_text(o.out_path));
    }
  }
  if (runs) {
    print(*runs, o.format);
    return;
  }
  if (!o.validate) {
    if (o.out_path.empty()) std::cout << calibration_profile_to_json(profile);
    return;
  }
  TimeModelOptions model_options;
  model_options.neighbours = o.neighbours;
  const auto rows = validate_time_model(profile, o.seed, model_options);
  const std::optional<LayerValidation> layers =
      profile.layers.empty() ? std::nullopt : std::optional(validate_layers_leave_one_cell_out(profile, model_options));
  print(validation_document(o, profile, rows, layers, model_options), o.format);
}

void add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Make a calibration profile from PyTorch-eager measurements; check the time model on it");
  auto* from = cmd->add_option("--from-jsonl", o->from_jsonl,
                               "PyTorch-eager measurement lines, one JSON object a line (docs/calibration.md)");
  cmd->add_option("--profile", o->profile_path, "A calibration profile JSON (instead of --from-jsonl)")->excludes(from);
  cmd->add_option("--from-kernels", o->from_kernels,
                  "Published kernel tables in the form of kernels.json (data/kernels/): a profile of --gpu")
      ->excludes(from);
  cmd->add_option("--gpu", o->gpu, "With --from-kernels: A100_SXM4_80GB, H100_SXM, H200_SXM, B200, GB200, B300 or GB300");
  cmd->add_option("--from-runs", o->from_runs,
                  "Measured runs (one JSON object a line, docs/calibration.md): fit the profile's factors to the runs "
                  "of its GPU, print leave-one-run-out errors; --out writes the profile with the fits");
  cmd->add_option("--runs-gpu", o->runs_gpu, "With --from-runs: fit the runs of this GPU (default: the profile's)");
  cmd->add_option("--layers", o->layers_path,
                  "Whole-layer measurement lines (.jsonl, the form of h200_torch_layers.jsonl) added as layer rows");
  cmd->add_option("--out", o->out_path, "Write the profile here (without it and --validate: to standard output)")
      ->check(output_path());
  cmd->add_option("--created", o->created, "source.created of the written profile (ISO 8601 UTC)");
  cmd->add_option("--notes", o->notes, "source.notes of the written profile");
  cmd->add_flag("--validate", o->validate,
                "Fit the time model on a random half of the measured shapes and print its error on the other half");
  cmd->add_option("--seed", o->seed, "Seed of the random halves (default 1)")
      ->check(unsigned_decimal(UINT64_MAX));
  cmd->add_option("--neighbours", o->neighbours,
                  "With --validate: nearest measured shapes whose residuals correct the fit (default 6; 0: the fit alone)")
      ->check(CLI::Range(0, 1000));
  add_format_option(*cmd, o->format, document_formats());
  cmd->callback([o] { run_calibrate(*o); });
}

const CommandRegistration calibrate_registration{"calibrate", 60, &add_calibrate_command};

}  // namespace
}  // namespace budget::cli
