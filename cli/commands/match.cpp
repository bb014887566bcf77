// budget-match --baseline CFG.json [--loop first-last | --span-fraction 0.5] [--repeats 2]
//              [--workload W.json] [--constraints C.json] [--free-shapes] [--order proportions|tightest]
//              [--top N] [--format ...] [--out FILE [--out-row N]]
//              [--calibration P.json [--rank-by budget|time] [--max-time-ratio R]]
//              [--cluster C.json --gpus N --rank-by time [--nodes K] [--global-batch-tokens T | --megatron-args F]]
// The main job: the looped configs matching a baseline on FLOPs, parameters and KV cache.

#include <algorithm>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "budget/kernel_shapes.hpp"
#include "budget/export.hpp"
#include "budget/match.hpp"
#include "budget/match_outcome.hpp"
#include "budget/calibration.hpp"
#include "budget/cluster_match.hpp"
#include "budget/layout_search.hpp"
#include "budget/megatron_args.hpp"
#include "budget/time_rank.hpp"
#include "budget/version.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/cluster_rank.hpp"
#include "cluster_options.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "config_export.hpp"
#include "budget_render/match.hpp"
#include "budget_render/match_outcome.hpp"
#include "budget_render/megatron.hpp"
#include "output_file.hpp"
#include "options.hpp"
#include "output_format.hpp"
#include "budget_render/step_time.hpp"

namespace budget::cli {
namespace {

struct MatchOptions {
  std::string baseline_path;
  LoopOptions loop;
  WorkloadOption workload;
  std::string constraints_path;
  int top = 5;
  OutputFormat format = OutputFormat::table;
  std::string out_path;
  std::string out_format = "native";
  int out_row = 1;                 // --out-row: which row --out writes (1-based)
  bool free_shapes = false;        // --free-shapes: ShapeSpace::free
  std::string order;               // --order: empty keeps the constraints' (default proportions)
  bool explain = false;
  CalibrationOptions calibration;
  KernelOptions kernels;           // --gpu, --precision (and --attention-backend of calibration)
  std::string rank_by = "budget";
  double max_time_ratio = 0;  // 0: no cap
  bool timings = false;
  std::int64_t max_structures = 0;  // 0: the constraints' (default MatchConstraints::default_max_structures)
  std::int64_t max_work = 0;
  std::int64_t align = 0;  // 0: any shape; N: only multiples of N (kernel_shapes.hpp)
  bool count_lm_head = false;  // MatchConstraints::count_lm_head
  ClusterRankOptions cluster;
};

/// Everything the search reads, loaded and checked from the options.
struct MatchInputs {
  SourcedConfig baseline;
  Workload workload;
  MatchConstraints constraints;
  LoopSpec loop;
  std::optional<TimeModel> model;
  TimeRankOptions time_options;
  std::optional<ClusterSpec> cluster;  ///< with --cluster
  LayoutSearchOptions search_options;  ///< with --cluster
  std::optional<MegatronRun> megatron;  ///< with --cluster --megatron-args: what the file gave
  /// With the portable set: the same request over the trainable shapes (MatchRequest::trainable).
  std::optional<MatchConstraints> trainable;
};

Table alignment_table(const std::vector<AlignmentOption>& options, const TimeAccuracy* accuracy) {
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
    const double half_width = accuracy != nullptr ? accuracy->ratio_half_width(a.time_ratio) : 0.0;
    t.add_row({a.description, percent(a.max_deviation, 2), time_ratio_text(a.time_ratio, half_width),
               std::to_string(c.hidden_size),
               heads_text(c.attention), ffn_text(c.ffn), a.pareto ? "yes" : ""});
  }
  return t;
}

MatchInputs load_match_inputs(const MatchOptions& o) {
  MatchInputs in{load_sourced_config(o.baseline_path), o.workload.load(), {}, {}, {}, {}, {}, {}, {}, {}};
  const std::optional<KernelTarget> kernels = o.kernels.target(
      o.calibration, o.cluster.given() ? o.cluster.load().gpu_name : std::string(), o.cluster.megatron_args,
      o.cluster.bridge_config);
  const ShapeSpace shapes = o.kernels.space(o.free_shapes, kernels);
  const auto constraints_in = [&](ShapeSpace space) {
    return o.constraints_path.empty() ? default_constraints(in.baseline.config, space, kernels)
                                      : load_constraints(o.constraints_path, in.baseline.config, space, kernels);
  };
  in.constraints = constraints_in(shapes);
  if (in.constraints.shapes == ShapeSpace::portable) in.trainable = constraints_in(ShapeSpace::trainable);
  if (!o.order.empty()) in.constraints.order = o.order == "tightest" ? MatchOrder::tightest : MatchOrder::proportions;
  if (o.max_structures > 0) in.constraints.max_structures = o.max_structures;
  if (o.max_work > 0) in.constraints.max_work = o.max_work;
  if (o.count_lm_head) in.constraints.count_lm_head = true;
  if (o.align > 0) {
    try {
      in.constraints = aligned_constraints(in.constraints, o.align);
    } catch (const Error& e) {
      // e.path() names the search variable whose range holds no multiple (kernel_shapes.cpp).
      throw Error(e.message() + "; choose a smaller --align", "--align", e.path());
    }
  }
  in.loop = o.loop.spec();
  if (o.calibration.given()) {
    // The team's recipe (--megatron-args: FP8, gradient bytes) times every candidate, as it prices their
    // memory; without it --precision's FP8 recipe (NVFP4 GEMMs are not timed: bf16's).
    TrainingRecipe recipe;
    if (o.cluster.given() && !o.cluster.megatron_args.empty()) {
      recipe = o.cluster.training_recipe();
    } else if (kernels) {
      recipe.fp8 = fp8_recipe_of(kernels->precision);
    }
    const std::optional<MegatronKernelOptions> graphs = o.cluster.cuda_graphs();  // none without a recipe file
    in.model = o.calibration.load(recipe, kernels, graphs ? &*graphs : nullptr);
  } else if (o.rank_by != "budget" || o.max_time_ratio > 0) {
    throw_option_dependency_error(o.rank_by != "budget" ? "--rank-by" : "--max-time-ratio",
                                  "--rank-by time and --max-time-ratio need --calibration P.json (a profile to "
                                  "predict time from)");
  }
  in.time_options.rank_by = o.rank_by == "time" ? RankBy::time : RankBy::budget;
  if (o.max_time_ratio > 0) in.time_options.max_time_ratio = o.max_time_ratio;
  in.time_options.top_n = o.top;
  // The intervals printed beside time ratios and the ranking's equal band (time_rank.hpp).
  if (in.model) in.time_options.accuracy = time_accuracy(in.model->profile(), in.model->options());
  if (o.cluster.given()) {
    if (o.rank_by != "time") {
      throw_option_dependency_error("--cluster",
                                    "--cluster ranks the equally matched candidates by time on the cluster; give "
                                    "--rank-by time");
    }
    if (o.max_time_ratio > 0) {
      throw_option_dependency_error("--max-time-ratio",
                                    "--max-time-ratio caps the single-GPU time ratio; it is not combined with "
                                    "--cluster's ranking");
    }
    in.cluster = o.cluster.load();
    in.search_options = o.cluster.search_options(in.workload, in.baseline.config, &in.megatron);
  }
  return in;
}

/// The match request of the options (the model, if any, is the one in `in`).
MatchRequest match_request(const MatchOptions& o, const MatchInputs& in) {
  MatchRequest request;
  request.top = o.top;
  request.model = in.model ? &*in.model : nullptr;
  request.time_options = in.time_options;
  request.explain = o.explain;
  request.with_aligned_alternative = o.align == 0;
  request.cluster = in.cluster ? &*in.cluster : nullptr;
  request.cluster_search = in.search_options;
  request.trainable = in.trainable;
  return request;
}

/// The search (match_outcome()), its library errors given the option or file they came from.
MatchOutcome run_search(const MatchOptions& o, const MatchInputs& in, const MatchRequest& request) {
  try {
    return match_outcome(in.baseline.config, in.loop, in.workload, in.constraints, request);
  } catch (const Error& e) {
    if (e.source().empty() && e.path().rfind("/loop", 0) == 0) throw Error(e.message(), "--loop");
    if (e.source() == "cluster") throw Error(e.message(), "--cluster", e.path());
    if (e.source().empty()) {
      throw e.with_source(o.constraints_path.empty() ? "default constraints of " + o.baseline_path : o.constraints_path);
    }
    throw;
  }
}

/// Which candidates fall off the fused kernels' full-rate path, and the best candidate that does
/// not (kernel_shapes.hpp; docs/matching.md, "Kernel-ready shapes").
std::string kernel_path_lines(const MatchOutcome& m) {
  // Rows with the same shapes off the path share one line ("#1, #2 are off ...: head_dim 84 ...").
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // reasons, rows
  for (std::size_t i = 0; i < m.result.candidates.size(); ++i) {
    const std::vector<std::string> off = off_kernel_path(m.result.candidates[i].config);
    if (off.empty()) continue;
    const std::string reasons = fmt::format("{}", fmt::join(off, "; "));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == reasons; });
    if (it == groups.end()) it = groups.insert(groups.end(), {reasons, {}});
    it->second.push_back(fmt::format("#{}", i + 1));
  }
  std::string out;
  for (const auto& [reasons, rows] : groups) {
    out += fmt::format("{} {} off the fused kernels' full-rate path: {}\n", fmt::join(rows, ", "),
                       rows.size() == 1 ? "is" : "are", reasons);
  }
  if (!m.aligned) return out;
  if (!m.aligned->candidate) return out + "aligned alternative: none (" + m.aligned->reason + ")\n";
  const Candidate& a = *m.aligned->candidate;
  const auto& d = a.deviation;
  return out + fmt::format("aligned alternative (every shape a multiple of {}, head dims <= {}; --align {} searches only "
                           "these): max dev {}, FLOPs {:+.2f}%, params {:+.2f}%, KV {:+.2f}%, hidden {}, heads {}, "
                           "experts {}\n",
                           m.aligned->multiple, max_fused_head_dim, m.aligned->multiple, percent(d.max_abs(), 2),
                           100 * d.flops, 100 * d.params, 100 * d.kv, a.config.hidden_size,
                           heads_text(a.config.attention), ffn_text(a.config.ffn));
}

/// The equally matched candidates the cluster ranking passed over: no layout on the GPUs given fits.
std::string cluster_dropped_lines(const MatchOutcome& m) {
  if (m.cluster_dropped.empty()) return "";
  std::string out = "\nDropped as not trainable on these GPUs (no layout on the GPUs given fits):\n";
  for (const ClusterDropped& d : m.cluster_dropped) {
    out += "  " + cluster_dropped_line(d) + "\n";
  }
  return out;
}

/// The "time ×" legend under the candidates table (aligned text only).
std::string time_legend(const MatchOptions& o, const MatchInputs& in, const TimedMatch& timed) {
  std::string accuracy;
  if (const auto& a = in.time_options.accuracy) {
    const int d = time_ratio_decimals(timed.fastest_ratio_half_width);
    accuracy = fmt::format("time ± from the {}\n", a->source);
    if (o.rank_by == "time" && timed.equal_within_interval > 0) {
      accuracy += fmt::format(
          "candidates within ±{:.{}f} of the fastest are equal within the model's accuracy: {} of them, ordered by "
          "match quality\n",
          timed.fastest_ratio_half_width, d, timed.equal_within_interval);
    }
    if (in.time_options.max_time_ratio) {
      accuracy += fmt::format(
          "--max-time-ratio {:.3f}: a candidate is dropped only when its ratio minus its ± exceeds the cap ({} kept "
          "above the cap but within their ±)\n",
          o.max_time_ratio, timed.above_cap_within_interval);
    }
  }
  return fmt::format(
      "time ×: predicted time per token / the baseline's at matched work (divided by the FLOPs ratio: a "
      "candidate gains nothing by computing less) ({}; {} tokens/step; baseline {} per token). Ranked by "
      "{}{}; {} candidates timed, {} equally matched{}\n",
      profile_label(*in.model), grouped(timed.baseline_time.tokens_per_step),
      si(timed.baseline_time.seconds_per_token, "s"),
      o.rank_by == "time" ? "predicted time among the equally matched" : "budget",
      in.time_options.max_time_ratio ? fmt::format(", capped at {:.3f}×", o.max_time_ratio) : "", timed.considered,
      timed.within_tolerance, timed.dropped_by_cap > 0 ? fmt::format(", {} over the cap", timed.dropped_by_cap) : "") +
         accuracy;
}

/// What --megatron-args gave the cluster ranking, as `layout --megatron-args` lists it.
nlohmann::ordered_json megatron_args_json(const MatchOptions& o, const MegatronRun& run) {
  return render::megatron_read_json(run, o.cluster.megatron_args, "baseline");
}

std::string megatron_args_lines(const MatchOptions& o, const MegatronRun& run, const Workload& workload) {
  const std::vector<render::MegatronNote> notes = render::megatron_notes(run, "baseline");
  return fmt::format("The team's {} ({}): {}\n{}\nattention: {}\n\n", render::megatron_source_kind(run),
                     printable_text(o.cluster.megatron_args), render::note_line(notes[1]),
                     render::note_line(notes[2]), megatron_attention(run, workload).says);
}

Document match_document(const MatchOptions& o, const MatchInputs& in, const MatchRequest& request,
                        const MatchOutcome& m) {
  Document doc;
  if (o.format == OutputFormat::json) {
    nlohmann::ordered_json out = match_outcome_json(m, in.loop, in.workload, request, o.timings);
    if (in.megatron && out.contains("cluster")) out["cluster"]["megatron_args"] = megatron_args_json(o, *in.megatron);
    doc.set_json(std::move(out));
    return doc;
  }
  const std::vector<double> ratios = m.timed ? m.timed->time_ratios : std::vector<double>{};
  const TimeAccuracy* accuracy = in.time_options.accuracy ? &*in.time_options.accuracy : nullptr;
  doc.text(match_text(m.result, in.loop, in.workload, ratios, accuracy), Forms::table);
  doc.text(match_markdown(m.result, in.loop, ratios, accuracy), Forms::markdown);
  if (m.timed) doc.text(time_legend(o, in, *m.timed) + one_gpu_fit_lines(m), Forms::table);
  doc.text(kernel_path_lines(m), Forms::text);
  doc.text(native_reach_text(m), Forms::text);
  if (m.cluster) {
    std::vector<ArchConfig> configs;
    for (const Candidate& c : m.result.candidates) configs.push_back(c.config);
    doc.text(partial_ranking_note(*m.cluster), Forms::text);
    doc.text(cluster_ranking_heading(*m.cluster, *in.cluster, in.search_options), Forms::text);
    if (in.megatron) doc.text(megatron_args_lines(o, *in.megatron, in.workload), Forms::text);
    doc.table(cluster_ranking_table(*m.cluster, configs, in.baseline.config), Forms::all);
    doc.text(cluster_ranking_differences(*m.cluster), Forms::text);
    if (!m.cluster->candidates.empty() && m.cluster->candidates.front().found) {
      doc.text("\nthe fastest candidate's " + render::cost_validation_text(m.cluster->candidates.front().best.time), Forms::text);
    }
    doc.text(cluster_dropped_lines(m), Forms::text);
    doc.text(min_headroom_footer(in.search_options), Forms::text);
  }
  if (o.explain) {
    doc.text("\nWhich constraint binds: the best largest deviation with each constraint alone relaxed\n\n", Forms::table);
    doc.text("\n", Forms::markdown);
    doc.table(sensitivity_table(m.result, m.sensitivity), Forms::text);
  }
  if (o.explain && in.model) {
    doc.text("\nWhat aligning dims costs in budget deviation and saves in predicted time (each row: the candidate "
             "chosen under that requirement; Pareto: no other row has both a smaller deviation and a smaller time "
             "ratio)\n\n");
    doc.table(alignment_table(m.alignment, accuracy), Forms::text);
  }
  return doc;
}

/// --out FILE: row --out-row (default 1) as a config in --out-format (an HF baseline's other keys
/// kept).
void write_best_candidate(const MatchOptions& o, const MatchInputs& in, const MatchResult& result) {
  if (static_cast<std::size_t>(o.out_row) > result.candidates.size()) {
    throw Error(fmt::format("row {} is not shown: the match has {} row{} (raise --top to show more)", o.out_row,
                            result.candidates.size(), result.candidates.size() == 1 ? "" : "s"),
                "--out-row");
  }
  ExportOptions export_options;
  export_options.hf_template = in.baseline.hf_text;
  export_options.hf_template_source = o.baseline_path;
  export_options.seq_length = in.workload.seq_len;  // Megatron's --seq-length, torchtitan's RoPE context
  write_exported_config(result.candidates[static_cast<std::size_t>(o.out_row - 1)].config,
                        parse_export_target(o.out_format, "--out-format"), export_options, o.out_path);
  if (o.format != OutputFormat::json) std::cerr << "wrote row #" << o.out_row << " to " << printable_text(o.out_path) << "\n";
}

void run_match(const MatchOptions& o) {
  const MatchInputs inputs = load_match_inputs(o);
  const MatchRequest request = match_request(o, inputs);
  const MatchOutcome outcome = run_search(o, inputs, request);
  print(match_document(o, inputs, request, outcome), o.format);
  // A partial cluster ranking whose finished candidates were all dropped is partial, not infeasible:
  // the others were not reached.
  const bool partial = outcome.cluster && outcome.cluster->partial;
  if (!outcome.result.summary.feasible && !partial) throw CommandExit{exit_infeasible};
  if (partial) {
    // The rows are the best of the candidates finished: said above, and no --out written from them.
    if (o.format == OutputFormat::csv) std::cerr << partial_ranking_note(*outcome.cluster);
    if (!o.out_path.empty()) std::cerr << "budget-match: " << o.out_path << " not written: the ranking is partial\n";
    throw CommandExit{exit_partial};
  }
  if (!o.out_path.empty()) write_best_candidate(o, inputs, outcome.result);
}

void add_match_options(CLI::App& app) {
  auto o = std::make_shared<MatchOptions>();
  auto* baseline = app.add_option("--baseline", o->baseline_path,
                 "Match this baseline config (native JSON or a Hugging Face config.json): print the looped configs that lock its training "
                 "FLOPs, non-embedding parameters and KV cache");
  add_loop_options(app, o->loop);
  add_workload_option(app, o->workload);
  app.add_option("--constraints", o->constraints_path, "Constraints JSON (docs/matching.md)");
  app.add_flag("--free-shapes", o->free_shapes,
               "Search the whole lattice (the exhaustive space before issue 30: head dims multiples of 4 up to 2x the "
               "baseline's, experts multiples of 8, any proportions) instead of the default trainable shapes (without "
               "--gpu the portable set: head dims 64, 128, 256 and GEMM widths every kernel target runs natively; "
               "with --gpu the target's shapes; expert counts keeping the baseline's expert-parallel degrees, query "
               "and expert widths within 2x of its proportions); constraints key \"free_shapes\"");
  app.add_option("--order", o->order,
                 "proportions (default): row #1 is the equally matched shape nearest the baseline's proportions; "
                 "tightest: the tightest match first (constraints key \"order\")")
      ->check(CLI::IsMember({"proportions", "tightest"}));
  app.add_option("--top", o->top, "How many candidates to print (default 5)")->check(CLI::Range(1, 1000));
  add_format_option(app, o->format, all_formats());
  auto* out = app.add_option("--out", o->out_path, "Write the best candidate as a config to this file (see --out-format)")
                  ->check(output_path());
  add_export_target_option(app, "out-format", o->out_format,
                           "Format of --out: native (default), hf, megatron, torchtitan, torch (docs/export.md)")
      ->needs(out);
  app.add_option("--out-row", o->out_row, "Which row --out writes (default 1; a row of the table: at most --top)")
      ->check(CLI::Range(1, 1000))
      ->needs(out);
  app.add_option("--max-structures", o->max_structures,
                 fmt::format("Refuse search spaces with more structures than this (default {}; docs/reliability.md)",
                             MatchConstraints::default_max_structures))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--max-work", o->max_work,
                 fmt::format("Stop a search that needs more work units than this (default {}; docs/reliability.md)",
                             MatchConstraints::default_max_work))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 50));
  app.add_option("--align", o->align,
                 "Search only kernel-ready shapes: hidden size, head dim (<= 256), expert/dense and shared widths and "
                 "kv_lora_rank multiples of N (8: the fused kernels' full-rate path; docs/matching.md)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
  app.add_flag("--count-lm-head", o->count_lm_head,
               "Match F with the LM head's training FLOPs in it (both figures are shown; constraints file key "
               "\"count_lm_head\"; docs/matching.md)");
  app.add_flag("--timings", o->timings,
               "Add the search's wall-clock time to the JSON summary (\"seconds\"; off by default so that outputs "
               "are byte-identical across runs)");
  app.add_flag("--explain", o->explain,
               "Also show which constraint binds: the best deviation with each constraint alone relaxed (with "
               "--calibration: and what aligning head_dim/hidden/expert width to 8, 16, 64 costs and saves)");
  add_calibration_options(app, o->calibration,
                          "Calibration profile (docs/calibration.md): show each candidate's predicted time ratio to "
                          "the baseline",
                          true);
  add_kernel_options(app, o->kernels);
  app.add_option("--rank-by", o->rank_by,
                 "budget (default) or time: rank the equally matched candidates by predicted time (needs --calibration)")
      ->check(CLI::IsMember({"budget", "time"}));
  app.add_option("--max-time-ratio", o->max_time_ratio,
                 "Drop candidates predicted slower than R × the baseline per token (needs --calibration)")
      ->check(positive_real(1e300));
  add_cluster_rank_options(app, o->cluster);
  app.callback([&app, o, baseline] {
    if (!app.get_subcommands().empty()) return;
    if (baseline->count() == 0) return;  // main() prints the help
    check_cluster_rank_options(app);
    if (o->format == OutputFormat::csv && !o->cluster.given()) {
      throw_option_dependency_error(
          "--format", "--format csv prints the cluster ranking table; it needs --cluster (use table, markdown or json)");
    }
    if (o->baseline_path.empty()) throw Error("the file name is empty; give the path of a baseline config", "--baseline");
    default_calibration_from_cluster(o->cluster, o->calibration.path);
    run_match(*o);
  });
}

const CommandRegistration match_registration{"(match)", 0, &add_match_options};

}  // namespace
}  // namespace budget::cli
