#include "budget/cluster.hpp"

#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_kinds.hpp"
#include "base/json_reader.hpp"
#include "budget/error.hpp"
#include "base/enum_names.hpp"
#include "time/calibration_rows.hpp"

namespace budget {
namespace {

using detail::ObjectReader;

constexpr std::string_view cluster_schema = "budget.cluster";
constexpr std::int64_t cluster_schema_version = 1;
constexpr double bytes_per_gib = 1024.0 * 1024.0 * 1024.0;

/// A link: {"bandwidth_GBps": unidirectional GB/s per GPU (10^9 bytes), "latency_us": µs, "source"}.
LinkSpec read_link(const ObjectReader& r) {
  r.reject_unknown_keys({"bandwidth_GBps", "latency_us", "source"});
  LinkSpec link;
  link.bandwidth_bytes_per_s = r.number("bandwidth_GBps", 1e-3, 1e6) * 1e9;
  link.latency_s = r.number("latency_us", 0.0, 1e6) * 1e-6;
  link.source = r.string_or("source", "");
  return link;
}

/// {"calibration": "profile.json", "datasheet": {"bf16_dense_TFLOPs": x, "source": "..."}}: at least
/// one; the profile (a path, relative to the cluster file's folder) is what times the GPU.
ComputeSpec read_compute(const ObjectReader& r, const std::string& base_directory) {
  r.reject_unknown_keys({"calibration", "datasheet"});
  ComputeSpec compute;
  if (!r.has("calibration") && !r.has("datasheet")) {
    r.fail_here("\"calibration\" (the GPU's calibration profile's path), \"datasheet\" (peak figures) or both are "
                "required");
  }
  if (r.has("calibration")) {
    compute.source = ComputeSource::calibration;
    std::string path = r.string("calibration");
    if (path.empty()) r.fail("calibration", "the profile path is empty");
    if (!base_directory.empty() && std::filesystem::path(path).is_relative()) {
      path = (std::filesystem::path(base_directory) / path).lexically_normal().string();
    }
    compute.calibration_profile = path;
  }
  if (r.has("datasheet")) {
    const ObjectReader d = r.object("datasheet");
    d.reject_unknown_keys({"bf16_dense_TFLOPs", "source"});
    compute.peak_bf16_dense_flops_per_s = d.number("bf16_dense_TFLOPs", 1e-3, 1e6) * 1e12;
    compute.datasheet_source = d.string("source");
  }
  return compute;
}

ClusterSpec read_cluster(const nlohmann::json& root, const std::string& source, const std::string& base_directory) {
  detail::refuse_other_file_kind(root, cluster_schema, "a cluster file", source);
  const ObjectReader r(root, source, "");
  r.reject_unknown_keys({"schema", "schema_version", "name", "gpu", "gpus_per_node", "nvlink_domain_gpus", "nodes",
                         "intra_node", "inter_node", "notes"});
  const std::string schema = r.string("schema");
  if (schema != cluster_schema) {
    r.fail("schema", fmt::format("value \"{}\" is not a cluster description; allowed: \"{}\"", schema, cluster_schema));
  }
  const std::int64_t version = r.integer("schema_version", 0, 1000000);
  if (version != cluster_schema_version) {
    r.fail("schema_version",
           fmt::format("version {} is not supported; this build reads version {}", version, cluster_schema_version));
  }
  ClusterSpec c;
  c.name = r.string_or("name", "");
  {
    const ObjectReader g = r.object("gpu");
    if (g.has("default_profile")) {
      g.fail("default_profile", "is replaced by gpu.compute.calibration (the profile that times this GPU, issue 32)");
    }
    g.reject_unknown_keys({"name", "memory_GiB", "reserved_GiB", "memory_source", "compute"});
    c.gpu_name = detail::read_device_name(g, "name");  // printable, as a profile's device name (it is printed)
    const double memory_gib = g.number("memory_GiB", 1e-3, 1e6);
    const double reserved_gib = g.number_or("reserved_GiB", 0.0, 0.0, 1e6);
    if (reserved_gib >= memory_gib) {
      g.fail("reserved_GiB", fmt::format("value {} is not below memory_GiB ({})", reserved_gib, memory_gib));
    }
    c.memory_bytes = static_cast<std::int64_t>(memory_gib * bytes_per_gib);
    c.reserved_bytes = static_cast<std::int64_t>(reserved_gib * bytes_per_gib);
    c.memory_source = g.string_or("memory_source", "");
    c.compute = read_compute(g.object("compute"), base_directory);
  }
  c.gpus_per_node = r.integer("gpus_per_node", 1, 1 << 20);
  c.nodes = r.integer("nodes", 1, 1 << 20);
  if (r.has("nvlink_domain_gpus")) c.nvlink_domain_gpus = r.integer("nvlink_domain_gpus", 1, 1 << 20);
  c.intra_node = read_link(r.object("intra_node"));
  c.inter_node = read_link(r.object("inter_node"));
  if (r.has("notes") && !r.raw("notes").is_string()) r.fail("notes", "must be a string");
  c.validate(source);
  return c;
}

}  // namespace

namespace {
constexpr auto compute_source_names = detail::enum_names<ComputeSource::datasheet>({
    {ComputeSource::calibration, "calibration"}, {ComputeSource::datasheet, "datasheet"}});
}  // namespace

std::string_view to_string(ComputeSource source) { return detail::name_of(compute_source_names, source); }

std::string ClusterSpec::validation_error() const {
  if (gpu_name.empty()) return "gpu.name is empty";
  if (memory_bytes <= 0) return fmt::format("gpu memory {} bytes is not positive", memory_bytes);
  if (reserved_bytes < 0 || reserved_bytes >= memory_bytes) {
    return fmt::format("reserved memory {} bytes is not in [0, memory {} bytes)", reserved_bytes, memory_bytes);
  }
  if (gpus_per_node < 1) return fmt::format("gpus_per_node {} is below 1", gpus_per_node);
  if (nodes < 1) return fmt::format("nodes {} is below 1", nodes);
  if (gpus_per_node > (std::int64_t{1} << 40) / nodes) return "gpus_per_node × nodes is too large";
  if (nvlink_domain_gpus != 0 && (nvlink_domain_gpus < gpus_per_node || nvlink_domain_gpus % gpus_per_node != 0)) {
    return fmt::format("nvlink_domain_gpus {} is not a multiple of gpus_per_node {}", nvlink_domain_gpus,
                       gpus_per_node);
  }
  for (const LinkSpec* link : {&intra_node, &inter_node}) {
    if (!(link->bandwidth_bytes_per_s > 0.0)) return "a link bandwidth is not positive";
    if (!(link->latency_s >= 0.0)) return "a link latency is negative";
  }
  if (compute.source == ComputeSource::datasheet && !(compute.peak_bf16_dense_flops_per_s > 0.0)) {
    return "the datasheet compute peak is not positive (and no calibration profile is named)";
  }
  if (compute.source == ComputeSource::calibration && compute.calibration_profile.empty()) {
    return "the calibration profile path is empty";
  }
  return {};
}

void ClusterSpec::validate(const std::string& source) const {
  const std::string error = validation_error();
  if (!error.empty()) throw Error(error, source);
}

ClusterSpec parse_cluster_spec(std::string_view json_text, const std::string& source,
                               const std::string& base_directory) {
  return read_cluster(detail::parse_json_text(json_text, source), source, base_directory);
}

ClusterSpec load_cluster_spec(const std::string& path, std::optional<std::int64_t> nodes) {
  const std::string text = detail::read_text_file(path);
  ClusterSpec c = parse_cluster_spec(text, path, std::filesystem::path(path).parent_path().string());
  if (nodes) resize_cluster(c, *nodes, fmt::format("{} (with {} nodes)", path, *nodes));
  return c;
}

void resize_cluster(ClusterSpec& c, std::int64_t nodes, const std::string& source) {
  const std::int64_t before = c.nodes;
  c.nodes = nodes;
  c.validate(source);
  if (nodes != before && !c.name.empty()) {
    c.name += fmt::format(", resized to {} node{} of {}", nodes, nodes == 1 ? "" : "s", c.gpus_per_node);
  }
}

namespace {
/// The shortest decimal figure x that the reader turns back into exactly `stored` (read(x) ==
/// stored), so that a written cluster file reads back to the same cluster and writes the same text:
/// 140.4 GiB, not 140.3999999994412; 977 GB/s, not 977.0000000000001 (977·10^9·10^-9 in doubles,
/// which would read back as another bandwidth and drift on every round trip). Candidates, shortest
/// first: `quotient` (stored / scale) to 1..17 significant digits, then the doubles up to 8 ulps either
/// side of it in their shortest form. A figure read from a file is among them: stored = fl(x·scale)
/// and quotient = fl(stored/scale) put x within about 2 ulps of the quotient. If none reads back (a
/// value no file gave), the quotient.
template <class Stored, class Read>
double figure_that_reads_back(Stored stored, double quotient, Read read) {
  for (int digits = 1; digits <= 17; ++digits) {
    const double shown = std::stod(fmt::format("{:.{}g}", quotient, digits));
    if (read(shown) == stored) return shown;
  }
  std::string shortest;
  double best = quotient;
  for (const double direction : {-HUGE_VAL, HUGE_VAL}) {
    double candidate = quotient;
    for (int ulps = 1; ulps <= 8; ++ulps) {
      candidate = std::nextafter(candidate, direction);
      const std::string text = fmt::format("{}", candidate);  // the shortest form that reads back to candidate
      if (read(candidate) == stored && (shortest.empty() || text.size() < shortest.size())) {
        shortest = text;
        best = candidate;
      }
    }
  }
  return best;
}

/// GiB as read_cluster() reads them: static_cast<int64_t>(GiB · 2^30).
double gib_that_reads_back(std::int64_t bytes) {
  return figure_that_reads_back(bytes, static_cast<double>(bytes) / bytes_per_gib,
                                [](double gib) { return static_cast<std::int64_t>(gib * bytes_per_gib); });
}

/// A figure the reader multiplies by `scale` (GB/s · 10^9, µs · 10^-6, TFLOP/s · 10^12).
double scaled_that_reads_back(double value, double scale) {
  return figure_that_reads_back(value, value / scale, [scale](double figure) { return figure * scale; });
}
}  // namespace

std::string cluster_spec_json(const ClusterSpec& c, const std::string& notes) {
  c.validate("cluster_spec_json");
  const auto link_json = [](const LinkSpec& link) {
    nlohmann::ordered_json j{{"bandwidth_GBps", scaled_that_reads_back(link.bandwidth_bytes_per_s, 1e9)},
                             {"latency_us", scaled_that_reads_back(link.latency_s, 1e-6)}};
    if (!link.source.empty()) j["source"] = link.source;
    return j;
  };
  nlohmann::ordered_json compute;
  if (c.compute.source == ComputeSource::calibration) {
    compute["calibration"] = std::filesystem::absolute(c.compute.calibration_profile).lexically_normal().string();
  }
  if (c.compute.peak_bf16_dense_flops_per_s > 0.0) {
    compute["datasheet"] = nlohmann::ordered_json{{"bf16_dense_TFLOPs", scaled_that_reads_back(c.compute.peak_bf16_dense_flops_per_s, 1e12)},
                                                  {"source", c.compute.datasheet_source}};
  }
  nlohmann::ordered_json gpu{{"name", c.gpu_name},
                             {"memory_GiB", gib_that_reads_back(c.memory_bytes)},
                             {"reserved_GiB", gib_that_reads_back(c.reserved_bytes)}};
  if (!c.memory_source.empty()) gpu["memory_source"] = c.memory_source;
  gpu["compute"] = std::move(compute);
  nlohmann::ordered_json j;
  j["schema"] = cluster_schema;
  j["schema_version"] = cluster_schema_version;
  j["name"] = c.name;
  j["gpu"] = std::move(gpu);
  j["gpus_per_node"] = c.gpus_per_node;
  if (c.nvlink_domain_gpus != 0) j["nvlink_domain_gpus"] = c.nvlink_domain_gpus;
  j["nodes"] = c.nodes;
  j["intra_node"] = link_json(c.intra_node);
  j["inter_node"] = link_json(c.inter_node);
  if (!notes.empty()) j["notes"] = notes;
  return j.dump(2) + "\n";
}

}  // namespace budget
