// Fitting link bandwidth and latency to measured collectives (link_fit.hpp), the measurements
// file, and the cluster file writer (cluster_spec_json) read back by the strict reader.

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "budget/cluster.hpp"
#include "budget/error.hpp"
#include "budget/link_fit.hpp"

using namespace budget;

namespace {

/// The model written out by hand for the test (independent of communication.cpp): ring
/// all-reduce S·2(n−1)/n/B + 2(n−1)·α; all-gather S·(n−1)/n/B + (n−1)·α; send/recv S/B + α.
double hand_seconds(CollectiveKind kind, double size, double n, double bandwidth, double latency) {
  switch (kind) {
    case CollectiveKind::all_reduce: return size * 2.0 * (n - 1.0) / n / bandwidth + 2.0 * (n - 1.0) * latency;
    case CollectiveKind::send_recv: return size / bandwidth + latency;
    default: return size * (n - 1.0) / n / bandwidth + (n - 1.0) * latency;
  }
}

std::vector<CollectiveMeasurement> exact_samples(double bandwidth, double latency) {
  std::vector<CollectiveMeasurement> ms;
  for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                           CollectiveKind::all_to_all, CollectiveKind::send_recv}) {
    for (std::int64_t n : {2, 4, 8}) {
      for (double s = 1024.0; s <= 1073741824.0; s *= 16.0) {
        ms.push_back({k, n, s, hand_seconds(k, s, static_cast<double>(n), bandwidth, latency)});
      }
    }
  }
  return ms;
}

}  // namespace

TEST_CASE("link fit: exact alpha-beta times give back the link", "[cluster][link_fit]") {
  const double bandwidth = 412e9, latency = 7.5e-6;
  const auto ms = exact_samples(bandwidth, latency);
  const std::vector<LinkFit> fits = fit_links(ms, "test");
  REQUIRE(fits.size() == 6);  // five collectives, then the joint fit
  for (const LinkFit& f : fits) {
    CHECK(f.link.bandwidth_bytes_per_s == Approx(bandwidth).epsilon(1e-9));
    CHECK(f.link.latency_s == Approx(latency).epsilon(1e-9));
    CHECK(f.max_relative_residual < 1e-9);
    CHECK_FALSE(f.latency_at_zero);
  }
  CHECK(fits.back().kinds.size() == 5);
  CHECK(fits.back().measurements == ms.size());
  CHECK(fits.front().kinds == std::vector<CollectiveKind>{CollectiveKind::all_reduce});
  CHECK_THAT(fits.back().brief(), Catch::Contains("412.0 GB/s") && Catch::Contains("7.50 us"));
}

TEST_CASE("link fit: two points solved by hand", "[cluster][link_fit]") {
  // All-reduce on 2 ranks: t = S/B + 2α. t(1000) = 12 µs, t(1e9) = 10.01 ms:
  // 1/B = (10.01e-3 − 12e-6)/(1e9 − 1000) → B = 1e11 (to 1e-6), 2α = 12e-6 − 1000/1e11 → α = 5.995 µs.
  const std::vector<CollectiveMeasurement> ms{{CollectiveKind::all_reduce, 2, 1000.0, 12e-6},
                                              {CollectiveKind::all_reduce, 2, 1e9, 10.01e-3 + 1e-8}};
  const LinkFit f = fit_link(ms, "test");
  const double inv_b = (ms[1].seconds - ms[0].seconds) / (1e9 - 1000.0);
  CHECK(f.link.bandwidth_bytes_per_s == Approx(1.0 / inv_b).epsilon(1e-9));
  CHECK(f.link.latency_s == Approx((12e-6 - 1000.0 * inv_b) / 2.0).epsilon(1e-9));
  CHECK(f.max_relative_residual < 1e-9);
}

TEST_CASE("link fit: a negative latency is refitted at zero and flagged", "[cluster][link_fit]") {
  // Times 1% below S/B at every size: the unconstrained fit puts the difference into a negative α.
  std::vector<CollectiveMeasurement> ms;
  for (double s : {1e4, 1e6, 1e8}) ms.push_back({CollectiveKind::send_recv, 2, s, s / 1e11 - 1e-8});
  const LinkFit f = fit_link(ms, "test");
  CHECK(f.latency_at_zero);
  CHECK(f.link.latency_s == 0.0);
  CHECK(f.link.bandwidth_bytes_per_s > 0.0);
  CHECK_THAT(f.link.source, Catch::Contains("set to 0"));
}

TEST_CASE("link fit: bad measurements are refused with the reason", "[cluster][link_fit]") {
  const CollectiveMeasurement good{CollectiveKind::all_gather, 4, 1e6, 1e-5};
  CHECK_THROWS_WITH(fit_link({good}, "m.json"), Catch::Contains("m.json") && Catch::Contains("at least two"));
  CHECK_THROWS_WITH(fit_link({}, "m.json"), Catch::Contains("0 measurement"));
  // One size per (collective, ranks): bandwidth and latency cannot be told apart.
  CHECK_THROWS_WITH(fit_link({good, good}, "m.json"), Catch::Contains("cannot separate bandwidth from latency"));
  CollectiveMeasurement bad = good;
  bad.seconds = 0.0;
  CHECK_THROWS_WITH(fit_link({good, bad}, "m.json"),
                    Catch::Contains("measurement 1 (all_gather, 4 ranks") && Catch::Contains("not positive"));
  bad = good;
  bad.ranks = 1;
  CHECK_THROWS_WITH(fit_link({bad, good}, "m.json"), Catch::Contains("measurement 0") && Catch::Contains("ranks = 1"));
  bad = good;
  bad.size_bytes = std::nan("");
  CHECK_THROWS_WITH(fit_link({good, bad}, "m.json"), Catch::Contains("size = nan"));
  // Times that fall with size: no positive bandwidth explains them.
  CHECK_THROWS_WITH(fit_link({{CollectiveKind::all_gather, 4, 1e3, 1e-3}, {CollectiveKind::all_gather, 4, 1e9, 1e-5}},
                             "m.json"),
                    Catch::Contains("bandwidth is not positive"));
}

TEST_CASE("link fit: the measurements file round-trips and is read strictly", "[cluster][link_fit]") {
  CollectiveMeasurements m;
  m.tool = "test";
  m.device = "two \"GPUs\"";
  m.simulated = true;
  m.rows = exact_samples(300e9, 4e-6);
  const std::string text = collective_measurements_json(m, fit_links(m.rows, "test"));
  const CollectiveMeasurements back = parse_collective_measurements(text, "m.json");
  CHECK(back.device == m.device);
  CHECK(back.simulated);
  REQUIRE(back.rows.size() == m.rows.size());
  for (std::size_t i = 0; i < m.rows.size(); ++i) {
    CHECK(back.rows[i].kind == m.rows[i].kind);
    CHECK(back.rows[i].ranks == m.rows[i].ranks);
    CHECK(back.rows[i].size_bytes == m.rows[i].size_bytes);
    CHECK(back.rows[i].seconds == Approx(m.rows[i].seconds).epsilon(1e-12));
  }
  const LinkFit refit = fit_link(back.rows, "m.json");
  CHECK(refit.link.bandwidth_bytes_per_s == Approx(300e9).epsilon(1e-6));

  const std::string head = R"({"schema": "budget.collectives", "schema_version": 1, "source": {}, "measurements": [)";
  CHECK_THROWS_WITH(parse_collective_measurements(head + R"({"collective": "broadcast", "ranks": 2, "bytes": 8, "time_us": 1}]})", "m.json"),
                    Catch::Contains("m.json") && Catch::Contains("broadcast") && Catch::Contains("allowed: all_reduce"));
  CHECK_THROWS_WITH(collective_kind_from_string("alltoall", "row 3"),
                    "row 3: collective \"alltoall\" is not known; allowed: all_reduce, all_gather, reduce_scatter, "
                    "all_to_all, send_recv");
  CHECK(collective_kind_from_string("send_recv", "x") == CollectiveKind::send_recv);
  CHECK_THROWS_WITH(parse_collective_measurements(head + R"({"collective": "all_reduce", "ranks": 1, "bytes": 8, "time_us": 1}]})", "m.json"),
                    Catch::Contains("/measurements/0/ranks"));
  CHECK_THROWS_WITH(parse_collective_measurements(head + R"({"collective": "all_reduce", "ranks": 2, "bytes": 8, "time_us": 1, "tim_us": 2}]})", "m.json"),
                    Catch::Contains("tim_us"));
  // A cluster file names itself and its option (issue 44 §5); another schema is refused as such.
  CHECK_THROWS_WITH(parse_collective_measurements(R"({"schema": "budget.cluster", "schema_version": 1, "source": {}, "measurements": []})", "m.json"),
                    Catch::Contains("this is a cluster file") && Catch::Contains("pass it with --cluster"));
  CHECK_THROWS_WITH(parse_collective_measurements(R"({"schema": "budget.other", "schema_version": 1, "source": {}, "measurements": []})", "m.json"),
                    Catch::Contains("not a collectives measurement"));
}

TEST_CASE("cluster file writer: what it writes reads back as the same cluster", "[cluster][link_fit]") {
  const std::string dir = std::string(BUDGET_SOURCE_DIR) + "/examples/clusters/";
  for (const char* name : {"h100-sxm", "h200", "b200", "a100-80gb"}) {
    const ClusterSpec c = load_cluster_spec(dir + name + ".json");
    const ClusterSpec back = parse_cluster_spec(cluster_spec_json(c, "a note"), "written");
    CHECK(back.name == c.name);
    CHECK(back.gpu_name == c.gpu_name);
    CHECK(back.memory_bytes == c.memory_bytes);
    CHECK(back.reserved_bytes == c.reserved_bytes);
    CHECK(back.memory_source == c.memory_source);
    CHECK(back.compute.source == c.compute.source);
    CHECK(back.compute.peak_bf16_dense_flops_per_s == c.compute.peak_bf16_dense_flops_per_s);
    CHECK(back.compute.datasheet_source == c.compute.datasheet_source);
    CHECK(back.gpus_per_node == c.gpus_per_node);
    CHECK(back.nodes == c.nodes);
    for (auto [a, b] : {std::pair{&back.intra_node, &c.intra_node}, std::pair{&back.inter_node, &c.inter_node}}) {
      CHECK(a->bandwidth_bytes_per_s == b->bandwidth_bytes_per_s);
      CHECK(a->latency_s == b->latency_s);
      CHECK(a->source == b->source);
    }
  }
  // A calibration profile's path is written absolute, so the file reads back from elsewhere.
  ClusterSpec c = load_cluster_spec(dir + "h200.json");
  c.compute.source = ComputeSource::calibration;
  c.compute.calibration_profile = "profiles/p.json";
  const ClusterSpec back = parse_cluster_spec(cluster_spec_json(c), "written");
  CHECK(std::filesystem::path(back.compute.calibration_profile).is_absolute());
  CHECK_THAT(back.compute.calibration_profile, Catch::EndsWith("profiles/p.json"));
  c.intra_node.bandwidth_bytes_per_s = 0.0;
  CHECK_THROWS_WITH(cluster_spec_json(c), Catch::Contains("bandwidth is not positive"));
}

// Found by fuzz_cluster: a bandwidth of 977 GB/s was stored as 977·10^9 and written as
// 977·10^9·10^-9 = 977.0000000000001, which reads back as another bandwidth, so every write and read
// drifted. Every figure a file gives (integers and one- to three-decimal figures over the ranges
// teams write) must be written as the file wrote it and read back to the same doubles.
TEST_CASE("cluster file writer: every figure is written as the file gave it, so the text is a fixed point",
          "[cluster][link_fit]") {
  const auto file = [](const std::string& bandwidth, const std::string& latency, const std::string& tflops,
                       const std::string& gib) {
    return R"({"schema": "budget.cluster", "schema_version": 1, "name": "n", "gpu": {"name": "g", "memory_GiB": )" + gib +
           R"(, "compute": {"datasheet": {"bf16_dense_TFLOPs": )" + tflops +
           R"(, "source": "s"}}}, "gpus_per_node": 8, "nodes": 1, "intra_node": {"bandwidth_GBps": )" + bandwidth +
           R"(, "latency_us": )" + latency + R"(}, "inter_node": {"bandwidth_GBps": 50, "latency_us": 5}})";
  };
  const auto written_figure = [](const std::string& text, const std::string& key) {
    const std::size_t at = text.find("\"" + key + "\": ") + key.size() + 4;
    return text.substr(at, text.find_first_of(",\n}", at) - at);
  };
  int drifted = 0;
  int checked = 0;
  for (const std::string figure : {"977", "0.001", "1e-3", "3", "2.5", "989.4", "2250", "4500.5", "0.123", "999999.9"}) {
    for (const std::string& gib : {std::string("79.65"), std::string("80"), std::string("141.5")}) {
      const ClusterSpec c = parse_cluster_spec(file(figure, figure, figure, gib), "f");
      const std::string text = cluster_spec_json(c);
      const ClusterSpec back = parse_cluster_spec(text, "written");
      CHECK(back.intra_node.bandwidth_bytes_per_s == c.intra_node.bandwidth_bytes_per_s);
      CHECK(back.intra_node.latency_s == c.intra_node.latency_s);
      CHECK(back.compute.peak_bf16_dense_flops_per_s == c.compute.peak_bf16_dense_flops_per_s);
      CHECK(back.memory_bytes == c.memory_bytes);
      CHECK(cluster_spec_json(back) == text);
      CHECK(std::stod(written_figure(text, "bandwidth_GBps")) == std::stod(figure));
      CHECK(std::stod(written_figure(text, "latency_us")) == std::stod(figure));
      CHECK(std::stod(written_figure(text, "bf16_dense_TFLOPs")) == std::stod(figure));
    }
  }
  // Brute force: every bandwidth 1..5000 GB/s in steps of 0.1, and every latency 0..50 µs in steps of 0.01.
  for (int tenths = 10; tenths <= 50000; ++tenths) {
    const std::string figure = fmt::format("{}.{}", tenths / 10, tenths % 10);
    const ClusterSpec c = parse_cluster_spec(file(figure, "3", "989.4", "80"), "f");
    const std::string text = cluster_spec_json(c);
    drifted += parse_cluster_spec(text, "w").intra_node.bandwidth_bytes_per_s != c.intra_node.bandwidth_bytes_per_s ||
               std::stod(written_figure(text, "bandwidth_GBps")) != std::stod(figure);
    ++checked;
  }
  for (int hundredths = 0; hundredths <= 5000; ++hundredths) {
    const std::string figure = fmt::format("{}.{:02}", hundredths / 100, hundredths % 100);
    const ClusterSpec c = parse_cluster_spec(file("900", figure, "989.4", "80"), "f");
    const std::string text = cluster_spec_json(c);
    drifted += parse_cluster_spec(text, "w").intra_node.latency_s != c.intra_node.latency_s ||
               std::stod(written_figure(text, "latency_us")) != std::stod(figure);
    ++checked;
  }
  CHECK(checked == 49991 + 5001);
  CHECK(drifted == 0);
}
