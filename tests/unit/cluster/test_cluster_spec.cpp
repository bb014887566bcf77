// The strict cluster reader (docs/cluster.md), the shipped examples, and the smallest-layout search.

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/error.hpp"
#include "budget/layout_search.hpp"
#include "budget/training_memory.hpp"
#include "support/accounting_fixtures.hpp"

using namespace budget;

namespace {

const std::string clusters_dir = std::string(BUDGET_SOURCE_DIR) + "/examples/clusters/";

std::string cluster_text(const std::string& gpu_extra = "", const std::string& top_extra = "") {
  return R"({"schema": "budget.cluster", "schema_version": 1, "name": "t",
    "gpu": {"name": "G", "memory_GiB": 80, "reserved_GiB": 1, )" +
         gpu_extra + R"( "compute": {"datasheet": {"bf16_dense_TFLOPs": 989.4, "source": "datasheet"}}},
    "gpus_per_node": 8, "nodes": 2, )" +
         top_extra + R"(
    "intra_node": {"bandwidth_GBps": 450, "latency_us": 3},
    "inter_node": {"bandwidth_GBps": 50, "latency_us": 5}})";
}

}  // namespace

TEST_CASE("cluster: the shipped example clusters read, name their GPU's published profile and carry datasheet figures",
          "[cluster]") {
  for (const char* name : {"h100-sxm", "h200", "b200", "b300", "a100-80gb"}) {
    const ClusterSpec c = load_cluster_spec(clusters_dir + name + ".json");
    CHECK(c.gpus_per_node == 8);
    CHECK(c.nodes == 1);
    // gpu.compute.calibration: the profile that times this GPU (issue 32), beside the datasheet peak.
    CHECK(c.compute.source == ComputeSource::calibration);
    CHECK(std::filesystem::path(c.compute.calibration_profile).filename().string() ==
          std::string(name) + "-published.json");
    CHECK(std::filesystem::exists(c.compute.calibration_profile));
    CHECK(c.compute.peak_bf16_dense_flops_per_s > 0.0);
    CHECK_THAT(c.compute.datasheet_source, Catch::Contains("datasheet"));
    CHECK(c.memory_bytes > c.reserved_bytes);
    CHECK(c.intra_node.bandwidth_bytes_per_s > c.inter_node.bandwidth_bytes_per_s);
  }
  // The NVL72 racks: trays of 4 GPUs, one 72-GPU NVLink domain, each naming its own profile.
  for (const char* name : {"gb200", "gb300"}) {
    const ClusterSpec c = load_cluster_spec(clusters_dir + name + "-nvl72.json");
    CHECK(c.gpus_per_node == 4);
    CHECK(c.nodes == 18);
    CHECK(c.nvlink_domain_gpus == 72);
    CHECK(std::filesystem::path(c.compute.calibration_profile).filename().string() ==
          std::string(name) + "-published.json");
    CHECK(std::filesystem::exists(c.compute.calibration_profile));
  }
  const ClusterSpec h200 = load_cluster_spec(clusters_dir + "h200.json", 4);
  CHECK(h200.nodes == 4);
  CHECK(h200.total_gpus() == 32);
  CHECK(h200.intra_node.bandwidth_bytes_per_s == 450e9);
  CHECK(h200.inter_node.latency_s == Approx(5e-6));
}

TEST_CASE("cluster: the reader is strict", "[cluster]") {
  const ClusterSpec c = parse_cluster_spec(cluster_text(), "c.json");
  CHECK(c.memory_bytes == 80LL * 1024 * 1024 * 1024);
  CHECK(c.usable_memory_bytes() == 79LL * 1024 * 1024 * 1024);
  CHECK(c.total_gpus() == 16);
  CHECK_THROWS_WITH(parse_cluster_spec(cluster_text("", R"("gpus": 3,)"), "c.json"),
                    Catch::Contains("c.json: /gpus: unknown key"));
  CHECK_THROWS_WITH(parse_cluster_spec(cluster_text(R"("memory_gib": 80,)"), "c.json"),
                    Catch::Contains("/gpu/memory_gib: unknown key"));
  // A profile and datasheet peaks together: the profile times the GPU, the peak is kept.
  std::string both = cluster_text();
  both.replace(both.find(R"({"datasheet")"), 1, R"({"calibration": "p.json", )");
  const ClusterSpec with_both = parse_cluster_spec(both, "c.json", "/data/clusters");
  CHECK(with_both.compute.source == ComputeSource::calibration);
  CHECK(with_both.compute.calibration_profile == "/data/clusters/p.json");
  CHECK(with_both.compute.peak_bf16_dense_flops_per_s == Approx(989.4e12));
  std::string neither = cluster_text();
  const auto neither_start = neither.find(R"({"datasheet")");
  neither.replace(neither_start, neither.find("}}", neither_start) + 2 - neither_start, "{}");
  CHECK_THROWS_WITH(parse_cluster_spec(neither, "c.json"), Catch::Contains("/gpu/compute") && Catch::Contains("or both"));
  // The old informational key is refused by name, pointing at its replacement.
  CHECK_THROWS_WITH(parse_cluster_spec(cluster_text(R"("default_profile": "p.json",)"), "c.json"),
                    Catch::Contains("/gpu/default_profile") && Catch::Contains("gpu.compute.calibration"));
  std::string calibrated = cluster_text();
  const auto start = calibrated.find(R"({"datasheet")");
  const auto end = calibrated.find("}}", start) + 2;
  calibrated.replace(start, end - start, R"({"calibration": "profiles/h200.json"})");
  const ClusterSpec cal = parse_cluster_spec(calibrated, "c.json", "/data/clusters");
  CHECK(cal.compute.source == ComputeSource::calibration);
  CHECK(cal.compute.calibration_profile == "/data/clusters/profiles/h200.json");
  std::string zero_nodes = cluster_text();
  zero_nodes.replace(zero_nodes.find(R"("nodes": 2)"), 10, R"("nodes": 0)");
  CHECK_THROWS_WITH(parse_cluster_spec(zero_nodes, "c.json"), Catch::Contains("/nodes"));
  std::string reserved = cluster_text();
  reserved.replace(reserved.find(R"("reserved_GiB": 1)"), 17, R"("reserved_GiB": 90)");
  CHECK_THROWS_WITH(parse_cluster_spec(reserved, "c.json"), Catch::Contains("is not below memory_GiB"));
  // A calibration profile names itself and its option (issue 44 §5); another schema is refused as such.
  CHECK_THROWS_WITH(parse_cluster_spec(R"({"schema": "budget.calibration", "schema_version": 1})", "c.json"),
                    Catch::Contains("this is a calibration profile") && Catch::Contains("pass it with --calibration"));
  CHECK_THROWS_WITH(parse_cluster_spec(R"({"schema": "budget.other", "schema_version": 1})", "c.json"),
                    Catch::Contains("is not a cluster description"));
  CHECK_THROWS_WITH(load_cluster_spec(clusters_dir + "h200.json", 0), Catch::Contains("nodes 0 is below 1"));
}

TEST_CASE("cluster: the smallest fitting layout", "[cluster]") {
  // The paper's 200M baseline fits one 80 GiB GPU; on a 16 GiB GPU it needs more, and nothing
  // with fewer GPUs than the answer fits.
  const ArchConfig c = test::paper_200m_baseline();
  ClusterSpec cluster = parse_cluster_spec(cluster_text(), "c.json");
  const SmallestLayout one = smallest_fitting_layout(c, cluster, 4096);
  REQUIRE(one.found);
  CHECK(one.memory.layout.gpus == 1);
  CHECK(one.memory.layout.recompute.kind == RecomputeKind::none);
  cluster.memory_bytes = 3LL * 1024 * 1024 * 1024;
  cluster.reserved_bytes = 0;
  const SmallestLayout more = smallest_fitting_layout(c, cluster, 4096);
  REQUIRE(more.found);
  CHECK(more.memory.fits);
  CHECK(more.memory.layout.gpus > 1);
  const SmallestLayout fewer = smallest_fitting_layout(c, cluster, 4096, more.memory.layout.gpus - 1);
  CHECK_FALSE(fewer.found);
  cluster.memory_bytes = 1024;
  CHECK_FALSE(smallest_fitting_layout(c, cluster, 4096, 64).found);
}
