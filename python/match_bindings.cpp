// budget.match() and budget.grid(): the matcher as `budget-match --baseline ...` and `budget-match
// grid` run it (the same options, errors naming the argument), their dicts the CLI's JSON
// (render/'s match_outcome_json and grid_json). docs/python.md.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "budget/grid.hpp"
#include "budget/kernel_shapes.hpp"
#include "budget/layout_search.hpp"
#include "budget/match.hpp"
#include "budget/match_outcome.hpp"
#include "budget/megatron_args.hpp"
#include "budget/text_escape.hpp"
#include "budget/time_model.hpp"
#include "budget_render/match.hpp"
#include "budget_render/match_outcome.hpp"
#include "budget_render/megatron.hpp"
#include "arguments.hpp"
#include "bindings.hpp"
#include "library_arguments.hpp"

namespace py = pybind11;

namespace {

using budget_python::bad_argument;
using budget_python::dict_text;
using budget_python::is_path;
using budget_python::path_string;
using budget_python::to_python;
using budget_python::workload_argument;

/// The search space of free_shapes=, all_trainable_shapes= and the kernel target, by the CLI's
/// rule (budget::default_shape_space(): the portable set without a target); all_trainable_shapes
/// with a target is refused, as --all-trainable-shapes with --gpu is.
budget::ShapeSpace shape_space_of(bool free_shapes, bool all_trainable_shapes,
                                  const std::optional<budget::KernelTarget>& kernels) {
  if (all_trainable_shapes && kernels) {
    throw budget::Error("all_trainable_shapes applies without a kernel target; the target (" +
                            budget::describe(*kernels) + ") decides the shapes",
                        "all_trainable_shapes");
  }
  return budget::default_shape_space(free_shapes, all_trainable_shapes, kernels.has_value());
}

/// The constraints argument over the baseline's defaults in `shapes` (a "free_shapes" key in the
/// dict or file opens the whole lattice too).
budget::MatchConstraints constraints_of(const py::handle& value, const budget::ArchConfig& baseline,
                                        budget::ShapeSpace shapes, const std::optional<budget::KernelTarget>& kernels) {
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
                                                     const std::optional<std::string>& megatron_args = std::nullopt,
                                                     bool bridge_config = false) {
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
    t.attention = budget::load_team_attention_backend(*megatron_args, bridge_config);
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

/// match()'s cluster and recipe-file arguments, converted in the order they are read (budget.Error
/// naming the first bad one, never TypeError: arguments.hpp).
struct MatchClusterArguments {
  std::optional<std::int64_t> gpus;
  std::optional<std::int64_t> nodes;
  std::int64_t global_batch_tokens = 4 * 1024 * 1024;
  bool global_batch_tokens_given = false;
  /// megatron_args=FILE or bridge_config=FILE.yaml (--megatron-args / --bridge-config): one recipe file.
  std::optional<std::string> megatron_args;
  bool bridge_config = false;
  const char* recipe_key = "megatron_args";
  std::int64_t max_nodes_per_token = 0;
};

MatchClusterArguments match_cluster_arguments(const py::object& gpus_arg, const py::object& nodes_arg,
                                              const py::object& global_batch_tokens_arg,
                                              const py::object& max_nodes_per_token_arg,
                                              const py::object& megatron_args_arg, const py::object& bridge_config_arg) {
  MatchClusterArguments a;
  a.gpus = budget_python::optional_int_argument(gpus_arg, "gpus");
  a.nodes = budget_python::optional_int_argument(nodes_arg, "nodes");
  a.global_batch_tokens_given = !global_batch_tokens_arg.is_none();
  if (a.global_batch_tokens_given) {
    a.global_batch_tokens = budget_python::int_argument(global_batch_tokens_arg, "global_batch_tokens");
  }
  if (!megatron_args_arg.is_none() && !bridge_config_arg.is_none()) {
    throw budget::Error("megatron_args and bridge_config both give the team's recipe; give one", "bridge_config");
  }
  a.bridge_config = !bridge_config_arg.is_none();
  a.recipe_key = a.bridge_config ? "bridge_config" : "megatron_args";
  const py::object& recipe_arg = a.bridge_config ? bridge_config_arg : megatron_args_arg;
  if (!recipe_arg.is_none()) a.megatron_args = budget_python::string_argument(recipe_arg, a.recipe_key);
  a.max_nodes_per_token = budget_python::int_argument(max_nodes_per_token_arg, "max_nodes_per_token");
  return a;
}

/// match()'s kernel target: gpu= (a cluster implies its GPU, as --cluster does; gpu= wins),
/// precision= (default the recipe file's FP8 recipe) and a kernel attention_backend.
std::optional<budget::KernelTarget> match_kernel_target(const py::handle& cluster, const MatchClusterArguments& a,
                                                        const py::object& gpu, const py::object& precision,
                                                        const std::string& attention_backend) {
  const py::object cluster_gpu =
      gpu.is_none() && !cluster.is_none()
          ? py::object(py::str(budget_python::cluster_argument(cluster, a.nodes).gpu_name))
          : gpu;
  return kernel_target_of(cluster_gpu, precision, attention_backend,
                          a.megatron_args ? budget::load_team_training_recipe(*a.megatron_args, a.bridge_config).fp8
                                          : budget::Fp8Recipe::none, a.megatron_args, a.bridge_config);
}

/// The constraints of match(): the argument over the baseline's defaults, the order, and
/// align=N (--align: 0 any shape, else 1 to 4096).
budget::MatchConstraints match_constraints(const py::handle& constraints, const budget::ArchConfig& base,
                                           budget::ShapeSpace shapes, const std::optional<budget::KernelTarget>& kernels,
                                           const py::handle& order, std::int64_t align) {
  budget::MatchConstraints c = constraints_of(constraints, base, shapes, kernels);
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
  return c;
}

/// megatron_args (with cluster): the team's recipe and layout, read against the baseline on gpus;
/// its FP8 recipe times every candidate's GEMMs (`--cluster ... --megatron-args FILE`).
std::optional<budget::MegatronRun> match_team_recipe(const py::handle& cluster, const MatchClusterArguments& a,
                                                     const budget::ArchConfig& base) {
  if (!a.megatron_args) return std::nullopt;
  if (cluster.is_none()) {
    throw budget::Error(std::string(a.recipe_key) + " sets up the cluster ranking; give cluster too", a.recipe_key);
  }
  if (!a.gpus) throw budget::Error("cluster needs gpus (the GPUs to lay out on)", "gpus");
  if (a.global_batch_tokens_given) {
    throw budget::Error(std::string(a.recipe_key) + " gives the batch (--global-batch-size x --seq-length); leave "
                        "global_batch_tokens out",
                        "global_batch_tokens");
  }
  return budget::load_team_recipe(*a.megatron_args, a.bridge_config, base, *a.gpus);
}

/// The time model of match() into `model`: the profile given, else the cluster file's
/// (gpu.compute.calibration), as --cluster does; none without either.
void match_time_model(const py::handle& calibration, const py::handle& cluster, const MatchClusterArguments& a,
                      const std::string& attention_backend, const std::optional<budget::MegatronRun>& team,
                      const std::optional<budget::KernelTarget>& kernels, std::optional<budget::TimeModel>& model) {
  if (!calibration.is_none() || budget_python::cluster_names_profile(cluster, a.nodes)) {
    // A kernel backend reads FlashAttention's rows (fa2/fa3/fa4) or the profile's choice (unfused).
    const bool flash = attention_backend == "fa2" || attention_backend == "fa3" || attention_backend == "fa4";
    budget::TimeModelOptions model_options{flash ? "flash" : attention_backend == "unfused" ? "auto" : attention_backend};
    if (team) {
      // The team's whole recipe (FP8, gradient bytes), as the CLI's ClusterRankOptions::training_recipe().
      model_options.recipe = static_cast<const budget::TrainingRecipe&>(team->layout);
      budget::set_cuda_graphs(model_options, budget::load_team_cuda_graphs(*a.megatron_args, a.bridge_config));
    } else if (kernels) {
      model_options.recipe.fp8 = budget::fp8_recipe_of(kernels->precision);  // precision= times the GEMMs, as --precision
    }
    model_options.kernels = kernels;
    model.emplace(budget_python::default_calibration_profile(calibration, cluster, a.nodes), model_options);
  } else if (attention_backend != "auto" && !kernels) {
    throw budget::Error("attention_backend needs calibration (a profile whose attention rows it selects) "
                        "or gpu (a kernel target: fa2, fa3, fa4, cudnn, unfused)",
                        "attention_backend");
  }
}

/// --cluster C --gpus N [--nodes K] [--global-batch-tokens T] [--max-nodes-per-token M]: each
/// equally matched candidate at its own best layout (cli/cluster_options.cpp's dependencies), the
/// cluster held in `cluster_spec`. match_outcome() refuses a cluster without calibration,
/// rank_by="time" or with max_time_ratio.
void set_cluster_ranking(const py::handle& cluster, const MatchClusterArguments& a, const budget::Workload& w,
                         const py::object& min_headroom, const std::optional<budget::MegatronRun>& team,
                         const budget::ArchConfig& base, std::optional<budget::ClusterSpec>& cluster_spec,
                         budget::MatchRequest& request) {
  if (cluster.is_none()) {
    if (a.gpus || a.nodes) {
      throw budget::Error("gpus and nodes set up the cluster layout search; give cluster too", a.gpus ? "gpus" : "nodes");
    }
    return;
  }
  if (!a.gpus) throw budget::Error("cluster needs gpus (the GPUs to lay out on)", "gpus");
  if (*a.gpus < 1) throw budget::Error("gpus = " + std::to_string(*a.gpus) + "; allowed: 1 or more", "gpus");
  if (a.global_batch_tokens < 1) {
    throw budget::Error("global_batch_tokens = " + std::to_string(a.global_batch_tokens) + "; allowed: 1 or more",
                        "global_batch_tokens");
  }
  if (a.max_nodes_per_token < 0) {
    throw budget::Error("max_nodes_per_token = " + std::to_string(a.max_nodes_per_token) +
                            "; allowed: 0 (unlimited) or more",
                        "max_nodes_per_token");
  }
  cluster_spec = budget_python::cluster_argument(cluster, a.nodes);
  request.cluster = &*cluster_spec;
  request.cluster_search = budget::cluster_rank_search_options(w, *a.gpus, a.global_batch_tokens, a.max_nodes_per_token);
  request.cluster_search.min_headroom_bytes =
      budget_python::float_argument(min_headroom, "min_headroom") * static_cast<double>(std::int64_t{1} << 30);
  if (!team) return;
  request.cluster_search = budget::megatron_search_options(*team, w, request.cluster_search, true);
  request.cluster_search.time.communication.moe =  // the file's dispatcher settings, as the CLI's
      budget::load_team_kernel_options(*a.megatron_args, a.bridge_config, base, *a.gpus).moe;
}

/// What the team's recipe file gave, in the match result's cluster object.
void add_team_recipe_json(nlohmann::ordered_json& out, const std::string& file, const budget::MegatronRun& team) {
  out["cluster"]["megatron_args"] = budget::render::megatron_read_json(team, file, "baseline");
}

py::object match_dict(const py::handle& baseline, const py::handle& loop, double span_fraction, std::int64_t repeats,
                      const py::handle& workload, const py::handle& constraints, int top, const py::handle& calibration,
                      const std::string& rank_by, const std::string& attention_backend, bool explain, std::int64_t align,
                      const py::handle& max_time_ratio, const py::handle& cluster, const MatchClusterArguments& a,
                      const py::object& min_headroom, budget::ShapeSpace shapes, const py::handle& order,
                      const std::optional<budget::KernelTarget>& kernels) {
  const budget::ArchConfig base = budget_python::arch_config(baseline, "baseline");
  const budget::Workload w = workload_argument(workload);
  const budget::LoopSpec spec = loop_spec(loop, span_fraction, repeats);
  if (top < 1) throw budget::Error("top must be at least 1", "top");
  const budget::MatchConstraints c = match_constraints(constraints, base, shapes, kernels, order, align);
  const std::optional<budget::MegatronRun> team = match_team_recipe(cluster, a, base);
  std::optional<budget::TimeModel> model;
  match_time_model(calibration, cluster, a, attention_backend, team, kernels, model);
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
  // The portable set's best off it (summary.native_reach.best_off_portable), as the CLI's.
  if (c.shapes == budget::ShapeSpace::portable) {
    request.trainable = constraints_of(constraints, base, budget::ShapeSpace::trainable, kernels);
  }
  std::optional<budget::ClusterSpec> cluster_spec;
  set_cluster_ranking(cluster, a, w, min_headroom, team, base, cluster_spec, request);
  const budget::MatchOutcome outcome =
      with_loop_argument([&] { return budget::match_outcome(base, spec, w, c, request); });
  nlohmann::ordered_json out = budget::render::match_outcome_json(outcome, spec, w, request);
  if (team && out.contains("cluster")) add_team_recipe_json(out, *a.megatron_args, *team);
  return to_python(out);
}

void bind_match_function(py::module_& m) {
  m.def("match",
        [](const py::handle& baseline, const py::handle& loop, double span_fraction, std::int64_t repeats,
           const py::handle& workload, const py::handle& constraints, int top, const py::handle& calibration,
           const std::string& rank_by, const std::string& attention_backend, bool explain, std::int64_t align,
           const py::handle& max_time_ratio, const py::handle& cluster, const py::object& gpus_arg,
           const py::object& nodes_arg, const py::object& global_batch_tokens_arg, const py::object& max_nodes_per_token_arg,
           const py::object& min_headroom, const py::object& free_shapes_arg, const py::handle& order,
           const py::object& megatron_args_arg, const py::object& bridge_config_arg, const py::object& gpu,
           const py::object& precision, const py::object& all_trainable_shapes_arg) {
          const bool free_shapes = budget_python::bool_argument(free_shapes_arg, "free_shapes");
          const bool all_trainable_shapes = budget_python::bool_argument(all_trainable_shapes_arg, "all_trainable_shapes");
          const MatchClusterArguments a = match_cluster_arguments(
              gpus_arg, nodes_arg, global_batch_tokens_arg, max_nodes_per_token_arg, megatron_args_arg, bridge_config_arg);
          const std::optional<budget::KernelTarget> kernels =
              match_kernel_target(cluster, a, gpu, precision, attention_backend);
          return match_dict(baseline, loop, span_fraction, repeats, workload, constraints, top, calibration, rank_by,
                            attention_backend, explain, align, max_time_ratio, cluster, a, min_headroom,
                            shape_space_of(free_shapes, all_trainable_shapes, kernels), order, kernels);
        },
        py::arg("baseline"), py::arg("loop") = py::none(), py::arg("span_fraction") = 0.5, py::arg("repeats") = 2,
        py::arg("workload") = py::none(), py::arg("constraints") = py::none(), py::arg("top") = 5,
        py::arg("calibration") = py::none(), py::arg("rank_by") = "budget", py::arg("attention_backend") = "auto",
        py::arg("explain") = false, py::arg("align") = 0, py::arg("max_time_ratio") = py::none(),
        py::arg("cluster") = py::none(), py::arg("gpus") = py::none(), py::arg("nodes") = py::none(),
        py::arg("global_batch_tokens") = py::none(), py::arg("max_nodes_per_token") = 0,
        py::arg("min_headroom") = budget::default_min_headroom_gib, py::arg("free_shapes") = false, py::arg("order") = py::none(),
        py::arg("megatron_args") = py::none(), py::arg("bridge_config") = py::none(), py::arg("gpu") = py::none(),
        py::arg("precision") = py::none(), py::arg("all_trainable_shapes") = false,
        "Matched looped configs of a baseline: the dict of `budget-match --baseline ... --format json` with the same "
        "options (calibration: --calibration, rank_by: --rank-by, attention_backend, explain: --explain, align: "
        "--align, max_time_ratio: --max-time-ratio; cluster, gpus, nodes, global_batch_tokens, "
        "max_nodes_per_token, min_headroom (default 4 GiB; 0: none): --cluster ... --gpus N, each equally matched candidate at its own best "
        "layout, docs/cluster.md; megatron_args: --megatron-args FILE with cluster, every candidate at the team's "
        "layout where valid and fitting, else at its best layout with the team's recipe held, docs/megatron.md; "
        "bridge_config: --bridge-config FILE.yaml, the same from a Megatron-Bridge config; "
        "free_shapes: --free-shapes, the whole lattice; all_trainable_shapes: --all-trainable-shapes, every "
        "trainable shape instead of the portable set (the default without gpu, as the CLI's); "
        "order: --order, \"proportions\" (default) or \"tightest\"; gpu, precision: --gpu, --precision, the kernel "
        "target, with attention_backend fa2/fa3/fa4/cudnn/unfused, docs/kernels.md). export(result, row=N) writes "
        "row N.");
}

void bind_grid_function(py::module_& m) {
  m.def("grid",
        [](const py::handle& grid, double span_fraction, std::int64_t repeats, const py::handle& workload,
           const py::handle& constraints, const py::object& free_shapes_arg, const py::handle& order,
           const py::object& gpu, const py::object& precision, const std::string& attention_backend,
           const py::object& all_trainable_shapes_arg) {
          const bool free_shapes = budget_python::bool_argument(free_shapes_arg, "free_shapes");
          const bool all_trainable_shapes = budget_python::bool_argument(all_trainable_shapes_arg, "all_trainable_shapes");
          const std::optional<budget::KernelTarget> kernels = kernel_target_of(gpu, precision, attention_backend);
          const budget::ShapeSpace shapes = shape_space_of(free_shapes, all_trainable_shapes, kernels);
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
          const budget::Workload w = workload_argument(workload);
          const budget::LoopSpec spec = loop_spec(py::none(), span_fraction, repeats);
          // As match_grid(), with the constraints (a dict or a file) over each cell's defaults, then
          // the order (grid --order).
          std::vector<budget::GridRow> rows;
          for (const budget::GridCell& cell : g.cells) {
            budget::MatchConstraints c = constraints_of(constraints, cell.baseline, shapes, kernels);
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
        py::arg("attention_backend") = "te-default", py::arg("all_trainable_shapes") = false,
        "Every cell of a grid matched: the dict of `budget-match grid --format json` (default: the paper's grid). "
        "`constraints` (a dict or a file path, as for match()) override each cell's default constraints; "
        "free_shapes: --free-shapes, the whole lattice; all_trainable_shapes: --all-trainable-shapes, every "
        "trainable shape instead of the portable set (the default without gpu); order: --order, "
        "\"proportions\" (default) or \"tightest\" (each cell's row #1).");
}

}  // namespace

void bind_match(py::module_& m) {
  bind_match_function(m);
  bind_grid_function(m);
}
