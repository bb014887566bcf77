// The shared widths a structure can still use (match/shared_width_range.hpp) against brute force:
// every shared width at which solve_experts() keeps a point for some routed width lies inside the
// range, separate or tied to the routed width, for bounds from 10⁻⁴ to 5%; and the tied range is
// a few lattice steps, not the whole lattice.

#include <algorithm>
#include <limits>

#include <catch2/catch.hpp>

#include "budget/match.hpp"
#include "match/closed_form.hpp"
#include "match/search_space.hpp"
#include "match/shared_width_range.hpp"
#include "support/accounting_fixtures.hpp"

using namespace budget;
using namespace budget::match_detail;

namespace {

/// The paper's 200M baseline with one shared expert of the routed width, on small lattices.
ArchConfig shared_baseline() {
  ArchConfig b = test::paper_200m_baseline();
  b.ffn.num_shared_experts = 1;
  b.ffn.shared_expert_dim = 432;
  return b;
}

MatchConstraints small_lattices(const ArchConfig& b, bool tied) {
  MatchConstraints c = default_constraints(b);
  c.num_experts = VariableRange{8, 512, 8};
  c.expert_dim = VariableRange{64, 2048, 16};
  c.shared_expert_dim = VariableRange{64, 2048, 16};
  c.tie_shared_expert_dim = tied;
  return c;
}

/// Whether solve_experts() keeps a point at shared width index `si` for some routed width.
bool some_point_at(const SearchSpace& space, const Coefficients& k, std::int64_t si, double bound) {
  const std::int64_t S = space.shareds().at(si);
  for (std::int64_t wi = 0; wi < space.widths().count(); ++wi) {
    const std::int64_t W = space.widths().at(wi);
    if (space.tied_shared() && W != S) continue;
    if (solve_experts(space, k, W, S, bound)) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("shared width range: every shared width with a point lies inside it", "[match][shared-range]") {
  const ArchConfig b = shared_baseline();
  for (const bool tied : {false, true}) {
    const MatchConstraints c = small_lattices(b, tied);
    const Workload w = paper_workload();
    const SearchSpace space(b, LoopSpec::smelt(), w, c);
    REQUIRE(space.tied_shared() == tied);
    REQUIRE_FALSE(space.kv_structures().empty());
    for (std::size_t s = 0; s < std::min<std::size_t>(space.kv_structures().size(), 3); ++s) {
      const KvStructure& kv = space.kv_structures()[s];
      for (const std::int64_t hidden : {b.hidden_size - 128, b.hidden_size, b.hidden_size + 256}) {
        const std::int64_t heads = b.attention.num_heads;
        const Coefficients k = calibrate(space, space.structure_config(kv, hidden, heads), kv.top_k);
        for (const double bound : {1e-4, 1e-3, 1e-2, 5e-2}) {
          INFO((tied ? "tied" : "separate") << ", structure " << s << ", hidden " << hidden << ", bound " << bound);
          const SharedWidthRange range = shared_width_range(space, k, bound);
          CHECK(range.begin >= 0);
          CHECK(range.begin <= range.end);
          CHECK(range.end <= space.shareds().count());
          std::int64_t with_points = 0;
          for (std::int64_t si = 0; si < space.shareds().count(); ++si) {
            if (!some_point_at(space, k, si, bound)) continue;
            ++with_points;
            CHECK(si >= range.begin);
            CHECK(si < range.end);
          }
          // Tied: the range is a few steps around the widths with points, not the lattice.
          if (tied && bound <= 1e-2) {
            CHECK(range.bounded);
            CHECK(range.end - range.begin <= with_points + 8);
          }
        }
      }
    }
  }
}

TEST_CASE("shared width range: no pruning where it does not apply", "[match][shared-range]") {
  // An infinite bound (pass 1 before an incumbent), and a space without shared experts.
  const ArchConfig b = shared_baseline();
  const MatchConstraints c = small_lattices(b, true);
  const SearchSpace space(b, LoopSpec::smelt(), paper_workload(), c);
  const KvStructure& kv = space.kv_structures().front();
  const Coefficients k = calibrate(space, space.structure_config(kv, b.hidden_size, b.attention.num_heads), kv.top_k);
  const SharedWidthRange open = shared_width_range(space, k, std::numeric_limits<double>::infinity());
  CHECK_FALSE(open.bounded);
  CHECK(open.begin == 0);
  CHECK(open.end == space.shareds().count());
  const ArchConfig plain = test::paper_200m_baseline();
  const MatchConstraints pc = default_constraints(plain);
  const SearchSpace no_shared(plain, LoopSpec::smelt(), paper_workload(), pc);
  const KvStructure& pkv = no_shared.kv_structures().front();
  const Coefficients pk =
      calibrate(no_shared, no_shared.structure_config(pkv, plain.hidden_size, plain.attention.num_heads), pkv.top_k);
  CHECK_FALSE(shared_width_range(no_shared, pk, 1e-3).bounded);
}

TEST_CASE("shared width range: match() gives the same candidates and counters with and without it",
          "[match][shared-range]") {
  const ArchConfig b = shared_baseline();
  for (const bool tied : {false, true}) {
    const MatchConstraints c = small_lattices(b, tied);
    const MatchResult with = match(b, LoopSpec::smelt(), paper_workload(), c, 20);
    set_shared_width_range_enabled(false);
    const MatchResult without = match(b, LoopSpec::smelt(), paper_workload(), c, 20);
    set_shared_width_range_enabled(true);
    INFO((tied ? "tied" : "separate"));
    CHECK(with.summary.evaluated == without.summary.evaluated);
    CHECK(with.summary.structures == without.summary.structures);
    CHECK(with.summary.best_objective == without.summary.best_objective);
    REQUIRE(with.candidates.size() == without.candidates.size());
    for (std::size_t i = 0; i < with.candidates.size(); ++i) {
      CHECK(with.candidates[i].config.hidden_size == without.candidates[i].config.hidden_size);
      CHECK(with.candidates[i].config.ffn.num_experts == without.candidates[i].config.ffn.num_experts);
      CHECK(with.candidates[i].config.ffn.expert_dim == without.candidates[i].config.ffn.expert_dim);
      CHECK(with.candidates[i].config.ffn.shared_expert_dim == without.candidates[i].config.ffn.shared_expert_dim);
      CHECK(with.candidates[i].objective == without.candidates[i].objective);
    }
  }
}
