// Grid acceptance (issue 3): every sparse cell of the paper's grid is matched within 2% and no
// worse than the paper's own deviation; ablations and run plans.

#include <cmath>

#include <catch2/catch.hpp>

#include "budget/error.hpp"
#include "budget/grid.hpp"
#include "budget/plan.hpp"

using namespace budget;

namespace {
const std::string grid_path = std::string(BUDGET_SOURCE_DIR) + "/examples/grids/paper_grid.json";
}

TEST_CASE("the paper grid file parses into 16 cells with published columns", "[grid]") {
  const Grid g = load_grid(grid_path);
  REQUIRE(g.cells.size() == 16);
  for (const auto& cell : g.cells) {
    CHECK(cell.loop.has_value());
    CHECK(cell.published_looped.flops_ratio.has_value());
    CHECK(cell.published_max_deviation().has_value());
  }
  // 200M S95: paper max(|1.029−1|, |1.031−1|, |3.89/3.87−1|) = 3.1%.
  CHECK(*g.cells[6].published_max_deviation() == Approx(0.031).margin(1e-12));
}

TEST_CASE("every sparse cell is matched within 2% and no worse than the paper", "[grid]") {
  const Grid g = load_grid(grid_path);
  const auto rows = match_grid(g, LoopSpec::smelt(), paper_workload());
  int sparse = 0;
  for (const auto& row : rows) {
    REQUIRE(row.result.summary.feasible);
    const Candidate& c = row.result.candidates.front();
    // The matched config loops exactly the cell's published layers.
    REQUIRE(c.config.loop.has_value());
    CHECK(c.config.loop->first == row.cell->loop->first);
    CHECK(c.config.loop->last == row.cell->loop->last);
    if (row.cell->baseline.ffn.num_experts == 8) continue;  // S≈0 level: not a sparse cell
    ++sparse;
    INFO(row.cell->baseline.name << ": ours " << c.deviation.max_abs() << " paper " << *row.cell->published_max_deviation());
    CHECK(c.deviation.max_abs() < 0.02);
    CHECK(c.deviation.max_abs() <= *row.cell->published_max_deviation());
  }
  CHECK(sparse == 12);
}

TEST_CASE("grid files: errors name the cell and the field", "[grid]") {
  try {
    parse_grid(R"({"cells": [{"baseline": {"hidden_size": 64, "num_layers": 2,
                  "attention": {"num_heads": 2, "head_dim": 32, "num_kv_heads": 3},
                  "ffn": {"num_experts": 8, "top_k": 2, "expert_dim": 64}}}]})",
               "g.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("g.json: /cells/0/baseline/attention/num_kv_heads"));
  }
  CHECK_THROWS_WITH(parse_grid(R"({"cells": []})", "g.json"), Catch::Contains("non-empty array"));
  CHECK_THROWS_WITH(parse_grid(R"({"cell": []})", "g.json"), Catch::Contains("did you mean \"cells\""));
}

TEST_CASE("ablations: every point is budget-matched and carries the paper's loss", "[grid]") {
  const Grid g = load_grid(grid_path);
  const ArchConfig& base = g.cells[6].baseline;  // 200M, 192 experts
  const auto span = run_ablation(Ablation::span, base, paper_workload(), 95).points;
  REQUIRE(span.size() == 7);  // 0, 2, ..., 12
  CHECK(span[0].result.summary.best_objective == 0.0);
  CHECK(span[3].paper_loss == Approx(1.8517));  // span 6
  CHECK_FALSE(span[1].paper_loss.has_value());  // span 2: not published
  for (const auto& p : span) {
    REQUIRE(p.result.summary.feasible);
    CHECK(p.result.candidates.front().deviation.max_abs() < 0.03);
  }
  // Executed depth 12 + span.
  for (std::size_t i = 0; i < span.size(); ++i) {
    CHECK(span[i].result.candidates.front().config.executed_layers() == 12 + 2 * static_cast<std::int64_t>(i));
  }
  const auto repeats = run_ablation(Ablation::repeats, base, paper_workload(), 85).points;
  REQUIRE(repeats.size() == 4);
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(repeats[r].result.candidates.front().config.executed_layers() == 12 + 6 * static_cast<std::int64_t>(r));
  }
  CHECK(repeats[2].paper_loss == Approx(1.9385));
  const auto depth = run_ablation(Ablation::depth, base, paper_workload()).points;
  REQUIRE(depth.size() == 14);
  for (const auto& p : depth) {
    REQUIRE(p.result.summary.feasible);
    CHECK(p.result.candidates.front().config.num_layers == p.num_layers);
  }
}

TEST_CASE("run plans: tokens and compute at every branch endpoint", "[grid]") {
  const Recipe r = paper_recipe();
  CHECK(r.tokens_per_step() == 1'048'576);
  const Plan p = plan_runs({{"200M", "baseline", 1.33e9, 0.946}, {"200M", "looped", 1.37e9, 0.946}}, r);
  REQUIRE(p.endpoints.size() == 12);
  // First branch: 10,000 steps × 1,048,576 tokens + 10e9 decay tokens = 20,485,760,000.
  CHECK(p.endpoints[0].tokens == 20'485'760'000.0);
  CHECK(p.endpoints[0].compute == Approx(1.33e9 * 20'485'760'000.0));
  // Last branch: 196,075 × 1,048,576 + 1e10 = 215,599,539,200 tokens.
  CHECK(p.endpoints[5].tokens == 215'599'539'200.0);
  // Per run: stable 205,599,539,200 tokens + 6 decays of 1e10 = 265,599,539,200 tokens.
  CHECK(p.total_tokens == 2 * 265'599'539'200.0);
  CHECK(p.total_compute == Approx((1.33e9 + 1.37e9) * 265'599'539'200.0));
  CHECK(p.min_endpoint_compute == Approx(1.33e9 * 20'485'760'000.0));
  CHECK(p.max_endpoint_compute == Approx(1.37e9 * 215'599'539'200.0));
}

TEST_CASE("recipes: validation errors", "[grid]") {
  CHECK_THROWS_WITH(parse_recipe(R"({"branch_steps": [100, 50]})", "r.json"), Catch::Contains("must increase"));
  CHECK_THROWS_WITH(parse_recipe(R"({"branch_steps": [10, 300000]})", "r.json"), Catch::Contains("outside [1, stable_steps"));
  CHECK_THROWS_WITH(parse_recipe(R"({"stable_step": 5})", "r.json"), Catch::Contains("did you mean \"stable_steps\""));
  CHECK_THROWS_WITH(parse_recipe(R"({"branch_steps": ["a"]})", "r.json"), Catch::Contains("/branch_steps/0"));
  const Recipe ok = parse_recipe(R"({"stable_steps": 1000, "branch_steps": [500, 1000], "decay_tokens": 1e9})", "r.json");
  CHECK(ok.branch_steps.size() == 2);
}
