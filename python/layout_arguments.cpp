#include "layout_arguments.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include "budget/error.hpp"
#include "budget/training_memory.hpp"
#include "arguments.hpp"

namespace budget_python {
namespace {

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

/// kwargs[key], when given, into `target` as an int, a real number or a bool (arguments.hpp: budget.Error naming key).
void read_int(const py::kwargs& kwargs, const char* key, std::int64_t& target) {
  if (kwargs.contains(key)) target = budget_python::int_argument(kwargs[key], key);
}
void read_real(const py::kwargs& kwargs, const char* key, double& target) {
  if (kwargs.contains(key)) target = budget_python::float_argument(kwargs[key], key);
}
void read_flag(const py::kwargs& kwargs, const char* key, bool& target) {
  if (kwargs.contains(key)) target = budget_python::bool_argument(kwargs[key], key);
}

/// pipeline_layout (a Megatron layout string; "" for none), else first_stage_layers and
/// last_stage_layers (-1: not given); both forms together: budget::Error.
void read_pipeline_split(const py::kwargs& kwargs, budget::ParallelLayout& l) {
  std::int64_t first = -1, last = -1;
  read_int(kwargs, "first_stage_layers", first);
  read_int(kwargs, "last_stage_layers", last);
  const std::optional<std::int64_t> first_given = first == -1 ? std::nullopt : std::optional<std::int64_t>(first);
  const std::optional<std::int64_t> last_given = last == -1 ? std::nullopt : std::optional<std::int64_t>(last);
  const std::string text =
      kwargs.contains("pipeline_layout") ? string_argument(kwargs["pipeline_layout"], "pipeline_layout") : std::string();
  if (text.empty()) {
    l.split = budget::PipelineSplit::first_last(first_given, last_given);
    return;
  }
  if (first_given || last_given) {
    throw budget::Error(
        "a pipeline layout string excludes first/last-stage layer counts and the embedding/loss in the split",
        "pipeline_layout");
  }
  l.split = budget::PipelineSplit::per_stage(text, "pipeline_layout");
}

}  // namespace

LayoutArguments::LayoutArguments(const py::kwargs& kwargs) {
  check_keywords(kwargs);
  read_sizes(kwargs);
  read_memory_options(kwargs);
  read_team_layouts(kwargs);
  read_files(kwargs);
  read_optimizer_options(kwargs);
}

void LayoutArguments::check_keywords(const py::kwargs& kwargs) {
  for (const auto& item : kwargs) {
    const std::string key = py::str(item.first).cast<std::string>();
    const std::vector<std::string> keys = known_keys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string allowed;
      for (const std::string& k : keys) allowed += (allowed.empty() ? "" : ", ") + k;
      throw budget::Error("unexpected keyword argument; allowed: " + allowed, key);
    }
  }
}

void LayoutArguments::read_sizes(const py::kwargs& kwargs) {
  budget::ParallelLayout& l = layout;
  l.dp = 0;
  for (const auto& [key, target] : {std::pair<const char*, std::int64_t*>{"tp", &l.tp}, {"pp", &l.pp}, {"ep", &l.ep},
                                    {"etp", &l.etp}, {"cp", &l.cp}, {"gpus", &l.gpus}, {"dp", &l.dp},
                                    {"micro_batch_size", &l.micro_batch_size}, {"micro_batches", &l.micro_batches},
                                    {"seq_len", &l.seq_len}, {"virtual_stages", &l.virtual_stages},
                                    {"vocab_divisible_by", &l.vocab_divisible_by}}) {
    read_int(kwargs, key, *target);
  }
  if (l.gpus == 0 && l.dp == 0) l.dp = 1;
}

void LayoutArguments::read_memory_options(const py::kwargs& kwargs) {
  budget::ParallelLayout& l = layout;
  read_real(kwargs, "capacity_factor", l.capacity_factor);
  read_real(kwargs, "imbalance", l.imbalance);
  read_flag(kwargs, "distributed_optimizer", l.distributed_optimizer);
  read_flag(kwargs, "sequence_parallel", l.sequence_parallel);
  read_flag(kwargs, "cross_entropy_fusion", l.cross_entropy_fusion);
  bool replicate = false;
  read_flag(kwargs, "replicate_loop_weights", replicate);
  if (replicate) l.loop_placement = budget::LoopPlacement::replicated;
  if (kwargs.contains("loop_placement")) {
    const budget::LoopPlacement p =
        budget::parse_loop_placement(string_argument(kwargs["loop_placement"], "loop_placement"), "loop_placement");
    if (replicate && p != budget::LoopPlacement::replicated) {
      throw budget::Error("replicate_loop_weights=True means loop_placement=\"replicated\"; give one", "loop_placement");
    }
    l.loop_placement = p;
  }
  if (kwargs.contains("recompute")) l.recompute = budget::parse_recompute(string_argument(kwargs["recompute"], "recompute"), "recompute");
  if (kwargs.contains("precision")) {
    l.precision = budget::parse_training_precision(string_argument(kwargs["precision"], "precision"), "precision");
  }
  if (kwargs.contains("nodes")) nodes = optional_int_argument(kwargs["nodes"], "nodes");
}

void LayoutArguments::read_team_layouts(const py::kwargs& kwargs) {
  budget::ParallelLayout& l = layout;
  read_pipeline_split(kwargs, l);
  read_int(kwargs, "cpu_offload_layers", l.cpu_offload_layers);
  read_flag(kwargs, "fp8_param_gather", l.fp8_param_gather);
  if (kwargs.contains("fsdp")) {
    l.fsdp = enum_of<budget::FsdpKind, budget::FsdpKind::torch_fsdp2>(string_argument(kwargs["fsdp"], "fsdp"), "fsdp");
  }
  if (kwargs.contains("fsdp_sharding")) {
    l.fsdp_sharding = enum_of<budget::FsdpSharding, budget::FsdpSharding::optim_grads_params>(
        string_argument(kwargs["fsdp_sharding"], "fsdp_sharding"), "fsdp_sharding");
  }
  if (kwargs.contains("fp8")) {
    l.fp8 = enum_of<budget::Fp8Recipe, budget::Fp8Recipe::mxfp8>(string_argument(kwargs["fp8"], "fp8"), "fp8");
  }
  if (kwargs.contains("dispatcher")) {
    l.dispatcher = enum_of<budget::MoeDispatcher, budget::MoeDispatcher::flex>(
        string_argument(kwargs["dispatcher"], "dispatcher"), "dispatcher");
  }
}

void LayoutArguments::read_files(const py::kwargs& kwargs) {
  if (kwargs.contains("megatron_args") && !kwargs["megatron_args"].is_none()) {
    megatron_args = string_argument(kwargs["megatron_args"], "megatron_args");
  }
  if (kwargs.contains("bridge_config") && !kwargs["bridge_config"].is_none()) {
    if (megatron_args) throw budget::Error("megatron_args and bridge_config both give the recipe; give one", "bridge_config");
    megatron_args = string_argument(kwargs["bridge_config"], "bridge_config");
    bridge_config = true;
  }
  if (kwargs.contains("calibration") && !kwargs["calibration"].is_none()) calibration = kwargs["calibration"];
  if (kwargs.contains("run_tokens")) {
    // As --run-tokens (a positive number of training tokens, at most 10^30).
    const double tokens = float_argument(kwargs["run_tokens"], "run_tokens");
    if (!(tokens > 0.0 && tokens <= 1e30)) {
      std::ostringstream message;
      message << "run_tokens = " << tokens << "; allowed: a number of tokens above 0, at most 1e30";
      throw budget::Error(message.str(), "run_tokens");
    }
    run_tokens = tokens;
  }
}

void LayoutArguments::read_optimizer_options(const py::kwargs& kwargs) {
  budget::ParallelLayout& l = layout;
  read_flag(kwargs, "moe_permute_fusion", l.moe_permute_fusion);
  // --moe-grouped-gemm (MoeMemoryRecipe::grouped_gemm: TE's grouped-GEMM workspaces, moe_memory.cpp).
  read_flag(kwargs, "moe_grouped_gemm", l.moe_memory.grouped_gemm);
  read_flag(kwargs, "grad_reduce_in_bf16", l.optimizer_dtypes.bf16_main_grads);
  read_flag(kwargs, "precision_aware_optimizer", l.optimizer_dtypes.precision_aware);
  for (const auto& [key, target] : {std::pair<const char*, budget::StateDtype*>{"main_params_dtype",
                                                                              &l.optimizer_dtypes.main_params},
                                    {"exp_avg_dtype", &l.optimizer_dtypes.exp_avg},
                                    {"exp_avg_sq_dtype", &l.optimizer_dtypes.exp_avg_sq}}) {
    if (kwargs.contains(key)) *target = budget::parse_state_dtype(string_argument(kwargs[key], key), key);
  }
}

std::vector<std::string> LayoutArguments::known_keys() {
  return {"tp", "pp", "ep", "etp", "cp", "gpus", "dp", "micro_batch_size", "micro_batches", "seq_len", "recompute",
          "distributed_optimizer", "sequence_parallel", "cross_entropy_fusion", "capacity_factor", "imbalance",
          "virtual_stages", "vocab_divisible_by", "precision", "replicate_loop_weights", "loop_placement", "nodes",
          "pipeline_layout",
          "first_stage_layers", "last_stage_layers", "fsdp", "fsdp_sharding", "fp8", "fp8_param_gather",
          "cpu_offload_layers", "dispatcher", "megatron_args", "bridge_config", "calibration", "moe_permute_fusion",
          "moe_grouped_gemm", "grad_reduce_in_bf16",
          "precision_aware_optimizer", "main_params_dtype", "exp_avg_dtype", "exp_avg_sq_dtype", "run_tokens"};
}

std::vector<std::string> LayoutArguments::search_keys() {
  return {"micro_batch_size", "recompute", "distributed_optimizer", "cross_entropy_fusion", "capacity_factor",
          "vocab_divisible_by", "precision", "replicate_loop_weights", "loop_placement", "fsdp", "fsdp_sharding", "fp8",
          "fp8_param_gather", "cpu_offload_layers", "dispatcher", "megatron_args", "bridge_config", "moe_permute_fusion",
          "moe_grouped_gemm", "grad_reduce_in_bf16", "precision_aware_optimizer", "main_params_dtype", "exp_avg_dtype",
          "exp_avg_sq_dtype"};
}

void check_search_keywords(const py::kwargs& kwargs) {
  const std::vector<std::string> keys = LayoutArguments::search_keys();
  for (const auto& item : kwargs) {
    const std::string key = py::str(item.first).cast<std::string>();
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string allowed;
    for (const std::string& k : keys) allowed += (allowed.empty() ? "" : ", ") + k;
    throw budget::Error("not a keyword of the layout search (it chooses TP, PP, V, EP, ETP, CP, DP and the "
                        "micro-batch count); allowed besides the named arguments: " + allowed,
                        key);
  }
}

}  // namespace budget_python
