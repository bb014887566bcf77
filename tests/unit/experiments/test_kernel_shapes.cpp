// Kernel-ready shapes and the aligned alternative (issue 17, item 3; kernel_shapes.hpp).

#include <string>

#include <catch2/catch.hpp>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/grid.hpp"
#include "budget/kernel_shapes.hpp"

using namespace budget;

namespace {
const std::string paper_baseline = std::string(BUDGET_SOURCE_DIR) + "/examples/configs/paper-200M-S95-baseline.json";
}

TEST_CASE("off_kernel_path names each shape off the fused kernels' path", "[kernel_shapes]") {
  ArchConfig c = load_arch_config(paper_baseline);  // 1280, 10×128 (KV 2), 192×432: all multiples of 8
  CHECK(off_kernel_path(c).empty());
  // The default match of the 200M cell: 1008, 12×84 (KV 2), 288×368.
  c.hidden_size = 1008;
  c.attention.num_heads = 12;
  c.attention.head_dim = 84;
  c.ffn.num_experts = 288;
  c.ffn.expert_dim = 368;
  const auto off = off_kernel_path(c);
  REQUIRE(off.size() == 1);  // 12·84 = 1008 and 2·84 = 168 are multiples of 8; 84 is not
  CHECK(off.front() == "head_dim 84 is not a multiple of 8");
  // A stricter alignment: 1008 = 15.75·64, 368 = 5.75·64, query 1008, KV 168.
  const auto off64 = off_kernel_path(c, 64);
  CHECK(off64.size() == 5);
  c.attention.head_dim = 320;
  c.attention.num_heads = 4;
  const auto big = off_kernel_path(c);
  REQUIRE(big.size() == 1);
  CHECK_THAT(big.front(), Catch::Contains("above 256"));
  CHECK_THROWS_AS(off_kernel_path(c, 0), Error);
}

TEST_CASE("aligned_constraints restricts every searched shape and refuses an empty range", "[kernel_shapes]") {
  const ArchConfig b = load_arch_config(paper_baseline);
  const MatchConstraints given = default_constraints(b);
  const MatchConstraints a = aligned_constraints(given, 8);
  for (const VariableRange* r : {&a.hidden_size, &a.head_dim, &a.expert_dim}) {
    if (r->is_fixed()) {
      CHECK(r->min % 8 == 0);
    } else {
      CHECK(r->multiple_of % 8 == 0);
    }
  }
  CHECK(a.head_dim.max <= max_fused_head_dim);
  MatchConstraints high = given;
  high.head_dim = VariableRange{300, 400, 4};
  CHECK_THROWS_WITH(aligned_constraints(high), Catch::Contains("lies above 256"));
  MatchConstraints narrow = given;
  narrow.expert_dim = VariableRange{401, 407, 1};
  CHECK_THROWS_WITH(aligned_constraints(narrow), Catch::Contains("no multiple of 8 lies in [401, 407]"));
}

TEST_CASE("every paper cell has an aligned alternative, kernel-ready and no better matched", "[kernel_shapes]") {
  const Grid& grid = paper_grid();
  const Workload workload = paper_workload();
  for (const GridCell& cell : grid.cells) {
    INFO(cell.baseline.name);
    const LoopSpec loop = cell_loop_spec(cell, LoopSpec::smelt());
    const MatchConstraints constraints = cell_constraints(cell, "");
    const MatchResult best = match(cell.baseline, loop, workload, constraints, 1);
    REQUIRE(best.summary.feasible);
    const AlignedAlternative alt = aligned_alternative(cell.baseline, loop, workload, constraints);
    REQUIRE(alt.candidate.has_value());
    CHECK(alt.reason.empty());
    CHECK(off_kernel_path(alt.candidate->config).empty());
    // The aligned space is a subset of the full one: its best objective cannot be smaller.
    CHECK(alt.candidate->objective >= best.candidates.front().objective - 1e-12);
  }
}
