// The Python module `budget` (compiled part: budget._budget). Inputs are configs, workloads,
// constraints and grids as file paths, dicts (the JSON documents, parsed by Python) or Config
// objects; results are plain dicts with the same keys as budget-match's JSON outputs (docs/cli.md),
// produced by the same printers as the CLI's (render/, budget::render). Every bad input
// raises budget.Error with .source (file or argument), .path (JSON pointer) and .message.
// Reference: docs/python.md.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "budget/accounting.hpp"
#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/grid.hpp"
#include "budget/kernel_shapes.hpp"
#include "budget/layout_search.hpp"
#include "budget/megatron_args.hpp"
#include "budget/match.hpp"
#include "budget/text_escape.hpp"
#include "budget/match_outcome.hpp"
#include "budget/time_model.hpp"
#include "budget/version.hpp"
#include "budget/workload.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/match.hpp"
#include "budget_render/match_outcome.hpp"
#include "budget_render/megatron.hpp"
#include "budget_render/step_time.hpp"
#include "arguments.hpp"

namespace py = pybind11;

void bind_cluster(py::module_& m);  // python/cluster_bindings.cpp
budget::ClusterSpec cluster_argument(const py::handle& cluster, std::optional<std::int64_t> nodes);

namespace budget_python {

/// A config and, when it came from a Hugging Face config.json, that document's text (the
/// template of an hf export). Exposed as budget.Config.
struct ConfigHandle {
  budget::SourcedConfig sourced;
};

}  // namespace budget_python

namespace {

using budget_python::ConfigHandle;

py::object json_module() { return py::module_::import("json"); }

/// nlohmann JSON → Python objects (through Python's json, so types and key order are exact).
py::object to_python(const nlohmann::ordered_json& j) { return json_module().attr("loads")(j.dump()); }

bool is_path(const py::handle& h) {
  return py::isinstance<py::str>(h) || py::hasattr(h, "__fspath__");
}

std::string path_string(const py::handle& h) {
  return py::str(py::module_::import("os").attr("fspath")(h)).cast<std::string>();
}

/// A dict (or list) → JSON text; what json cannot write (a set, bytes) is budget.Error.
std::string dict_text(const py::handle& h) { return budget_python::json_argument(h, "dict"); }

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

budget::Workload workload_of(const py::handle& value) {
  if (value.is_none()) return budget::paper_workload();
  if (py::isinstance<py::dict>(value)) return budget::parse_workload(dict_text(value), "workload");
  if (is_path(value)) return budget::load_workload(path_string(value));
  bad_argument("workload", value, "None (the paper's), a dict or a file path");
}

/// The constraints argument over the baseline's defaults (free_shapes: the whole lattice; a
/// "free_shapes" key in the dict or file does the same).
budget::MatchConstraints constraints_of(const py::handle& value, const budget::ArchConfig& baseline,
                                        bool free_shapes = false,
                                        const std::optional<budget::KernelTarget>& kernels = std::nullopt) {
  const budget::ShapeSpace shapes = free_shapes ? budget::ShapeSpace::free : budget::ShapeSpace::trainable;
  if (value.is_none()) return budget::default_constraints(baseline, shapes, kernels);
  if (py::isinstance<py::dict>(value)) {
    return budget::parse_constraints(dict_text(value), "constraints", baseline, shapes, kernels);
  }
  if (is_path(value)) return budget::load_constraints(path_string(value), baseline, shapes, kernels);
  bad_argument("constraints", value, "None (the defaults), a dict or a file path");
}

/// The kernel target of gpu=, precision= and a kernel attention_backend= (fa2, fa3, fa4, cudnn,
/// unfused), as --gpu, --precision and --attention-backend make it (docs/kernels.md); precision
/// None: `recipe`'s (megatron_args'), else bf16. None without gpu. budget.Error naming the argument.
std::optional<budget::KernelTarget> kernel_target_of(const py::object& gpu, const py::object& precision,
                                                     const std::string& attention_backend,
                                                     budget::Fp8Recipe recipe = budget::Fp8Recipe::none,
                                                     const std::optional<std::string>& megatron_args = std::nullopt) {
  const bool kernel_backend = attention_backend == "fa2" || attention_backend == "fa3" || attention_backend == "fa4" ||
                              attention_backend == "cudnn" || attention_backend == "unfused";
  if (gpu.is_none()) {
    if (!precision.is_none()) throw budget::Error("a kernel target needs a GPU: give gpu too", "precision");
    return std::nullopt;
  }
  budget::KernelTarget t;
  t.gpu = budget_python::string_argument(gpu, "gpu");
  t.arch = budget::parse_gpu_arch(t.gpu, "gpu");
  t.precision = precision.is_none() ? budget::kernel_precision(recipe)
                                    : budget::parse_precision(budget_python::string_argument(precision, "precision"), "precision");
  if (kernel_backend) {
    t.attention = budget::parse_attention_backend(attention_backend, "attention_backend");
  } else if (megatron_args) {
    t.attention = budget::load_megatron_attention_backend(*megatron_args);
  }
  if (const std::string why = budget::precision_refusal(t.arch, t.precision); !why.empty()) {
    throw budget::Error(why + "; allowed: a precision the GPU runs", "precision");
  }
  return t;
}

/// The order argument of match() (--order): None keeps the constraints' (default "proportions").
void apply_order(const py::handle& order, budget::MatchConstraints& c) {
  if (order.is_none()) return;
  const std::string text = py::isinstance<py::str>(order) ? order.cast<std::string>() : std::string();
  if (text == "proportions") {
    c.order = budget::MatchOrder::proportions;
  } else if (text == "tightest") {
    c.order = budget::MatchOrder::tightest;
  } else {
    throw budget::Error("value " + py::repr(order).cast<std::string>() +
                            " is not allowed; allowed: None, \"proportions\" or \"tightest\"",
                        "order");
  }
}

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

/// One layer number of a loop given as a (first, last) tuple or list: a Python int (not a bool) in
/// [1, budget::max_dimension], else budget::Error naming `loop` with the value.
std::int64_t loop_layer(const py::handle& item, const py::handle& loop) {
  const std::string shown = py::repr(loop).cast<std::string>();
  if (!py::isinstance<py::int_>(item) || py::isinstance<py::bool_>(item)) {
    throw budget::Error("value " + shown + " holds a " + py::type::of(item).attr("__name__").cast<std::string>() +
                            "; allowed: (first, last) as two integers, 1-based inclusive",
                        "loop");
  }
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
  if (overflow != 0 || value < 1 || value > budget::max_dimension) {
    throw budget::Error("value " + shown + " has layer " + py::repr(item).cast<std::string>() +
                            " out of range; allowed: layers 1 to " + std::to_string(budget::max_dimension),
                        "loop");
  }
  return static_cast<std::int64_t>(value);
}

/// The LoopSpec of match()/grid()'s loop arguments. `loop`: None (the centred span of
/// round(span_fraction·L) layers), "FIRST-LAST" or a (first, last) tuple or list, 1-based
/// inclusive. repeats in [1, 1024] (1: no loop) and span_fraction in (0, 1]: a span of 0, which
/// the library reads as "no loop", is refused here as it would silently give an unlooped match.
/// Every error is budget.Error naming the argument (loop, repeats or span_fraction).
budget::LoopSpec loop_spec(const py::handle& loop, double span_fraction, std::int64_t repeats) {
  budget::LoopSpec spec;
  spec.repeats = repeats;
  if (const std::string message = spec.validation_error(); !message.empty()) throw budget::Error(message, "repeats");
  spec.span_fraction = span_fraction;
  if (const std::string message = spec.validation_error(); !message.empty()) {
    throw budget::Error(message, "span_fraction");
  }
  if (!(span_fraction > 0.0)) {
    throw budget::Error("span_fraction = 0 loops no layer; allowed: a number in (0, 1] (budget.account() counts an "
                        "unlooped config)",
                        "span_fraction");
  }
  if (loop.is_none()) return spec;
  if (py::isinstance<py::str>(loop)) {
    const std::string text = loop.cast<std::string>();
    const auto digits = budget::LoopSpec::range_digits(text);
    if (!digits) {
      throw budget::Error("value \"" + text + "\" is not a layer range; allowed: \"FIRST-LAST\" (1-based)", "loop");
    }
    if (digits->first.size() > 18 || digits->second.size() > 18) {  // beyond max_dimension; py::int_ refuses > 4300 digits
      throw budget::Error("value \"" + budget::printable_text(text, 60) + "\" has a layer out of range; allowed: layers 1 to " +
                              std::to_string(budget::max_dimension),
                          "loop");
    }
    const py::int_ first(py::str(digits->first));
    const py::int_ last(py::str(digits->second));
    spec.first = loop_layer(first, loop);
    spec.last = loop_layer(last, loop);
  } else if ((py::isinstance<py::tuple>(loop) || py::isinstance<py::list>(loop)) && py::len(loop) == 2) {
    const py::sequence pair = py::reinterpret_borrow<py::sequence>(loop);
    spec.first = loop_layer(pair[0], loop);
    spec.last = loop_layer(pair[1], loop);
  } else {
    bad_argument("loop", loop, "None (centred span_fraction), \"FIRST-LAST\" or a (first, last) tuple or list");
  }
  if (const std::string message = spec.validation_error(); !message.empty()) throw budget::Error(message, "loop");
  return spec;
}

/// A library error about the loop (path /loop, no source: e.g. a range beyond the baseline's
/// layers) attributed to the `loop` argument; other errors unchanged.
template <class Function>
auto with_loop_argument(Function&& function) {
  try {
    return function();
  } catch (const budget::Error& e) {
    if (e.source().empty() && e.path().rfind("/loop", 0) == 0) throw budget::Error(e.message(), "loop");
    throw;
  }
}

budget::CalibrationProfile calibration_profile(const py::handle& calibration) {
  if (py::isinstance<py::dict>(calibration)) {
    return budget::parse_calibration_profile(dict_text(calibration), "calibration");
  }
  if (is_path(calibration)) return budget::load_calibration_profile(path_string(calibration));
  bad_argument("calibration", calibration, "a calibration profile as a dict or a file path");
}

}  // namespace

/// Whether `cluster` (None, a path or a dict) names its GPU's calibration profile (gpu.compute.calibration).
bool cluster_names_profile(const py::handle& cluster, std::optional<std::int64_t> nodes = std::nullopt) {
  return !cluster.is_none() && cluster_argument(cluster, nodes).compute.source == budget::ComputeSource::calibration;
}

/// The profile `calibration` gives, else the one the cluster file names; budget.Error naming
/// calibration when neither gives one.
budget::CalibrationProfile default_calibration_profile(const py::handle& calibration, const py::handle& cluster,
                                                       std::optional<std::int64_t> nodes = std::nullopt) {
  if (!calibration.is_none()) return calibration_profile(calibration);
  if (cluster_names_profile(cluster, nodes)) {
    return budget::load_calibration_profile(cluster_argument(cluster, nodes).compute.calibration_profile);
  }
  throw budget::Error(cluster.is_none() ? "a calibration profile is needed (calibration=, or cluster= whose file names one)"
                                        : "the cluster file gives datasheet peaks only: give calibration=",
                      "calibration");
}

/// calibration_profile() for the cluster bindings (python/cluster_bindings.cpp).
budget::CalibrationProfile calibration_argument(const py::handle& calibration) { return calibration_profile(calibration); }
/// workload_of() for the cluster bindings.
budget::Workload workload_argument(const py::handle& workload) { return workload_of(workload); }

namespace {

/// match()'s optional time and explanation arguments as the CLI's --rank-by, --max-time-ratio,
/// --align read them (cli/commands/match.cpp), errors naming the argument.
budget::RankBy rank_by_of(const std::string& rank_by, bool calibrated) {
  if (rank_by != "budget" && rank_by != "time") {
    throw budget::Error("value \"" + rank_by + "\" is not allowed; allowed: \"budget\" or \"time\"", "rank_by");
  }
  if (rank_by == "time" && !calibrated) {
    throw budget::Error("rank_by=\"time\" needs calibration (a profile to predict time from)", "rank_by");
  }
  return rank_by == "time" ? budget::RankBy::time : budget::RankBy::budget;
}

std::optional<double> max_time_ratio_of(const py::handle& value, bool calibrated) {
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::float_>(value) && !(py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value))) {
    bad_argument("max_time_ratio", value, "None (no cap) or a number in (0, 1e300]");
  }
  const double ratio = value.cast<double>();
  if (!std::isfinite(ratio) || !(ratio > 0) || ratio > 1e300) {
    throw budget::Error("value " + py::repr(value).cast<std::string>() +
                            " is not allowed; allowed: None (no cap) or a finite number in (0, 1e300]",
                        "max_time_ratio");
  }
  if (!calibrated) throw budget::Error("max_time_ratio needs calibration (a profile to predict time from)", "max_time_ratio");
  return ratio;
}

py::dict export_dict(const budget::ExportedConfig& e) {
  py::dict out;
  out["target"] = std::string(budget::to_string(e.target));
  out["text"] = e.text;
  out["not_expressed"] = e.not_expressed;
  return out;
}

}  // namespace

void bind_torch_support(py::module_& m);  // torch_bindings.cpp
void bind_call_limits(py::module_& m);    // call_limits.cpp

PYBIND11_MODULE(_budget, m) {
  m.doc() = "Compute-matched planning for looped Mixture-of-Experts transformers (compiled part).";
  m.attr("__version__") = std::string(budget::version_string);
  m.attr("schema_version") = budget::render::output_schema_version;
  bind_torch_support(m);
  bind_call_limits(m);

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
          return to_python(budget::render::budgets_json(budget::account(arch_config(config, "config"), workload_of(workload))));
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
          const budget::Workload w = workload_of(workload);
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

  m.def("match",
        [](const py::handle& baseline, const py::handle& loop, double span_fraction, std::int64_t repeats,
           const py::handle& workload, const py::handle& constraints, int top, const py::handle& calibration,
           const std::string& rank_by, const std::string& attention_backend, bool explain, std::int64_t align,
           const py::handle& max_time_ratio, const py::handle& cluster, const py::object& gpus_arg,
           const py::object& nodes_arg, const py::object& global_batch_tokens_arg, const py::object& max_nodes_per_token_arg,
           const py::object& min_headroom, const py::object& free_shapes_arg, const py::handle& order,
           const py::object& megatron_args_arg, const py::object& bridge_config_arg, const py::object& gpu,
           const py::object& precision) {
          const bool free_shapes = budget_python::bool_argument(free_shapes_arg, "free_shapes");
          // The cluster arguments converted here: budget.Error naming them, never TypeError (arguments.hpp).
          const std::optional<std::int64_t> gpus = budget_python::optional_int_argument(gpus_arg, "gpus");
          const std::optional<std::int64_t> nodes = budget_python::optional_int_argument(nodes_arg, "nodes");
          const std::int64_t global_batch_tokens =
              global_batch_tokens_arg.is_none() ? 4 * 1024 * 1024
                                                : budget_python::int_argument(global_batch_tokens_arg, "global_batch_tokens");
          // megatron_args=FILE or bridge_config=FILE.yaml (--megatron-args / --bridge-config): one recipe file.
          if (!megatron_args_arg.is_none() && !bridge_config_arg.is_none()) {
            throw budget::Error("megatron_args and bridge_config both give the team's recipe; give one", "bridge_config");
          }
          const bool bridge_config = !bridge_config_arg.is_none();
          const char* recipe_key = bridge_config ? "bridge_config" : "megatron_args";
          const py::object& recipe_arg = bridge_config ? bridge_config_arg : megatron_args_arg;
          const std::optional<std::string> megatron_args =
              recipe_arg.is_none() ? std::nullopt
                                   : std::optional<std::string>(budget_python::string_argument(recipe_arg, recipe_key));
          const std::int64_t max_nodes_per_token =
              budget_python::int_argument(max_nodes_per_token_arg, "max_nodes_per_token");
          // A cluster implies its GPU, as --cluster does (gpu= wins).
          const py::object cluster_gpu =
              gpu.is_none() && !cluster.is_none() ? py::object(py::str(cluster_argument(cluster, nodes).gpu_name)) : gpu;
          const std::optional<budget::KernelTarget> kernels = kernel_target_of(
              cluster_gpu, precision, attention_backend,
              megatron_args ? budget::load_megatron_fp8_recipe(*megatron_args) : budget::Fp8Recipe::none, megatron_args);
          const budget::ArchConfig base = arch_config(baseline, "baseline");
          const budget::Workload w = workload_of(workload);
          const budget::LoopSpec spec = loop_spec(loop, span_fraction, repeats);
          if (top < 1) throw budget::Error("top must be at least 1", "top");
          budget::MatchConstraints c = constraints_of(constraints, base, free_shapes, kernels);
          apply_order(order, c);
          if (align != 0) {
            if (align < 1 || align > 4096) {
              throw budget::Error("value " + std::to_string(align) + " is not allowed; allowed: 0 (any shape) or 1 to 4096",
                                  "align");
            }
            try {
              c = budget::aligned_constraints(c, align);
            } catch (const budget::Error& e) {
              throw budget::Error(e.message(), "align");
            }
          }
          // megatron_args (with cluster): the team's recipe and layout, read against the baseline on gpus;
          // its FP8 recipe times every candidate's GEMMs (`--cluster ... --megatron-args FILE`).
          std::optional<budget::MegatronRun> team;
          if (megatron_args) {
            if (cluster.is_none()) {
              throw budget::Error(std::string(recipe_key) + " sets up the cluster ranking; give cluster too", recipe_key);
            }
            if (!gpus) throw budget::Error("cluster needs gpus (the GPUs to lay out on)", "gpus");
            if (!global_batch_tokens_arg.is_none()) {
              throw budget::Error(std::string(recipe_key) + " gives the batch (--global-batch-size x --seq-length); leave "
                                  "global_batch_tokens out",
                                  "global_batch_tokens");
            }
            team = budget::load_team_recipe(*megatron_args, bridge_config, base, *gpus);
          }
          std::optional<budget::TimeModel> model;
          if (!calibration.is_none() || cluster_names_profile(cluster, nodes)) {
            // The profile given, else the cluster file's (gpu.compute.calibration), as --cluster does.
            // A kernel backend reads FlashAttention's rows (fa2/fa3/fa4) or the profile's choice (unfused).
            const bool flash = attention_backend == "fa2" || attention_backend == "fa3" || attention_backend == "fa4";
            budget::TimeModelOptions model_options{flash ? "flash" : attention_backend == "unfused" ? "auto" : attention_backend};
            if (team) {
              model_options.fp8 = team->layout.fp8;
            } else if (kernels) {
              model_options.fp8 = budget::fp8_recipe_of(kernels->precision);  // precision= times the GEMMs, as --precision
            }
            model_options.kernels = kernels;
            model.emplace(default_calibration_profile(calibration, cluster, nodes), model_options);
          } else if (attention_backend != "auto" && !kernels) {
            throw budget::Error("attention_backend needs calibration (a profile whose attention rows it selects) "
                                "or gpu (a kernel target: fa2, fa3, fa4, cudnn, unfused)",
                                "attention_backend");
          }
          budget::MatchRequest request;
          request.top = top;
          request.model = model ? &*model : nullptr;
          request.time_options.rank_by = rank_by_of(rank_by, model.has_value());
          request.time_options.max_time_ratio = max_time_ratio_of(max_time_ratio, model.has_value());
          request.time_options.top_n = top;
          // The intervals beside time ratios and the ranking's equal band, as the CLI computes them.
          if (model) request.time_options.accuracy = budget::time_accuracy(model->profile(), model->options());
          request.explain = explain;
          request.with_aligned_alternative = align == 0;
          // --cluster C --gpus N [--nodes K] [--global-batch-tokens T] [--max-nodes-per-token M]: each
          // equally matched candidate at its own best layout (cli/cluster_options.cpp's dependencies).
          std::optional<budget::ClusterSpec> cluster_spec;
          // (match_outcome() refuses a cluster without calibration, rank_by="time" or with max_time_ratio.)
          if (!cluster.is_none()) {
            if (!gpus) throw budget::Error("cluster needs gpus (the GPUs to lay out on)", "gpus");
            if (*gpus < 1) throw budget::Error("gpus = " + std::to_string(*gpus) + "; allowed: 1 or more", "gpus");
            if (global_batch_tokens < 1) {
              throw budget::Error("global_batch_tokens = " + std::to_string(global_batch_tokens) + "; allowed: 1 or more",
                                  "global_batch_tokens");
            }
            if (max_nodes_per_token < 0) {
              throw budget::Error("max_nodes_per_token = " + std::to_string(max_nodes_per_token) +
                                      "; allowed: 0 (unlimited) or more",
                                  "max_nodes_per_token");
            }
            cluster_spec = cluster_argument(cluster, nodes);
            request.cluster = &*cluster_spec;
            request.cluster_search = budget::cluster_rank_search_options(w, *gpus, global_batch_tokens, max_nodes_per_token);
            request.cluster_search.min_headroom_bytes =
                budget_python::float_argument(min_headroom, "min_headroom") * static_cast<double>(std::int64_t{1} << 30);
            if (team) request.cluster_search = budget::megatron_search_options(*team, w, request.cluster_search, true);
          } else if (gpus || nodes) {
            throw budget::Error("gpus and nodes set up the cluster layout search; give cluster too", gpus ? "gpus" : "nodes");
          }
          const budget::MatchOutcome outcome =
              with_loop_argument([&] { return budget::match_outcome(base, spec, w, c, request); });
          nlohmann::ordered_json out = budget::render::match_outcome_json(outcome, spec, w, request);
          if (team && out.contains("cluster")) {
            out["cluster"]["megatron_args"] = budget::render::megatron_read_json(*team, *megatron_args, "baseline");
          }
          return to_python(out);
        },
        py::arg("baseline"), py::arg("loop") = py::none(), py::arg("span_fraction") = 0.5, py::arg("repeats") = 2,
        py::arg("workload") = py::none(), py::arg("constraints") = py::none(), py::arg("top") = 5,
        py::arg("calibration") = py::none(), py::arg("rank_by") = "budget", py::arg("attention_backend") = "auto",
        py::arg("explain") = false, py::arg("align") = 0, py::arg("max_time_ratio") = py::none(),
        py::arg("cluster") = py::none(), py::arg("gpus") = py::none(), py::arg("nodes") = py::none(),
        py::arg("global_batch_tokens") = py::none(), py::arg("max_nodes_per_token") = 0,
        py::arg("min_headroom") = budget::default_min_headroom_gib, py::arg("free_shapes") = false, py::arg("order") = py::none(),
        py::arg("megatron_args") = py::none(), py::arg("bridge_config") = py::none(), py::arg("gpu") = py::none(),
        py::arg("precision") = py::none(),
        "Matched looped configs of a baseline: the dict of `budget-match --baseline ... --format json` with the same "
        "options (calibration: --calibration, rank_by: --rank-by, attention_backend, explain: --explain, align: "
        "--align, max_time_ratio: --max-time-ratio; cluster, gpus, nodes, global_batch_tokens, "
        "max_nodes_per_token, min_headroom (default 4 GiB; 0: none): --cluster ... --gpus N, each equally matched candidate at its own best "
        "layout, docs/cluster.md; megatron_args: --megatron-args FILE with cluster, every candidate at the team's "
        "layout where valid and fitting, else at its best layout with the team's recipe held, docs/megatron.md; "
        "bridge_config: --bridge-config FILE.yaml, the same from a Megatron-Bridge config; "
        "free_shapes: --free-shapes, the whole lattice instead of the trainable defaults; "
        "order: --order, \"proportions\" (default) or \"tightest\"; gpu, precision: --gpu, --precision, the kernel "
        "target, with attention_backend fa2/fa3/fa4/cudnn/unfused, docs/kernels.md). export(result, row=N) writes "
        "row N.");

  m.def("grid",
        [](const py::handle& grid, double span_fraction, std::int64_t repeats, const py::handle& workload,
           const py::handle& constraints, const py::object& free_shapes_arg, const py::handle& order,
           const py::object& gpu, const py::object& precision, const std::string& attention_backend) {
          const bool free_shapes = budget_python::bool_argument(free_shapes_arg, "free_shapes");
          const std::optional<budget::KernelTarget> kernels = kernel_target_of(gpu, precision, attention_backend);
          budget::Grid g;
          if (grid.is_none()) {
            g = budget::paper_grid();
          } else if (py::isinstance<py::dict>(grid)) {
            g = budget::parse_grid(dict_text(grid), "grid");
          } else if (is_path(grid)) {
            g = budget::load_grid(path_string(grid));
          } else {
            bad_argument("grid", grid, "None (the paper's grid), a dict or a file path");
          }
          const budget::Workload w = workload_of(workload);
          const budget::LoopSpec spec = loop_spec(py::none(), span_fraction, repeats);
          // As match_grid(), with the constraints (a dict or a file) over each cell's defaults, then
          // the order (grid --order).
          std::vector<budget::GridRow> rows;
          for (const budget::GridCell& cell : g.cells) {
            budget::MatchConstraints c = constraints_of(constraints, cell.baseline, free_shapes, kernels);
            apply_order(order, c);
            rows.push_back({&cell, with_loop_argument([&] {
                              return budget::match(cell.baseline, budget::cell_loop_spec(cell, spec), w, c, 1);
                            })});
          }
          return to_python(budget::render::grid_json(g, rows, spec, w));
        },
        py::arg("grid") = py::none(), py::arg("span_fraction") = 0.5, py::arg("repeats") = 2,
        py::arg("workload") = py::none(), py::arg("constraints") = py::none(), py::arg("free_shapes") = false,
        py::arg("order") = py::none(), py::arg("gpu") = py::none(), py::arg("precision") = py::none(),
        py::arg("attention_backend") = "te-default",
        "Every cell of a grid matched: the dict of `budget-match grid --format json` (default: the paper's grid). "
        "`constraints` (a dict or a file path, as for match()) override each cell's default constraints; "
        "free_shapes: --free-shapes, the whole lattice instead of the trainable defaults; order: --order, "
        "\"proportions\" (default) or \"tightest\" (each cell's row #1).");

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
  bind_cluster(m);
}
