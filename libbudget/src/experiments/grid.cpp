#include "budget/grid.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "config/config_json.hpp"
#include "base/json_reader.hpp"

namespace budget {

std::optional<double> GridCell::published_max_deviation() const {
  std::optional<double> worst;
  const auto consider = [&](double deviation) { worst = std::max(worst.value_or(0.0), std::fabs(deviation)); };
  if (published_looped.flops_ratio) consider(*published_looped.flops_ratio - 1.0);
  if (published_looped.kv_ratio) consider(*published_looped.kv_ratio - 1.0);
  if (published_looped.total_params_B && published_baseline.total_params_B) {
    consider(*published_looped.total_params_B / *published_baseline.total_params_B - 1.0);
  }
  return worst;
}

namespace {
PublishedColumns read_published(const detail::ObjectReader& r) {
  r.reject_unknown_keys({"total_params_B", "active_params_B", "S_pct", "hidden_size", "num_experts", "flops_ratio",
                         "kv_ratio"});
  PublishedColumns p;
  const auto number = [&](const char* key, std::optional<double>& out) {
    if (r.has(key)) out = r.number(key, 0.0, 1e9);
  };
  number("total_params_B", p.total_params_B);
  number("active_params_B", p.active_params_B);
  number("S_pct", p.sparsity_pct);
  number("flops_ratio", p.flops_ratio);
  number("kv_ratio", p.kv_ratio);
  if (r.has("hidden_size")) p.hidden_size = r.integer("hidden_size", 1, max_dimension);
  if (r.has("num_experts")) p.num_experts = r.integer("num_experts", 0, max_dimension);
  return p;
}
}  // namespace

Grid parse_grid(std::string_view json_text, const std::string& source) {
  const nlohmann::json document = detail::parse_json_text(json_text, source);
  const detail::ObjectReader root(document, source, "");
  root.reject_unknown_keys({"description", "cells"});
  Grid grid;
  grid.description = root.string_or("description", "");
  const nlohmann::json& cells = root.raw("cells");
  if (!cells.is_array() || cells.empty()) root.fail("cells", "expected a non-empty array of cells");
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string pointer = fmt::format("/cells/{}", i);
    const detail::ObjectReader cell(cells[i], source, pointer);
    cell.reject_unknown_keys({"size", "baseline", "published_baseline", "published_smelt", "loop_layers_1based"});
    GridCell c;
    c.baseline = detail::read_arch_config(cell.raw("baseline"), source, pointer + "/baseline");
    c.size = cell.string_or("size", c.baseline.name);
    if (cell.has("published_baseline")) c.published_baseline = read_published(cell.object("published_baseline"));
    if (cell.has("published_smelt")) c.published_looped = read_published(cell.object("published_smelt"));
    if (cell.has("loop_layers_1based")) {
      const nlohmann::json& range = cell.raw("loop_layers_1based");
      const bool ok = range.is_array() && range.size() == 2 && range[0].is_number_integer() &&
                      range[1].is_number_integer() && range[0].get<std::int64_t>() >= 1 &&
                      range[1].get<std::int64_t>() >= range[0].get<std::int64_t>() &&
                      range[1].get<std::int64_t>() <= c.baseline.num_layers;
      if (!ok) {
        cell.fail("loop_layers_1based", fmt::format("value {} is not a layer range; allowed: [first, last] with 1 <= "
                                                    "first <= last <= num_layers = {}",
                                                    detail::describe_value(range), c.baseline.num_layers));
      }
      c.loop = LoopConfig{range[0].get<std::int64_t>(), range[1].get<std::int64_t>(), 2};
    }
    grid.cells.push_back(std::move(c));
  }
  return grid;
}

Grid load_grid(const std::string& path) { return parse_grid(detail::read_text_file(path), path); }

namespace detail {
extern const std::string_view paper_grid_json;  // generated: paper_grid_data.cpp
}

const Grid& paper_grid() {
  static const Grid grid = parse_grid(detail::paper_grid_json, "<paper grid>");
  return grid;
}

LoopSpec cell_loop_spec(const GridCell& cell, const LoopSpec& loop) {
  LoopSpec cell_loop = loop;
  if (cell.loop) {
    cell_loop.first = cell.loop->first;
    cell_loop.last = cell.loop->last;
  }
  return cell_loop;
}

MatchConstraints cell_constraints(const GridCell& cell, const std::string& constraints_path) {
  // A file's "free_shapes": true starts from the free defaults (docs/matching.md).
  return constraints_path.empty() ? default_constraints(cell.baseline) : load_constraints(constraints_path, cell.baseline);
}

std::vector<GridRow> match_grid(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                const std::string& constraints_path) {
  std::vector<GridRow> rows;
  rows.reserve(grid.cells.size());
  for (const GridCell& cell : grid.cells) {
    rows.push_back({&cell, match(cell.baseline, cell_loop_spec(cell, loop), workload,
                                 cell_constraints(cell, constraints_path), 1)});
  }
  return rows;
}

namespace {
/// The paper's published validation losses of the 200M ablations (PAPER.md, "Ablations").
/// Keys: loop span (centred layers) → {loss at S≈85%, loss at S≈95%}.
const std::map<std::int64_t, std::pair<double, double>>& paper_span_losses() {
  static const std::map<std::int64_t, std::pair<double, double>> losses{
      {0, {1.9445, 1.8735}}, {4, {1.9275, 1.8524}}, {6, {1.9257, 1.8517}}, {8, {1.9374, 1.8544}}, {12, {1.9322, 1.8601}}};
  return losses;
}
/// Repeats over the middle half → loss (published at S≈85% only).
const std::map<std::int64_t, double>& paper_repeat_losses() {
  static const std::map<std::int64_t, double> losses{{1, 1.9445}, {2, 1.9257}, {3, 1.9385}, {4, 1.9360}};
  return losses;
}

AblationPoint ablation_point(std::string label, const ArchConfig& baseline, std::int64_t num_layers, LoopSpec loop,
                             const Workload& workload) {
  MatchConstraints constraints = default_constraints(baseline);
  constraints.num_layers = VariableRange::fixed(num_layers);
  AblationPoint point;
  point.label = std::move(label);
  point.num_layers = num_layers;
  point.loop = loop;
  point.result = match(baseline, loop, workload, constraints, 1);
  return point;
}

LoopSpec centred_span(std::int64_t num_layers, std::int64_t span, std::int64_t repeats) {
  LoopSpec loop;
  loop.repeats = repeats;
  if (span == 0 || repeats <= 1) {
    loop.repeats = 1;
    return loop;
  }
  // Same centring rule as centred_loop(): first = floor((L − span)/2) + 1.
  loop.first = (num_layers - span) / 2 + 1;
  loop.last = loop.first + span - 1;
  return loop;
}
}  // namespace

std::vector<AblationPoint> run_ablation(Ablation kind, const ArchConfig& baseline, const Workload& workload,
                                        std::optional<int> paper_sparsity_pct) {
  std::vector<AblationPoint> points;
  const std::int64_t L = baseline.num_layers;
  const bool s85 = paper_sparsity_pct == 85, s95 = paper_sparsity_pct == 95;
  switch (kind) {
    case Ablation::span:
      for (std::int64_t span = 0; span <= L; span += 2) {
        AblationPoint p = ablation_point(fmt::format("span {}", span), baseline, L, centred_span(L, span, 2), workload);
        const auto it = paper_span_losses().find(span);
        if (it != paper_span_losses().end() && (s85 || s95) && L == 12) {
          p.paper_loss = s85 ? it->second.first : it->second.second;
        }
        points.push_back(std::move(p));
      }
      break;
    case Ablation::repeats:
      for (std::int64_t r = 1; r <= 4; ++r) {
        AblationPoint p = ablation_point(fmt::format("repeats {}", r), baseline, L,
                                         centred_span(L, std::llround(0.5 * static_cast<double>(L)), r), workload);
        const auto it = paper_repeat_losses().find(r);
        if (it != paper_repeat_losses().end() && s85 && L == 12) p.paper_loss = it->second;
        points.push_back(std::move(p));
      }
      break;
    case Ablation::depth:
      for (std::int64_t depth = 6; depth <= 18; depth += 2) {
        points.push_back(ablation_point(fmt::format("{} layers, unlooped", depth), baseline, depth,
                                        centred_span(depth, 0, 1), workload));
        points.push_back(ablation_point(fmt::format("{} layers, middle half ×2", depth), baseline, depth,
                                        centred_span(depth, std::llround(0.5 * static_cast<double>(depth)), 2),
                                        workload));
      }
      break;
  }
  return points;
}

}  // namespace budget
