// budget-match frontier COEFFS.json [COEFFS2.json ...] --C 1e20,1e21,1e22 --S 0.85,0.95,0.97
//                      [--format table|json|markdown|csv] [--plot FILE.svg]
// The compute-optimal frontier of fitted laws: F*, D* = C/F*, L*(C, S) and tokens per parameter
// for each budget and sparsity, γ of each law (docs/scaling.md, "Frontier").

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "budget/scaling_law.hpp"
#include "budget/scaling_plan.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "gnuplot.hpp"
#include "output_file.hpp"
#include "scaling_args.hpp"
#include "output_format.hpp"
#include "budget_render/table.hpp"

namespace budget::cli {
namespace {

constexpr int frontier_schema_version = 1;

struct FrontierCommandOptions : BudgetSparsityLists {  // --C, --S
  std::vector<std::string> coefficient_paths;
  std::string plot_path;
  OutputFormat format = OutputFormat::table;
};

struct Law {
  std::string path;
  CoefficientsFile file;
};


// ---------------------------------------------------------------------------------------------
// Outputs

Table frontier_table(const std::vector<Law>& laws, const FrontierCommandOptions& o, bool raw_numbers) {
  Table t;
  t.add_column("arch", Align::left);
  for (const char* header : {"S", "C", "F*", "N_eq = F*/6", "D*", "L*", "tokens/param"}) t.add_column(header);
  const auto show = [&](double value, const char* unit) {
    return raw_numbers ? fmt::format("{:.6g}", value) : si(value, unit);
  };
  for (const auto& law : laws) {
    for (double S : o.sparsities) {
      for (double C : o.budgets) {
        const FrontierPoint p = compute_optimal(law.file.coefficients, C, S);
        t.add_row({law.file.arch, fmt::format("{:g}", S), fmt::format("{:.3g}", C), show(p.F, "FLOP"),
                   show(p.F / 6.0, ""), show(p.D, ""), fmt::format("{:.4f}", p.loss),
                   fmt::format("{:.1f}", p.tokens_per_parameter)});
      }
    }
    t.add_separator();
  }
  return t;
}

Table exponents_table(const std::vector<Law>& laws, const std::vector<double>& sparsities) {
  Table t;
  t.add_column("arch", Align::left);
  t.add_column("gamma = ac/(a+c)");
  t.add_column("E");
  for (double S : sparsities) t.add_column(fmt::format("P(S={:g})", S));
  for (const auto& law : laws) {
    const ScalingCoefficients& k = law.file.coefficients;
    std::vector<std::string> row{law.file.arch, fmt::format("{:.4f}", frontier_exponent(k)), fmt::format("{:.5g}", k.E)};
    for (double S : sparsities) row.push_back(fmt::format("{:.5g}", frontier_prefactor(k, S)));
    t.add_row(row);
  }
  return t;
}

nlohmann::ordered_json frontier_json(const std::vector<Law>& laws, const FrontierCommandOptions& o) {
  nlohmann::ordered_json out{{"schema_version", frontier_schema_version}, {"laws", nlohmann::ordered_json::array()}};
  for (const auto& law : laws) {
    const ScalingCoefficients& k = law.file.coefficients;
    nlohmann::ordered_json entry{
        {"arch", law.file.arch},
        {"file", law.path},
        {"coefficients", {{"E", k.E}, {"A", k.A}, {"K", k.K}, {"a", k.a}, {"b", k.b}, {"c", k.c}}},
        {"gamma", frontier_exponent(k)},
        {"prefactors", nlohmann::ordered_json::array()},
        {"points", nlohmann::ordered_json::array()}};
    for (double S : o.sparsities) {
      entry["prefactors"].push_back({{"S", S}, {"P", frontier_prefactor(k, S)}});
      for (double C : o.budgets) {
        const FrontierPoint p = compute_optimal(k, C, S);
        entry["points"].push_back({{"C", C}, {"S", S}, {"F", p.F}, {"N_equivalent", p.F / 6.0}, {"D", p.D},
                                   {"loss", p.loss}, {"tokens_per_parameter", p.tokens_per_parameter}});
      }
    }
    out["laws"].push_back(entry);
  }
  return out;
}

/// The frontier as one result: JSON; the exponents and frontier tables (aligned text after the
/// formula line, Markdown); CSV: the frontier table alone, numbers unrounded.
Document frontier_document(const std::vector<Law>& laws, const FrontierCommandOptions& o) {
  Document doc;
  doc.set_json(frontier_json(laws, o));
  doc.text("Compute-optimal frontier: F* = (a·A'·C^c/(c·K))^(1/(a+c)), D* = C/F*, L* = E + P(S)·C^(−γ)\n\n",
           Forms::table);
  doc.table(exponents_table(laws, o.sparsities), Forms::text);
  doc.text("\n", Forms::text);
  doc.table(frontier_table(laws, o, false), Forms::text);
  doc.table(frontier_table(laws, o, true), Forms::csv);
  if (!o.plot_path.empty()) doc.text("\nplot written to " + o.plot_path + "\n", Forms::table);
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Plot through gnuplot

/// The script: one line per law × sparsity over [min C / 10, max C × 10], markers at the budgets.
std::string gnuplot_script(const std::vector<Law>& laws, const FrontierCommandOptions& o) {
  const auto [lo_it, hi_it] = std::minmax_element(o.budgets.begin(), o.budgets.end());
  const double log_lo = std::log10(*lo_it) - 1.0;
  const double log_hi = std::log10(*hi_it) + 1.0;
  std::ostringstream script;
  script << "set logscale x\nset format x '10^{%L}'\nset grid\nset key top right noenhanced\n"
         << "set xlabel 'training compute C = F·D (FLOPs)'\nset ylabel 'compute-optimal loss L*(C, S)'\n"
         << "set title 'Compute-optimal frontiers L*(C, S) = E + P(S)·C^{-γ}'\n";
  std::string plot = "plot ";
  int block = 0;
  for (const auto& law : laws) {
    for (double S : o.sparsities) {
      script << "$line" << block << " << EOD\n";
      for (int i = 0; i <= 200; ++i) {
        const double C = std::pow(10.0, log_lo + (log_hi - log_lo) * i / 200.0);
        script << fmt::format("{:.8e} {:.8e}\n", C, frontier_loss(law.file.coefficients, C, S));
      }
      script << "EOD\n$mark" << block << " << EOD\n";
      for (double C : o.budgets) script << fmt::format("{:.8e} {:.8e}\n", C, frontier_loss(law.file.coefficients, C, S));
      script << "EOD\n";
      plot += fmt::format("{}$line{} with lines lw 2 lc {} title {}, $mark{} with points pt 7 lc {} notitle",
                          block ? ", " : "", block, block + 1,
                          gnuplot_quoted(fmt::format("{}, S = {:g}", law.file.arch, S)), block, block + 1);
      ++block;
    }
  }
  script << plot << "\n";
  return script.str();
}

void plot_frontiers(const std::vector<Law>& laws, const FrontierCommandOptions& o) {
  run_gnuplot(gnuplot_script(laws, o), o.plot_path);
}

void run_frontier(const FrontierCommandOptions& o) {
  if (!o.plot_path.empty()) check_plot_request(o.plot_path);
  check_budget_and_sparsity_lists(o.budgets, o.sparsities);
  std::vector<Law> laws;
  for (const auto& path : o.coefficient_paths) {
    Law law{path, read_coefficients_file(path)};
    validate_coefficients(law.file.coefficients, path);
    warn_extrapolation(law.file, path, o.budgets);
    laws.push_back(std::move(law));
  }
  if (!o.plot_path.empty()) plot_frontiers(laws, o);

  print(frontier_document(laws, o), o.format);
}

void add_frontier_command(CLI::App& app) {
  auto options = std::make_shared<FrontierCommandOptions>();
  CLI::App* cmd = app.add_subcommand("frontier", "Compute-optimal frontier of fitted scaling laws: F*, D*, L*, TPP");
  cmd->add_option("coefficients", options->coefficient_paths, "Coefficients JSON files (from `fit --out`)")
      ->required();
  add_budget_sparsity_options(*cmd, *options, "Training budgets in FLOPs, comma-separated");
  cmd->add_option("--plot", options->plot_path, "Draw the frontiers into this .svg or .png file (needs gnuplot)")
      ->check(output_path());
  add_format_option(*cmd, options->format, all_formats());
  cmd->callback([options] {
    parse_budget_sparsity_lists(*options);
    run_frontier(*options);
  });
}

const CommandRegistration frontier_registration{"frontier", 51, &add_frontier_command};

}  // namespace
}  // namespace budget::cli
