// budget-match grid [--grid FILE] [--ablation span|repeats|depth] [--cell NAME] [--format ...]
//                   [--constraints C.json] [--free-shapes] [--order proportions|tightest]
//                   [--calibration P.json [--rank-by budget|time] [--max-time-ratio R]]
//                   [--cluster C.json --gpus N --calibration P.json --rank-by time [--global-batch-tokens T]]
// The paper's grid (or any family of baselines) with each cell's matched looped config, in the
// columns of the paper's tables; or one of the paper's three ablations at one cell.

#include <cmath>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "budget/grid.hpp"
#include "budget/native_reach.hpp"
#include "budget/calibration.hpp"
#include "budget/cluster_match.hpp"
#include "budget/time_rank.hpp"
#include "budget/version.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/cluster_rank.hpp"
#include "cluster_options.hpp"
#include "grid_options.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "budget_render/match.hpp"
#include "options.hpp"
#include "output_format.hpp"
#include "plots.hpp"
#include "budget_render/table.hpp"
#include "budget_render/step_time.hpp"

namespace budget::cli {
namespace {

std::string ratio(double value) { return fmt::format("{:.3f}", value); }

void add_arch_row(Table& t, const std::string& size, const std::string& arch, const ArchConfig& c, const Budgets& b,
                  const std::string& flops_ratio, const std::string& kv_ratio, const std::string& max_dev,
                  const std::string& paper, const std::optional<std::string>& last_cell = std::nullopt) {
  std::vector<std::string> cells{
      size, arch, std::to_string(c.hidden_size), fmt::format("{}/{}", b.physical_layers, b.executed_layers),
      heads_text(c.attention), std::to_string(c.ffn.num_experts), std::to_string(c.ffn.top_k),
      std::to_string(c.ffn.expert_dim), fmt::format("{:.3f}", static_cast<double>(b.non_embedding_params_active) / 1e9),
      fmt::format("{:.1f}", 100.0 * b.sparsity), fmt::format("{:.2f}", static_cast<double>(b.non_embedding_params_total) / 1e9),
      flops_ratio, kv_ratio, max_dev, paper};
  if (last_cell) cells.push_back(*last_cell);  // the time ratio (--calibration) or the kernel fit (--gpu)
  t.add_row(std::move(cells));
}

}  // namespace

GridConstraints grid_constraints_of(const GridOptions& o) {
  GridConstraints c{o.constraints_path};
  c.kernels = o.kernels.target(o.calibration, o.cluster.given() ? o.cluster.load().gpu_name : std::string(),
                               o.cluster.megatron_args, o.cluster.bridge_config);
  c.shapes = o.kernels.space(o.free_shapes, c.kernels);
  if (!o.order.empty()) c.order = o.order == "tightest" ? MatchOrder::tightest : MatchOrder::proportions;
  return c;
}

Table timed_grid_table(const std::vector<TimedGridRow>& rows, const TimeAccuracy& accuracy) {
  Table t;
  for (const char* h : {"size", "arch"}) t.add_column(h, Align::left);
  for (const char* h : {"hidden", "layers"}) t.add_column(h);
  t.add_column("heads×dim (KV)", Align::left);
  for (const char* h : {"experts", "active experts", "expert width", "active params (B)", "sparsity (%)",
                        "non-emb params (B)", "FLOPs ratio", "KV ratio", "max dev", "paper max dev", "time ×"}) {
    t.add_column(h);
  }
  for (const TimedGridRow& row : rows) {
    const GridCell& cell = *row.cell;
    const MatchResult& r = row.match.result;
    t.add_separator();
    add_arch_row(t, cell.size, "baseline", r.baseline, r.baseline_budgets, "1.000", "1.000", "", "", "1.000×");
    if (r.candidates.empty()) {
      t.add_row({cell.size, "looped", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "infeasible", "", "-"});
      continue;
    }
    const Candidate& c = r.candidates.front();
    const auto paper = cell.published_max_deviation();
    add_arch_row(t, cell.size, "looped", c.config, c.budgets, ratio(1.0 + c.deviation.flops), ratio(1.0 + c.deviation.kv),
                 percent(c.deviation.max_abs(), 2), paper ? percent(*paper, 1) : "",
                 time_ratio_text(row.match.time_ratios.front(), accuracy.ratio_half_width(row.match.time_ratios.front())));
  }
  return t;
}

std::string grid_space_line(const MatchSummary& s) {
  const std::string kernels = s.kernels ? "the kernels of " + describe(*s.kernels)
                                         : std::string("the portable set (no --gpu: head dims 64, 128, 256, GEMM "
                                                       "widths on the portable multiple)");
  const std::string space =
      s.shapes == ShapeSpace::portable || s.kernels
          ? "trainable shapes for " + kernels + " (--free-shapes searches the whole lattice)"
      : s.shapes == ShapeSpace::trainable
          ? "every trainable shape (--all-trainable-shapes: head dims multiples of 8 up to 256, expert counts keeping "
            "each baseline's expert-parallel degrees, widths within the proportion factor of its proportions; "
            "--free-shapes searches the whole lattice)"
          : "the whole lattice (--free-shapes: shapes may be off the fused kernels and off the baselines' "
            "expert-parallel degrees)";
  std::string first;
  switch (s.order) {
    case RowOrder::proportions:
      first = "the equally matched shape nearest its baseline's proportions (--order tightest: the tightest match)";
      break;
    case RowOrder::shown_deviation:
    case RowOrder::weighted_objective:
      first = "the tightest equally matched (--order tightest; the default: nearest the baseline's proportions)";
      break;
    case RowOrder::predicted_time:
    case RowOrder::predicted_time_within_accuracy:
      first = "the fastest equally matched at matched work (--rank-by time)";
      break;
  }
  return fmt::format("search space: {}; row #1 of each cell: {}\n", space, first);
}

namespace {

Table grid_table(const std::vector<GridRow>& rows) {
  Table t;
  for (const char* h : {"size", "arch"}) t.add_column(h, Align::left);
  for (const char* h : {"hidden", "layers"}) t.add_column(h);
  t.add_column("heads×dim (KV)", Align::left);
  for (const char* h : {"experts", "active experts", "expert width", "active params (B)", "sparsity (%)",
                        "non-emb params (B)", "FLOPs ratio", "KV ratio", "max dev", "paper max dev"}) {
    t.add_column(h);
  }
  // With a kernel target (--gpu): how each row runs on it (native, padded→size, refused).
  const std::optional<KernelTarget> kernels = rows.empty() ? std::nullopt : rows.front().result.summary.kernels;
  if (kernels) t.add_column("kernels", Align::left);
  const auto fit_cell = [&](const ArchConfig& c) {
    return kernels ? std::optional<std::string>(kernel_fit_cell(kernel_fit(c, *kernels))) : std::nullopt;
  };
  for (const GridRow& row : rows) {
    const GridCell& cell = *row.cell;
    t.add_separator();
    add_arch_row(t, cell.size, "baseline", row.result.baseline, row.result.baseline_budgets, "1.000", "1.000", "", "",
                 fit_cell(row.result.baseline));
    if (row.result.candidates.empty()) {
      std::vector<std::string> cells{cell.size, "looped", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "infeasible", ""};
      if (kernels) cells.push_back("");
      t.add_row(std::move(cells));
      continue;
    }
    const Candidate& c = row.result.candidates.front();
    const auto paper = cell.published_max_deviation();
    add_arch_row(t, cell.size, "looped", c.config, c.budgets, ratio(1.0 + c.deviation.flops), ratio(1.0 + c.deviation.kv),
                 percent(c.deviation.max_abs(), 2), paper ? percent(*paper, 1) : "", fit_cell(c.config));
  }
  return t;
}

const GridCell& pick_cell(const Grid& grid, const std::string& name) {
  const std::string wanted = name.empty() ? "paper-200M-E192-baseline" : name;
  for (const GridCell& c : grid.cells) if (c.baseline.name == wanted) return c;
  if (name.empty()) return grid.cells.front();
  std::string names;
  for (const GridCell& c : grid.cells) names += (names.empty() ? "" : ", ") + c.baseline.name;
  throw Error(fmt::format("no cell whose baseline is named \"{}\"; cells: {}", name, names), "--cell");
}

/// 85 or 95 for the paper's two ablation cells (200M with 64 or 192 experts), else none.
std::optional<int> paper_sparsity(const GridCell& cell) {
  if (cell.size != "200M" || cell.baseline.num_layers != 12) return std::nullopt;
  if (cell.baseline.ffn.num_experts == 64) return 85;
  if (cell.baseline.ffn.num_experts == 192) return 95;
  return std::nullopt;
}

/// "KV heads, head_dim, heads", "KV heads, heads", "KV heads", "head_dim", ... or "-": what of the
/// ablation's family a point's row #1 holds; "reference" for the baseline's depth unlooped, outside
/// the family.
std::string holds_text(const AblationPoint& p) {
  if (p.reference) return "reference";
  std::string out;
  for (const auto& [held, name] : {std::pair<bool, const char*>{p.holds_kv_heads, "KV heads"},
                                   {p.holds_head_dim, "head_dim"}, {p.holds_num_heads, "heads"}}) {
    if (held) out += (out.empty() ? "" : ", ") + std::string(name);
  }
  return out.empty() ? "-" : out;
}

/// The ablation's shape family in JSON: what is held, and each note.
nlohmann::ordered_json ablation_family_json(const AblationFamily& f) {
  using json = nlohmann::ordered_json;
  return {{"num_kv_heads", f.num_kv_heads ? json(*f.num_kv_heads) : json(nullptr)},
          {"head_dim", f.head_dim ? json(*f.head_dim) : json(nullptr)},
          {"num_heads", f.num_heads ? json(*f.num_heads) : json(nullptr)},
          {"kv_heads_fixed", f.kv_heads_fixed},
          {"head_dim_fixed", f.head_dim_fixed},
          {"notes", f.notes}};
}

/// The ablation's table: each point's row #1, what of the family it holds, and its time ratio with a
/// profile (`ratios` not null).
Table ablation_table(const std::vector<AblationPoint>& points, const std::vector<std::optional<double>>* ratios) {
  Table t;
  t.add_column("point", Align::left);
  for (const char* h : {"layers", "loop", "hidden"}) t.add_column(h);
  t.add_column("heads×dim (KV)", Align::left);
  t.add_column("experts×width", Align::left);
  for (const char* h : {"FLOPs", "params", "KV", "max dev", "active", "sparsity", "paper loss"}) t.add_column(h);
  t.add_column("family held", Align::left);
  if (ratios) t.add_column("time ×");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    std::vector<std::string> cells;
    if (p.result.candidates.empty()) {
      cells = {p.label, std::to_string(p.num_layers), p.loop.describe(), "-", "-", "-", "-", "-", "-", "infeasible", "-", "-", "", "-"};
    } else {
      const Candidate& c = p.result.candidates.front();
      cells = {p.label, fmt::format("{}/{}", c.budgets.physical_layers, c.budgets.executed_layers), loop_text(c.config),
               std::to_string(c.config.hidden_size), heads_text(c.config.attention), ffn_text(c.config.ffn),
               signed_percent(c.deviation.flops), signed_percent(c.deviation.params), signed_percent(c.deviation.kv),
               percent(c.deviation.max_abs()), si(static_cast<double>(c.budgets.non_embedding_params_active)),
               percent(c.budgets.sparsity, 1), p.paper_loss ? fmt::format("{:.4f}", *p.paper_loss) : "", holds_text(p)};
    }
    if (ratios) cells.push_back((*ratios)[i] ? time_ratio_text(*(*ratios)[i]) : "-");
    t.add_row(std::move(cells));
  }
  return t;
}

/// The ablation's result in every form: its JSON (each point's matched config, what of the shape
/// family it holds, and its time ratio with a profile: `ratios` not null), the points' table, in text
/// and Markdown a title, and under the table the family held and each point that does not hold it.
Document ablation_document(const GridOptions& o, const GridCell& cell, const AblationResult& ablation,
                           const std::vector<std::optional<double>>* ratios) {
  using json = nlohmann::ordered_json;
  const std::vector<AblationPoint>& points = ablation.points;
  Document doc;
  json out_points = json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const bool feasible = !p.result.candidates.empty();
    out_points.push_back({{"label", p.label},
                          {"num_layers", p.num_layers},
                          {"loop", p.loop.describe()},
                          {"matched", feasible ? candidate_json(p.result.candidates.front()) : json(nullptr)},
                          {"paper_loss", p.paper_loss ? json(*p.paper_loss) : json(nullptr)},
                          {"reference", p.reference},
                          {"holds_kv_heads", p.holds_kv_heads},
                          {"holds_head_dim", p.holds_head_dim},
                          {"holds_num_heads", p.holds_num_heads},
                          {"family_note", p.family_note.empty() ? json(nullptr) : json(p.family_note)},
                          {"best_objective_any_family", feasible ? json(p.best_objective_any_family) : json(nullptr)},
                          {"window", feasible ? json(p.window) : json(nullptr)}});
    if (ratios) out_points.back()["time_ratio"] = (*ratios)[i] ? json(*(*ratios)[i]) : json(nullptr);
  }
  doc.set_json(json{{"schema_version", output_schema_version}, {"ablation", o.ablation},
                    {"baseline", config_json(cell.baseline)}, {"family", ablation_family_json(ablation.family)},
                    {"points", out_points}});
  doc.text(fmt::format("{} ablation around {} (every point budget-matched to it, in one shape family where the "
                       "budgets allow){}\n\n",
                       o.ablation, cell.baseline.name,
                       paper_sparsity(cell) ? fmt::format("; paper losses at S≈{}%", *paper_sparsity(cell)) : ""));
  doc.table(ablation_table(points, ratios));
  std::string family = "\nshape family (each point's row #1 in it where its best there is within the point's own "
                       "equally matched window, g* + tolerance):\n";
  for (const std::string& note : ablation.family.notes) family += "  " + note + "\n";
  for (const AblationPoint& p : points) {
    if (!p.family_note.empty()) family += fmt::format("  {}: not held: {}\n", p.label, p.family_note);
  }
  doc.text(family);
  return doc;
}

void run_ablation_command(const GridOptions& o, const Grid& grid, const Workload& workload) {
  const GridCell& cell = pick_cell(grid, o.cell);
  const Ablation kind = o.ablation == "span" ? Ablation::span : o.ablation == "repeats" ? Ablation::repeats : Ablation::depth;
  const AblationResult ablation =
      run_ablation(kind, cell.baseline, workload, paper_sparsity(cell), grid_constraints_of(o));
  const std::vector<AblationPoint>& points = ablation.points;
  // With a profile: each point's matched config's predicted time per token / the baseline's, at
  // matched work (over its FLOPs ratio, 1 + dF: time_rank.hpp).
  std::optional<TimeModel> model;
  std::vector<std::optional<double>> ratios(points.size());
  if (o.calibration.given()) {
    model = o.calibration.load();
    const double base = predict_step_time(*model, cell.baseline, workload).seconds_per_token;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!points[i].result.candidates.empty()) {
        const Candidate& c = points[i].result.candidates.front();
        ratios[i] = predict_step_time(*model, c.config, workload).seconds_per_token / base / (1.0 + c.deviation.flops);
      }
    }
  }
  if (!o.plot_path.empty()) {
    plot_ablation(points, model ? ratios : std::vector<std::optional<double>>{},
                  fmt::format("{} ablation around {}", o.ablation, cell.baseline.name),
                  o.plot_path);
  }
  print(ablation_document(o, cell, ablation, model ? &ratios : nullptr), o.format);
}

/// The portable set's misses (issue 43): how many cells' row #1 misses a budget by more than
/// native_match_tolerance, which budgets, and the ways out; empty for another space or no miss.
std::string portable_miss_line(const std::vector<GridRow>& rows) {
  if (rows.empty() || rows.front().result.summary.shapes != ShapeSpace::portable) return {};
  int missed = 0;
  bool flops = false, params = false, kv = false;
  const auto over = [](double value) { return std::fabs(value) > native_match_tolerance; };
  for (const GridRow& r : rows) {
    if (r.result.candidates.empty()) continue;
    const Deviation& d = r.result.candidates.front().deviation;
    flops = flops || over(d.flops);
    params = params || over(d.params);
    kv = kv || over(d.kv);
    missed += over(d.flops) || over(d.params) || over(d.kv) ? 1 : 0;
  }
  if (missed == 0) return {};
  std::vector<std::string> budgets;
  if (flops) budgets.emplace_back("FLOPs");
  if (params) budgets.emplace_back("params");
  if (kv) budgets.emplace_back("KV");
  return fmt::format("the portable set misses {} by more than {:.1f}% in {} of {} cells: --gpu NAME searches the "
                     "shapes that GPU's kernels run, --all-trainable-shapes every trainable shape; budget-match "
                     "--baseline on a cell shows the best off the portable set and a loop span a native shape "
                     "matches\n",
                     fmt::join(budgets, ", "), 100.0 * native_match_tolerance, missed, rows.size());
}

/// The grid's result in every form: its JSON (grid_json), the cells' table, and in aligned text a
/// heading, the largest deviation over the grid, the portable set's misses and the search space.
Document grid_document(const GridOptions& o, const Grid& grid, const std::vector<GridRow>& rows, const LoopSpec& loop,
                       const Workload& workload) {
  Document doc;
  if (o.format == OutputFormat::json) {
    doc.set_json(grid_json(grid, rows, loop, workload));
    return doc;
  }
  doc.text(fmt::format("{}: {} cells, loop {} (a cell's own loop_layers_1based wins), workload: {}\n\n",
                       o.grid_path.empty() ? "SMELT paper grid" : o.grid_path, rows.size(), loop.describe(),
                       workload.description),
           Forms::table);
  doc.table(grid_table(rows));
  double worst = 0;
  for (const auto& r : rows) {
    if (!r.result.candidates.empty()) worst = std::max(worst, r.result.candidates.front().deviation.max_abs());
  }
  doc.text(fmt::format("\nlargest deviation over the grid: {}\n", percent(worst, 2)) + portable_miss_line(rows) +
               grid_space_line(rows.front().result.summary),
           Forms::table);
  return doc;
}

void run_grid(const GridOptions& o) {
  if (!o.plot_path.empty()) check_plot_request(o.plot_path);
  const Grid grid = o.grid_path.empty() ? paper_grid() : load_grid(o.grid_path);
  const Workload workload = o.workload.load();
  if (!o.calibration.given() && (o.rank_by != "budget" || o.max_time_ratio > 0)) {
    throw_option_dependency_error(o.rank_by != "budget" ? "--rank-by" : "--max-time-ratio",
                                  "--rank-by time and --max-time-ratio need --calibration P.json");
  }
  if (!o.ablation.empty()) {
    if (o.cluster.given()) throw_option_dependency_error("--cluster", "--cluster applies to the grid, not to --ablation");
    if (o.rank_by != "budget" || o.max_time_ratio > 0) {
      throw_option_dependency_error(o.rank_by != "budget" ? "--rank-by" : "--max-time-ratio",
                                    "--rank-by time and --max-time-ratio apply to the grid, not to --ablation "
                                    "(ablation points show their time ratio with --calibration)");
    }
    run_ablation_command(o, grid, workload);
    return;
  }
  LoopSpec loop;
  loop.span_fraction = o.span_fraction;
  loop.repeats = o.repeats;
  if (o.cluster.given()) {
    if (o.rank_by != "time") {
      throw_option_dependency_error(
          "--cluster", "--cluster ranks each cell's equally matched candidates by time on the cluster; give --rank-by time");
    }
    if (o.max_time_ratio > 0) {
      throw_option_dependency_error("--max-time-ratio",
                                    "--max-time-ratio caps the single-GPU time ratio; it is not combined with "
                                    "--cluster's ranking");
    }
    if (!o.plot_path.empty()) {
      throw_option_dependency_error("--plot", "--plot does not draw the cluster ranking; leave it out with --cluster");
    }
    run_cluster_grid(o, grid, workload, loop);
    return;
  }
  if (o.calibration.given()) {
    run_timed_grid(o, grid, workload, loop);
    return;
  }
  const std::vector<GridRow> rows = match_grid(grid, loop, workload, grid_constraints_of(o));
  if (!o.plot_path.empty()) plot_grid_deviations(rows, o.plot_path);
  print(grid_document(o, grid, rows, loop, workload), o.format);
}

void add_grid_command(CLI::App& app) {
  auto o = std::make_shared<GridOptions>();
  CLI::App* cmd = app.add_subcommand("grid", "Match every baseline of a grid (default: the SMELT paper's 4×4), or run an ablation");
  cmd->add_option("--grid", o->grid_path, "Grid file (default: the built-in SMELT paper grid, as in examples/grids/paper_grid.json)");
  cmd->add_option("--ablation", o->ablation, "span|repeats|depth: the paper's ablations at one cell")
      ->check(CLI::IsMember({"span", "repeats", "depth"}));
  cmd->add_option("--plot", o->plot_path,
                  "Draw each cell's signed FLOPs/params/KV deviations (and, with --calibration, its predicted time "
                  "ratio − 1) into this .svg or .png file (needs gnuplot); with --ablation, one group per point")
      ->check(output_path());
  cmd->add_option("--cell", o->cell, "Baseline name of the ablation's cell (default: paper-200M-E192-baseline)");
  add_workload_option(*cmd, o->workload);
  cmd->add_option("--constraints", o->constraints_path,
                  "Constraints JSON applied to every cell (and, with --ablation, to every point, its depth fixed to "
                  "the point's)");
  cmd->add_flag("--free-shapes", o->free_shapes,
                "Search the whole lattice in every cell instead of the default trainable shapes (the portable set, "
                "or the --gpu target's shapes), as budget-match --baseline --free-shapes does (constraints key "
                "\"free_shapes\")");
  cmd->add_option("--order", o->order,
                  "proportions (default): each cell's row #1 is the equally matched shape nearest its baseline's "
                  "proportions; tightest: the tightest match (constraints key \"order\")")
      ->check(CLI::IsMember({"proportions", "tightest"}));
  cmd->add_option("--span-fraction", o->span_fraction, "Loop span for cells without their own (default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--repeats", o->repeats, "Loop repeats (default 2)")->check(CLI::Range(1, 1024));
  add_calibration_options(*cmd, o->calibration,
                          "Calibration profile (docs/calibration.md): add each matched config's predicted time ratio",
                          true);
  add_kernel_options(*cmd, o->kernels);
  cmd->add_option("--rank-by", o->rank_by, "budget (default) or time: pick the fastest equally matched candidate")
      ->check(CLI::IsMember({"budget", "time"}));
  cmd->add_option("--max-time-ratio", o->max_time_ratio, "Drop candidates predicted slower than R × the baseline")
      ->check(positive_real(1e300));
  add_format_option(*cmd, o->format, all_formats());
  add_cluster_rank_options(*cmd, o->cluster);
  cmd->callback([o, cmd] {
    check_cluster_rank_options(*cmd);
    default_calibration_from_cluster(o->cluster, o->calibration.path);
    run_grid(*o);
  });
}

const CommandRegistration grid_registration{"grid", 20, &add_grid_command};

}  // namespace
}  // namespace budget::cli
