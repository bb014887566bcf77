// The run file (docs/calibration.md, "Run files"): one measured training run a line, read strictly.
#include <filesystem>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "budget/comm_overlap.hpp"
#include "budget/config_hf.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "budget/run_fit.hpp"
#include "base/json_reader.hpp"
#include "communication/flex_backend_names.hpp"
#include "layout/layout_fields_json.hpp"
#include "runs/run_detail.hpp"
#include "time/calibration_rows.hpp"

namespace budget {

namespace {

using detail::ObjectReader;

CommOverlap parse_run_overlap(const std::string& text, const ObjectReader& r) {
  std::string unknown;
  const std::optional<CommOverlap> o = parse_comm_overlap(text, unknown);
  if (!o) {
    r.fail("overlap", fmt::format("\"{}\" is not allowed; allowed: none or a comma-separated list of tp, ep, cp, pp, dp",
                                  unknown));
  }
  return *o;
}

/// "main_grad_bytes" (2 or 4, default 4 for bf16 training) as the recipe's one main-gradient field: 2
/// under bf16 training is bf16 main gradients (OptimizerDtypes::bf16_main_grads); otherwise it must be
/// the bytes the precision gives (fp16 2, fp32 4: main_grad_bytes(), budget/training_recipe.hpp).
void read_run_main_grad_bytes(const ObjectReader& r, TrainingRecipe& recipe) {
  if (!r.has("main_grad_bytes")) return;
  const std::int64_t bytes = r.integer("main_grad_bytes", 2, 4);
  if (bytes == 3) r.fail("main_grad_bytes", "3 is not allowed; allowed: 2 (bf16) or 4 (fp32)");
  if (recipe.precision == TrainingPrecision::bf16) recipe.optimizer_dtypes.bf16_main_grads = bytes == 2;
  if (static_cast<double>(bytes) != main_grad_bytes(recipe)) {
    r.fail("main_grad_bytes", fmt::format("{} is not allowed for {} training, whose main gradients are {:g} bytes",
                                          bytes, to_string(recipe.precision), main_grad_bytes(recipe)));
  }
}

/// "cuda_graph_modules": the modules CUDA graphs cover when they do not cover whole layers
/// (Megatron-LM's --cuda-graph-modules names; CudaGraphModules), refused beside "cuda_graphs": true.
CudaGraphModules read_run_graph_modules(const ObjectReader& r) {
  CudaGraphModules m;
  if (!r.has("cuda_graph_modules")) return m;
  const nlohmann::json& list = r.raw("cuda_graph_modules");
  if (!list.is_array() || list.empty()) {
    r.fail("cuda_graph_modules", fmt::format("{} is not allowed; allowed: a non-empty list of module names",
                                             detail::describe_value(list)));
  }
  if (r.boolean_or("cuda_graphs", false)) {
    r.fail("cuda_graph_modules", "is given with \"cuda_graphs\": true (whole layers graphed); give one");
  }
  for (const nlohmann::json& v : list) {
    if (!v.is_string() || !add_cuda_graph_module(m, v.get<std::string>())) {
      r.fail("cuda_graph_modules", fmt::format("{} is not allowed; allowed: \"attn\", \"mlp\", \"moe\", "
                                               "\"moe_router\", \"moe_preprocess\", \"mamba\"",
                                               detail::describe_value(v)));
    }
  }
  return m;
}

void read_run_time(const ObjectReader& r, MeasuredRun& run) {
  r.reject_unknown_keys({"fp8_recipe", "cuda_graphs", "cuda_graph_modules", "overlap", "moe_pad_to_capacity",
                         "moe_router_fusion", "moe_flex_backend", "moe_comm_sms", "main_grad_bytes"});
  if (r.has("fp8_recipe")) run.layout.fp8 = parse_fp8_recipe(r.string("fp8_recipe"), r.pointer_to("fp8_recipe"));
  run.cuda_graphs = r.boolean_or("cuda_graphs", false);
  run.cuda_graph_modules = read_run_graph_modules(r);
  run.overlap = parse_run_overlap(r.string_or("overlap", "dp"), r);
  run.moe.pad_to_capacity = r.boolean_or("moe_pad_to_capacity", false);
  run.moe.router_fusion = r.boolean_or("moe_router_fusion", false);
  run.moe.flex_backend = r.enum_or("moe_flex_backend", FlexBackend::deepep, detail::flex_backend_names);
  run.moe.comm_sms = r.integer_or("moe_comm_sms", 0, 0, 4096);
  read_run_main_grad_bytes(r, run.layout);
}

/// "time" beside "layout": a setting both may give (the FP8 recipe, the main-gradient precision) is
/// given once.
void read_run_time_beside_layout(const ObjectReader& r, MeasuredRun& run) {
  const ObjectReader layout = r.object("layout"), time = r.object("time");
  for (const auto& [time_key, layout_key] : {std::pair<const char*, const char*>{"fp8_recipe", "fp8"},
                                             {"main_grad_bytes", "bf16_main_grads"},
                                             {"moe_flex_backend", "moe_hybridep"}}) {
    if (time.has(time_key) && layout.has(layout_key)) {
      time.fail(time_key, fmt::format("is given with \"layout\" \"{}\": both set it; give one", layout_key));
    }
  }
  read_run_time(time, run);
}

/// The MoE settings a run file's "layout" gives beside "time": "moe_hybridep" is the flex backend the
/// step time prices too (time's "moe_flex_backend", refused beside it); "ep_overlap_schedule" must
/// agree with the overlap ("time"'s "overlap": ep overlapped holds the schedule's extra layer).
void read_run_layout_moe_settings(const ObjectReader& layout, MeasuredRun& run) {
  if (layout.has("moe_hybridep")) {
    run.moe.flex_backend = run.layout.moe_memory.hybridep ? FlexBackend::hybridep : FlexBackend::deepep;
  }
  // The flex dispatcher's SMs, given in the layout, are time's moe_comm_sms too; given in both, they agree.
  const std::int64_t sms = run.layout.moe_memory.flex_num_sms;
  if (layout.has("moe_flex_num_sms") && run.moe.comm_sms > 0 && run.moe.comm_sms != sms) {
    layout.fail("moe_flex_num_sms", fmt::format("moe_flex_num_sms = {} disagrees with \"time\"'s moe_comm_sms = {}; "
                                                "give one, or make them agree",
                                                sms, run.moe.comm_sms));
  }
  if (layout.has("moe_flex_num_sms") && sms > 0) run.moe.comm_sms = sms;
  if (layout.has("ep_overlap_schedule") && run.layout.moe_memory.ep_overlap_schedule != run.overlap.ep) {
    layout.fail("ep_overlap_schedule",
                fmt::format("ep_overlap_schedule = {} disagrees with the overlap, where ep is {}; make \"time\"'s "
                            "\"overlap\" agree or leave ep_overlap_schedule out",
                            run.layout.moe_memory.ep_overlap_schedule, run.overlap.ep ? "overlapped" : "exposed"));
  }
}

/// A file named by the run line ("megatron_log", "bridge_config"): relative to the run file's directory.
std::string run_relative_path(const ObjectReader& r, const char* key) {
  const std::string path = r.string(key);
  if (path.empty()) r.fail(key, "the path is empty");
  const std::filesystem::path file = std::filesystem::path(path).is_absolute()
                                         ? std::filesystem::path(path)
                                         : std::filesystem::path(r.source()).parent_path() / path;
  return file.string();
}

/// The run's Megatron-LM log: "megatron_log", a path relative to the run file's directory.
MegatronLog read_run_log(const ObjectReader& r) { return load_megatron_log(run_relative_path(r, "megatron_log")); }

/// "bridge_config": a Megatron-Bridge ConfigContainer YAML (docs/megatron.md, "Megatron-Bridge
/// configs"), read as the Megatron-LM arguments its fields say; what no argument can say in the notes.
void read_run_bridge_config(const ObjectReader& r, MeasuredRun& run) {
  const std::string path = run_relative_path(r, "bridge_config");
  const BridgeConfigArgs bridge = bridge_config_args(detail::read_text_file(path), path);
  run.megatron_args = fmt::format("{}", fmt::join(bridge.words, " "));
  runs_detail::read_run_megatron_words(bridge.words, path, run);
  run.bridge = bridge.bridge;
  if (bridge.bridge.parameter_transpose_cache_disabled) {
    run.notes.push_back("model.disable_parameter_transpose_cache true: read, not modelled");
  }
  if (!bridge.bridge.tp_comm_overlap_cfg.empty()) run.notes.push_back("comm_overlap.tp_comm_overlap_cfg: read, not modelled");
  for (const auto& [name, value] : bridge.bridge.env_vars) {
    run.notes.push_back(fmt::format("env_vars.{} = {}: read, not modelled", name, value));
  }
}

/// The layout and kernel settings: "layout" (with "time"; "megatron_args" beside it is only
/// recorded), or the Megatron-LM arguments of "megatron_args", of "bridge_config" or of the log.
void read_run_setup(const ObjectReader& r, const MegatronLog* log, MeasuredRun& run) {
  const bool layout = r.has("layout"), args = r.has("megatron_args");
  if (r.has("bridge_config")) {
    if (layout || args || log != nullptr) {
      r.fail("bridge_config", "give one of \"layout\", \"megatron_args\", \"bridge_config\" and \"megatron_log\"");
    }
    if (r.has("time")) r.fail("time", "is given with \"bridge_config\": the config gives these settings");
    return read_run_bridge_config(r, run);
  }
  run.megatron_args = r.string_or("megatron_args", "");
  if (layout) {
    // The layout's fields (budget/layout_fields.hpp): what `layout --format json` writes reads back.
    run.layout = detail::read_layout_fields(r.object("layout"), run.config.vocab_size);
    if (r.has("time")) read_run_time_beside_layout(r, run);
    read_run_layout_moe_settings(r.object("layout"), run);
    // The flex dispatcher's backend and SMs size its buffers and handles (MoeMemoryRecipe) as they
    // price its time.
    if (run.layout.dispatcher == MoeDispatcher::flex) {
      MoeMemoryRecipe& m = run.layout.moe_memory;
      m.hybridep = m.hybridep || run.moe.flex_backend == FlexBackend::hybridep;
      if (run.moe.comm_sms > 0) m.flex_num_sms = run.moe.comm_sms;
    }
    return;
  }
  if (r.has("time")) r.fail("time", "is given without \"layout\": the Megatron-LM arguments give these settings");
  const std::string where = fmt::format("{} {}/{}", r.source(), r.pointer(), args ? "megatron_args" : "megatron_log");
  if (args) {
    runs_detail::read_run_megatron_words(megatron_words(run.megatron_args, where), where, run);
  } else if (log != nullptr) {
    run.megatron_args = fmt::format("{}", fmt::join(log->arguments, " "));
    runs_detail::read_run_megatron_words(log->arguments, where, run);
    run.notes.insert(run.notes.end(), log->notes.begin(), log->notes.end());
    run.bridge = log->bridge;
  } else {
    r.fail("layout", "required key is missing (give \"layout\", \"megatron_args\", \"bridge_config\" or \"megatron_log\")");
  }
}

MeasuredRun read_run(const ObjectReader& r) {
  if (!r.json().is_object()) r.fail_here(fmt::format("expected a run object, found {}", detail::describe_value(r.json())));
  r.reject_unknown_keys({"id", "role", "source", "gpu", "config", "hf_config", "cluster", "layout", "time",
                         "step_time_s", "memory_gib", "megatron_args", "megatron_log", "bridge_config", "notes"});
  MeasuredRun run;
  run.id = r.string("id");
  if (run.id.empty()) r.fail("id", "the run id is empty");
  run.role = r.choice_or("role", "fit", {"fit", "validate"});
  run.source = r.string_or("source", "");
  run.gpu = detail::read_device_name(r, "gpu");
  if (r.has("config") == r.has("hf_config")) r.fail("config", "give exactly one of \"config\" and \"hf_config\"");
  const char* key = r.has("config") ? "config" : "hf_config";
  if (!r.raw(key).is_object()) r.fail(key, "expected a config object");
  const std::string where = fmt::format("{} {}/{}", r.source(), r.pointer(), key);
  run.config = r.has("config") ? parse_arch_config(r.raw(key).dump(), where) : parse_hf_config(r.raw(key).dump(), where);
  if (!r.raw("cluster").is_object()) r.fail("cluster", "expected a cluster object (docs/cluster.md)");
  run.cluster = parse_cluster_spec(r.raw("cluster").dump(), fmt::format("{} {}/cluster", r.source(), r.pointer()));
  std::optional<MegatronLog> log;
  if (r.has("megatron_log")) log = read_run_log(r);
  read_run_setup(r, log ? &*log : nullptr, run);
  run.layout.moe_memory.ep_overlap_schedule = run.overlap.ep;  // EP overlap's schedule holds one more layer
  if (log) {
    if (r.has("step_time_s")) r.fail("step_time_s", "is given with \"megatron_log\": the log's step time is read");
    run.step_time_s = log->step_time_s();
    if (!(run.step_time_s > 0)) {
      r.fail("megatron_log", "the log has fewer than two iteration lines (the first includes start-up)");
    }
    if (log->max_allocated_mib >= 0) run.memory_gib = log->max_allocated_mib / 1024.0;
  } else {
    run.step_time_s = r.number("step_time_s", 1e-6, 1e9);
  }
  if (r.has("memory_gib") && !r.raw("memory_gib").is_null()) run.memory_gib = r.number("memory_gib", 0, 1e9);
  return run;
}

}  // namespace

std::vector<MeasuredRun> parse_measured_runs(std::string_view jsonl, const std::string& source) {
  std::vector<MeasuredRun> runs;
  detail::for_each_jsonl_line(jsonl, source, [&runs](const ObjectReader& r) {
    runs.push_back(read_run(r));
    for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
      if (runs[i].id == runs.back().id) r.fail("id", fmt::format("run id \"{}\" appears twice", runs.back().id));
    }
  });
  if (runs.empty()) throw Error("the run file has no runs", source);
  return runs;
}

std::vector<MeasuredRun> load_measured_runs(const std::string& path) {
  return parse_measured_runs(detail::read_text_file(path), path);
}

}  // namespace budget
