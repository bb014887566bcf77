// budget.layout(): memory per GPU of a training step under a parallel layout (docs/cluster.md),
// the dict of `budget-match layout ... --format json` without its schema keys, from the CLI's own
// JSON printers (render/: training_memory_json, cluster_step_time_json); budget.layout_search(): the
// best layouts on N GPUs, the dict of `budget-match layout CFG --cluster C --gpus N --format json`
// (render/'s layout_search_json). Bound by bind_cluster() (bindings.hpp).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/layout_search.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/pipeline_schedule.hpp"
#include "budget/megatron_args.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "budget/workload.hpp"
#include "budget_render/cluster_time.hpp"
#include "budget_render/layout_search.hpp"
#include "budget_render/megatron.hpp"
#include "budget_render/memory.hpp"
#include "arguments.hpp"
#include "bindings.hpp"
#include "layout_arguments.hpp"
#include "library_arguments.hpp"

namespace py = pybind11;

namespace {

using budget_python::calibration_argument;
using budget_python::cluster_argument;
using budget_python::is_path;
using budget_python::LayoutArguments;
using budget_python::path_string;
using budget_python::workload_argument;

/// A config from a budget.Config (through its to_dict()), a dict or a file path.
budget::ArchConfig config_of(const py::handle& value) {
  using budget_python::dict_text;
  if (py::isinstance<py::dict>(value)) return budget::parse_sourced_config(dict_text(value), "config").config;
  if (is_path(value)) return budget::load_sourced_config(path_string(value)).config;
  if (py::hasattr(value, "to_dict")) {
    return budget::parse_sourced_config(dict_text(value.attr("to_dict")()), "config").config;
  }
  budget_python::bad_argument("config", value, "a budget.Config, a dict (native or Hugging Face config) or a file path");
}

/// The profile of a layout search: `calibration` when given, else the one the cluster file names.
budget::CalibrationProfile search_profile(const py::handle& calibration, const budget::ClusterSpec& spec) {
  if (!calibration.is_none()) return calibration_argument(calibration);
  if (spec.compute.source == budget::ComputeSource::calibration) {
    return budget::load_calibration_profile(spec.compute.calibration_profile);
  }
  throw budget::Error("the layout search ranks by step time and needs a calibration profile (calibration=..., "
                      "e.g. cuda_profiler/profiles/h200-torch-eager.json); the cluster gives datasheet peaks only",
                      "calibration");
}


/// What a --megatron-args file gave, as `layout --megatron-args --format json` lists it.
py::object megatron_args_dict(const budget::MegatronRun& run) {
  return py::module_::import("json").attr("loads")(budget::render::megatron_read_json(run, "", "config").dump());
}

/// layout_search()'s named options (the attention and sequence length of `budget-match layout`: the
/// workload's, default the paper's, unless given; layout_attended_keys(): the one default of layout
/// and the ranking), each converted here (budget.Error naming it).
void read_search_options(budget::LayoutSearchOptions& o, const budget::Workload& w, const py::object& seq_len_arg,
                         const py::object& global_batch_tokens, std::int64_t top, const py::object& imbalance,
                         const py::object& attended_keys, std::int64_t max_nodes_per_token,
                         const py::object& min_headroom, const py::object& run_tokens) {
  using budget_python::float_argument;
  using budget_python::int_argument;
  o.seq_len = seq_len_arg.is_none() ? w.seq_len : int_argument(seq_len_arg, "seq_len");
  o.global_batch_tokens =
      global_batch_tokens.is_none() ? 4 * 1024 * 1024 : int_argument(global_batch_tokens, "global_batch_tokens");
  o.keep = static_cast<std::size_t>(top);
  o.imbalance = float_argument(imbalance, "imbalance");
  o.time.attended_keys = !attended_keys.is_none() ? float_argument(attended_keys, "attended_keys")
                         : o.seq_len == w.seq_len ? budget::layout_attended_keys(w)
                                                  : 0.0;
  o.time.communication.max_nodes_per_token = max_nodes_per_token;
  o.min_headroom_bytes = float_argument(min_headroom, "min_headroom") * static_cast<double>(std::int64_t{1} << 30);
  o.run_tokens = float_argument(run_tokens, "run_tokens");
}

/// The recipe every layout holds (docs/cluster.md, "The recipe held"): the keywords given, the
/// micro-batch size, recompute and distributed optimizer held only where given; or, with
/// megatron_args, the file's (as `layout --megatron-args FILE --search`), returned as read.
std::optional<budget::MegatronRun> hold_recipe(budget::LayoutSearchOptions& o, const LayoutArguments& recipe,
                                               const py::kwargs& kwargs, const budget::ArchConfig& c,
                                               std::int64_t gpus, const budget::Workload& w,
                                               const py::object& seq_len_arg, const py::object& global_batch_tokens,
                                               const py::object& attended_keys) {
  o.recipe.base = recipe.layout;
  o.recipe.hold_micro_batch_size = kwargs.contains("micro_batch_size");
  o.recipe.hold_recompute = kwargs.contains("recompute");
  o.recipe.hold_distributed_optimizer = kwargs.contains("distributed_optimizer");
  o.recipe.hold_loop_placement = kwargs.contains("loop_placement") || kwargs.contains("replicate_loop_weights");
  if (!recipe.megatron_args) return std::nullopt;
  if (kwargs.size() > 1) {
    throw budget::Error("megatron_args gives the recipe; leave the other recipe keywords out", "megatron_args");
  }
  if (!global_batch_tokens.is_none() || !seq_len_arg.is_none()) {
    throw budget::Error("megatron_args gives the batch and the sequence length; leave global_batch_tokens "
                        "and seq_len out",
                        "megatron_args");
  }
  std::optional<budget::MegatronRun> run = budget::load_team_recipe(*recipe.megatron_args, recipe.bridge_config, c, gpus);
  o = budget::megatron_search_options(*run, w, o, false);
  if (!attended_keys.is_none()) o.time.attended_keys = budget_python::float_argument(attended_keys, "attended_keys");
  return run;
}

py::object layout_search_dict(const py::handle& config, const py::handle& cluster, const py::object& gpus_arg,
                              const py::handle& calibration, const py::object& nodes_arg, const py::object& seq_len_arg,
                              const py::object& global_batch_tokens, const py::object& top_arg,
                              const py::object& imbalance, const py::object& attended_keys,
                              const py::object& max_nodes_per_token_arg, const py::handle& workload,
                              const py::object& min_headroom, const py::object& run_tokens, const py::kwargs& kwargs) {
  using budget_python::int_argument;
  budget_python::check_search_keywords(kwargs);
  const LayoutArguments recipe(kwargs);
  const std::int64_t gpus = int_argument(gpus_arg, "gpus");
  const std::optional<std::int64_t> nodes = budget_python::optional_int_argument(nodes_arg, "nodes");
  const std::int64_t top = int_argument(top_arg, "top");
  const std::int64_t max_nodes_per_token = int_argument(max_nodes_per_token_arg, "max_nodes_per_token");
  const budget::ArchConfig c = config_of(config);
  const budget::ClusterSpec spec = cluster_argument(cluster, nodes);
  if (top < 1 || top > 1000) throw budget::Error("top = " + std::to_string(top) + "; allowed: 1 to 1000", "top");
  if (max_nodes_per_token < 0) {
    throw budget::Error("max_nodes_per_token = " + std::to_string(max_nodes_per_token) + "; allowed: 0 (unlimited) or more",
                        "max_nodes_per_token");
  }
  const budget::Workload w = workload_argument(workload);
  budget::LayoutSearchOptions o;
  o.gpus = gpus;
  read_search_options(o, w, seq_len_arg, global_batch_tokens, top, imbalance, attended_keys, max_nodes_per_token,
                      min_headroom, run_tokens);
  const std::optional<budget::MegatronRun> run =
      hold_recipe(o, recipe, kwargs, c, gpus, w, seq_len_arg, global_batch_tokens, attended_keys);
  // One FP8 recipe prices memory (the layouts') and time (the model's GEMMs); the file's CUDA graphs
  // and MoE dispatcher settings as `layout --megatron-args FILE --search` prices them.
  budget::TimeModelOptions model_options;
  model_options.recipe = o.recipe.base;
  if (run) {
    const budget::MegatronKernelOptions kernels =
        budget::load_team_kernel_options(*recipe.megatron_args, recipe.bridge_config, c, gpus);
    budget::set_cuda_graphs(model_options, kernels);
    o.time.communication.moe = kernels.moe;
  }
  const budget::TimeModel model(search_profile(calibration, spec), model_options);
  const budget::LayoutSearchResult found = budget::search_layouts(model, c, spec, o);
  // The CLI names a config without a name by its path.
  const std::string name = !c.name.empty() ? c.name : is_path(config) ? path_string(config) : std::string("config");
  py::object out = budget_python::to_python(budget::render::layout_search_json(found, name, spec, o));
  if (run) out["megatron_args"] = megatron_args_dict(*run);
  return out;
}

/// layout_search(): every argument but the config and the cluster is a py::object converted here,
/// so a wrong type or an int beyond 64 bits raises budget.Error naming it (python/arguments.hpp),
/// not TypeError.
void bind_layout_search(py::module_& m) {
  m.def(
      "layout_search",
      [](const py::handle& config, const py::handle& cluster, const py::object& gpus_arg, const py::handle& calibration,
         const py::object& nodes_arg, const py::object& seq_len_arg, const py::object& global_batch_tokens,
         const py::object& top_arg, const py::object& imbalance, const py::object& attended_keys,
         const py::object& max_nodes_per_token_arg, const py::handle& workload, const py::object& min_headroom,
         const py::object& run_tokens, const py::kwargs& kwargs) {
        return layout_search_dict(config, cluster, gpus_arg, calibration, nodes_arg, seq_len_arg, global_batch_tokens,
                                  top_arg, imbalance, attended_keys, max_nodes_per_token_arg, workload, min_headroom,
                                  run_tokens, kwargs);
      },
      py::arg("config"), py::arg("cluster"), py::kw_only(), py::arg("gpus"), py::arg("calibration") = py::none(),
      py::arg("nodes") = py::none(), py::arg("seq_len") = py::none(), py::arg("global_batch_tokens") = py::none(),
      py::arg("top") = 5, py::arg("imbalance") = 1.0, py::arg("attended_keys") = py::none(),
      py::arg("max_nodes_per_token") = 0, py::arg("workload") = py::none(), py::arg("min_headroom") = budget::default_min_headroom_gib,
      py::arg("run_tokens") = 0.0,
      "The best layouts of a config on `gpus` GPUs of a cluster (docs/cluster.md, \"Layout search\"): the dict of "
      "`budget-match layout CFG --cluster C --gpus N --format json` without its schema keys: enumerated, valid, "
      "fitting and layouts (best first, each with layout, memory and time). calibration: --profile (default: the "
      "cluster file's profile); workload: the sequence length and attended keys (default the paper's, as "
      "`layout` and the cluster ranking); min_headroom: GiB a layout must leave free (--min-headroom, default 4; 0: any layout within the usable memory); run_tokens: "
      "each layout's run (--run-tokens); global_batch_tokens (default 4,194,304); the default overlap (DP "
      "overlapped, the rest exposed). The recipe every layout holds (docs/cluster.md, \"The recipe held\"): the "
      "keywords of layout() but the parallel sizes and the pipeline split (precision, fp8, fp8_param_gather, fsdp, "
      "fsdp_sharding, cpu_offload_layers, dispatcher, cross_entropy_fusion, capacity_factor, vocab_divisible_by, "
      "replicate_loop_weights, loop_placement (held where given, else each tried), moe_permute_fusion, "
      "grad_reduce_in_bf16, precision_aware_optimizer, "
      "main_params_dtype, exp_avg_dtype, exp_avg_sq_dtype; micro_batch_size, recompute and distributed_optimizer "
      "held when given, else searched); fp8 also times the GEMMs. megatron_args=FILE holds the recipe, batch, "
      "sequence length and overlap of Megatron-LM's arguments instead (`budget-match layout --megatron-args FILE "
      "--search`) and adds megatron_args (what was read); bridge_config=FILE.yaml likewise from a Megatron-Bridge "
      "config (--bridge-config). budget.Error for an unknown keyword or a bad value.");
}

void bind_layout(py::module_& m) {
  m.def(
      "layout",
      [](const py::handle& config, const py::handle& cluster, const py::kwargs& kwargs) {
        const budget::ArchConfig c = config_of(config);
        const LayoutArguments a(kwargs);
        const budget::ClusterSpec spec = cluster_argument(cluster, a.nodes);
        std::optional<budget::MegatronRun> run;
        if (a.megatron_args) run = budget::load_team_recipe(*a.megatron_args, a.bridge_config, c, a.layout.gpus);  // gpus needed
        const budget::TrainingMemory memory =
            run ? budget::training_memory(c, run->layout, spec, *a.megatron_args) : budget::training_memory(c, a.layout, spec, "layout");
        py::object out = budget_python::to_python(budget::render::training_memory_json(memory));
        // The layout as Megatron-LM's arguments give it (docs/megatron.md).
        if (run) out["megatron_args"] = megatron_args_dict(*run);
        // The step time as `budget-match layout` gives it by default: the profile given, else the
        // cluster file's (gpu.compute.calibration); the paper's workload's attention at its sequence
        // length; DP overlapped, or the overlap of the Megatron-LM arguments.
        if (!a.calibration.is_none() || spec.compute.source == budget::ComputeSource::calibration) {
          budget::TimeModelOptions to;
          to.recipe = memory.layout;
          std::optional<budget::MegatronKernelOptions> kernels;  // the file's CUDA graphs and dispatcher settings
          if (run) kernels = budget::load_team_kernel_options(*a.megatron_args, a.bridge_config, c, a.layout.gpus);
          if (kernels) budget::set_cuda_graphs(to, *kernels);
          const budget::TimeModel model(search_profile(a.calibration, spec), to);
          const budget::Workload w = workload_argument(py::none());
          budget::ClusterTimeOptions time_options;
          // The mask the recipe file says (causal unless a document mask; issue 42), as the CLI's.
          time_options.attended_keys = run                                ? budget::megatron_attention(*run, w).attended_keys
                                       : memory.layout.seq_len == w.seq_len ? budget::layout_attended_keys(w)
                                                                            : 0.0;
          if (run) time_options.communication.overlap = run->overlap;
          if (kernels) time_options.communication.moe = kernels->moe;
          const budget::ClusterStepTime time = budget::cluster_step_time(model, c, memory, spec, time_options);
          out["time"] = budget_python::to_python(budget::render::cluster_step_time_json(time));
          if (a.run_tokens) {
            // The run of `budget-match layout --run-tokens N`: the same keys as its JSON's time.run.
            const budget::RunCost cost = budget::run_cost(time, memory.layout.gpus, *a.run_tokens);
            out["time"]["run"] = budget_python::to_python(budget::render::run_cost_json(cost));
          }
        } else if (a.run_tokens) {
          throw budget::Error("a run's wall clock and GPU-hours need the step time: give calibration= (a profile, "
                              "e.g. cuda_profiler/profiles/h200-torch-eager.json); the cluster gives datasheet "
                              "peaks only",
                              "run_tokens");
        }
        return out;
      },
      py::arg("config"), py::arg("cluster"),
      // The keyword part from the layout's field table (python/layout_arguments.cpp); pybind11 copies it.
      budget_python::layout_docstring().c_str());
}

void bind_pipeline_schedule(py::module_& m) {
  using budget_python::int_argument;
  m.def(
      "peak_saved_layer_executions",
      [](const py::handle& chunk_layers_arg, const py::object& pp_arg, const py::object& micro_batches_arg) {
        if (!py::isinstance<py::list>(chunk_layers_arg) && !py::isinstance<py::tuple>(chunk_layers_arg)) {
          budget_python::bad_argument("chunk_layers", chunk_layers_arg, "a list of int");
        }
        std::vector<std::int64_t> chunk_layers;
        for (const py::handle item : chunk_layers_arg) chunk_layers.push_back(int_argument(item, "chunk_layers"));
        const std::int64_t pp = int_argument(pp_arg, "pp");
        if (pp < 1 || pp > 1 << 20) throw budget::Error("pp = " + std::to_string(pp) + "; allowed: 1 to 1048576", "pp");
        return budget::peak_saved_layer_executions(chunk_layers, static_cast<int>(pp),
                                                   int_argument(micro_batches_arg, "micro_batches"));
      },
      py::arg("chunk_layers"), py::arg("pp"), py::arg("micro_batches"),
      "Per pipeline rank s, the peak number of layer executions whose activations are saved at once under "
      "Megatron-Core's interleaved 1F1B schedule (one chunk a rank: the non-interleaved 1F1B schedule), simulated "
      "step by step as schedules.py at d98e8a64 orders forwards and backwards (budget/pipeline_schedule.hpp). "
      "chunk_layers[c] = layers executed by global model chunk c = v*pp + s (pp*vp entries), micro_batches = m. "
      "budget.Error for a size that is not a multiple of pp, a negative entry, or m not a multiple of pp with "
      "several chunks a rank.");
}

}  // namespace

void bind_cluster(py::module_& m) {
  bind_layout_search(m);
  bind_layout(m);
  budget_python::bind_layout_fields(m);
  bind_pipeline_schedule(m);
}
