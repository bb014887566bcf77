// The collectives mode without a GPU: the sweep, the synthetic alpha-beta timer, the fit
// recovering a known link, the cluster file written and read back, and the refusal without NCCL.

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/error.hpp"
#include "budget/file_write.hpp"
#include "budget/link_fit.hpp"
#include "budget/profiler/collectives.hpp"

using namespace budget;
using namespace budget::profiler;

namespace {
const std::string clusters_dir = std::string(BUDGET_SOURCE_DIR) + "/examples/clusters/";
}

TEST_CASE("collectives sweep: kinds × ranks × sizes, every chunk 16-byte aligned", "[collectives]") {
  const auto cases = collective_sweep_cases({}, 8);
  // Defaults: 5 collectives, ranks 2, 4, 8, sizes 1 KiB · 4^k up to 1 GiB (k = 0..10: 11 sizes).
  CHECK(cases.size() == 5 * 3 * 11);
  std::set<std::int64_t> ranks;
  for (const CollectiveCase& c : cases) {
    ranks.insert(c.ranks);
    CHECK(c.size_bytes % (c.ranks * 16) == 0);
    CHECK(c.size_bytes >= 1024);
    CHECK(c.size_bytes <= (std::int64_t{1} << 30));
  }
  CHECK(ranks == std::set<std::int64_t>{2, 4, 8});
  CHECK(cases.front().label() == "all_reduce n=2 1024 B");

  // Six GPUs: ranks 2, 4, 6; 1 KiB on 6 ranks rounds down to 1008 = 10.5 → 10 · 96.
  const auto six = collective_sweep_cases({}, 6);
  std::set<std::int64_t> six_ranks;
  for (const CollectiveCase& c : six) six_ranks.insert(c.ranks);
  CHECK(six_ranks == std::set<std::int64_t>{2, 4, 6});
  bool saw_960 = false;
  for (const CollectiveCase& c : six) saw_960 = saw_960 || (c.ranks == 6 && c.size_bytes == 960);
  CHECK(saw_960);
}

TEST_CASE("collectives sweep: bad options are refused with the reason", "[collectives]") {
  CollectiveSweepOptions o;
  CHECK_THROWS_WITH(collective_sweep_cases(o, 1), Catch::Contains("at least 2"));
  o.ranks = {2, 16};
  CHECK_THROWS_WITH(collective_sweep_cases(o, 8), Catch::Contains("ranks 16 is not in [2, 8]"));
  o = {};
  o.min_bytes = 1 << 20;
  o.max_bytes = 1 << 10;
  CHECK_THROWS_WITH(collective_sweep_cases(o, 8), Catch::Contains("max bytes 1024"));
  o = {};
  o.size_factor = 1;
  CHECK_THROWS_WITH(collective_sweep_cases(o, 8), Catch::Contains("size factor 1"));
  o = {};
  o.min_bytes = 1 << 20;
  o.max_bytes = (1 << 20) + 5;
  CHECK_THROWS_WITH(collective_sweep_cases(o, 8), Catch::Contains("give one size"));
  o = {};
  o.kinds.clear();
  CHECK_THROWS_WITH(collective_sweep_cases(o, 8), Catch::Contains("kinds is empty"));
  CHECK_THROWS_WITH(FakeCollectiveTimer(LinkSpec{1e9, 1e-6, ""}, 8, 0.7), Catch::Contains("noise"));
}

TEST_CASE("collectives: the fake timer's sweep, fitted, recovers its link", "[collectives]") {
  const LinkSpec truth{387e9, 6.2e-6, "truth"};
  SECTION("no noise: exact") {
    FakeCollectiveTimer timer(truth, 8, 0.0);
    const auto cases = collective_sweep_cases({}, 8);
    const auto rows = measure_collectives(cases, timer);
    CHECK(timer.timed_cases() == static_cast<std::int64_t>(cases.size()));
    for (const LinkFit& f : fit_links(rows, "fake")) {
      CHECK(f.link.bandwidth_bytes_per_s == Approx(truth.bandwidth_bytes_per_s).epsilon(1e-9));
      CHECK(f.link.latency_s == Approx(truth.latency_s).epsilon(1e-9));
    }
  }
  SECTION("±3% noise per case: bandwidth and latency within 3%") {
    FakeCollectiveTimer timer(truth, 8, 0.03);
    const auto rows = measure_collectives(collective_sweep_cases({}, 8), timer);
    const auto fits = fit_links(rows, "fake");
    for (const LinkFit& f : fits) {
      CHECK(f.link.bandwidth_bytes_per_s == Approx(truth.bandwidth_bytes_per_s).epsilon(0.03));
      CHECK(f.link.latency_s == Approx(truth.latency_s).epsilon(0.03));
      CHECK(f.max_relative_residual < 0.07);  // ≤ 3% noise + ≤ 3% parameter error
      CHECK(f.rms_relative_residual > 0.005);  // the noise is there
    }
    // Deterministic: the same cases give the same times.
    FakeCollectiveTimer again(truth, 8, 0.03);
    CHECK(measure_collectives(collective_sweep_cases({}, 8), again).at(7).seconds == rows.at(7).seconds);
  }
  SECTION("a case larger than the machine is refused") {
    FakeCollectiveTimer timer(truth, 4, 0.0);
    CHECK_THROWS_WITH(measure_collectives({CollectiveCase{CollectiveKind::all_reduce, 8, 1024}}, timer),
                      Catch::Contains("needs 8 GPUs; the timer has 4"));
  }
}

TEST_CASE("collectives: the written cluster file reads back through the library's reader", "[collectives]") {
  const ClusterSpec base = load_cluster_spec(clusters_dir + "h200.json");
  const LinkSpec truth{512e9, 4.0e-6, "truth"};
  FakeCollectiveTimer timer(truth, 8, 0.01);
  const auto rows = measure_collectives(collective_sweep_cases({}, 8), timer);
  const auto fits = fit_links(rows, "fake");
  const ClusterSpec measured = measured_cluster(base, fits.back(), timer.device(), timer.simulated());
  const std::string path = (std::filesystem::temp_directory_path() / "budget_profiler_test_cluster.json").string();
  write_file_atomically(path, cluster_spec_json(measured, "test notes"));
  const ClusterSpec back = load_cluster_spec(path);
  std::remove(path.c_str());
  CHECK(back.intra_node.bandwidth_bytes_per_s == Approx(truth.bandwidth_bytes_per_s).epsilon(0.01));
  CHECK(back.intra_node.latency_s == Approx(truth.latency_s).epsilon(0.01));
  CHECK(back.intra_node.bandwidth_bytes_per_s == Approx(fits.back().link.bandwidth_bytes_per_s).epsilon(1e-12));
  CHECK_THAT(back.intra_node.source, Catch::StartsWith("SIMULATED") && Catch::Contains("fitted to 165 timed collectives"));
  CHECK(back.inter_node.bandwidth_bytes_per_s == base.inter_node.bandwidth_bytes_per_s);
  CHECK(back.inter_node.source == base.inter_node.source);
  CHECK(back.gpu_name == base.gpu_name);
  CHECK(back.memory_bytes == base.memory_bytes);
  CHECK(back.gpus_per_node == base.gpus_per_node);
  CHECK_THAT(back.name, Catch::Contains("simulated collectives"));
}

// The refusal without NCCL (or without 2 GPUs) is budget-profile's: ctest profiler.cli.collectives_refused
// (this executable links only the host core, not the timers).
