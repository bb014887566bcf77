// The Python module `budget` (compiled part: budget._budget). Inputs are configs, workloads,
// constraints and grids as file paths, dicts (the JSON documents, parsed by Python) or Config
// objects; results are plain dicts with the same keys as budget-match's JSON outputs (docs/cli.md),
// produced by the same printers as the CLI's (render/, budget::render). Every bad input
// raises budget.Error with .source (file or argument), .path (JSON pointer) and .message.
// Reference: docs/python.md.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include <nlohmann/json.hpp>

#include "budget/accounting.hpp"
#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/gpu_fit.hpp"
#include "budget/kernel_shapes.hpp"
#include "budget/time_model.hpp"
#include "budget/version.hpp"
#include "budget/workload.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/step_time.hpp"
#include "bindings.hpp"
#include "library_arguments.hpp"

namespace py = pybind11;

namespace {

using budget_python::arch_config;
using budget_python::ConfigHandle;
using budget_python::default_calibration_profile;
using budget_python::sourced_config;
using budget_python::to_python;
using budget_python::workload_argument;

/// export()'s config: a config, or with a match result (the dict budget.match() returns) its row
/// `row` (1-based; default 1), as --out-row N picks it.
py::object export_source(const py::handle& config, const py::handle& row) {
  const bool result = py::isinstance<py::dict>(config) && config.cast<py::dict>().contains("candidates");
  if (!result) {
    if (!row.is_none()) {
      throw budget::Error("row picks a row of a match result (the dict budget.match() returns); config is not one",
                          "row");
    }
    return py::reinterpret_borrow<py::object>(config);
  }
  const py::list rows = config.cast<py::dict>()["candidates"].cast<py::list>();
  long long n = 1;
  if (!row.is_none()) {
    if (!py::isinstance<py::int_>(row) || py::isinstance<py::bool_>(row)) {
      throw budget::Error("value " + py::repr(row).cast<std::string>() + " is not a row number; allowed: 1 to " +
                              std::to_string(rows.size()),
                          "row");
    }
    n = row.cast<long long>();
  }
  if (n < 1 || n > static_cast<long long>(rows.size())) {
    throw budget::Error("row " + std::to_string(n) + " is not in the match result; allowed: 1 to " +
                            std::to_string(rows.size()),
                        "row");
  }
  return rows[static_cast<std::size_t>(n - 1)].cast<py::dict>()["config"];
}

py::dict export_dict(const budget::ExportedConfig& e) {
  py::dict out;
  out["target"] = std::string(budget::to_string(e.target));
  out["text"] = e.text;
  out["not_expressed"] = e.not_expressed;
  return out;
}

/// budget.Error (a ValueError with .source, .file, .path, .message, .value) and the translation
/// of budget::Error, and of any other escaping std::exception, into it.
void bind_error_type(py::module_& m) {
  static py::exception<budget::Error> error_type(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const budget::Error& e) {
      const py::object type = py::reinterpret_borrow<py::object>(error_type.ptr());
      py::object instance = type(e.what());
      instance.attr("source") = e.source();
      instance.attr("file") = e.source();
      instance.attr("path") = e.path();
      instance.attr("message") = e.message();
      instance.attr("value") = py::none();  // filled in by budget/__init__.py when it can be found
      PyErr_SetObject(error_type.ptr(), instance.ptr());
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own (StopIteration, IndexError of its protocols): its translator's
    } catch (const std::bad_alloc&) {
      throw;  // MemoryError
    } catch (const std::exception& e) {
      // Anything else the library lets escape is a bug of ours, still raised as budget.Error (never
      // RuntimeError), as the CLI prints "internal error: ..." and exits 70.
      const std::string text = std::string("internal error: ") + e.what();
      py::object instance = py::reinterpret_borrow<py::object>(error_type.ptr())(text);
      instance.attr("source") = std::string();
      instance.attr("file") = std::string();
      instance.attr("path") = std::string();
      instance.attr("message") = text;
      instance.attr("value") = py::none();
      PyErr_SetObject(error_type.ptr(), instance.ptr());
    }
  });
}

/// budget.Config, load_config, account, predict_time.
void bind_configs(py::module_& m) {
  py::class_<ConfigHandle>(m, "Config", "A validated architecture config (native or read from a Hugging Face config.json).")
      // budget.Config(source) as load_config(source); any other call is a budget.Error naming the
      // constructor (issue 44: budget.Error for every Python error, never pybind11's TypeError).
      .def(py::init([](const py::args& args, const py::kwargs& kwargs) {
             const bool by_keyword = args.size() == 0 && kwargs.size() == 1 && kwargs.contains("config");
             if (!(args.size() == 1 && kwargs.size() == 0) && !by_keyword) {
               throw budget::Error("budget.Config takes one argument, config: a file path or a dict (native or "
                                   "Hugging Face); given " + std::to_string(args.size()) + " positional and " +
                                   std::to_string(kwargs.size()) + " keyword arguments",
                                   "Config");
             }
             const py::object source = by_keyword ? py::object(kwargs["config"]) : py::object(args[0]);
             return ConfigHandle{sourced_config(source, "config")};
           }),
           "budget.Config(config): as load_config(config).")
      .def_property_readonly("name", [](const ConfigHandle& c) { return c.sourced.config.name; })
      .def_property_readonly("is_hugging_face", [](const ConfigHandle& c) { return !c.sourced.hf_text.empty(); },
                             "True when read from a Hugging Face config.json (an hf export keeps its other keys).")
      .def("to_dict", [](const ConfigHandle& c) { return to_python(budget::render::config_json(c.sourced.config)); },
           "The config in native form (the dict budget-match --out writes).")
      .def("__repr__", [](const ConfigHandle& c) {
        return "budget.Config(" + budget::arch_config_to_json(c.sourced.config, -1) + ")";
      });

  m.def("load_config", [](const py::handle& source) { return ConfigHandle{sourced_config(source, "config")}; },
        py::arg("config"),
        "A Config from a file path or a dict, native or Hugging Face (budget.Error if invalid).");

  m.def("account",
        [](const py::handle& config, const py::handle& workload) {
          return to_python(budget::render::budgets_json(budget::account(arch_config(config, "config"), workload_argument(workload))));
        },
        py::arg("config"), py::arg("workload") = py::none(),
        "Budgets of one config: the dict of `budget-match report --format json` (without schema keys).");

  m.def("predict_time",
        [](const py::handle& config, const py::handle& calibration, const py::handle& workload,
           const std::string& attention_backend, const py::handle& cluster) {
          const budget::CalibrationProfile profile = default_calibration_profile(calibration, cluster);
          budget::TimeModelOptions options;
          options.attention_backend = attention_backend;
          const budget::TimeModel model(profile, options);
          const budget::ArchConfig arch = arch_config(config, "config");
          const budget::Workload w = workload_argument(workload);
          const budget::StepTime time = budget::predict_step_time(model, arch, w);
          // The ± the model's validation supports and whether it fits one GPU, as `report` gives them.
          nlohmann::ordered_json out =
              budget::render::step_time_with_accuracy_json(time, model, budget::time_accuracy(profile, options));
          budget::render::add_one_gpu_fit_json(out, budget::one_gpu_fit(arch, profile, w));
          return to_python(out);
        },
        py::arg("config"), py::arg("calibration") = py::none(), py::arg("workload") = py::none(),
        py::arg("attention_backend") = "auto", py::arg("cluster") = py::none(),
        "Predicted training step time from a calibration profile (docs/calibration.md): the `time` object of "
        "`budget-match report --calibration P.json --format json`. calibration: a profile (dict or path); "
        "default the profile the cluster file names (cluster=, its gpu.compute.calibration).");
}

/// export.
void bind_export(py::module_& m) {
  m.def("export",
        [](const py::handle& config, const std::string& to, const py::handle& hf_template, const py::handle& row) {
          const py::object source = export_source(config, row);
          const budget::SourcedConfig in = sourced_config(source, "config");
          budget::ExportOptions options;
          options.hf_template = in.hf_text;
          options.hf_template_source = "config";
          if (!hf_template.is_none()) {
            const budget::SourcedConfig t = sourced_config(hf_template, "hf_template");
            if (t.hf_text.empty()) throw budget::Error("not a Hugging Face config.json", "hf_template");
            options.hf_template = t.hf_text;
            options.hf_template_source = "hf_template";
          }
          return export_dict(budget::export_config(in.config, budget::parse_export_target(to, "to"), options));
        },
        py::arg("config"), py::arg("to") = "hf", py::arg("hf_template") = py::none(), py::arg("row") = py::none(),
        "Export to 'hf', 'megatron', 'torchtitan' or 'native': {'target', 'text', 'not_expressed'}. A Hugging Face "
        "input (or hf_template) keeps its other keys in an hf export. `config` may be a match result (the dict "
        "match() returns): its row `row` (1-based, default 1) is exported, as --out-row N does.");
}

}  // namespace

PYBIND11_MODULE(_budget, m) {
  m.doc() = "Compute-matched planning for looped Mixture-of-Experts transformers (compiled part).";
  m.attr("__version__") = std::string(budget::version_string);
  m.attr("schema_version") = budget::render::output_schema_version;
  bind_torch_support(m);
  bind_call_limits(m);
  bind_error_type(m);
  bind_configs(m);
  bind_match(m);
  bind_export(m);
  bind_cluster(m);
}
