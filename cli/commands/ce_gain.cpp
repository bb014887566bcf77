// budget-match ce-gain --target T.json --reference R.json --C 1e20,1e21 --S 0.85,0.95
//                     [--bootstrap DATA.csv [--target-arch X] [--reference-arch Y] [--resamples 2000]
//                      [--seed 1] [--threads N]] [--format table|json|markdown|csv]
//                     [--cluster C.json --gpus N --calibration P.json --target-config X.json
//                      --reference-config Y.json [--workload W.json] [--global-batch-tokens T] [--nodes K]]
// The compute-efficiency gain G = 1 − C_tgt/C_ref of a target law over a reference law, with
// tokens per parameter and γ; with --bootstrap, cell-level bootstrap intervals and per-domain
// gains from the data (docs/scaling.md); with --cluster, the gain in GPU-hours at equal loss, each
// architecture at its best layout on the cluster (budget/scaling_gpu_hours.hpp).


#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/layout_search.hpp"
#include "budget/scaling_bootstrap.hpp"
#include "budget/scaling_data.hpp"
#include "budget/scaling_law.hpp"
#include "budget/scaling_gpu_hours.hpp"
#include "budget/scaling_plan.hpp"
#include "ce_gain_options.hpp"
#include "budget_render/cluster_rank.hpp"
#include "cluster_options.hpp"
#include "command_registry.hpp"
#include "options.hpp"
#include "scaling_args.hpp"
#include "option_checks.hpp"
#include "output_format.hpp"
#include "budget_render/table.hpp"

namespace budget::cli {
namespace {

constexpr int ce_gain_schema_version = 1;

/// What the bootstrap did, for the output.
struct BootstrapNote {
  bool ran = false;
  std::size_t resamples = 0;
  std::size_t cells = 0;
  std::size_t failed = 0;
  std::string first_failure;
  bool paired = false;
};


CoefficientsFile read_law(const std::string& path) {
  CoefficientsFile file = read_coefficients_file(path);
  validate_coefficients(file.coefficients, path);
  return file;
}

ArchLaw law_from_file(const CoefficientsFile& file) {
  ArchLaw law;
  law.arch = file.arch;
  law.overall.coefficients = file.coefficients;
  return law;
}

// ---------------------------------------------------------------------------------------------
// Bootstrap

/// Warns when the coefficient files are not what the data's own fit gives: the values shown are
/// the files', the intervals describe the data's fit.
void warn_if_files_differ(const GainReport& from_files, const GainReport& from_data, const CeGainOptions& o) {
  double largest = 0.0;
  for (std::size_t i = 0; i < from_files.entries.size(); ++i) {
    largest = std::max(largest, std::fabs(from_files.entries[i].gain.value - from_data.entries[i].gain.value));
  }
  if (largest > 1e-3) {
    std::cerr << fmt::format("budget-match: warning: the gains of {} over {} differ by up to {:.2f} points from a fit "
                             "of {}; the values shown are the files', the intervals describe the data's fit\n",
                             o.target_path, o.reference_path, 100.0 * largest, o.data_path);
  }
}

GainReport run_with_data(const CeGainOptions& o, const CoefficientsFile& target, const CoefficientsFile& reference,
                         const GainQuery& query, BootstrapNote& note) {
  const LossData data = read_loss_csv(o.data_path);
  const std::string target_arch = o.target_arch.empty() ? target.arch : o.target_arch;
  const std::string reference_arch = o.reference_arch.empty() ? reference.arch : o.reference_arch;
  const std::vector<LossPoint> target_points = points_of_arch(data.points, target_arch, o.data_path);
  const std::vector<LossPoint> reference_points = points_of_arch(data.points, reference_arch, o.data_path);
  try {
    ArchLaw target_law = law_from_file(target);
    ArchLaw reference_law = law_from_file(reference);
    target_law.domains = fit_domain_laws(target_points, target.coefficients);
    reference_law.domains = fit_domain_laws(reference_points, reference.coefficients);
    GainReport report = gain_report(target_law, reference_law, query);
    if (o.resamples == 0) return report;

    BootstrapOptions options;
    options.resamples = o.resamples;
    options.seed = o.seed;
    options.threads = o.threads;
    // Progress: the process-wide progress line (budget/progress.hpp, cli/progress_output.hpp).
    const BootstrappedGainReport bootstrapped = bootstrap_gain_report(target_points, reference_points, query, options);
    copy_intervals(bootstrapped.report, report);
    warn_if_files_differ(report, bootstrapped.report, o);
    note = {true, o.resamples, cells(target_points).size(), bootstrapped.bootstrap.failed_resamples,
            bootstrapped.bootstrap.first_failure, bootstrapped.bootstrap.paired};
    return report;
  } catch (const Error& e) {
    throw e.with_source(o.data_path);
  }
}

// ---------------------------------------------------------------------------------------------
// Outputs

std::string interval_text(const Estimate& e) {
  if (!e.has_interval()) return {};
  return fmt::format("[{}, {}]", signed_percent(e.lower, 1), signed_percent(e.upper, 1));
}

std::string gain_cell(const Estimate& e) {
  const std::string interval = interval_text(e);
  return signed_percent(e.value, 2) + (interval.empty() ? "" : " " + interval);
}

std::string gamma_text(const Estimate& e) {
  return e.has_interval() ? fmt::format("{:.4f} [{:.4f}, {:.4f}]", e.value, e.lower, e.upper)
                          : fmt::format("{:.4f}", e.value);
}

Table gain_matrix(const GainReport& report, const GainQuery& query) {
  Table t;
  t.add_column("S \\ C", Align::left);
  for (double C : query.budgets) t.add_column(fmt::format("{:.3g}", C));
  std::size_t i = 0;
  for (double S : query.sparsities) {
    std::vector<std::string> row{fmt::format("{:g}", S)};
    for (std::size_t c = 0; c < query.budgets.size(); ++c) row.push_back(gain_cell(report.entries[i++].gain));
    t.add_row(row);
  }
  return t;
}

Table detail_table(const GainReport& report, bool intervals) {
  Table t;
  for (const char* header : {"S", "C", "gain"}) t.add_column(header);
  if (intervals) t.add_column("95% interval");
  t.add_column("C_ref");
  t.add_column("L*");
  t.add_column("TPP " + report.target_arch);
  t.add_column("TPP " + report.reference_arch);
  for (const auto& e : report.entries) {
    std::vector<std::string> row{fmt::format("{:g}", e.S), fmt::format("{:.3g}", e.C), signed_percent(e.gain.value, 2)};
    if (intervals) row.push_back(interval_text(e.gain));
    row.push_back(fmt::format("{:.4g}", e.C_reference.value));
    row.push_back(fmt::format("{:.4f}", e.loss.value));
    row.push_back(fmt::format("{:.1f}", e.tpp_target.value));
    row.push_back(fmt::format("{:.1f}", e.tpp_reference.value));
    t.add_row(row);
  }
  return t;
}

Table domain_table(const GainReport& report) {
  Table t;
  t.add_column("domain", Align::left);
  for (const char* header : {"S", "C", "gain"}) t.add_column(header);
  for (const auto& d : report.domain_entries) {
    t.add_row({d.domain, fmt::format("{:g}", d.S), fmt::format("{:.3g}", d.C), gain_cell(d.gain)});
  }
  return t;
}

/// One long table with raw numbers (CSV): overall rows, then per-domain rows; with `hours`
/// (--cluster) the GPU-hour columns on the overall rows.
Table csv_table(const GainReport& report, const GpuHoursReport* hours = nullptr) {
  Table t;
  for (const char* header : {"scope", "S", "C", "gain", "gain_lower", "gain_upper", "C_reference", "loss",
                             "tpp_target", "tpp_reference"}) {
    t.add_column(header);
  }
  if (hours) {
    for (const char* header : {"time_per_flop_ratio", "gpu_hours_gain", "gpu_hours_gain_lower", "gpu_hours_gain_upper",
                               "target_gpu_hours", "reference_gpu_hours", "saving_eaten"}) {
      t.add_column(header);
    }
  }
  const auto raw = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{:.10g}", v); };
  for (std::size_t i = 0; i < report.entries.size(); ++i) {
    const auto& e = report.entries[i];
    std::vector<std::string> row{"overall", raw(e.S), raw(e.C), raw(e.gain.value), raw(e.gain.lower), raw(e.gain.upper),
                                 raw(e.C_reference.value), raw(e.loss.value), raw(e.tpp_target.value),
                                 raw(e.tpp_reference.value)};
    if (hours) {
      const GpuHoursAtEqualLoss& g = hours->entries.at(i);
      for (const double v : {g.time_per_flop_ratio, g.gpu_hours_gain.value, g.gpu_hours_gain.lower,
                             g.gpu_hours_gain.upper, g.target_gpu_hours, g.reference_gpu_hours.value}) {
        row.push_back(raw(v));
      }
      row.push_back(g.saving_eaten ? "true" : "false");
    }
    t.add_row(row);
  }
  for (const auto& d : report.domain_entries) {
    std::vector<std::string> row{d.domain, raw(d.S), raw(d.C), raw(d.gain.value), raw(d.gain.lower), raw(d.gain.upper),
                                 "", "", "", ""};
    if (hours) row.resize(row.size() + 7);
    t.add_row(row);
  }
  return t;
}

nlohmann::ordered_json report_json(const GainReport& r, const CeGainOptions& o, const BootstrapNote& note) {
  nlohmann::ordered_json out{
      {"schema_version", ce_gain_schema_version},
      {"target", {{"arch", r.target_arch}, {"file", o.target_path}, {"gamma", estimate_json(r.gamma_target)}}},
      {"reference",
       {{"arch", r.reference_arch}, {"file", o.reference_path}, {"gamma", estimate_json(r.gamma_reference)}}},
      {"entries", nlohmann::ordered_json::array()}};
  for (const auto& e : r.entries) {
    out["entries"].push_back({{"C", e.C}, {"S", e.S}, {"gain", estimate_json(e.gain)},
                              {"C_reference", estimate_json(e.C_reference)}, {"loss", estimate_json(e.loss)},
                              {"tpp_target", estimate_json(e.tpp_target)},
                              {"tpp_reference", estimate_json(e.tpp_reference)}});
  }
  if (!r.domain_entries.empty()) {
    out["domains"] = nlohmann::ordered_json::array();
    for (const auto& d : r.domain_entries) {
      out["domains"].push_back({{"domain", d.domain}, {"C", d.C}, {"S", d.S}, {"gain", estimate_json(d.gain)}});
    }
  }
  if (note.ran) {
    out["bootstrap"] = {{"data", o.data_path},   {"resamples", note.resamples},     {"seed", o.seed},
                        {"cells", note.cells},   {"paired", note.paired},           {"failed_resamples", note.failed},
                        {"percentiles", {2.5, 97.5}}};
  }
  return out;
}

/// The text and Markdown forms of the gain: heading, bootstrap line, gain matrix, details and the
/// per-domain gains.
void add_gain_text(Document& doc, const GainReport& r, const CeGainOptions& o, const GainQuery& query,
                   const BootstrapNote& note) {
  std::string head = fmt::format("Compute-efficiency gain of {} ({}) over {} ({}): G = 1 − C_tgt/C_ref\n",
                                 r.target_arch, o.target_path, r.reference_arch, o.reference_path) +
                     fmt::format("gamma: {} {}, {} {}\n", r.target_arch, gamma_text(r.gamma_target),
                                 r.reference_arch, gamma_text(r.gamma_reference));
  if (note.ran) {
    head += fmt::format("bootstrap: {} resamples of the {} cells of {} ({}), seed {}; 2.5–97.5 percentiles\n",
                        note.resamples, note.cells, o.data_path, note.paired ? "paired" : "unpaired", o.seed);
    if (note.failed > 0) {
      head += fmt::format("  {} resamples failed and were left out; first: {}\n", note.failed, note.first_failure);
    }
  }
  doc.text(head + "\nGain by sparsity (rows) and budget (columns):\n\n");
  doc.table(gain_matrix(r, query), Forms::text);
  doc.text("\nDetails (C_ref: budget the reference needs for the target's L*; TPP = 6·D*/F* of each law at the same "
           "C):\n\n");
  doc.table(detail_table(r, note.ran), Forms::text);
  if (!r.domain_entries.empty()) {
    doc.text("\nPer-domain gains (exponents shared from the overall fit, intercepts per domain):\n\n");
    doc.table(domain_table(r), Forms::text);
  }
}

/// The gain's result in every form: its JSON (with "gpu_hours" under --cluster), the text and
/// Markdown blocks, and in CSV one long table of raw numbers.
Document ce_gain_document(const CeGainOptions& o, const GainQuery& query, const GainReport& report,
                          const BootstrapNote& note, const GpuHoursReport& hours) {
  Document doc;
  nlohmann::ordered_json json = report_json(report, o, note);
  if (hours.ran) json["gpu_hours"] = gpu_hours_json(hours, o);
  doc.set_json(std::move(json));
  add_gain_text(doc, report, o, query, note);
  if (hours.ran) add_gpu_hours_text(doc, hours, o);
  doc.table(csv_table(report, hours.ran ? &hours : nullptr), Forms::csv);
  return doc;
}

void run_ce_gain(const CeGainOptions& o) {
  check_budget_and_sparsity_lists(o.budgets, o.sparsities);
  const CoefficientsFile target = read_law(o.target_path);
  const CoefficientsFile reference = read_law(o.reference_path);
  warn_extrapolation(target, o.target_path, o.budgets);
  warn_extrapolation(reference, o.reference_path, o.budgets);
  const GainQuery query{o.budgets, o.sparsities};
  BootstrapNote note;
  // The files alone first, so that a gain that does not exist is reported as the files' problem.
  GainReport report = gain_report(law_from_file(target), law_from_file(reference), query);
  if (!o.data_path.empty()) report = run_with_data(o, target, reference, query, note);
  GpuHoursReport hours;
  if (o.cluster.given()) hours = gpu_hours_report(o, report);
  print(ce_gain_document(o, query, report, note, hours), o.format);
}

/// Most bootstrap resamples (docs/reliability.md): each refits both laws (a few ms), so 20,000 is
/// minutes of work, shown as progress on a terminal; intervals stop improving long before.
constexpr std::size_t max_resamples = 20000;

void add_ce_gain_command(CLI::App& app) {
  auto options = std::make_shared<CeGainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ce-gain", "Compute-efficiency gain G = 1 − C_tgt/C_ref of a target law over a reference (docs/scaling.md)");
  cmd->add_option("--target", options->target_path, "Coefficients JSON of the target architecture")->required();
  cmd->add_option("--reference", options->reference_path, "Coefficients JSON of the reference architecture")
      ->required();
  add_budget_sparsity_options(*cmd, *options, "Target budgets in FLOPs, comma-separated");
  CLI::Option* data = cmd->add_option(
      "--bootstrap", options->data_path,
      "Loss CSV the laws were fitted on: bootstrap intervals over its cells, and per-domain gains");
  cmd->add_option("--target-arch", options->target_arch, "Target's arch in the CSV (default: the target file's)")
      ->needs(data);
  cmd->add_option("--reference-arch", options->reference_arch,
                  "Reference's arch in the CSV (default: the reference file's)")
      ->needs(data);
  cmd->add_option("--resamples", options->resamples, "Bootstrap resamples B (0: per-domain gains only)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{max_resamples}))
      ->needs(data);
  cmd->add_option("--seed", options->seed, "Bootstrap seed (results are identical for any --threads)")
      ->capture_default_str()
      ->check(unsigned_decimal(UINT64_MAX))
      ->needs(data);
  cmd->add_option("--threads", options->threads, "Bootstrap threads (0: all hardware threads)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1024u))
      ->needs(data);
  add_format_option(*cmd, options->format, all_formats());
  add_cluster_rank_options(*cmd, options->cluster);
  add_calibration_options(*cmd, options->calibration,
                          "Calibration profile (docs/calibration.md) to time both configs on the cluster (with --cluster)");
  add_workload_option(*cmd, options->workload,
                      "Workload JSON of the cluster timing and of F (with --cluster; default: the paper's)");
  cmd->add_option("--target-config", options->target_config_path,
                  "Config of the target architecture to time on the cluster (with --cluster)");
  cmd->add_option("--reference-config", options->reference_config_path,
                  "Config of the reference architecture to time on the cluster (with --cluster)");
  cmd->callback([options, cmd] {
    check_cluster_rank_options(*cmd);
    check_option_needs(*cmd, "--cluster", {"--target-config", "--reference-config"},
                       "the GPU-hours need each architecture's time per FLOP at its best layout");
    for (const char* option : {"--calibration", "--workload", "--target-config", "--reference-config"}) {
      check_option_needs(*cmd, option, {"--cluster"}, "it is used only for the GPU-hours on a cluster");
    }
    parse_budget_sparsity_lists(*options);
    run_ce_gain(*options);
  });
}

const CommandRegistration ce_gain_registration{"ce-gain", 52, &add_ce_gain_command};

}  // namespace
}  // namespace budget::cli
