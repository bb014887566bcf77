#include "library_arguments.hpp"

#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "arguments.hpp"

namespace budget_python {

py::object to_python(const nlohmann::ordered_json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

bool is_path(const py::handle& h) { return py::isinstance<py::str>(h) || py::hasattr(h, "__fspath__"); }

std::string path_string(const py::handle& h) {
  return py::str(py::module_::import("os").attr("fspath")(h)).cast<std::string>();
}

std::string dict_text(const py::handle& h) { return json_argument(h, "dict"); }

[[noreturn]] void bad_argument(const std::string& argument, const py::handle& value, const std::string& allowed) {
  throw budget::Error(std::string("a ") + py::str(py::type::of(value).attr("__name__")).cast<std::string>() +
                          " is not accepted; allowed: " + allowed,
                      argument);
}

budget::SourcedConfig sourced_config(const py::handle& value, const std::string& argument) {
  if (py::isinstance<ConfigHandle>(value)) return value.cast<const ConfigHandle&>().sourced;
  if (py::isinstance<py::dict>(value)) return budget::parse_sourced_config(dict_text(value), argument);
  if (is_path(value)) return budget::load_sourced_config(path_string(value));
  bad_argument(argument, value, "a budget.Config, a dict (native or Hugging Face config) or a file path");
}

budget::ArchConfig arch_config(const py::handle& value, const std::string& argument) {
  return sourced_config(value, argument).config;
}

budget::Workload workload_argument(const py::handle& value) {
  if (value.is_none()) return budget::paper_workload();
  if (py::isinstance<py::dict>(value)) return budget::parse_workload(dict_text(value), "workload");
  if (is_path(value)) return budget::load_workload(path_string(value));
  bad_argument("workload", value, "None (the paper's), a dict or a file path");
}

budget::CalibrationProfile calibration_argument(const py::handle& calibration) {
  if (py::isinstance<py::dict>(calibration)) {
    return budget::parse_calibration_profile(dict_text(calibration), "calibration");
  }
  if (is_path(calibration)) return budget::load_calibration_profile(path_string(calibration));
  bad_argument("calibration", calibration, "a calibration profile as a dict or a file path");
}

budget::ClusterSpec cluster_argument(const py::handle& value, std::optional<std::int64_t> nodes) {
  budget::ClusterSpec c;
  if (py::isinstance<py::dict>(value)) {
    c = budget::parse_cluster_spec(dict_text(value), "cluster");
    if (nodes) budget::resize_cluster(c, *nodes, "nodes");
    return c;
  }
  if (is_path(value)) return budget::load_cluster_spec(path_string(value), nodes);
  bad_argument("cluster", value, "a cluster description as a dict or a file path (docs/cluster.md)");
}

bool cluster_names_profile(const py::handle& cluster, std::optional<std::int64_t> nodes) {
  return !cluster.is_none() && cluster_argument(cluster, nodes).compute.source == budget::ComputeSource::calibration;
}

budget::CalibrationProfile default_calibration_profile(const py::handle& calibration, const py::handle& cluster,
                                                       std::optional<std::int64_t> nodes) {
  if (!calibration.is_none()) return calibration_argument(calibration);
  if (cluster_names_profile(cluster, nodes)) {
    return budget::load_calibration_profile(cluster_argument(cluster, nodes).compute.calibration_profile);
  }
  throw budget::Error(cluster.is_none() ? "a calibration profile is needed (calibration=, or cluster= whose file names one)"
                                        : "the cluster file gives datasheet peaks only: give calibration=",
                      "calibration");
}

}  // namespace budget_python
