#pragma once
// Python arguments read as the library's values, shared by the module's bindings (budget_module.cpp,
// match_bindings.cpp, cluster_bindings.cpp): a config (budget.Config, a dict or a path), a workload,
// a calibration profile, a cluster; each refusal a budget.Error naming the argument (docs/python.md,
// "Errors"). The scalar conversions are arguments.hpp's.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/config_io.hpp"
#include "budget/export.hpp"  // SourcedConfig
#include "budget/workload.hpp"

namespace budget_python {

namespace py = pybind11;

/// A config and, when it came from a Hugging Face config.json, that document's text (the
/// template of an hf export). Exposed as budget.Config.
struct ConfigHandle {
  budget::SourcedConfig sourced;
};

/// nlohmann JSON → Python objects (through Python's json, so types and key order are exact).
py::object to_python(const nlohmann::ordered_json& j);

/// Whether `h` is a path: a str or an os.PathLike.
bool is_path(const py::handle& h);
/// os.fspath(h).
std::string path_string(const py::handle& h);
/// A dict (or list) → JSON text; what json cannot write (a set, bytes) is budget.Error.
std::string dict_text(const py::handle& h);

/// budget.Error naming `argument`: a value of its type is not accepted; `allowed` says what is.
[[noreturn]] void bad_argument(const std::string& argument, const py::handle& value, const std::string& allowed);

/// A config from a budget.Config, a dict (native or Hugging Face) or a file path.
budget::SourcedConfig sourced_config(const py::handle& value, const std::string& argument);
budget::ArchConfig arch_config(const py::handle& value, const std::string& argument);

/// The workload: None (the paper's), a dict or a file path.
budget::Workload workload_argument(const py::handle& workload);

/// A calibration profile as a dict or a file path.
budget::CalibrationProfile calibration_argument(const py::handle& calibration);

/// A cluster description as a dict or a file path, with `nodes` (when given) applied.
budget::ClusterSpec cluster_argument(const py::handle& cluster, std::optional<std::int64_t> nodes);

/// Whether `cluster` (None, a path or a dict) names its GPU's calibration profile (gpu.compute.calibration).
bool cluster_names_profile(const py::handle& cluster, std::optional<std::int64_t> nodes = std::nullopt);

/// The profile `calibration` gives, else the one the cluster file names; budget.Error naming
/// calibration when neither gives one.
budget::CalibrationProfile default_calibration_profile(const py::handle& calibration, const py::handle& cluster,
                                                       std::optional<std::int64_t> nodes = std::nullopt);

}  // namespace budget_python
