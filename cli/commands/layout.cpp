// budget-match layout CFG --cluster C.json --tp T --pp P --ep E [--etp] [--cp C] [--gpus N | --dp D]
//   --micro-batch-size b --micro-batches m [--seq-len s] [--recompute none|selective|full[:layers]]
//   [--distributed-optimizer] [--sequence-parallel] [--cross-entropy-fusion] [--capacity-factor F]
//   [--imbalance G] [--profile P] [--workload W] [--attended-keys A] [--max-nodes-per-token M]
//   [--overlap LIST] [--run-tokens N] [--min-headroom GiB] [--format table|json|markdown]
// Memory per GPU of one training step under a parallel layout, per pipeline stage and by
// component, against the cluster GPU's capacity, with the verdict, and, where a calibration profile
// is known (the cluster's, or --profile), the step time: compute, each collective, the bubble
// (docs/cluster.md). Exit 3 when
// the peak stage does not fit. The result is built once (LayoutResult) and becomes one Document
// (layout_document(); the layout search: search_document()) that prints every --format.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/layout_search.hpp"
#include "budget/megatron_args.hpp"
#include "budget/export.hpp"
#include "output_file.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "budget/version.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/cluster_rank.hpp"
#include "budget_render/megatron.hpp"
#include "cluster_options.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "options.hpp"
#include "output_format.hpp"
#include "recipe_file_option.hpp"
#include "budget_render/table.hpp"

namespace budget::cli {
namespace {

struct LayoutOptions {
  std::string config_path;
  std::string cluster_path;
  std::int64_t nodes = 0;
  std::string recompute = "none";
  std::string precision = "bf16";
  ParallelLayout layout;
  OutputFormat format = OutputFormat::table;
  std::string profile_path;
  WorkloadOption workload;
  double attended_keys = 0.0;  ///< 0 until resolved: --attended-keys, else the workload's
  bool attended_keys_given = false;
  bool seq_len_given = false;
  double min_headroom_gib = default_min_headroom_gib;
  std::int64_t max_nodes_per_token = 0;
  std::string overlap = "dp";
  double run_tokens = 0.0;
  std::int64_t global_batch_tokens = 4 * 1024 * 1024;
  int top = 5;
  bool layout_given = true;
  std::string megatron_args;  ///< --megatron-args FILE: the layout from Megatron-LM's arguments
  bool bridge_config = false;  ///< the file is --bridge-config's Megatron-Bridge YAML
  std::string megatron_out;   ///< --megatron-out FILE: the layout written as Megatron-LM's arguments
  std::string fp8_recipe = "none";
  bool cuda_graphs = false;
  std::string stack = "profile";
  /// --search: search the layouts holding the recipe given (native options or --megatron-args).
  bool search = false;
  /// In a search, whether --micro-batch-size, --recompute and --distributed-optimizer were given
  /// (held) or are searched.
  bool hold_micro_batch_size = false;
  bool hold_recompute = false;
  bool hold_distributed_optimizer = false;
  /// --loop-placement (or --replicate-loop-weights, replicated): held by a search; empty: each tried.
  std::string loop_placement;
  bool replicate_loop_weights = false;
  std::string main_params_dtype = "fp32";
  std::string exp_avg_dtype = "fp32";
  std::string exp_avg_sq_dtype = "fp32";
};

/// The one result of the command: what was asked and the memory per stage.
struct LayoutResult {
  std::string config_name;
  ClusterSpec cluster;
  TrainingMemory memory;
  std::optional<ClusterStepTime> time;  ///< when a calibration profile is known
  std::string time_missing;             ///< why there is no time, else empty
  std::optional<RunCost> run;
  std::optional<MegatronRun> megatron;  ///< what --megatron-args read
  double attended_keys = 0.0;        ///< of the step time (0: causal)
  std::string attention;             ///< attended_keys_text() and where it comes from
  double min_headroom_bytes = 0.0;   ///< --min-headroom
  bool fits() const { return memory.fits && memory.headroom_bytes >= min_headroom_bytes; }
};

/// The attention of the step time, the one default of `layout` and of the cluster ranking
/// (layout_attended_keys()): --attended-keys, else the workload's (--workload, default the paper's:
/// a document mask's mean attended keys, a causal window otherwise; a --seq-len other than the
/// workload's: causal); the sequence length: --seq-len, else the workload's. With a team's recipe file
/// (`team`), the mask its arguments say (megatron_attention(): causal unless --reset-attention-mask).
/// Returns what it says.
std::string resolve_attention(LayoutOptions& o, const MegatronRun* team = nullptr) {
  const Workload w = o.workload.load();
  if (!o.seq_len_given) o.layout.seq_len = w.seq_len;
  if (o.attended_keys_given) {
    return attended_keys_text(o.attended_keys, o.layout.seq_len) + " (--attended-keys)";
  }
  if (team != nullptr) {
    const MegatronAttention a = megatron_attention(*team, w);
    o.attended_keys = a.attended_keys;
    return attended_keys_text(o.attended_keys, o.layout.seq_len) + " (" + recipe_file_option(o.bridge_config) +
           ": " + a.says + ")";
  }
  o.attended_keys = o.layout.seq_len == w.seq_len ? layout_attended_keys(w) : 0.0;
  const bool from_workload = o.attended_keys > 0.0;
  return attended_keys_text(o.attended_keys, o.layout.seq_len) +
         (from_workload                  ? " (the workload's document mask; --attended-keys to change)"
          : o.layout.seq_len == w.seq_len ? " (the workload's causal mask)"
                                          : " (--seq-len differs from the workload's)");
}

/// Whether the step time was priced on the workload's document mask (resolve_attention()): then the
/// arguments --megatron-out writes ask Megatron-LM for it (--reset-attention-mask: the mask reset at each
/// end of document), so that --megatron-args of them prices the same attention (megatron_attention()).
bool priced_on_document_mask(const LayoutOptions& o) {
  if (o.attended_keys_given || !(o.attended_keys > 0.0)) return false;
  const Workload w = o.workload.load();
  return w.attention_mask == AttentionMask::document && w.seq_len == o.layout.seq_len;
}

/// --overlap: a comma-separated list of tp, ep, cp, pp, dp, or none (default dp).
CommOverlap parse_overlap(const std::string& text) {
  CommOverlap o{false, false, false, false, false};
  if (text == "none") return o;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    if (item == "tp") o.tp = true;
    else if (item == "ep") o.ep = true;
    else if (item == "cp") o.cp = true;
    else if (item == "pp") o.pp = true;
    else if (item == "dp") o.dp = true;
    else {
      throw Error(fmt::format("value \"{}\" is not allowed; allowed: none or a comma-separated list of tp, ep, cp, "
                              "pp, dp",
                              item),
                  "--overlap");
    }
    start = end + 1;
  }
  return o;
}

/// The kernel options of the step time: the layout's FP8 recipe (--fp8-recipe or --megatron-args: one
/// recipe for memory and time), --cuda-graphs, --stack.
TimeModelOptions time_model_options(const LayoutOptions& o, Fp8Recipe fp8) {
  TimeModelOptions t;
  t.fp8 = fp8;
  t.cuda_graphs = o.cuda_graphs;
  if (o.stack == "pytorch-eager") t.stack = KernelStack::pytorch_eager;
  else if (o.stack == "megatron-core-te") t.stack = KernelStack::megatron_core_te;
  else if (o.stack != "profile") {
    throw Error(fmt::format("value \"{}\" is not allowed; allowed: profile, pytorch-eager, megatron-core-te", o.stack),
                "--stack");
  }
  return t;
}

/// --loop-placement on `l` (--replicate-loop-weights: replicated); neither: in_chunk.
void apply_loop_placement(const LayoutOptions& o, ParallelLayout& l) {
  if (o.replicate_loop_weights && !o.loop_placement.empty() && o.loop_placement != "replicated") {
    throw_option_dependency_error("layout", "--replicate-loop-weights means --loop-placement replicated; give one");
  }
  l.loop_placement = !o.loop_placement.empty() ? parse_loop_placement(o.loop_placement, "--loop-placement")
                     : o.replicate_loop_weights ? LoopPlacement::replicated
                                                : LoopPlacement::in_chunk;
}

/// The native recipe options on `l`: --recompute, --precision, --fp8-recipe and the optimizer state
/// dtypes (the flags set the rest of the layout's fields directly).
void apply_native_recipe(const LayoutOptions& o, ParallelLayout& l) {
  l.recompute = parse_recompute(o.recompute, "--recompute");
  l.precision = parse_training_precision(o.precision, "--precision");
  l.fp8 = parse_fp8_recipe(o.fp8_recipe, "--fp8-recipe");
  l.optimizer_dtypes.main_params = parse_state_dtype(o.main_params_dtype, "--main-params-dtype");
  l.optimizer_dtypes.exp_avg = parse_state_dtype(o.exp_avg_dtype, "--exp-avg-dtype");
  l.optimizer_dtypes.exp_avg_sq = parse_state_dtype(o.exp_avg_sq_dtype, "--exp-avg-sq-dtype");
  apply_loop_placement(o, l);
}

/// The recipe a search holds from the native options: every recipe field as given; the micro-batch
/// size, recompute and distributed optimizer held only where given (--search), else searched.
LayoutRecipe native_recipe(const LayoutOptions& o) {
  LayoutRecipe r;
  r.base = o.layout;
  apply_native_recipe(o, r.base);
  r.hold_micro_batch_size = o.hold_micro_batch_size;
  r.hold_recompute = o.hold_recompute;
  r.hold_distributed_optimizer = o.hold_distributed_optimizer;
  r.hold_loop_placement = !o.loop_placement.empty() || o.replicate_loop_weights;
  return r;
}

/// The Megatron-LM arguments read (--megatron-args) as the output's notes list them.
std::vector<std::string> megatron_notes(const std::string& path, const MegatronRun& run) {
  const auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : "; ") + s;
    return out.empty() ? std::string("none") : out;
  };
  return {fmt::format("{} ({}): modelled: {}", run.bridge.given ? "Megatron-Bridge config, as Megatron-LM arguments" : "Megatron-LM arguments", path, list(run.modelled)),
          "checked against the config: " + list(run.checked), "read, effect not modelled: " + list(run.read),
          "not modelled (change nothing here): " + list(run.not_modelled)};
}

std::string gib(double bytes) { return fmt::format("{:.2f}", bytes / (1024.0 * 1024.0 * 1024.0)); }

std::string layers_text(const std::vector<std::int64_t>& layers) {
  if (layers.empty()) return "-";
  // Consecutive runs as a-b.
  std::string out;
  std::size_t i = 0;
  while (i < layers.size()) {
    std::size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += i == j ? fmt::format("{}", layers[i]) : fmt::format("{}-{}", layers[i], layers[j]);
    i = j + 1;
  }
  return out;
}

Table stage_table(const TrainingMemory& m) {
  Table t;
  for (const char* header : {"stage", "layers", "executed", "in flight"}) t.add_column(header, Align::left);
  for (const char* header : {"weights", "grads", "optimizer", "activations", "logits", "buffers", "total GiB"}) {
    t.add_column(header);
  }
  for (const StageMemory& s : m.stages) {
    const MemoryComponents& c = s.by_component;
    std::string label = std::to_string(s.pipeline_rank);
    if (s.has_embedding) label += " (embedding)";
    if (s.has_lm_head) label += " (LM head)";
    t.add_row({label, layers_text(s.stored_layers), std::to_string(s.executed_layers),
               std::to_string(s.in_flight_micro_batches), gib(c.weights), gib(c.gradients), gib(c.optimizer_states),
               gib(c.activations), gib(c.logits), gib(c.buffers), gib(s.peak_bytes)});
  }
  return t;
}

/// "1 GPU", "8 GPUs": a count and its noun, singular for 1.
std::string counted(std::int64_t n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

std::string layout_text(const ParallelLayout& l) {
  return fmt::format("{}: TP {}{} x CP {} x DP {} x PP {}{}; experts ETP {} x EP {} x EDP {}; {} of {} of {} tokens; "
                     "recompute {}{}; {}{}",
                     counted(l.gpus, "GPU", "GPUs"), l.tp, l.sequence_parallel_active() ? " (SP)" : "", l.cp, l.data_parallel(), l.pp,
                     (l.virtual_stages > 1 ? fmt::format(" (V {})", l.virtual_stages) : "") +
                         (l.loop_placement != LoopPlacement::in_chunk
                              ? fmt::format(", loop placement {}", to_string(l.loop_placement))
                              : ""),
                     l.expert_tp(), l.ep,
                     l.expert_data_parallel(), counted(l.micro_batches, "micro-batch", "micro-batches"),
                     counted(l.micro_batch_size, "sequence", "sequences"), l.seq_len, to_string(l.recompute.kind),
                     l.recompute.kind == RecomputeKind::full && l.recompute.full_layers > 0
                         ? fmt::format(":{}", l.recompute.full_layers)
                         : "",
                     to_string(l.precision), l.distributed_optimizer ? ", distributed optimizer" : "");
}

std::string verdict_text(const TrainingMemory& m, const ClusterSpec& cluster, double min_headroom_bytes) {
  const std::string capacity =
      fmt::format("{} GiB usable of {} GiB on {}", gib(m.capacity_bytes), gib(static_cast<double>(cluster.memory_bytes)),
                  cluster.gpu_name);
  if (m.fits && m.headroom_bytes < min_headroom_bytes) {
    return fmt::format("does not fit with the headroom asked for: peak {} GiB on stage {} leaves {} GiB, less than the "
                       "{} GiB of --min-headroom ({})",
                       gib(m.peak_bytes), m.peak_stage, gib(m.headroom_bytes), gib(min_headroom_bytes), capacity);
  }
  if (m.fits) {
    return fmt::format("fits: peak {} GiB on stage {}, headroom {} GiB ({})", gib(m.peak_bytes), m.peak_stage,
                       gib(m.headroom_bytes), capacity);
  }
  return fmt::format("does not fit: peak {} GiB on stage {} exceeds the capacity by {} GiB ({})", gib(m.peak_bytes),
                     m.peak_stage, gib(-m.headroom_bytes), capacity);
}

/// What --megatron-args read, in the JSON of the layout and of the search.
nlohmann::ordered_json megatron_args_json(const MegatronRun& run) { return render::megatron_read_json(run, "", "config"); }

/// The layout's result in every form: its JSON (the memory, and the step time or why there is
/// none) and the text and Markdown blocks (stages, verdict, notes, the step time by component).
Document layout_document(const LayoutResult& r) {
  Document doc;
  nlohmann::ordered_json out{{"schema_version", output_schema_version},
                             {"budget_version", version_string},
                             {"config", r.config_name},
                             {"cluster", r.cluster.name.empty() ? r.cluster.gpu_name : r.cluster.name}};
  const nlohmann::ordered_json body = nlohmann::ordered_json::parse(training_memory_json(r.memory, -1));
  for (const auto& [key, value] : body.items()) out[key] = value;
  out["min_headroom_bytes"] = r.min_headroom_bytes;
  out["fits_with_min_headroom"] = r.fits();
  out["attended_keys"] = r.attended_keys > 0.0 ? r.attended_keys
                                               : (static_cast<double>(r.memory.layout.seq_len) + 1.0) / 2.0;
  out["attention"] = r.attention;
  if (r.time) {
    out["time"] = nlohmann::ordered_json::parse(cluster_step_time_json(*r.time, -1));
    if (r.run) {
      out["time"]["run"] = {{"wall_clock_seconds", r.run->wall_clock_seconds}, {"gpu_hours", r.run->gpu_hours},
                            {"steps", r.run->steps}};
    }
  } else {
    out["time"] = nullptr;
    out["time_missing"] = r.time_missing;
  }
  if (r.megatron) out["megatron_args"] = megatron_args_json(*r.megatron);
  doc.set_json(std::move(out));

  doc.text(fmt::format("{} on {} node{} of {} x {}\n{}\nattention: {}\n\n", r.config_name, r.cluster.nodes,
                       r.cluster.nodes == 1 ? "" : "s", r.cluster.gpus_per_node, r.cluster.gpu_name,
                       layout_text(r.memory.layout), r.attention));
  doc.table(stage_table(r.memory), Forms::text);
  std::string verdict = "\n" + verdict_text(r.memory, r.cluster, r.min_headroom_bytes) + "\n";
  for (const std::string& note : r.memory.notes) verdict += "note: " + note + "\n";
  if (!r.time) {
    doc.text(verdict + "step time: " + r.time_missing + "\n");
    return doc;
  }
  const ClusterStepTime& st = *r.time;
  doc.text(verdict + fmt::format("\nstep time (slowest stage {})\n", st.slowest_stage));
  Table parts;
  parts.add_column("component", Align::left);
  parts.add_column("seconds per step");
  parts.add_column("share");
  for (const TimeComponent& c : st.by_component) {
    parts.add_row({c.name + (c.overlapped ? " (overlapped)" : ""), fmt::format("{:.4f}", c.seconds),
                   c.overlapped ? "-" : fmt::format("{:.1f}%", 100.0 * c.seconds / st.seconds_per_step)});
  }
  doc.table(parts, Forms::text);
  std::string tail = fmt::format("\n{:.4f} s a step of {} tokens, {:.0f} tokens/s per GPU, MFU {:.1f}% ({})\n",
                                 st.seconds_per_step, st.tokens_per_step, st.tokens_per_second_per_gpu,
                                 100.0 * st.mfu, st.mfu_denominator);
  if (r.run) {
    tail += fmt::format("run: {:.0f} steps, {:.1f} h wall clock, {:.0f} GPU-hours\n", r.run->steps,
                        r.run->wall_clock_seconds / 3600.0, r.run->gpu_hours);
  }
  for (const std::string& note : st.notes) tail += "note: " + note + "\n";
  doc.text(tail);
  return doc;
}

/// What every searched layout holds (LayoutRecipe): "bf16, FP8 tensorwise, micro-batch size 1,
/// recompute selective, distributed optimizer; searched: ..." (the settings the search varies last).
std::string recipe_text(const LayoutRecipe& r) {
  const ParallelLayout& b = r.base;
  std::string held = fmt::format("{}{}", to_string(b.precision),
                                 b.fp8 != Fp8Recipe::none ? fmt::format(", FP8 {}", to_string(b.fp8)) : "");
  if (b.optimizer_dtypes.bf16_main_grads) held += ", bf16 main gradients";
  if (b.optimizer_dtypes.precision_aware) held += ", precision-aware optimizer";
  if (b.fsdp != FsdpKind::none) held += fmt::format(", {} ({})", to_string(b.fsdp), to_string(b.fsdp_sharding));
  if (b.cpu_offload_layers > 0) held += fmt::format(", {} layers offloaded", b.cpu_offload_layers);
  std::string searched;
  if (r.hold_micro_batch_size) held += fmt::format(", micro-batch size {}", b.micro_batch_size);
  else searched += "micro-batch size 1, 2, 4; ";
  if (r.hold_recompute) held += fmt::format(", recompute {}", to_string(b.recompute.kind));
  else searched += "recompute none, selective, full; ";
  if (r.hold_distributed_optimizer) held += b.distributed_optimizer ? ", distributed optimizer" : ", no distributed optimizer";
  else searched += "distributed optimizer on, off; ";
  if (r.hold_loop_placement) held += fmt::format(", loop placement {}", to_string(b.loop_placement));
  else searched += "loop placement (looped configs); ";
  return held + "; searched: " + searched + "TP, CP, PP, V, EP, ETP";
}

/// The layout search's result in every form: its JSON (the layouts kept, each with memory and
/// time) and the ranked table with its heading.
Document search_document(const std::string& name, const ClusterSpec& cluster, const LayoutSearchOptions& so,
                         const LayoutSearchResult& found, const std::string& attention,
                         const std::optional<MegatronRun>& megatron) {
  Document doc;
  // The JSON body is the library's (layout_search_json: the same object Python's layout_search returns).
  nlohmann::ordered_json out{{"schema_version", output_schema_version}, {"budget_version", version_string}};
  const nlohmann::ordered_json body = nlohmann::ordered_json::parse(layout_search_json(found, name, cluster, so, -1));
  for (const auto& [key, value] : body.items()) out[key] = value;
  if (megatron) out["megatron_args"] = megatron_args_json(*megatron);
  doc.set_json(std::move(out));

  doc.text(fmt::format("{} on {} of {} GPUs ({} node{} of {} x {}): {} layouts enumerated, {} valid, {} fit{}\n"
                       "attention: {}\nrecipe held: {}\n",
                       name, so.gpus, cluster.total_gpus(), cluster.nodes, cluster.nodes == 1 ? "" : "s",
                       cluster.gpus_per_node, cluster.gpu_name, found.enumerated, found.valid, found.fitting,
                       so.min_headroom_bytes > 0.0 ? fmt::format(" with {} GiB of headroom", gib(so.min_headroom_bytes))
                                                   : "",
                       attention, recipe_text(so.recipe)));
  Table t;
  for (const char* h : {"rank", "layout"}) t.add_column(h, Align::left);
  for (const char* h : {"s/step", "tokens/s/GPU", "MFU", "compute", "comm exposed", "bubble", "headroom GiB"}) {
    t.add_column(h);
  }
  if (so.run_tokens > 0.0) {
    t.add_column("run h");
    t.add_column("GPU-hours");
  }
  std::size_t rank = 1;
  for (const RankedLayout& r : found.layouts) {
    const ClusterStepTime& st = r.time;
    const StageTime& slow = st.stages[static_cast<std::size_t>(st.slowest_stage)];
    const ParallelLayout& l = r.memory.layout;
    std::vector<std::string> cells{std::to_string(rank++),
               layout_brief(l),
               fmt::format("{:.4f}", st.seconds_per_step), fmt::format("{:.0f}", st.tokens_per_second_per_gpu),
               fmt::format("{:.1f}%", 100.0 * st.mfu), fmt::format("{:.4f}", slow.compute_seconds),
               fmt::format("{:.4f}", slow.exposed_communication_seconds + slow.late_overlap_seconds),
               fmt::format("{:.4f}", st.bubble_seconds), gib(r.memory.headroom_bytes)};
    if (so.run_tokens > 0.0) {
      const RunCost run = run_cost(st, l.gpus, so.run_tokens);
      cells.push_back(fmt::format("{:.1f}", run.wall_clock_seconds / 3600.0));
      cells.push_back(fmt::format("{:.0f}", run.gpu_hours));
    }
    t.add_row(std::move(cells));
  }
  doc.table(t, Forms::text);
  const std::string none = no_layout_reason(found, so);
  doc.text(none.empty() ? (so.run_tokens > 0.0 ? fmt::format("\nrun: {:g} tokens\n", so.run_tokens) : "")
                        : "\n" + none + "\n");
  doc.text(min_headroom_footer(so), Forms::text);
  return doc;
}

void run_layout(LayoutOptions o) {
  const ArchConfig config = load_arch_config(o.config_path);
  LayoutResult result;
  result.config_name = config.name.empty() ? o.config_path : config.name;
  result.cluster = load_cluster_spec(o.cluster_path, o.nodes > 0 ? std::optional<std::int64_t>(o.nodes) : std::nullopt);
  ParallelLayout layout = o.layout;
  CommOverlap overlap = parse_overlap(o.overlap);
  if (!o.megatron_args.empty()) {
    result.megatron = load_team_recipe(o.megatron_args, o.bridge_config, config, o.layout.gpus);
    layout = result.megatron->layout;
    apply_loop_placement(o, layout);
    overlap = result.megatron->overlap;
    // The attention at the file's --seq-length, with the mask its arguments say.
    o.layout.seq_len = layout.seq_len;
    o.seq_len_given = true;
  }
  result.attention = resolve_attention(o, result.megatron ? &*result.megatron : nullptr);  // --seq-len: the workload's
  if (!result.megatron) {
    layout = o.layout;
    apply_native_recipe(o, layout);
  }
  result.attended_keys = o.attended_keys;
  result.min_headroom_bytes = o.min_headroom_gib * static_cast<double>(std::int64_t{1} << 30);
  if (layout.gpus == 0 && layout.dp == 0) layout.dp = 1;
  // EP overlap's schedule holds one more layer (docs/cluster.md, "MoE memory terms").
  layout.moe_memory.ep_overlap_schedule = overlap.ep;
  result.memory = training_memory(config, layout, result.cluster, "layout");
  if (!o.megatron_out.empty()) {
    // export --to megatron's file with a TRAINING_ARGS array: --megatron-args of it gives this layout.
    ExportOptions eo;
    eo.seq_length = result.memory.layout.seq_len;
    eo.megatron_training_args = megatron_layout_args(result.memory.layout, overlap);
    if (priced_on_document_mask(o)) eo.megatron_training_args.push_back("--reset-attention-mask");
    write_output_file(o.megatron_out, export_config(config, ExportTarget::megatron, eo).text);
  }
  if (result.megatron) {
    for (std::string& note : megatron_notes(o.megatron_args, *result.megatron)) result.memory.notes.push_back(std::move(note));
  }
  std::string profile = o.profile_path;
  if (profile.empty() && result.cluster.compute.source == ComputeSource::calibration) {
    profile = result.cluster.compute.calibration_profile;
  }
  if (profile.empty()) {
    result.time_missing = "not computed: the cluster gives datasheet peaks only; give a calibration profile "
                          "(--profile, e.g. cuda_profiler/profiles/h200-torch-eager.json)";
  } else {
    const TimeModel model(load_calibration_profile(profile), time_model_options(o, result.memory.layout.fp8));
    ClusterTimeOptions options;
    options.attended_keys = o.attended_keys;
    options.communication.max_nodes_per_token = o.max_nodes_per_token;
    options.communication.overlap = overlap;
    if (result.megatron) {  // group-limited routing (--moe-router-num-groups / -group-topk)
      options.communication.moe.router_num_groups = result.megatron->router_num_groups;
      options.communication.moe.router_group_topk = result.megatron->router_group_topk;
    }
    result.time = cluster_step_time(model, config, result.memory, result.cluster, options);
    if (o.run_tokens > 0.0) result.run = run_cost(*result.time, result.memory.layout.gpus, o.run_tokens);
  }
  print(layout_document(result), o.format);
  if (!result.fits()) throw CommandExit{exit_infeasible};
}

/// The layout search: every valid layout on --gpus, those that fit ranked by step time.
void run_search(LayoutOptions o) {
  const ArchConfig config = load_arch_config(o.config_path);
  const ClusterSpec cluster =
      load_cluster_spec(o.cluster_path, o.nodes > 0 ? std::optional<std::int64_t>(o.nodes) : std::nullopt);
  if (o.layout.gpus <= 0) throw_option_dependency_error("layout", "the layout search needs the GPU count (--gpus)");
  std::string profile = o.profile_path;
  if (profile.empty() && cluster.compute.source == ComputeSource::calibration) {
    profile = cluster.compute.calibration_profile;
  }
  if (profile.empty()) {
    throw Error("the layout search ranks by step time and needs a calibration profile (--profile, e.g. "
                "cuda_profiler/profiles/h200-torch-eager.json); the cluster gives datasheet peaks only",
                "layout");
  }
  std::optional<MegatronRun> megatron;
  if (!o.megatron_args.empty()) {
    // The file's recipe held (docs/megatron.md): its batch, sequence, recompute, precision, optimizer,
    // overlap; its parallel sizes are the search's to choose.
    megatron = load_team_recipe(o.megatron_args, o.bridge_config, config, o.layout.gpus);
    o.layout.seq_len = megatron->layout.seq_len;
    o.seq_len_given = true;
  }
  const std::string attention = resolve_attention(o, megatron ? &*megatron : nullptr);
  LayoutSearchOptions so;
  so.gpus = o.layout.gpus;
  so.seq_len = o.layout.seq_len;
  so.global_batch_tokens = o.global_batch_tokens;
  so.keep = static_cast<std::size_t>(o.top);
  so.imbalance = o.layout.imbalance;
  so.time.attended_keys = o.attended_keys;
  so.time.communication.max_nodes_per_token = o.max_nodes_per_token;
  so.time.communication.overlap = parse_overlap(o.overlap);
  so.min_headroom_bytes = o.min_headroom_gib * static_cast<double>(std::int64_t{1} << 30);
  so.run_tokens = o.run_tokens;
  so.recipe = native_recipe(o);
  if (megatron) {
    so = megatron_search_options(*megatron, o.workload.load(), so, false);
    apply_loop_placement(o, so.recipe.base);  // not a Megatron-LM argument: --loop-placement alone
    so.recipe.hold_loop_placement = !o.loop_placement.empty() || o.replicate_loop_weights;
    so.time.attended_keys = o.attended_keys;  // --attended-keys, else the mask the file says
  }
  // One FP8 recipe prices memory (the layouts' recipe) and time (the model's GEMMs).
  const TimeModel model(load_calibration_profile(profile), time_model_options(o, so.recipe.base.fp8));
  const LayoutSearchResult found = search_layouts(model, config, cluster, so);
  const std::string name = config.name.empty() ? o.config_path : config.name;
  Document doc = search_document(name, cluster, so, found, attention, megatron);
  if (megatron) {
    std::string notes;
    for (const std::string& note : megatron_notes(o.megatron_args, *megatron)) notes += "note: " + note + "\n";
    doc.text(notes, Forms::text);
  }
  print(doc, o.format);
  if (found.layouts.empty()) throw CommandExit{exit_infeasible};
  if (!o.megatron_out.empty()) {
    // The best layout as Megatron-LM's arguments (export --to megatron with TRAINING_ARGS).
    ExportOptions eo;
    eo.seq_length = found.layouts.front().memory.layout.seq_len;
    eo.megatron_training_args = megatron_layout_args(found.layouts.front().memory.layout, so.time.communication.overlap);
    if (priced_on_document_mask(o)) eo.megatron_training_args.push_back("--reset-attention-mask");
    write_output_file(o.megatron_out, export_config(config, ExportTarget::megatron, eo).text);
  }
}

/// The options --megatron-args gives itself: refused beside it.
void refuse_beside_megatron_args(const CLI::App& cmd, bool bridge) {
  for (const char* name : {"--tp", "--pp", "--vp", "--ep", "--etp", "--cp", "--dp", "--micro-batch-size",
                           "--micro-batches", "--recompute", "--sequence-parallel", "--distributed-optimizer",
                           "--precision", "--cross-entropy-fusion", "--capacity-factor", "--vocab-divisible-by",
                           "--overlap", "--seq-len", "--dropout", "--no-flash-attention", "--fp8-recipe",
                           "--moe-permute-fusion", "--grad-reduce-in-bf16", "--precision-aware-optimizer",
                           "--main-params-dtype", "--exp-avg-dtype", "--exp-avg-sq-dtype", "--imbalance",
                           "--global-batch-tokens", "--pipeline-layout"}) {
    if (cmd.count(name) > 0) {
      throw_option_dependency_error("layout", fmt::format("{} and {} both give it; give one", name, recipe_file_option(bridge)));
    }
  }
}

/// --search: the search chooses the parallel sizes and the micro-batch count (refused when given),
/// needs --gpus, and with --megatron-args takes the rest from the file.
void check_search_options(const CLI::App& cmd, const LayoutOptions& o) {
  for (const char* name : {"--tp", "--pp", "--vp", "--ep", "--etp", "--cp", "--dp", "--micro-batches",
                           "--sequence-parallel"}) {
    if (cmd.count(name) > 0) {
      throw_option_dependency_error("layout", fmt::format("--search chooses TP, PP, V, EP, ETP, CP, DP and the "
                                                          "micro-batch count; leave {} out",
                                                          name));
    }
  }
  if (cmd.count("--gpus") == 0) throw_option_dependency_error("layout", "--search needs --gpus");
  if (!o.megatron_args.empty()) refuse_beside_megatron_args(cmd, o.bridge_config);
}

void add_layout_command(CLI::App& app) {
  auto o = std::make_shared<LayoutOptions>();
  CLI::App* cmd = app.add_subcommand(
      "layout", "Memory per GPU of a training step under a parallel layout (TP/PP/EP/CP/DP), per pipeline stage");
  cmd->add_option("config", o->config_path, "Native or Hugging Face config JSON")->required();
  cmd->add_option("--cluster", o->cluster_path, "Cluster description (docs/cluster.md; examples/clusters/)")->required();
  cmd->add_option("--nodes", o->nodes, "Nodes of the cluster (default: the file's)")->check(CLI::Range(1, 1 << 20));
  ParallelLayout& l = o->layout;
  cmd->add_option("--tp", l.tp, "Tensor parallel size (default 1)");
  cmd->add_option("--pp", l.pp, "Pipeline stages (default 1)");
  cmd->add_option("--vp", l.virtual_stages, "Virtual stages per pipeline rank (interleaved 1F1B; default 1)");
  cmd->add_option("--ep", l.ep, "Expert parallel size (default 1)");
  cmd->add_option("--etp", l.etp, "Expert tensor parallel size (default: TP)");
  cmd->add_option("--cp", l.cp, "Context parallel size (default 1)");
  auto* gpus = cmd->add_option("--gpus", l.gpus, "GPU count N (DP = N / (TP·CP·PP))")
                   ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24));
  cmd->add_option("--dp", l.dp, "Data parallel size (N = TP·CP·DP·PP); default 1 without --gpus")->excludes(gpus);
  cmd->add_option("--micro-batch-size", l.micro_batch_size,
                  "Sequences per micro-batch (with --micro-batches: one layout; without any layout option: search)");
  cmd->add_option("--micro-batches", l.micro_batches, "Micro-batches per step (m)");
  cmd->add_option("--global-batch-tokens", o->global_batch_tokens,
                  "Search: tokens per step b·s·m·DP (default 4,194,304)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 50));
  cmd->add_option("--top", o->top, "Search: best layouts printed (default 5)")->check(CLI::Range(1, 1000));
  cmd->add_option("--seq-len", l.seq_len, "Tokens per sequence (default: the workload's, 4096 for the paper's)");
  cmd->add_option("--recompute", o->recompute, "none (default), selective (attention core), full or full:N layers per chunk");
  cmd->add_option("--precision", o->precision, "bf16 (default: bf16 weights, fp32 grads and Adam), fp16 or fp32");
  cmd->add_flag("--distributed-optimizer", l.distributed_optimizer, "Shard optimizer states over DP (experts: expert DP)");
  cmd->add_flag("--sequence-parallel", l.sequence_parallel, "Sequence parallelism with TP");
  cmd->add_flag("--cross-entropy-fusion", l.cross_entropy_fusion, "Fused cross-entropy: no fp32 copy of the logits");
  // Checked here as well as by the layout's validation_error(): the search would otherwise drop
  // every layout as invalid and report "0 valid" without the reason.
  cmd->add_option("--capacity-factor", l.capacity_factor, "Expert capacity factor (token dropping; default dropless)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--imbalance", l.imbalance, "Most loaded expert rank's rows over the balanced count (default 1)")
      ->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--vocab-divisible-by", l.vocab_divisible_by,
                  "Pad the vocabulary to a multiple of this × TP (Megatron --make-vocab-size-divisible-by)");
  cmd->add_option("--loop-placement", o->loop_placement,
                  "Where a repeated loop sits on the pipeline: in_chunk (inside one model chunk), wrap (its passes "
                  "wrap around the pipeline, each rank storing its loop layers once) or replicated (each stage "
                  "stores what it runs, the copies' gradients all-reduced); a search holds it, else tries each "
                  "(docs/cluster.md, \"Loops across pipeline stages\")");
  cmd->add_flag("--replicate-loop-weights", o->replicate_loop_weights, "The same as --loop-placement replicated");
  cmd->add_option("--pipeline-layout", l.pipeline_layout,
                  "Megatron's pipeline layout string (E, t, m, L, | between chunks, x*N, (...)*N); with --loop-placement "
                  "wrap or replicated each t is one layer execution, the loop unrolled (docs/cluster.md)");
  cmd->add_flag("!--no-flash-attention", l.flash_attention, "Keep the s² softmax terms (no FlashAttention)");
  cmd->add_flag("--dropout", l.dropout, "Count dropout masks (hidden and attention dropout > 0)");
  cmd->add_option("--profile,--calibration", o->profile_path,
                  "Calibration profile for the step time (default: the cluster file's, if it names one)");
  add_workload_option(*cmd, o->workload,
                      "Workload JSON: the sequence length and attended keys of the step time (default: the paper's, "
                      "as the cluster ranking)");
  cmd->add_option("--attended-keys", o->attended_keys,
                  "Mean attended keys per query; 0: a causal window, (s + 1)/2 (default: the workload's: a document "
                  "mask's mean, else causal)")
      ->check(non_negative_real(1e12));
  cmd->add_option("--max-nodes-per-token", o->max_nodes_per_token,
                  "Node-limited routing: each token to at most M nodes (DeepSeek-V3; default unlimited)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--overlap", o->overlap, "Collectives overlapped with compute: none or a list of tp,ep,cp,pp,dp (default dp)");
  cmd->add_option("--fp8-recipe", o->fp8_recipe,
                  "FP8 GEMMs: none (default, bf16), delayed, tensorwise, blockwise or mxfp8 (docs/calibration.md)");
  cmd->add_flag("--cuda-graphs", o->cuda_graphs, "CUDA graphs: no CPU launch gaps (Megatron-Core stack)");
  cmd->add_option("--stack", o->stack,
                  "Kernel stack timed: profile (default: the profile's), pytorch-eager or megatron-core-te");
  cmd->add_option("--megatron-args", o->megatron_args,
                  "Megatron-LM's arguments (shell words, or the bash-array file export --to megatron writes): the "
                  "layout, batch, recompute, precision and overlap as a team runs them; needs --gpus (docs/megatron.md)");
  add_bridge_config_option(*cmd, o->megatron_args, o->bridge_config, "the layout and recipe as --megatron-args; needs --gpus");
  cmd->add_option("--megatron-out", o->megatron_out,
                  "Write the layout (with a search: the best one) as Megatron-LM's arguments (MODEL_ARGS and "
                  "TRAINING_ARGS bash arrays)")
      ->check(output_path());
  cmd->add_flag("--search", o->search,
                "Search the layouts on --gpus holding the recipe given: --megatron-args' file (its parallel sizes "
                "left to the search), or --micro-batch-size, --recompute, --distributed-optimizer where given and the "
                "precision, FP8 and optimizer options (docs/cluster.md, \"The recipe held\")");
  cmd->add_flag("--moe-permute-fusion", l.moe_permute_fusion,
                "Fused MoE permutation (Megatron --moe-permute-fusion): TE's row map instead of an index per row");
  cmd->add_flag("--grad-reduce-in-bf16", l.optimizer_dtypes.bf16_main_grads,
                "bf16 gradient buffer and reduction (Megatron --grad-reduce-in-bf16; bf16 training)");
  cmd->add_flag("--precision-aware-optimizer", l.optimizer_dtypes.precision_aware,
                "Transformer Engine's FusedAdam keeps the master weights and moments in the dtypes below (Megatron "
                "--use-precision-aware-optimizer; needs --distributed-optimizer)");
  cmd->add_option("--main-params-dtype", o->main_params_dtype, "With --precision-aware-optimizer: fp32 (default) or fp16");
  cmd->add_option("--exp-avg-dtype", o->exp_avg_dtype,
                  "With --precision-aware-optimizer: Adam's first moment fp32 (default), bf16, fp16 or fp8");
  cmd->add_option("--exp-avg-sq-dtype", o->exp_avg_sq_dtype,
                  "With --precision-aware-optimizer: Adam's second moment fp32 (default), bf16, fp16 or fp8");
  cmd->add_option("--run-tokens", o->run_tokens,
                  "Training tokens of the run: wall clock and GPU-hours (of the layout, or of each layout found)")
      ->check(positive_real(1e30));
  add_min_headroom_option(*cmd, o->min_headroom_gib);
  add_format_option(*cmd, o->format,
                    {{"table", OutputFormat::table}, {"json", OutputFormat::json}, {"markdown", OutputFormat::markdown}});
  cmd->callback([o, cmd] {
    o->attended_keys_given = cmd->count("--attended-keys") > 0;
    o->seq_len_given = cmd->count("--seq-len") > 0;
    o->hold_micro_batch_size = cmd->count("--micro-batch-size") > 0;
    o->hold_recompute = cmd->count("--recompute") > 0;
    o->hold_distributed_optimizer = cmd->count("--distributed-optimizer") > 0;
    if (o->search) {
      check_search_options(*cmd, *o);
      run_search(*o);
      return;
    }
    o->layout_given = false;
    for (const char* name : {"--tp", "--pp", "--vp", "--ep", "--etp", "--cp", "--dp", "--micro-batch-size",
                             "--micro-batches", "--recompute", "--sequence-parallel", "--distributed-optimizer"}) {
      if (cmd->count(name) > 0) o->layout_given = true;
    }
    if (!o->megatron_args.empty()) {
      refuse_beside_megatron_args(*cmd, o->bridge_config);
      if (cmd->count("--gpus") == 0) {
        throw_option_dependency_error("layout", fmt::format("{} needs --gpus", recipe_file_option(o->bridge_config)));
      }
      run_layout(*o);
      return;
    }
    if (o->layout_given && (cmd->count("--micro-batch-size") == 0 || cmd->count("--micro-batches") == 0)) {
      throw_option_dependency_error("layout",
                                    "a layout needs --micro-batch-size and --micro-batches (give no layout option to "
                                    "search, or --search to search holding --micro-batch-size, --recompute and "
                                    "--distributed-optimizer where given)");
    }
    if (o->layout_given) {
      run_layout(*o);
    } else {
      run_search(*o);
    }
  });
}

const CommandRegistration layout_registration{"layout", 15, &add_layout_command};

}  // namespace
}  // namespace budget::cli
