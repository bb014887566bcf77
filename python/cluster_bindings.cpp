// budget.layout(): memory per GPU of a training step under a parallel layout (docs/cluster.md),
// the dict of `budget-match layout ... --format json` without its schema keys, from the library's
// one JSON writer (training_memory_json); budget.layout_search(): the best layouts on N GPUs, the
// dict of `budget-match layout CFG --cluster C --gpus N --format json` (layout_search_json). Bound
// by bind_cluster(), called from budget_module.cpp, which also reads match()'s cluster argument
// with cluster_argument().

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/layout_search.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/megatron_args.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"

namespace py = pybind11;

namespace {

std::string json_text(const py::handle& h) {
  return py::module_::import("json").attr("dumps")(h).cast<std::string>();
}

bool is_path(const py::handle& h) { return py::isinstance<py::str>(h) || py::hasattr(h, "__fspath__"); }

std::string path_string(const py::handle& h) {
  return py::str(py::module_::import("os").attr("fspath")(h)).cast<std::string>();
}

[[noreturn]] void refuse(const std::string& argument, const py::handle& value, const std::string& allowed) {
  throw budget::Error(std::string("a ") + py::str(py::type::of(value).attr("__name__")).cast<std::string>() +
                          " is not accepted; allowed: " + allowed,
                      argument);
}

/// A config from a budget.Config (through its to_dict()), a dict or a file path.
/// An enumerator by its to_string() name (enumerators 0 .. Last); budget::Error naming `where`.
template <typename Enum, Enum Last>
Enum enum_of(const std::string& text, const char* where) {
  std::string allowed;
  for (int i = 0; i <= static_cast<int>(Last); ++i) {
    const Enum e = static_cast<Enum>(i);
    if (budget::to_string(e) == text) return e;
    allowed += (allowed.empty() ? "" : ", ") + std::string(budget::to_string(e));
  }
  throw budget::Error("value \"" + text + "\" is not allowed; allowed: " + allowed, where);
}

budget::ArchConfig config_of(const py::handle& value) {
  if (py::isinstance<py::dict>(value)) return budget::parse_sourced_config(json_text(value), "config").config;
  if (is_path(value)) return budget::load_sourced_config(path_string(value)).config;
  if (py::hasattr(value, "to_dict")) {
    return budget::parse_sourced_config(json_text(value.attr("to_dict")()), "config").config;
  }
  refuse("config", value, "a budget.Config, a dict (native or Hugging Face config) or a file path");
}

budget::ClusterSpec cluster_of(const py::handle& value, std::optional<std::int64_t> nodes) {
  budget::ClusterSpec c;
  if (py::isinstance<py::dict>(value)) {
    c = budget::parse_cluster_spec(json_text(value), "cluster");
    if (nodes) {
      c.nodes = *nodes;
      c.validate("nodes");
    }
    return c;
  }
  if (is_path(value)) return budget::load_cluster_spec(path_string(value), nodes);
  refuse("cluster", value, "a cluster description as a dict or a file path (docs/cluster.md)");
}

}  // namespace

budget::CalibrationProfile calibration_argument(const py::handle& calibration);  // budget_module.cpp

budget::ClusterSpec cluster_argument(const py::handle& cluster, std::optional<std::int64_t> nodes) {
  return cluster_of(cluster, nodes);
}

void bind_cluster(py::module_& m) {
  m.def(
      "layout_search",
      [](const py::handle& config, const py::handle& cluster, std::int64_t gpus, const py::handle& calibration,
         std::optional<std::int64_t> nodes, std::int64_t seq_len, std::int64_t global_batch_tokens, int top,
         double imbalance, double attended_keys, std::int64_t max_nodes_per_token) {
        const budget::ArchConfig c = config_of(config);
        const budget::ClusterSpec spec = cluster_of(cluster, nodes);
        if (top < 1 || top > 1000) throw budget::Error("top = " + std::to_string(top) + "; allowed: 1 to 1000", "top");
        if (max_nodes_per_token < 0) {
          throw budget::Error("max_nodes_per_token = " + std::to_string(max_nodes_per_token) + "; allowed: 0 (unlimited) or more",
                              "max_nodes_per_token");
        }
        // As `layout`: the profile given, else the one the cluster file names.
        budget::CalibrationProfile profile;
        if (!calibration.is_none()) {
          profile = calibration_argument(calibration);
        } else if (spec.compute.source == budget::ComputeSource::calibration) {
          profile = budget::load_calibration_profile(spec.compute.calibration_profile);
        } else {
          throw budget::Error("the layout search ranks by step time and needs a calibration profile (calibration=..., "
                              "e.g. cuda_profiler/profiles/h200-torch-eager.json); the cluster gives datasheet peaks only",
                              "calibration");
        }
        const budget::TimeModel model(profile);
        budget::LayoutSearchOptions o;
        o.gpus = gpus;
        o.seq_len = seq_len;
        o.global_batch_tokens = global_batch_tokens;
        o.keep = static_cast<std::size_t>(top);
        o.imbalance = imbalance;
        o.time.attended_keys = attended_keys;
        o.time.communication.max_nodes_per_token = max_nodes_per_token;
        const budget::LayoutSearchResult found = budget::search_layouts(model, c, spec, o);
        // The CLI names a config without a name by its path.
        const std::string name = !c.name.empty() ? c.name : is_path(config) ? path_string(config) : std::string("config");
        return py::module_::import("json").attr("loads")(budget::layout_search_json(found, name, spec, o, -1));
      },
      py::arg("config"), py::arg("cluster"), py::kw_only(), py::arg("gpus"), py::arg("calibration") = py::none(),
      py::arg("nodes") = py::none(), py::arg("seq_len") = 4096, py::arg("global_batch_tokens") = 4 * 1024 * 1024,
      py::arg("top") = 5, py::arg("imbalance") = 1.0, py::arg("attended_keys") = 0.0,
      py::arg("max_nodes_per_token") = 0,
      "The best layouts of a config on `gpus` GPUs of a cluster (docs/cluster.md, \"Layout search\"): the dict of "
      "`budget-match layout CFG --cluster C --gpus N --format json` without its schema keys: enumerated, valid, "
      "fitting and layouts (best first, each with layout, memory and time). calibration: --profile (default: the "
      "cluster file's profile); the default overlap (DP overlapped, the rest exposed).");

  m.def(
      "layout",
      [](const py::handle& config, const py::handle& cluster, std::int64_t tp, std::int64_t pp, std::int64_t ep,
         std::int64_t etp, std::int64_t cp, std::int64_t gpus, std::int64_t dp, std::int64_t micro_batch_size,
         std::int64_t micro_batches, std::int64_t seq_len, const std::string& recompute, bool distributed_optimizer,
         bool sequence_parallel, bool cross_entropy_fusion, double capacity_factor, double imbalance,
         std::int64_t virtual_stages, std::int64_t vocab_divisible_by, const std::string& precision,
         bool replicate_loop_weights, std::optional<std::int64_t> nodes, std::optional<std::string> megatron_args,
         const std::string& pipeline_layout, std::int64_t first_stage_layers, std::int64_t last_stage_layers,
         const std::string& fsdp, const std::string& fsdp_sharding, const std::string& fp8, bool fp8_param_gather,
         std::int64_t cpu_offload_layers, const std::string& dispatcher) {
        const budget::ArchConfig c = config_of(config);
        const budget::ClusterSpec spec = cluster_of(cluster, nodes);
        if (megatron_args) {
          // The layout as Megatron-LM's arguments give it (docs/megatron.md); gpus needed.
          const budget::MegatronRun run = budget::load_megatron_args(*megatron_args, c, gpus);
          const budget::TrainingMemory memory = budget::training_memory(c, run.layout, spec, *megatron_args);
          py::object out = py::module_::import("json").attr("loads")(budget::training_memory_json(memory, -1));
          py::dict args;
          args["modelled"] = run.modelled;
          args["checked_against_config"] = run.checked;
          args["read_not_modelled"] = run.read;
          args["not_modelled"] = run.not_modelled;
          args["global_batch_size"] = run.global_batch_size;
          out["megatron_args"] = args;
          return out;
        }
        budget::ParallelLayout l;
        l.pipeline_layout = pipeline_layout;
        l.first_stage_layers = first_stage_layers;
        l.last_stage_layers = last_stage_layers;
        l.fsdp = enum_of<budget::FsdpKind, budget::FsdpKind::torch_fsdp2>(fsdp, "fsdp");
        l.fsdp_sharding = enum_of<budget::FsdpSharding, budget::FsdpSharding::optim_grads_params>(fsdp_sharding,
                                                                                                 "fsdp_sharding");
        l.fp8 = enum_of<budget::Fp8Recipe, budget::Fp8Recipe::mxfp8>(fp8, "fp8");
        l.fp8_param_gather = fp8_param_gather;
        l.cpu_offload_layers = cpu_offload_layers;
        l.dispatcher = enum_of<budget::MoeDispatcher, budget::MoeDispatcher::flex>(dispatcher, "dispatcher");
        l.tp = tp;
        l.pp = pp;
        l.ep = ep;
        l.etp = etp;
        l.cp = cp;
        l.gpus = gpus;
        l.dp = gpus == 0 && dp == 0 ? 1 : dp;
        l.micro_batch_size = micro_batch_size;
        l.micro_batches = micro_batches;
        l.seq_len = seq_len;
        l.recompute = budget::parse_recompute(recompute, "recompute");
        l.distributed_optimizer = distributed_optimizer;
        l.sequence_parallel = sequence_parallel;
        l.cross_entropy_fusion = cross_entropy_fusion;
        l.capacity_factor = capacity_factor;
        l.imbalance = imbalance;
        l.virtual_stages = virtual_stages;
        l.vocab_divisible_by = vocab_divisible_by;
        l.precision = budget::parse_training_precision(precision, "precision");
        l.replicate_loop_weights = replicate_loop_weights;
        const budget::TrainingMemory memory = budget::training_memory(c, l, spec, "layout");
        return py::module_::import("json").attr("loads")(budget::training_memory_json(memory, -1));
      },
      py::arg("config"), py::arg("cluster"), py::kw_only(), py::arg("tp") = 1, py::arg("pp") = 1, py::arg("ep") = 1,
      py::arg("etp") = 0, py::arg("cp") = 1, py::arg("gpus") = 0, py::arg("dp") = 0, py::arg("micro_batch_size") = 1,
      py::arg("micro_batches") = 1, py::arg("seq_len") = 4096, py::arg("recompute") = "none",
      py::arg("distributed_optimizer") = false, py::arg("sequence_parallel") = false,
      py::arg("cross_entropy_fusion") = false, py::arg("capacity_factor") = 0.0, py::arg("imbalance") = 1.0,
      py::arg("virtual_stages") = 1, py::arg("vocab_divisible_by") = 0, py::arg("precision") = "bf16",
      py::arg("replicate_loop_weights") = false, py::arg("nodes") = py::none(), py::arg("megatron_args") = py::none(),
      py::arg("pipeline_layout") = "", py::arg("first_stage_layers") = -1, py::arg("last_stage_layers") = -1,
      py::arg("fsdp") = "none", py::arg("fsdp_sharding") = "optim_grads_params", py::arg("fp8") = "none",
      py::arg("fp8_param_gather") = false, py::arg("cpu_offload_layers") = 0, py::arg("dispatcher") = "alltoall",
      "Memory per GPU per pipeline stage under a parallel layout (docs/cluster.md): the dict of `budget-match "
      "layout ... --format json` without its schema keys: layout, memory (peak_bytes, stages[i] with layers, "
      "peak_bytes, by_component), notes. megatron_args=FILE (with gpus=N) reads the layout from Megatron-LM's "
      "arguments instead (docs/megatron.md) and adds megatron_args (what was read). recompute: none, selective, "
      "selective:MODULE,..., full, full:N, full-uniform:N. budget.Error when the layout does not divide.");
}
