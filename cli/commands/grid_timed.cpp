#include "grid_options.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster_match.hpp"
#include "budget/error.hpp"
#include "budget/version.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/cluster_rank.hpp"
#include "budget_render/match.hpp"
#include "budget_render/step_time.hpp"
#include "budget_render/table.hpp"
#include "plots.hpp"

namespace budget::cli {
namespace {

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

}  // namespace

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

namespace {

/// grid --cluster's table: per cell the baseline's and the looped config's layouts and times; what
/// makes each cell's difference and each candidate dropped are added to `differences` and `dropped`.
Table cluster_grid_table(const std::vector<ClusterGridRow>& rows, std::string& differences, std::string& dropped) {
  Table t;
  for (const char* h : {"size", "baseline layout", "looped", "looped layout"}) t.add_column(h, Align::left);
  for (const char* h : {"µs/token base", "µs/token looped", "cluster ×", "1-GPU ×", "dropped"}) t.add_column(h);
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
  return t;
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
  std::string differences, dropped;
  Table t = cluster_grid_table(rows, differences, dropped);
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

}  // namespace

void run_cluster_grid(const GridOptions& o, const Grid& grid, const Workload& workload, const LoopSpec& loop) {
  // --megatron-args: one recipe (FP8, gradient bytes) times every cell; each cell's baseline reads the
  // file (its model-shape flags checked against it: a cell that disagrees shows why in its row).
  const std::optional<MegatronKernelOptions> graphs = o.cluster.cuda_graphs();
  const TimeModel model = o.calibration.load(o.cluster.training_recipe(), std::nullopt, graphs ? &*graphs : nullptr);
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

}  // namespace budget::cli
