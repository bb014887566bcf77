// budget-match --baseline CFG.json [--loop first-last | --span-fraction 0.5] [--repeats 2]
//              [--workload W.json] [--constraints C.json] [--top N] [--format ...] [--out FILE]
//              [--calibration P.json [--rank-by budget|time] [--max-time-ratio R]]
// The main job: the looped configs matching a baseline on FLOPs, parameters and KV cache.

#include <charconv>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/match.hpp"
#include "budget/calibration.hpp"
#include "budget/time_rank.hpp"
#include "budget/version.hpp"
#include "budget_render.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "config_export.hpp"
#include "match_render.hpp"
#include "output_file.hpp"
#include "output_format.hpp"
#include "time_render.hpp"

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
  std::string out_format = "native";
  bool explain = false;
  std::string calibration_path;
  std::string rank_by = "budget";
  double max_time_ratio = 0;  // 0: no cap
  std::string attention_backend = "auto";
  bool timings = false;
  std::int64_t max_structures = 0;  // 0: the constraints' (default MatchConstraints::default_max_structures)
  std::int64_t max_work = 0;
};

nlohmann::ordered_json alignment_json(const std::vector<AlignmentOption>& options) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& a : options) {
    nlohmann::ordered_json o{{"alignment", a.description}, {"feasible", a.feasible}};
    if (a.feasible) {
      o["max_deviation"] = a.max_deviation;
      o["time_ratio"] = a.time_ratio;
      o["pareto"] = a.pareto;
      o["config"] = config_json(a.candidate->config);
    }
    out.push_back(o);
  }
  return out;
}

Table alignment_table(const std::vector<AlignmentOption>& options) {
  Table t;
  t.add_column("alignment required", Align::left);
  t.add_column("max dev");
  t.add_column("time ×");
  t.add_column("hidden");
  t.add_column("heads×dim (KV)", Align::left);
  t.add_column("experts×width", Align::left);
  t.add_column("Pareto", Align::left);
  for (const auto& a : options) {
    if (!a.feasible) {
      t.add_row({a.description, "infeasible", "", "", "", "", ""});
      continue;
    }
    const auto& c = a.candidate->config;
    t.add_row({a.description, percent(a.max_deviation, 2), time_ratio_text(a.time_ratio), std::to_string(c.hidden_size),
               heads_text(c.attention), ffn_text(c.ffn), a.pareto ? "yes" : ""});
  }
  return t;
}

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
    const auto layer = [&](const std::string& digits) {
      std::int64_t value = 0;
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || value > max_dimension) {
        throw Error(fmt::format("layer {} in \"{}\" is out of range; allowed: layers 1 to {}", digits, o.loop_range,
                                max_dimension),
                    "--loop");
      }
      return value;
    };
    spec.first = layer(m[1]);
    spec.last = layer(m[2]);
    if (spec.first < 1 || spec.last < spec.first) {
      throw Error(fmt::format("layer range {}–{} is empty or starts below 1", spec.first, spec.last), "--loop");
    }
  }
  return spec;
}

void run_match(const MatchOptions& o) {
  const SourcedConfig sourced_baseline = load_sourced_config(o.baseline_path);
  const ArchConfig& baseline = sourced_baseline.config;
  const Workload workload = o.workload_path.empty() ? paper_workload() : load_workload(o.workload_path);
  MatchConstraints constraints = default_constraints(baseline);
  if (!o.constraints_path.empty()) constraints = load_constraints(o.constraints_path, constraints);
  if (o.max_structures > 0) constraints.max_structures = o.max_structures;
  if (o.max_work > 0) constraints.max_work = o.max_work;
  const LoopSpec loop = loop_spec(o);
  std::optional<TimeModel> model;
  if (!o.calibration_path.empty()) {
    model.emplace(load_calibration_profile(o.calibration_path), TimeModelOptions{o.attention_backend});
  } else if (o.rank_by != "budget" || o.max_time_ratio > 0) {
    throw Error("--rank-by time and --max-time-ratio need --calibration P.json (a profile to predict time from)",
                o.rank_by != "budget" ? "--rank-by" : "--max-time-ratio");
  }
  TimeRankOptions time_options;
  time_options.rank_by = o.rank_by == "time" ? RankBy::time : RankBy::budget;
  if (o.max_time_ratio > 0) time_options.max_time_ratio = o.max_time_ratio;
  time_options.top_n = o.top;
  MatchResult result;
  std::optional<TimedMatch> timed;
  try {
    if (model) {
      timed = match_with_time(baseline, loop, workload, constraints, *model, time_options);
      result = timed->result;
    } else {
      result = match(baseline, loop, workload, constraints, o.top);
    }
  } catch (const Error& e) {
    if (e.source().empty() && e.path().rfind("/loop", 0) == 0) throw Error(e.message(), "--loop");
    if (e.source().empty()) {
      throw e.with_source(o.constraints_path.empty() ? "default constraints of " + o.baseline_path : o.constraints_path);
    }
    throw;
  }
  std::vector<ConstraintSensitivity> sensitivity;
  if (o.explain) sensitivity = constraint_sensitivity(baseline, loop, workload, constraints);
  std::vector<AlignmentOption> alignment;
  if (o.explain && model) alignment = alignment_tradeoffs(baseline, loop, workload, constraints, *model, time_options);
  const std::vector<double> ratios = timed ? timed->time_ratios : std::vector<double>{};
  const std::string alignment_title =
      "What aligning dims costs in budget deviation and saves in predicted time (each row: the candidate chosen under "
      "that requirement; Pareto: no other row has both a smaller deviation and a smaller time ratio)";
  switch (o.format) {
    case OutputFormat::json: {
      nlohmann::ordered_json out = match_json(result, loop, workload, o.timings);
      if (timed) {
        out["time"] = {{"profile", profile_label(*model)},
                       {"rank_by", o.rank_by},
                       {"max_time_ratio", timed && time_options.max_time_ratio ? nlohmann::ordered_json(o.max_time_ratio)
                                                                               : nlohmann::ordered_json(nullptr)},
                       {"considered", timed->considered},
                       {"within_tolerance", timed->within_tolerance},
                       {"dropped_by_cap", timed->dropped_by_cap},
                       {"baseline", step_time_json(timed->baseline_time, *model)}};
        for (std::size_t i = 0; i < result.candidates.size(); ++i) {
          out["candidates"][i]["time_ratio"] = timed->time_ratios[i];
          out["candidates"][i]["time"] = step_time_json(timed->candidate_times[i], *model);
        }
      }
      if (o.explain) out["sensitivity"] = sensitivity_json(sensitivity);
      if (o.explain && model) out["alignment"] = alignment_json(alignment);
      std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      break;
    }
    case OutputFormat::markdown:
      std::cout << match_markdown(result, loop, ratios);
      if (o.explain) std::cout << "\n" << sensitivity_table(result, sensitivity).render_markdown();
      if (o.explain && model) std::cout << "\n" << alignment_title << "\n\n" << alignment_table(alignment).render_markdown();
      break;
    default:
      std::cout << match_text(result, loop, workload, ratios);
      if (timed) {
        std::cout << fmt::format(
            "time ×: predicted time per token / the baseline's ({}; {} tokens/step; baseline {} per token). Ranked by "
            "{}{}; {} candidates timed, {} equally matched{}\n",
            profile_label(*model), grouped(timed->baseline_time.tokens_per_step),
            si(timed->baseline_time.seconds_per_token, "s"), o.rank_by == "time" ? "predicted time among the equally matched" : "budget",
            time_options.max_time_ratio ? fmt::format(", capped at {:.3f}×", o.max_time_ratio) : "", timed->considered,
            timed->within_tolerance,
            timed->dropped_by_cap > 0 ? fmt::format(", {} over the cap", timed->dropped_by_cap) : "");
      }
      if (o.explain) {
        std::cout << "\nWhich constraint binds: the best largest deviation with each constraint alone relaxed\n\n"
                  << sensitivity_table(result, sensitivity).render_text();
      }
      if (o.explain && model) std::cout << "\n" << alignment_title << "\n\n" << alignment_table(alignment).render_text();
      break;
  }
  if (!result.summary.feasible) throw CommandExit{exit_infeasible};
  if (!o.out_path.empty()) {
    ExportOptions export_options;  // an HF baseline's other keys are kept in an hf export
    export_options.hf_template = sourced_baseline.hf_text;
    export_options.hf_template_source = o.baseline_path;
    export_options.seq_length = workload.seq_len;  // Megatron's --seq-length, torchtitan's RoPE context
    write_exported_config(result.candidates.front().config, parse_export_target(o.out_format, "--out-format"),
                          export_options, o.out_path);
    if (o.format != OutputFormat::json) std::cerr << "wrote the best candidate to " << o.out_path << "\n";
  }
}

void add_match_options(CLI::App& app) {
  auto o = std::make_shared<MatchOptions>();
  auto* baseline = app.add_option("--baseline", o->baseline_path,
                 "Match this baseline config (native JSON or a Hugging Face config.json): print the looped configs that lock its training "
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
  auto* out = app.add_option("--out", o->out_path, "Write the best candidate as a config to this file (see --out-format)");
  add_export_target_option(app, "out-format", o->out_format,
                           "Format of --out: native (default), hf, megatron, torchtitan (docs/export.md)")
      ->needs(out);
  app.add_option("--max-structures", o->max_structures,
                 fmt::format("Refuse search spaces with more structures than this (default {}; docs/reliability.md)",
                             MatchConstraints::default_max_structures))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--max-work", o->max_work,
                 fmt::format("Stop a search that needs more work units than this (default {}; docs/reliability.md)",
                             MatchConstraints::default_max_work))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 50));
  app.add_flag("--timings", o->timings,
               "Add the search's wall-clock time to the JSON summary (\"seconds\"; off by default so that outputs "
               "are byte-identical across runs)");
  app.add_flag("--explain", o->explain,
               "Also show which constraint binds: the best deviation with each constraint alone relaxed (with "
               "--calibration: and what aligning head_dim/hidden/expert width to 8, 16, 64 costs and saves)");
  app.add_option("--calibration", o->calibration_path,
                 "Calibration profile (docs/calibration.md): show each candidate's predicted time ratio to the baseline");
  app.add_option("--rank-by", o->rank_by,
                 "budget (default) or time: rank the equally matched candidates by predicted time (needs --calibration)")
      ->check(CLI::IsMember({"budget", "time"}));
  app.add_option("--max-time-ratio", o->max_time_ratio,
                 "Drop candidates predicted slower than R × the baseline per token (needs --calibration)")
      ->check(positive_real(1e300));
  app.add_option("--attention-backend", o->attention_backend,
                 "With --calibration: auto (default), cudnn, flash, default or fallback-<name>");
  app.callback([&app, o, baseline] {
    if (!app.get_subcommands().empty()) return;
    if (baseline->count() == 0) return;  // main() prints the help
    if (o->baseline_path.empty()) throw Error("the file name is empty; give the path of a baseline config", "--baseline");
    run_match(*o);
  });
}

const CommandRegistration registration{"(match)", 0, &add_match_options};

}  // namespace
}  // namespace budget::cli
