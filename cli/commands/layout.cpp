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
// The command is its options bundle (layout_options.hpp), run_layout() / run_search() and the
// Documents of their results (layout_document.hpp).

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/training_memory.hpp"
#include "command_registry.hpp"
#include "layout_document.hpp"
#include "layout_options.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"

namespace budget::cli {
namespace {

/// --megatron-out: export --to megatron's file with a TRAINING_ARGS array for `layout` (the layout,
/// or the search's best), so that --megatron-args of it gives this layout.
void write_megatron_out(const LayoutOptions& o, const ArchConfig& config, const ParallelLayout& layout,
                        const CommOverlap& overlap) {
  if (o.megatron_out.empty()) return;
  ExportOptions eo;
  eo.seq_length = layout.seq_len;
  eo.megatron_training_args = megatron_layout_args(layout, overlap);
  if (priced_on_document_mask(o)) eo.megatron_training_args.push_back("--reset-attention-mask");
  write_output_file(o.megatron_out, export_config(config, ExportTarget::megatron, eo).text);
}

/// The calibration profile of the step time: --profile, else the cluster file's (empty: none).
std::string step_time_profile(const LayoutOptions& o, const ClusterSpec& cluster) {
  if (!o.profile_path.empty() || cluster.compute.source != ComputeSource::calibration) return o.profile_path;
  return cluster.compute.calibration_profile;
}

/// The layout asked for (the flags, or --megatron-args' file with --loop-placement), its memory per
/// stage and the attention the step time prices; returns the collectives overlapped.
CommOverlap lay_out(LayoutOptions& o, const ArchConfig& config, LayoutResult& result) {
  ParallelLayout layout = o.layout;
  CommOverlap overlap = parse_overlap(o.overlap);
  if (!o.cluster.megatron_args.empty()) {
    result.megatron = load_team_recipe(o.cluster.megatron_args, o.cluster.bridge_config, config, o.layout.gpus);
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
  result.min_headroom_bytes = o.cluster.min_headroom_gib * static_cast<double>(std::int64_t{1} << 30);
  if (layout.gpus == 0 && layout.dp == 0) layout.dp = 1;
  // EP overlap's schedule holds one more layer (docs/cluster.md, "MoE memory terms").
  layout.moe_memory.ep_overlap_schedule = overlap.ep;
  result.memory = training_memory(config, layout, result.cluster, "layout");
  return overlap;
}

/// The step time of the layout laid out (and the run's cost with --run-tokens), or why there is none.
void time_layout(const LayoutOptions& o, const ArchConfig& config, const CommOverlap& overlap, LayoutResult& result) {
  const std::string profile = step_time_profile(o, result.cluster);
  if (profile.empty()) {
    result.time_missing = "not computed: the cluster gives datasheet peaks only; give a calibration profile "
                          "(--profile, e.g. cuda_profiler/profiles/h200-torch-eager.json)";
    return;
  }
  // A recipe file's kernel settings (its CUDA graphs, router fusion, the dispatcher's SMs and
  // group-limited routing) price the step as the run fit prices a measured run.
  std::optional<MegatronKernelOptions> kernels;
  if (result.megatron) {
    kernels = load_team_kernel_options(o.cluster.megatron_args, o.cluster.bridge_config, config, o.layout.gpus);
  }
  const TimeModel model(load_calibration_profile(profile),
                        time_model_options(o, result.memory.layout, kernels ? &*kernels : nullptr));
  ClusterTimeOptions options;
  options.attended_keys = o.attended_keys;
  options.communication.max_nodes_per_token = o.cluster.max_nodes_per_token;
  options.communication.overlap = overlap;
  if (kernels) {
    options.communication.moe = kernels->moe;
    for (const std::string& note : kernels->notes) result.memory.notes.push_back(note);
  }
  result.time = cluster_step_time(model, config, result.memory, result.cluster, options);
  if (o.run_tokens > 0.0) result.run = run_cost(*result.time, result.memory.layout.gpus, o.run_tokens);
}

/// One layout: its memory per stage against the GPU's, and its step time.
void run_layout(LayoutOptions o) {
  const ArchConfig config = load_arch_config(o.config_path);
  LayoutResult result;
  result.config_name = config.name.empty() ? o.config_path : config.name;
  result.cluster = o.cluster.load();
  const CommOverlap overlap = lay_out(o, config, result);
  write_megatron_out(o, config, result.memory.layout, overlap);
  if (result.megatron) {
    for (std::string& note : megatron_notes(o.cluster.megatron_args, *result.megatron)) {
      result.memory.notes.push_back(std::move(note));
    }
  }
  time_layout(o, config, overlap, result);
  print(layout_document(result), o.format);
  if (!result.fits()) throw CommandExit{exit_infeasible};
}

/// What the layout search holds and searches: the native options, or --megatron-args' recipe (its
/// parallel sizes left to the search) with --loop-placement.
LayoutSearchOptions layout_search_options(LayoutOptions& o, const std::optional<MegatronRun>& megatron) {
  LayoutSearchOptions so;
  so.gpus = o.layout.gpus;
  so.seq_len = o.layout.seq_len;
  so.global_batch_tokens = o.cluster.global_batch_tokens;
  so.keep = static_cast<std::size_t>(o.top);
  so.imbalance = o.layout.imbalance;
  so.time.attended_keys = o.attended_keys;
  so.time.communication.max_nodes_per_token = o.cluster.max_nodes_per_token;
  so.time.communication.overlap = parse_overlap(o.overlap);
  so.min_headroom_bytes = o.cluster.min_headroom_gib * static_cast<double>(std::int64_t{1} << 30);
  so.run_tokens = o.run_tokens;
  so.recipe = native_recipe(o);
  if (megatron) {
    so = megatron_search_options(*megatron, o.workload.load(), so, false);
    apply_loop_placement(o, so.recipe.base);  // not a Megatron-LM argument: --loop-placement alone
    so.recipe.hold_loop_placement = loop_placement_given(o);
    so.time.attended_keys = o.attended_keys;  // --attended-keys, else the mask the file says
  }
  return so;
}

/// The layout search: every valid layout on --gpus, those that fit ranked by step time.
void run_search(LayoutOptions o) {
  const ArchConfig config = load_arch_config(o.config_path);
  const ClusterSpec cluster = o.cluster.load();
  if (o.layout.gpus <= 0) throw_option_dependency_error("layout", "the layout search needs the GPU count (--gpus)");
  const std::string profile = step_time_profile(o, cluster);
  if (profile.empty()) {
    throw Error("the layout search ranks by step time and needs a calibration profile (--profile, e.g. "
                "cuda_profiler/profiles/h200-torch-eager.json); the cluster gives datasheet peaks only",
                "layout");
  }
  std::optional<MegatronRun> megatron;
  if (!o.cluster.megatron_args.empty()) {
    // The file's recipe held (docs/megatron.md): its batch, sequence, recompute, precision, optimizer,
    // overlap; its parallel sizes are the search's to choose.
    megatron = load_team_recipe(o.cluster.megatron_args, o.cluster.bridge_config, config, o.layout.gpus);
    o.layout.seq_len = megatron->layout.seq_len;
    o.seq_len_given = true;
  }
  const std::string attention = resolve_attention(o, megatron ? &*megatron : nullptr);
  LayoutSearchOptions so = layout_search_options(o, megatron);
  std::optional<MegatronKernelOptions> kernels;
  if (megatron) {
    kernels = load_team_kernel_options(o.cluster.megatron_args, o.cluster.bridge_config, config, o.layout.gpus);
    so.time.communication.moe = kernels->moe;
  }
  // One FP8 recipe prices memory (the layouts' recipe) and time (the model's GEMMs).
  const TimeModel model(load_calibration_profile(profile),
                        time_model_options(o, so.recipe.base, kernels ? &*kernels : nullptr));
  const LayoutSearchResult found = search_layouts(model, config, cluster, so);
  const std::string name = config.name.empty() ? o.config_path : config.name;
  Document doc = search_document(name, cluster, so, found, attention, megatron);
  if (megatron) {
    std::string notes;
    for (const std::string& note : megatron_notes(o.cluster.megatron_args, *megatron)) notes += "note: " + note + "\n";
    doc.text(notes, Forms::text);
  }
  print(doc, o.format);
  if (found.layouts.empty()) throw CommandExit{exit_infeasible};
  write_megatron_out(o, config, found.layouts.front().memory.layout, so.time.communication.overlap);
}

void add_layout_command(CLI::App& app) {
  auto o = std::make_shared<LayoutOptions>();
  CLI::App* cmd = app.add_subcommand(
      "layout", "Memory per GPU of a training step under a parallel layout (TP/PP/EP/CP/DP), per pipeline stage");
  add_layout_options(*cmd, *o);
  cmd->callback([o, cmd] {
    if (read_layout_request(*cmd, *o) == LayoutRequest::search) {
      run_search(*o);
    } else {
      run_layout(*o);
    }
  });
}

const CommandRegistration layout_registration{"layout", 15, &add_layout_command};

}  // namespace
}  // namespace budget::cli
