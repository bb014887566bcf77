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


struct GridOptions {
  std::string grid_path;  // empty: the built-in paper grid
  std::string ablation;
  std::string cell;
  WorkloadOption workload;
  std::string constraints_path;
  bool free_shapes = false;  // --free-shapes: ShapeSpace::free
  std::string order;         // --order: empty keeps the constraints' (default proportions)
  double span_fraction = 0.5;
  std::int64_t repeats = 2;
  OutputFormat format = OutputFormat::table;
  CalibrationOptions calibration;
  std::string rank_by = "budget";
  double max_time_ratio = 0;
  std::string plot_path;
  ClusterRankOptions cluster;
  KernelOptions kernels;  // --gpu, --precision (and --attention-backend of calibration)
};

std::string ratio(double value) { return fmt::format("{:.3f}", value); }

/// Every cell's constraints, as `budget-match --baseline` makes them (--constraints, --free-shapes,
/// --order).
GridConstraints grid_constraints_of(const GridOptions& o) {
  GridConstraints c{o.constraints_path};
  c.kernels = o.kernels.target(o.calibration, o.cluster.given() ? o.cluster.load().gpu_name : std::string(),
                               o.cluster.megatron_args);
  c.shapes = o.kernels.space(o.free_shapes, c.kernels);
  if (!o.order.empty()) c.order = o.order == "tightest" ? MatchOrder::tightest : MatchOrder::proportions;
  return c;
}

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

/// The grid with each looped config's predicted time ratio to its baseline (grid --calibration).
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

/// Which search space every cell was matched in and how its row #1 was chosen (the matcher's footer
/// says it per match; docs/matching.md).
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

/// The keys both timed grids' JSON (--calibration, --cluster) start with, in this order.
nlohmann::ordered_json timed_grid_json(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                       const TimeModel& model, const std::string& rank_by) {
  return {{"schema_version", output_schema_version}, {"budget_version", version_string},
          {"description", grid.description},         {"loop", loop.describe()},
          {"workload", workload_json(workload)},     {"profile", profile_label(model)},
          {"rank_by", rank_by}};
}

/// The cells of both timed grids, each starting with the same keys: size, the baseline's config
/// and budgets, the matched config and its time ratio (null when the cell is infeasible);
/// `add_keys(row, cell)` adds each grid's own keys.
template <class Row, class AddKeys>
nlohmann::ordered_json timed_cells_json(const std::vector<Row>& rows, AddKeys add_keys) {
  using json = nlohmann::ordered_json;
  json cells = json::array();
  for (const Row& row : rows) {
    const MatchResult& r = row.match.result;
    json cell{{"size", row.cell->size},
              {"baseline", {{"config", config_json(r.baseline)}, {"budgets", budgets_json(r.baseline_budgets)}}},
              {"matched", r.candidates.empty() ? json(nullptr) : candidate_json(r.candidates.front())},
              {"time_ratio", r.candidates.empty() ? json(nullptr) : json(row.match.time_ratios.front())}};
    add_keys(row, cell);
    cells.push_back(std::move(cell));
  }
  return cells;
}

/// grid --calibration's result in every form: its JSON (each cell's match with both step times),
/// the cells' table, and in aligned text a heading, the range of the time ratios and their source.
Document timed_grid_document(const GridOptions& o, const Grid& grid, const std::vector<TimedGridRow>& rows,
                             const LoopSpec& loop, const Workload& workload, const TimeModel& model,
                             const TimeAccuracy& accuracy) {
  using json = nlohmann::ordered_json;
  Document doc;
  json cells = timed_cells_json(rows, [&](const TimedGridRow& row, json& cell) {
    const MatchResult& r = row.match.result;
    cell["baseline"]["time"] = step_time_json(row.match.baseline_time, model);
    cell["time_ratio_interval"] =
        r.candidates.empty() ? json(nullptr) : time_ratio_interval_json(row.match.time_ratios.front(), accuracy);
    cell["equal_within_interval"] = row.match.equal_within_interval;
    cell["summary"] = r.summary.feasible ? r.summary.brief() : r.summary.message;
    if (!r.candidates.empty()) cell["matched"]["time"] = step_time_json(row.match.candidate_times.front(), model);
    const auto paper = row.cell->published_max_deviation();
    cell["paper_max_deviation"] = paper ? json(*paper) : json(nullptr);
  });
  json out = timed_grid_json(grid, loop, workload, model, o.rank_by);
  out["time_accuracy"] = time_accuracy_json(accuracy);
  out["cells"] = std::move(cells);
  doc.set_json(std::move(out));
  doc.text(fmt::format("{}: {} cells, loop {}, workload: {}\ntime ×: predicted time per token / the baseline's ({}, {} "
                       "tokens/step), ranked by {}\n\n",
                       o.grid_path.empty() ? "SMELT paper grid" : o.grid_path, rows.size(), loop.describe(),
                       workload.description, profile_label(model), grouped(workload.tokens_per_step), o.rank_by),
           Forms::table);
  doc.table(timed_grid_table(rows, accuracy));
  std::string tail;
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& r : rows) {
    if (r.match.time_ratios.empty()) continue;
    const double x = r.match.time_ratios.front();
    lo = any ? std::min(lo, x) : x;
    hi = any ? std::max(hi, x) : x;
    any = true;
  }
  if (any) {
    const int d = time_ratio_decimals(accuracy.ratio_half_width(hi));
    tail += fmt::format("\npredicted time ratios of the matched configs: {:.{}f}× to {:.{}f}×\n", lo, d, hi, d);
  }
  tail += "time ± from the " + accuracy.source + "\n";
  if (!rows.empty()) tail += grid_space_line(rows.front().match.result.summary);
  if (o.rank_by == "time") {
    tail += "each cell's pick: the best match among the equally matched candidates within the ± of the fastest "
            "(equal within the model's accuracy)\n";
  }
  doc.text(tail, Forms::table);
  return doc;
}

void run_timed_grid(const GridOptions& o, const Grid& grid, const Workload& workload, const LoopSpec& loop) {
  const TimeModel model = o.calibration.load();
  TimeRankOptions options;
  options.rank_by = o.rank_by == "time" ? RankBy::time : RankBy::budget;
  if (o.max_time_ratio > 0) options.max_time_ratio = o.max_time_ratio;
  options.top_n = 1;
  options.accuracy = time_accuracy(model.profile(), model.options());
  const TimeAccuracy& accuracy = *options.accuracy;
  const std::vector<TimedGridRow> rows = match_grid_with_time(grid, loop, workload, grid_constraints_of(o), model, options);
  if (!o.plot_path.empty()) plot_timed_grid(rows, o.plot_path);
  print(timed_grid_document(o, grid, rows, loop, workload, model, accuracy), o.format);
}

/// grid --cluster's result in every form: its JSON (each cell's ranking on the cluster), the
/// cells' table, and in aligned text a heading and what makes each cell's difference.
Document cluster_grid_document(const GridOptions& o, const Grid& grid, const std::vector<ClusterGridRow>& rows,
                               const LoopSpec& loop, const Workload& workload, const TimeModel& model,
                               const ClusterSpec& cluster, const LayoutSearchOptions& search) {
  using json = nlohmann::ordered_json;
  Document doc;
  json cells = timed_cells_json(rows, [&](const ClusterGridRow& row, json& cell) {
    const MatchResult& r = row.match.result;
    cell["summary"] = r.summary.feasible ? r.summary.brief() : r.summary.message;
    cell["notes"] = r.summary.notes;  // with the expert count on the cluster (docs/matching.md)
    cell["cluster"] = row.ranking ? cluster_ranking_json(*row.ranking, cluster, row.options) : json(nullptr);
    if (row.ranking) {  // as the matcher's cluster.dropped: passed over as not trainable at scale
      cell["cluster"]["dropped"] = cluster_dropped_json(row.dropped);
    }
    if (!row.failure.empty()) cell["cluster_failure"] = row.failure;
    if (row.ranking && !r.candidates.empty()) cell["matched"]["cluster"] = cluster_candidate_json(row.ranking->candidates.front());
  });
  json out = timed_grid_json(grid, loop, workload, model, "time");
  out["cells"] = std::move(cells);
  doc.set_json(std::move(out));
  Table t;
  for (const char* h : {"size", "baseline layout", "looped", "looped layout"}) t.add_column(h, Align::left);
  for (const char* h : {"µs/token base", "µs/token looped", "cluster ×", "1-GPU ×", "dropped"}) t.add_column(h);
  std::string differences, dropped;
  for (const ClusterGridRow& row : rows) {
    const MatchResult& r = row.match.result;
    if (!row.failure.empty()) {  // the cell's baseline has no layout: said in its row, the grid goes on
      t.add_row({row.cell->size, "no layout", "-", "-", "-", "-", "-", "-", "-"});
      differences += fmt::format("{} ({}): {}\n", row.cell->size, r.baseline.name, row.failure);
      continue;
    }
    for (const ClusterDropped& d : row.dropped) {
      dropped += fmt::format("{} ({}): {}\n", row.cell->size, r.baseline.name, cluster_dropped_line(d));
    }
    const std::string dropped_count = std::to_string(row.dropped.size());
    if (!row.ranking || r.candidates.empty()) {
      t.add_row({row.cell->size, "-", "infeasible", "-", "-", "-", "-", "-", dropped_count});
      continue;
    }
    const ClusterCandidateTime& b = row.ranking->baseline;
    const ClusterCandidateTime& c = row.ranking->candidates.front();
    const ArchConfig& cfg = r.candidates.front().config;
    const std::string shape = fmt::format("H{} {} {}", cfg.hidden_size, heads_text(cfg.attention), ffn_text(cfg.ffn));
    if (!c.found) {
      t.add_row({row.cell->size, layout_brief(b.best.memory.layout), shape, "no layout fits memory",
                 microseconds_per_token_text(b.seconds_per_token), "-", "-", time_ratio_text(c.single_gpu_ratio_to_baseline),
                 dropped_count});
      continue;
    }
    t.add_row({row.cell->size, layout_brief(b.best.memory.layout), shape, layout_brief(c.best.memory.layout),
               microseconds_per_token_text(b.seconds_per_token), microseconds_per_token_text(c.seconds_per_token),
               time_ratio_text(c.ratio_to_baseline), time_ratio_text(c.single_gpu_ratio_to_baseline), dropped_count});
    differences += fmt::format("{} ({}): cluster {:.3f}× vs 1-GPU {:.3f}×\n", row.cell->size, r.baseline.name,
                               c.ratio_to_baseline, c.single_gpu_ratio_to_baseline);
    if (const auto& team = row.ranking->team_baseline) {
      differences += team->found ? fmt::format("  team's layout of the baseline: {} at {:.3f}× the searched baseline's\n",
                                               layout_brief(team->best.memory.layout), team->ratio_to_baseline)
                                 : "  team's layout of the baseline: " + team->no_layout_reason + "\n";
    }
    for (const std::string& d : c.differences) differences += "  " + d + "\n";
    for (const std::string& note : r.summary.notes) differences += "  note: " + note + "\n";
  }
  const std::string placement =
      search.team_layout ? fmt::format("at its best layout with the team's recipe held (--megatron-args; one basis), the "
                                       "team's layout {} pricing each baseline apart",
                                       layout_brief(*search.team_layout))
                         : std::string("at its best layout");
  doc.text(fmt::format("{}: {} cells, loop {}, on {} GPUs of {}, {} tokens a step; per cell the fastest equally "
                       "matched config {}, the baseline likewise (cluster ×: time per token over the baseline's; 1-GPU "
                       "×: the same on one GPU, {})\n\n",
                       o.grid_path.empty() ? "SMELT paper grid" : o.grid_path, rows.size(), loop.describe(),
                       search.gpus, cluster.gpu_name, grouped(search.global_batch_tokens), placement,
                       profile_label(model)),
           Forms::table);
  doc.table(std::move(t));
  doc.text("\nWhat makes the difference:\n" + differences, Forms::table);
  if (!rows.empty()) doc.text(grid_space_line(rows.front().match.result.summary), Forms::table);
  if (!dropped.empty()) {
    doc.text("\nDropped as not trainable on these GPUs (no layout on the GPUs given fits), before "
             "each cell's pick:\n" + dropped, Forms::text);
  }
  doc.text(min_headroom_footer(search), Forms::table);
  return doc;
}

/// grid --cluster: per cell the equally matched candidates at their best layouts on the cluster,
/// the fastest kept, beside the baseline at its best layout.
void run_cluster_grid(const GridOptions& o, const Grid& grid, const Workload& workload, const LoopSpec& loop) {
  // --megatron-args: one FP8 recipe times every cell; each cell's baseline reads the file (its
  // model-shape flags checked against it: a cell that disagrees shows why in its row).
  const TimeModel model = o.calibration.load(o.cluster.fp8_recipe());
  const ClusterSpec cluster = o.cluster.load();
  LayoutSearchOptions search = o.cluster.search_options(workload);
  const CellSearchOptions of_cell = [&](const ArchConfig& baseline) {
    return o.cluster.search_options(workload, baseline, nullptr);
  };
  std::vector<ClusterGridRow> rows;
  try {
    rows = match_grid_on_cluster(grid, loop, workload, grid_constraints_of(o), model, cluster, of_cell);
  } catch (const Error& e) {
    if (e.source().empty() && e.path().empty()) throw Error(e.message(), "--cluster");
    throw;
  }
  for (const ClusterGridRow& row : rows) {
    if (row.failure.empty()) {  // the file's batch and layout are every read cell's: shown in the heading
      search = row.options;
      break;
    }
  }
  print(cluster_grid_document(o, grid, rows, loop, workload, model, cluster, search), o.format);
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
