// budget-match report CFG.json [--workload W.json] [--calibration P.json] [--format table|json|markdown]
// Prints the budgets of one config: FLOPs per token by component, parameters, KV cache, depth
// and sparsity; with a calibration profile, the predicted step time by op beside its FLOPs.

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/accounting.hpp"
#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/megatron_args.hpp"
#include "budget/gpu_fit.hpp"
#include "budget/training_memory.hpp"
#include "budget/time_model.hpp"
#include "budget/config_io.hpp"
#include "budget/version.hpp"
#include "budget/workload.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/memory.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "options.hpp"
#include "output_format.hpp"
#include "recipe_file_option.hpp"
#include "budget_render/table.hpp"
#include "budget_render/step_time.hpp"

namespace budget::cli {
namespace {

struct ReportOptions {
  std::string config_path;
  WorkloadOption workload;
  CalibrationOptions calibration;
  std::string cluster_path;
  std::string megatron_args;  ///< --megatron-args FILE (with --cluster and --gpus): that layout's memory
  bool bridge_config = false;  ///< the file is --bridge-config's Megatron-Bridge YAML
  std::int64_t gpus = 0;
  OutputFormat format = OutputFormat::table;
};

/// Adds one row of the report's table: the quantity, its value and its share (or a note).
struct ReportRows {
  Table& table;
  void operator()(const std::string& name, const std::string& value, const std::string& share = "") const {
    table.add_row({name, value, share});
  }
};

/// The training FLOPs per token (F), each component's forward share, and what F leaves out.
void add_flops_rows(const ReportRows& row, const Workload& w, const Budgets& b) {
  const double F = b.forward_flops_per_token;
  const auto flops_row = [&](const std::string& name, double value) {
    if (value > 0) row("  " + name, si(value * static_cast<double>(w.training_passes), "FLOP"), percent(value / F, 1));
  };
  // The three matched budgets also show their exact values, so matches can be checked by hand.
  row("training FLOPs / token (F)",
      b.training_flops_per_token < 9e18
          ? fmt::format("{} = {}", si(b.training_flops_per_token, "FLOP"),
                        grouped(std::llround(b.training_flops_per_token)))
          : si(b.training_flops_per_token, "FLOP"),
      fmt::format("{}× fwd", w.training_passes));
  const auto& f = b.forward_by_component;
  flops_row("qkv projection", f.qkv_projection);
  flops_row("attention scores", f.attention_scores);
  flops_row("output projection", f.output_projection);
  flops_row("router", f.router);
  flops_row("routed experts", f.routed_experts);
  flops_row("shared experts", f.shared_experts);
  flops_row("dense FFN", f.dense_ffn);
  flops_row("linear attention / Mamba-2", f.mixers);
  if (b.kernel_training_flops_per_token != b.training_flops_per_token) {
    row("kernel-executed training FLOPs", si(b.kernel_training_flops_per_token, "FLOP"),
        fmt::format("{:.3f}×", b.kernel_training_flops_per_token / b.training_flops_per_token));
  }
  if (b.lm_head_forward_flops_per_token > 0) {
    row("LM head training FLOPs (not in F)",
        si(b.lm_head_forward_flops_per_token * static_cast<double>(w.training_passes), "FLOP"));
  }
}

/// The non-embedding parameters (N) by component, the active ones, and what N leaves out.
void add_param_rows(const ReportRows& row, const ArchConfig& c, const Budgets& b) {
  const double N = static_cast<double>(b.non_embedding_params_total);
  row("non-embedding params (N)", fmt::format("{} = {}", si(N), grouped(b.non_embedding_params_total)), "");
  const auto& p = b.params_by_component;
  const auto param_row = [&](const std::string& name, std::int64_t value) {
    if (value > 0) row("  " + name, si(static_cast<double>(value)), percent(static_cast<double>(value) / N, 1));
  };
  param_row("attention", p.attention);
  param_row("router", p.router);
  param_row("routed experts", p.routed_experts);
  param_row("shared experts", p.shared_experts);
  param_row("dense FFN", p.dense_ffn);
  param_row("norms", p.norms);
  param_row("linear attention / Mamba-2", p.mixers);
  row("active params",
      fmt::format("{} = {}", si(static_cast<double>(b.non_embedding_params_active)),
                  grouped(b.non_embedding_params_active)),
      percent(static_cast<double>(b.non_embedding_params_active) / N, 1));
  if (b.embedding_params > 0) row("embedding params (not in N)", si(static_cast<double>(b.embedding_params)));
  if (b.mtp_params > 0) {
    row(fmt::format("MTP modules ({}, not in N or F)", c.mtp_layers),
        fmt::format("{} params, {} fwd", si(static_cast<double>(b.mtp_params)),
                    si(b.mtp_forward_flops_per_token, "FLOP")));
  }
}

/// The KV cache per token and per sequence, a window's bound, and a recurrent state beside it.
void add_memory_rows(const ReportRows& row, const ArchConfig& c, const Workload& w, const Budgets& b) {
  row("KV cache / token", fmt::format("{} elem = {}", grouped(b.kv_elements_per_token),
                                       si(static_cast<double>(b.kv_bytes_per_token), "B")));
  if (b.kv_window_elements_per_sequence > 0) {
    const LayerCounts n = c.layer_counts();
    const std::string label =
        n.chunked_attention.physical == 0
            ? fmt::format("  sliding-window layers ({}, window {})", c.sliding_attention_layers(), c.attention.sliding_window)
            : n.sliding_attention.physical == 0
                  ? fmt::format("  chunked layers ({}, chunk {})", n.chunked_attention.physical, c.attention.chunk_size)
                  : fmt::format("  sliding-window and chunked layers ({}, {})", n.sliding_attention.physical,
                                n.chunked_attention.physical);
    row(label, fmt::format("{} elem / sequence", grouped(b.kv_window_elements_per_sequence)), "bounded");
  }
  row(fmt::format("KV cache / {}-token sequence", w.seq_len), si(static_cast<double>(b.kv_bytes_per_sequence), "B"));
  if (b.state_elements_per_sequence > 0) {
    const LayerCounts n = c.layer_counts();
    const std::string kinds =
        n.linear_attention.executed > 0 && n.mamba.executed > 0
            ? fmt::format("{} linear-attention, {} Mamba-2", n.linear_attention.executed, n.mamba.executed)
            : n.mamba.executed > 0 ? fmt::format("{} Mamba-2", n.mamba.executed)
                                   : fmt::format("{} linear-attention", n.linear_attention.executed);
    row(fmt::format("recurrent state / sequence ({} layer executions)", kinds),
        fmt::format("{} elem = {}", grouped(b.state_elements_per_sequence),
                    si(static_cast<double>(b.state_bytes_per_sequence), "B")),
        "beside KV");
  }
}

Table report_table(const ArchConfig& c, const Workload& w, const Budgets& b) {
  Table t;
  t.add_column("quantity", Align::left);
  t.add_column("value");
  t.add_column("share", Align::right);
  const ReportRows row{t};
  add_flops_rows(row, w, b);
  t.add_separator();
  add_param_rows(row, c, b);
  t.add_separator();
  add_memory_rows(row, c, w, b);
  t.add_separator();
  row("layers (physical / executed)", fmt::format("{} / {}", b.physical_layers, b.executed_layers));
  row("loop", loop_text(c));
  row("sparsity (compute-equivalent)", percent(b.sparsity, 2));
  row("sparsity (1 − active/total)", percent(b.param_sparsity, 2));
  return t;
}

std::string time_summary(const StepTime& t, const TimeModel& model, const TimeAccuracy& accuracy) {
  return fmt::format(
      "predicted training step ({}; {} tokens/step, attention backend {}): {} ±{:.0f}% per step, {} per token, {} "
      "tokens/s, MFU {}\ntime ± from the {}{}",
      profile_label(model), grouped(t.tokens_per_step), t.attention_backend, si(t.seconds_per_step, "s"),
      100 * accuracy.step_relative_error,
      si(t.seconds_per_token, "s"), si(t.tokens_per_second), mfu_text(t, model), accuracy.source,
      t.out_of_range ? "\nnote: some shapes lie outside the profile's measured range (see the notes)" : "");
}

/// report --cluster (docs/cluster.md): one GPU with everything that saves memory on one GPU (full
/// recompute, micro-batch 1), and the fewest-GPU layout that fits.
struct ClusterFit {
  ClusterSpec cluster;
  TrainingMemory one_gpu;
  SmallestLayout smallest;
  std::optional<TrainingMemory> megatron;  ///< the layout of --megatron-args
};

ClusterFit cluster_fit(const ArchConfig& config, const ReportOptions& o, std::int64_t seq_len) {
  ClusterFit fit;
  fit.cluster = load_cluster_spec(o.cluster_path);
  if (!o.megatron_args.empty()) {
    const MegatronRun run = load_team_recipe(o.megatron_args, o.bridge_config, config, o.gpus);
    fit.cluster.nodes = std::max(fit.cluster.nodes, (o.gpus + fit.cluster.gpus_per_node - 1) / fit.cluster.gpus_per_node);
    fit.megatron = training_memory(config, run.layout, fit.cluster, o.megatron_args);
  }
  ParallelLayout one;
  one.gpus = 1;
  one.seq_len = seq_len;
  one.recompute.kind = RecomputeKind::full;
  ClusterSpec single = fit.cluster;
  single.nodes = std::max<std::int64_t>(single.nodes, 1);
  fit.one_gpu = training_memory(config, one, single, "--cluster");
  fit.smallest = smallest_fitting_layout(config, fit.cluster, seq_len);
  return fit;
}

nlohmann::ordered_json cluster_fit_json(const ClusterFit& fit) {
  nlohmann::ordered_json j{{"gpu", fit.cluster.gpu_name},
                           {"fits_one_gpu", fit.one_gpu.fits},
                           {"one_gpu_peak_bytes", fit.one_gpu.peak_bytes},
                           {"capacity_bytes", fit.one_gpu.capacity_bytes}};
  j["smallest_layout"] = fit.smallest.found ? render::training_memory_json(fit.smallest.memory)
                                            : nlohmann::ordered_json();
  if (fit.megatron) j["megatron_layout"] = render::training_memory_json(*fit.megatron);
  return j;
}

std::string cluster_fit_text(const ClusterFit& fit) {
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  std::string text = fmt::format("on one {} ({:.2f} GiB usable; full recompute, micro-batch 1): peak {:.2f} GiB, {}\n",
                                 fit.cluster.gpu_name, fit.one_gpu.capacity_bytes / gib, fit.one_gpu.peak_bytes / gib,
                                 fit.one_gpu.fits ? "fits" : "does not fit");
  if (fit.megatron) {
    text += fmt::format("the Megatron-LM arguments' layout on {} GPUs: peak {:.2f} GiB on stage {}, {} (budget-match "
                        "layout --megatron-args for the table)\n",
                        fit.megatron->layout.gpus, fit.megatron->peak_bytes / gib, fit.megatron->peak_stage,
                        fit.megatron->fits ? "fits" : "does not fit");
  }
  if (!fit.smallest.found) return text + "smallest layout: none up to 4096 GPUs fits\n";
  const ParallelLayout& l = fit.smallest.memory.layout;
  const std::string placement =
      l.loop_placement == LoopPlacement::in_chunk
          ? std::string()
          : fmt::format(" (V {}, loop placement {}: {})", l.virtual_stages, to_string(l.loop_placement), l.split.layout);
  return text + fmt::format("smallest layout: {} GPUs, TP {}{} x PP {}{} x DP {}, EP {} (ETP {}), recompute {}, distributed "
                            "optimizer, micro-batch 1 x {}: peak {:.2f} GiB on stage {} (budget-match layout for the "
                            "table)\n",
                            l.gpus, l.tp, l.sequence_parallel_active() ? " (SP)" : "", l.pp, placement, l.data_parallel(), l.ep,
                            l.expert_tp(), to_string(l.recompute.kind), l.micro_batches,
                            fit.smallest.memory.peak_bytes / gib, fit.smallest.memory.peak_stage);
}

nlohmann::ordered_json report_json(const ArchConfig& config, const Workload& workload, const Budgets& b,
                                   const std::optional<StepTime>& time, const std::optional<TimeModel>& model) {
  nlohmann::ordered_json out{{"schema_version", output_schema_version},
                             {"budget_version", version_string},
                             {"config", config.name}};
  const nlohmann::ordered_json budgets = budgets_json(b);
  for (const auto& [key, value] : budgets.items()) out[key] = value;
  out["workload"] = workload_json(workload);
  if (!config.notes.empty()) out["notes"] = config.notes;  // what reading the config took (config.hpp)
  if (time) {
    out["time"] = step_time_with_accuracy_json(*time, *model, time_accuracy(model->profile(), model->options()));
    add_one_gpu_fit_json(out["time"], one_gpu_fit(config, model->profile(), workload));
  }
  return out;
}

void run_report(ReportOptions o) {
  const ArchConfig config = load_arch_config(o.config_path);
  const Workload workload = o.workload.load();
  const Budgets b = account(config, workload);
  // With --cluster and no --calibration, the profile the cluster file names (gpu.compute.calibration).
  if (!o.calibration.given() && !o.cluster_path.empty()) {
    const ClusterSpec cluster = load_cluster_spec(o.cluster_path);
    if (cluster.compute.source == ComputeSource::calibration) o.calibration.path = cluster.compute.calibration_profile;
  }
  const std::optional<TimeModel> model = o.calibration.load_if_given();
  std::optional<StepTime> time;
  if (model) time = predict_step_time(*model, config, workload);
  Document doc;
  if (o.format == OutputFormat::json) {
    nlohmann::ordered_json out = report_json(config, workload, b, time, model);
    if (!o.cluster_path.empty()) out["cluster"] = cluster_fit_json(cluster_fit(config, o, workload.seq_len));
    doc.set_json(std::move(out));
  } else {
    const std::string name = config.name.empty() ? o.config_path : config.name;
    const std::string shape = fmt::format("H {}, {} layers, heads {}, experts {}", config.hidden_size,
                                          config.num_layers, heads_text(config.attention), ffn_text(config.ffn));
    doc.text(fmt::format("**{}**: {}\n\n", name, shape), Forms::markdown);
    for (const auto& note : config.notes) doc.text("note: " + note + "\n\n", Forms::markdown);
    doc.text(fmt::format("{}: {}\nworkload: {}\n", name, shape, workload.description), Forms::table);
    for (const auto& note : config.notes) doc.text("note: " + note + "\n", Forms::table);
    doc.text("\n", Forms::table);
    doc.table(report_table(config, workload, b), Forms::text);
    if (time) {
      doc.text("\n" + time_summary(*time, *model, time_accuracy(model->profile(), model->options())) + "\nmemory: " +
               one_gpu_fit(config, model->profile(), workload).note() + "\n\n");
      doc.table(step_time_table(*time), Forms::text);
    }
    if (!o.cluster_path.empty()) doc.text("\n" + cluster_fit_text(cluster_fit(config, o, workload.seq_len)));
  }
  print(doc, o.format);
}

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Budgets of one config: FLOPs, parameters, KV cache, sparsity");
  // No CLI::ExistingFile check: a missing or unreadable file is an input error (exit 2) reported by
  // the library with the file name, like every other fault of the config or workload.
  cmd->add_option("config", options->config_path, "Config: native JSON or a Hugging Face config.json (docs/config.md)")
      ->required();
  add_workload_option(*cmd, options->workload, "Workload JSON (docs/config.md; default: the paper's, 400 attended keys)");
  add_calibration_options(*cmd, options->calibration,
                          "Calibration profile (docs/calibration.md): also predict the training step time by op");
  cmd->add_option("--cluster", options->cluster_path,
                  "Cluster description (docs/cluster.md): does the config fit one GPU, and the smallest layout");
  cmd->add_option("--megatron-args", options->megatron_args,
                  "With --cluster and --gpus: the memory of the layout in Megatron-LM's arguments (docs/megatron.md)");
  add_bridge_config_option(*cmd, options->megatron_args, options->bridge_config,
                           "with --cluster and --gpus, the memory of its layout");
  cmd->add_option("--gpus", options->gpus, "GPU count for --megatron-args or --bridge-config")->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24));
  add_format_option(*cmd, options->format, document_formats());
  cmd->callback([options, cmd] {
    if (!options->megatron_args.empty() && (options->cluster_path.empty() || options->gpus == 0)) {
      throw_option_dependency_error(
          "report", std::string(recipe_file_option(options->bridge_config)) + " needs --cluster and --gpus");
    }
    if (options->megatron_args.empty() && cmd->count("--gpus") > 0) {
      throw_option_dependency_error("report", "--gpus needs --megatron-args or --bridge-config");
    }
    run_report(*options);
  });
}

const CommandRegistration report_registration{"report", 10, &add_report_command};

}  // namespace
}  // namespace budget::cli
