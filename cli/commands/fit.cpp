// budget-match fit DATA.csv [--arch NAME] [--delta 1e-3] [--out COEFFS.json] [--format table|json|markdown]
// Fits L(F, S, D) = E + A·(1−S)^b·F^(−a) + K·D^(−c) to every architecture of a loss CSV (or one),
// with per-domain intercepts when the data has domains (docs/scaling.md).

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "budget/scaling_data.hpp"
#include "budget/scaling_fit.hpp"
#include "budget/scaling_plan.hpp"
#include "budget/text_escape.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"
#include "output_format.hpp"
#include "plots.hpp"
#include "budget_render/fit.hpp"
#include "budget_render/table.hpp"

namespace budget::cli {
namespace {

constexpr int fit_schema_version = 1;

struct FitCommandOptions {
  std::string data_path;
  std::string arch;
  double delta = 1e-3;
  std::string out_path;
  std::string plot_path;
  OutputFormat format = OutputFormat::table;
};

std::string number(double value) { return fmt::format("{:.5g}", value); }

nlohmann::ordered_json coefficients_json(const ScalingCoefficients& k) {
  return {{"E", k.E}, {"A", k.A}, {"K", k.K}, {"a", k.a}, {"b", k.b}, {"c", k.c}};
}

nlohmann::ordered_json arch_json(const ArchLaw& law, bool parameters_column) {
  const ScalingCoefficients& k = law.overall.coefficients;
  nlohmann::ordered_json out{{"arch", law.arch},
                             {"coefficients", coefficients_json(k)},
                             {"gamma", frontier_exponent(k)},
                             {"fit_summary", render::fit_summary_json(law.overall.summary)}};
  // Chinchilla's L(N, D) = E + A_N·N^(−α) + B·D^(−β) with F = 6N: A_N = A·6^(−a).
  if (parameters_column) out["chinchilla_A_N"] = k.A * std::pow(6.0, -k.a);
  nlohmann::ordered_json domains = nlohmann::ordered_json::array();
  for (const auto& d : law.domains) {
    domains.push_back({{"domain", d.domain},
                       {"coefficients", coefficients_json(d.fit.coefficients)},
                       {"fit_summary", render::fit_summary_json(d.fit.summary)}});
  }
  if (!law.domains.empty()) out["domains"] = domains;
  return out;
}

Table coefficients_table(const std::vector<ArchLaw>& laws) {
  Table t;
  for (const char* header : {"arch", "points", "E", "A", "K", "a", "b", "c", "gamma", "RMSE", "best starts"}) {
    t.add_column(header, std::string(header) == "arch" ? Align::left : Align::right);
  }
  for (const auto& law : laws) {
    const ScalingCoefficients& k = law.overall.coefficients;
    const FitSummary& s = law.overall.summary;
    t.add_row({law.arch, std::to_string(s.points), number(k.E), number(k.A), number(k.K), number(k.a),
               number(k.b) + (s.b_fixed ? " (held)" : ""), number(k.c), fmt::format("{:.4f}", frontier_exponent(k)),
               percent(s.rmse, 3), fmt::format("{}/{}", s.starts_at_best, s.starts)});
  }
  return t;
}

Table domains_table(const std::vector<ArchLaw>& laws) {
  Table t;
  for (const char* header : {"arch", "domain", "points", "E", "A", "K", "RMSE"}) {
    t.add_column(header, header[0] == 'a' || header[0] == 'd' ? Align::left : Align::right);
  }
  for (const auto& law : laws) {
    for (const auto& d : law.domains) {
      const ScalingCoefficients& k = d.fit.coefficients;
      t.add_row({law.arch, d.domain, std::to_string(d.fit.summary.points), number(k.E), number(k.A), number(k.K),
                 percent(d.fit.summary.rmse, 3)});
    }
  }
  return t;
}

/// The fits as one result: JSON; the coefficients table with each fit's brief line, Chinchilla's
/// A_N when the data gave N, and the per-domain intercepts (aligned text or Markdown).
Document fit_document(const FitCommandOptions& o, const LossData& data, const std::vector<ArchLaw>& laws) {
  Document doc;
  nlohmann::ordered_json out{{"schema_version", fit_schema_version},
                             {"data", o.data_path},
                             {"huber_delta", o.delta},
                             {"parameters_column", data.parameters_column},
                             {"fits", nlohmann::ordered_json::array()}};
  for (const auto& law : laws) out["fits"].push_back(arch_json(law, data.parameters_column));
  doc.set_json(std::move(out));
  doc.text(fmt::format("Fit of {}: L = E + A·(1−S)^b·F^(−a) + K·D^(−c); sum of Huber(δ = {:g}) on log-loss\n\n",
                       o.data_path, o.delta));
  doc.table(coefficients_table(laws), Forms::text);
  std::string briefs = "\n";
  for (const auto& law : laws) briefs += law.arch + ": " + law.overall.summary.brief() + "\n";
  if (data.parameters_column) {
    briefs += "\nThe data gave N, so F = 6N; in Chinchilla's form L = E + A_N·N^(−a) + K·D^(−c):";
    for (const auto& law : laws) {
      const ScalingCoefficients& k = law.overall.coefficients;
      briefs += fmt::format(" {} A_N = {};", law.arch, number(k.A * std::pow(6.0, -k.a)));
    }
    briefs += "\n";
  }
  doc.text(briefs);
  const bool any_domains = std::any_of(laws.begin(), laws.end(), [](const ArchLaw& l) { return !l.domains.empty(); });
  if (any_domains) {
    doc.text("\nPer-domain intercepts (a, b, c shared from the overall fit):\n\n");
    doc.table(domains_table(laws), Forms::text);
  }
  return doc;
}

/// The path for `arch`'s coefficients: --out itself for one architecture; with several, --out must
/// contain "{arch}", replaced by each name, which must be one path component (no '/', no "..").
std::string out_path_for(const std::string& pattern, const std::string& arch, std::size_t arch_count) {
  const auto placeholder = pattern.find("{arch}");
  if (placeholder == std::string::npos) {
    if (arch_count > 1) {
      throw Error(fmt::format("the data has {} architectures; write one file each with \"{{arch}}\" in the path "
                              "(e.g. coeffs-{{arch}}.json) or choose one with --arch",
                              arch_count),
                  "--out");
    }
    return pattern;
  }
  std::string path = pattern;
  path.replace(placeholder, 6, require_path_component(arch, "{arch}", "--out"));
  return path;
}

/// Stages every coefficient file in `outputs` (renamed with the plot by the caller: all or none).
void write_coefficients(const FitCommandOptions& o, const std::vector<ArchLaw>& laws, budget::OutputFiles& outputs) {
  for (const auto& law : laws) {
    CoefficientsFile file;
    file.arch = law.arch;
    file.source = fmt::format("budget-match fit {}", o.data_path);
    file.coefficients = law.overall.coefficients;
    file.fit_summary_json =
        render::fit_summary_json(law.overall.summary).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const std::string path = out_path_for(o.out_path, law.arch, laws.size());
    outputs.add(path, coefficients_to_json(file));
  }
}

void run_fit(const FitCommandOptions& o) {
  if (!o.plot_path.empty()) check_plot_request(o.plot_path);
  const LossData data = read_loss_csv(o.data_path);
  FitOptions fit_options;
  fit_options.huber_delta = o.delta;
  fit_options.threads = 0;  // the starts on every core (the same result on any count)
  if (const std::string message = fit_options.validation_error(); !message.empty()) throw Error(message, "--delta");

  const std::vector<std::string> names = o.arch.empty() ? architectures(data.points) : std::vector{o.arch};
  if (!o.out_path.empty()) {
    for (const auto& name : names) (void)out_path_for(o.out_path, name, names.size());  // refused before the work
  }
  std::vector<ArchLaw> laws;
  for (const auto& name : names) {
    try {
      laws.push_back(fit_arch_law(points_of_arch(data.points, name, o.data_path), fit_options));
    } catch (const Error& e) {
      throw e.with_source(o.data_path);
    }
  }
  budget::OutputFiles outputs;
  if (!o.out_path.empty()) write_coefficients(o, laws, outputs);
  if (!o.plot_path.empty()) plot_fit_parity(laws, data, o.plot_path, &outputs);
  outputs.commit();

  print(fit_document(o, data, laws), o.format);
}

void add_fit_command(CLI::App& app) {
  auto options = std::make_shared<FitCommandOptions>();
  CLI::App* cmd = app.add_subcommand("fit", "Fit the scaling law L(F, S, D) to measured losses (docs/scaling.md)");
  cmd->add_option("data", options->data_path,
                  "Loss CSV: arch, cell, F or N, [S], D, loss, [domain] (docs/scaling.md)")
      ->required();
  cmd->add_option("--arch", options->arch, "Fit only this architecture (default: every one in the file)");
  cmd->add_option("--delta", options->delta, "Huber delta on log-loss residuals")->capture_default_str();
  cmd->add_option("--out", options->out_path,
                  "Write the coefficients JSON here; with several architectures put {arch} in the path")
      ->check(output_path());
  cmd->add_option("--plot", options->plot_path,
                  "Draw measured against fitted loss into this .svg or .png file (needs gnuplot)")
      ->check(output_path());
  add_format_option(*cmd, options->format, document_formats());
  cmd->callback([options] { run_fit(*options); });
}

const CommandRegistration fit_registration{"fit", 50, &add_fit_command};

}  // namespace
}  // namespace budget::cli
