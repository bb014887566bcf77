#include "budget/grid.hpp"

#include <algorithm>
#include <cmath>

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

MatchConstraints grid_constraints(const ArchConfig& baseline, const GridConstraints& constraints) {
  // A file's "free_shapes": true starts from the free defaults (docs/matching.md).
  MatchConstraints c = constraints.path.empty()
                           ? default_constraints(baseline, constraints.shapes, constraints.kernels)
                           : load_constraints(constraints.path, baseline, constraints.shapes, constraints.kernels);
  if (constraints.order) c.order = *constraints.order;
  return c;
}

MatchConstraints cell_constraints(const GridCell& cell, const GridConstraints& constraints) {
  return grid_constraints(cell.baseline, constraints);
}

std::vector<GridRow> match_grid(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                const GridConstraints& constraints) {
  std::vector<GridRow> rows;
  rows.reserve(grid.cells.size());
  for (const GridCell& cell : grid.cells) {
    rows.push_back({&cell, match(cell.baseline, cell_loop_spec(cell, loop), workload,
                                 cell_constraints(cell, constraints), 1)});
  }
  return rows;
}

}  // namespace budget
