// Row #1 does not depend on --top (docs/matching.md, "Objective and ranking"): the best-matched
// representative of every equally matched shape, with one row as with a thousand, on every cell
// of the paper's grid and every released Hugging Face config of tests/data/hf/.

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/grid.hpp"
#include "budget/match.hpp"

using namespace budget;

namespace {

/// match() with --top 1 and --top 1000: both feasible with the same #1, or both refused alike.
void check_first_row_independent_of_top(const ArchConfig& baseline, const LoopSpec& loop,
                                        const MatchConstraints& constraints) {
  std::string one_error, many_error;
  std::optional<MatchResult> one, many;
  try {
    one = match(baseline, loop, paper_workload(), constraints, 1);
  } catch (const Error& e) {
    one_error = e.what();
  }
  try {
    many = match(baseline, loop, paper_workload(), constraints, 1000);
  } catch (const Error& e) {
    many_error = e.what();
  }
  CHECK(one_error == many_error);
  if (!one || !many) return;
  REQUIRE(one->summary.feasible == many->summary.feasible);
  if (!one->summary.feasible) return;
  REQUIRE(one->candidates.size() == 1);
  const Candidate& a = one->candidates.front();
  const Candidate& b = many->candidates.front();
  INFO("top 1: max dev " << a.deviation.max_abs() << " (F " << a.deviation.flops << ", N " << a.deviation.params
                         << ", KV " << a.deviation.kv << "); top 1000: max dev " << b.deviation.max_abs() << " (F "
                         << b.deviation.flops << ", N " << b.deviation.params << ", KV " << b.deviation.kv << "), "
                         << many->candidates.size() << " rows");
  CHECK(arch_config_to_json(a.config) == arch_config_to_json(b.config));
}

}  // namespace

TEST_CASE("row #1 with --top 1 is row #1 with --top 1000: every paper grid cell", "[match][grid]") {
  const Grid& grid = paper_grid();
  REQUIRE(grid.cells.size() == 16);
  for (const GridCell& cell : grid.cells) {
    INFO("cell " << cell.size << " " << cell.baseline.name);
    check_first_row_independent_of_top(cell.baseline, cell_loop_spec(cell, LoopSpec::smelt()), cell_constraints(cell, ""));
  }
}

TEST_CASE("row #1 with --top 1 is row #1 with --top 1000: released Hugging Face configs", "[match]") {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(BUDGET_SOURCE_DIR) + "/tests/data/hf")) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 15);
  for (const auto& path : files) {
    INFO(path.filename().string());
    const ArchConfig baseline = load_arch_config(path.string());
    check_first_row_independent_of_top(baseline, LoopSpec::smelt(), default_constraints(baseline));
  }
  // The case: DeepSeek-V2-Lite with its KV latent held at 512, where the KV cache cannot
  // be matched and every shape is equally matched on the largest deviation.
  const ArchConfig lite = load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/tests/data/hf/deepseek-v2-lite.json");
  MatchConstraints fixed = default_constraints(lite);
  fixed.kv_lora_rank = VariableRange::fixed(512);
  check_first_row_independent_of_top(lite, LoopSpec::smelt(), fixed);
}
