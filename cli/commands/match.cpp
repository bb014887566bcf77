// budget-match --baseline CFG.json [--loop first-last | --span-fraction 0.5] [--repeats 2]
//              [--workload W.json] [--constraints C.json] [--top N] [--format ...] [--out FILE]
// The main job: the looped configs matching a baseline on FLOPs, parameters and KV cache.

#include <fstream>
#include <iostream>
#include <memory>
#include <regex>

#include <fmt/format.h>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/match.hpp"
#include "budget/version.hpp"
#include "budget_render.hpp"
#include "command_registry.hpp"
#include "match_render.hpp"
#include "output_format.hpp"

namespace budget::cli {
namespace {

struct MatchOptions {
  std::string baseline_path;
  std::string loop_range;
  double span_fraction = 0.5;
  std::int64_t repeats = 2;
  std::string workload_path;
  std::string constraints_path;
  int top = 5;
  OutputFormat format = OutputFormat::table;
  std::string out_path;
  bool explain = false;
};

LoopSpec loop_spec(const MatchOptions& o) {
  LoopSpec spec;
  spec.repeats = o.repeats;
  spec.span_fraction = o.span_fraction;
  if (!o.loop_range.empty()) {
    static const std::regex pattern(R"(^\s*(\d+)\s*[-:]\s*(\d+)\s*$)");
    std::smatch m;
    if (!std::regex_match(o.loop_range, m, pattern)) {
      throw Error(fmt::format("value \"{}\" is not a layer range; allowed: FIRST-LAST, 1-based inclusive (e.g. 4-9)",
                              o.loop_range),
                  "--loop");
    }
    spec.first = std::stoll(m[1]);
    spec.last = std::stoll(m[2]);
    if (spec.first < 1 || spec.last < spec.first) {
      throw Error(fmt::format("layer range {}–{} is empty or starts below 1", spec.first, spec.last), "--loop");
    }
  }
  return spec;
}

void run_match(const MatchOptions& o) {
  const ArchConfig baseline = load_arch_config(o.baseline_path);
  const Workload workload = o.workload_path.empty() ? paper_workload() : load_workload(o.workload_path);
  MatchConstraints constraints = default_constraints(baseline);
  if (!o.constraints_path.empty()) constraints = load_constraints(o.constraints_path, constraints);
  const LoopSpec loop = loop_spec(o);
  MatchResult result;
  try {
    result = match(baseline, loop, workload, constraints, o.top);
  } catch (const Error& e) {
    if (e.source().empty() && e.path().rfind("/loop", 0) == 0) throw Error(e.message(), "--loop");
    if (e.source().empty()) throw e.with_source(o.constraints_path.empty() ? "constraints" : o.constraints_path);
    throw;
  }
  std::vector<ConstraintSensitivity> sensitivity;
  if (o.explain) sensitivity = constraint_sensitivity(baseline, loop, workload, constraints);
  switch (o.format) {
    case OutputFormat::json: {
      nlohmann::ordered_json out = match_json(result, loop, workload);
      if (o.explain) out["sensitivity"] = sensitivity_json(sensitivity);
      std::cout << out.dump(2) << "\n";
      break;
    }
    case OutputFormat::markdown:
      std::cout << match_markdown(result, loop);
      if (o.explain) std::cout << "\n" << sensitivity_table(result, sensitivity).render_markdown();
      break;
    default:
      std::cout << match_text(result, loop, workload);
      if (o.explain) {
        std::cout << "\nWhich constraint binds: the best largest deviation with each constraint alone relaxed\n\n"
                  << sensitivity_table(result, sensitivity).render_text();
      }
      break;
  }
  if (!result.summary.feasible) throw CommandExit{exit_infeasible};
  if (!o.out_path.empty()) {
    std::ofstream out(o.out_path);
    if (!out) throw Error("cannot open file for writing", o.out_path);
    out << arch_config_to_json(result.candidates.front().config) << "\n";
    if (!out) throw Error("error while writing the file", o.out_path);
    if (o.format != OutputFormat::json) std::cerr << "wrote the best candidate to " << o.out_path << "\n";
  }
}

void add_match_options(CLI::App& app) {
  auto o = std::make_shared<MatchOptions>();
  app.add_option("--baseline", o->baseline_path,
                 "Match this baseline config (native JSON): print the looped configs that lock its training "
                 "FLOPs, non-embedding parameters and KV cache");
  auto* loop = app.add_option("--loop", o->loop_range, "Loop layers FIRST-LAST (1-based, inclusive)");
  app.add_option("--span-fraction", o->span_fraction,
                 "Loop the centred span of round(f·L) layers (default 0.5: the middle half)")
      ->check(CLI::Range(0.0, 1.0))
      ->excludes(loop);
  app.add_option("--repeats", o->repeats, "Times the loop runs (default 2)")->check(CLI::Range(1, 1024));
  app.add_option("--workload", o->workload_path, "Workload JSON (default: the paper's)");
  app.add_option("--constraints", o->constraints_path, "Constraints JSON (docs/matching.md)");
  app.add_option("--top", o->top, "How many candidates to print (default 5)")->check(CLI::Range(1, 1000));
  add_format_option(app, o->format,
                    {{"table", OutputFormat::table}, {"json", OutputFormat::json}, {"markdown", OutputFormat::markdown}});
  app.add_option("--out", o->out_path, "Write the best candidate as a native config to this file");
  app.add_flag("--explain", o->explain,
               "Also show which constraint binds: the best deviation with each constraint alone relaxed");
  app.callback([&app, o] {
    if (!app.get_subcommands().empty()) return;
    if (o->baseline_path.empty()) return;  // main() prints the help
    run_match(*o);
  });
}

const CommandRegistration registration{"(match)", 0, &add_match_options};

}  // namespace
}  // namespace budget::cli
