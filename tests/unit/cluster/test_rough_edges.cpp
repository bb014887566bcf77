// Issue 44 §5, the rough edges a new user meets: the default headroom and its source, a file of one
// kind passed where another is read says what it is and where it goes, one wording for call counts.

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/error.hpp"
#include "budget/layout_search.hpp"
#include "budget/link_fit.hpp"
#include "search/structure_share.hpp"

#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

const std::string source_dir = std::string(BUDGET_SOURCE_DIR) + "/";

using test::error_of;

/// A candidate at EP 8 with `moe_executions` executed MoE layers a token and `calls` all-to-all calls
/// of 1000 bytes a step of 1000 tokens (the all-to-all's exposed time 0.1 s, compute 0.9 s).
ClusterCandidateTime at_ep8(double moe_executions, double calls) {
  ClusterCandidateTime c;
  c.found = true;
  c.best.memory.layout.ep = 8;
  c.best.time.tokens_per_step = 1000;
  c.best.time.seconds_per_step = 1.0;
  c.best.time.by_component = {{"compute", 0.9, false}, {"ep_all_to_all", 0.1, false}};
  CommTerm ep;
  ep.name = "ep";
  ep.kind = CollectiveKind::all_to_all;
  ep.size_bytes = 1000;
  ep.calls_per_step = calls;
  c.best.time.communication.push_back({0, {ep}, 0.0, 0.0});
  c.seconds_per_token = 1e-3;
  c.single_gpu_seconds_per_token = 1e-3;
  c.moe_executions_per_token = moe_executions;
  return c;
}

}  // namespace

TEST_CASE("rough edges: the ranking words a change of call counts one way in every line",
          "[cluster][search][rough_edges]") {
  // The looped candidate executes 18 MoE layers a token against the baseline's 12 (+50%), and so
  // makes 36 all-to-all calls a step against 24 (+50%): both lines say "+50% ... calls".
  const ClusterCandidateTime baseline = at_ep8(12, 24);
  ClusterCandidateTime looped = at_ep8(18, 36);
  budget::detail::compare_with_baseline(looped, baseline);
  REQUIRE(looped.differences.size() >= 3);
  CHECK(looped.differences[0] ==
        "+50% MoE layer executions per token (18 vs 12); +50% all-to-all calls per token (EP 8 and 8)");
  bool component_line = false;
  for (const std::string& line : looped.differences) {
    CHECK(line.find("as many") == std::string::npos);
    if (line.rfind("ep_all_to_all:", 0) == 0) {
      component_line = true;
      CHECK_THAT(line, Catch::Contains("(+50% calls, +0% bytes a call)"));
    }
  }
  CHECK(component_line);
}

TEST_CASE("rough edges: a cluster file read as a calibration profile says to pass it with --cluster",
          "[cluster][calibration][rough_edges]") {
  const std::string cluster = source_dir + "examples/clusters/h200.json";
  const Error e = error_of([&] { (void)load_calibration_profile(cluster); });
  CHECK(e.path() == "/schema");
  CHECK_THAT(e.message(), Catch::Contains("this is a cluster file (schema \"budget.cluster\", docs/cluster.md)") &&
                              Catch::Contains("not a calibration profile: pass it with --cluster") &&
                              !Catch::Contains("allowed keys"));
}

TEST_CASE("rough edges: a calibration profile read as a cluster file says to pass it with --calibration",
          "[cluster][calibration][rough_edges]") {
  const std::string profile = source_dir + "cuda_profiler/profiles/h200-published.json";
  const Error e = error_of([&] { (void)load_cluster_spec(profile); });
  CHECK(e.path() == "/schema");
  CHECK_THAT(e.message(), Catch::Contains("this is a calibration profile") &&
                              Catch::Contains("not a cluster file: pass it with --calibration"));
  // A file of measured collectives read as a cluster file, and a cluster file read as measurements.
  const std::string collectives = R"({"schema": "budget.collectives", "schema_version": 1, "measurements": []})";
  CHECK_THAT(error_of([&] { (void)parse_cluster_spec(collectives, "m.json"); }).message(),
             Catch::Contains("this is a file of measured collectives"));
  CHECK_THAT(error_of([&] { (void)load_collective_measurements(source_dir + "examples/clusters/b200.json"); }).message(),
             Catch::Contains("this is a cluster file") && Catch::Contains("pass it with --cluster"));
  // An unknown schema is still the reader's own error (the value and what is allowed).
  CHECK_THAT(error_of([&] { (void)parse_cluster_spec(R"({"schema": "other"})", "o.json"); }).message(),
             !Catch::Contains("this is"));
}

TEST_CASE("rough edges: the default headroom is the measured median slack of PyTorch's caching allocator",
          "[cluster][search][rough_edges]") {
  // default_min_headroom_gib (budget/layout_search.hpp) against the data it cites: SimuMax v1.2's
  // measured Megatron-Core runs on 8x B200, torch.cuda.max_memory_reserved() −
  // max_memory_allocated() of each run measured on its own (runs that reuse another run's memory
  // counted once). By hand: 19 runs, gaps 0.83 … 12.92 GiB, median 4.12 GiB → 4 GiB.
  std::ifstream in(source_dir + "tests/data/measured/simumax_b200_runs.json");
  REQUIRE(in);
  const nlohmann::json runs = nlohmann::json::parse(in).at("runs");
  std::vector<double> gaps;
  for (const nlohmann::json& run : runs) {
    const nlohmann::json& r = run.at("results");
    if (r.at("real_alloc_gib").is_null() || r.at("memory_reused_from_other_mbc_run").get<bool>()) continue;
    gaps.push_back(r.at("real_reserved_gib").get<double>() - r.at("real_alloc_gib").get<double>());
  }
  REQUIRE(gaps.size() == 19);
  std::sort(gaps.begin(), gaps.end());
  CHECK(gaps.front() == Approx(0.83));
  CHECK(gaps.back() == Approx(12.92));
  const double median = gaps[gaps.size() / 2];
  CHECK(median == Approx(4.12));
  CHECK(default_min_headroom_gib == std::floor(median));
  // The library's own search keeps 0 (the search as asked); the CLI and Python take the default.
  CHECK(LayoutSearchOptions{}.min_headroom_bytes == 0.0);
}
