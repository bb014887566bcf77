#include "layout_document.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/parallel_layout.hpp"
#include "budget/version.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/cluster_rank.hpp"
#include "budget_render/cluster_time.hpp"
#include "budget_render/layout_search.hpp"
#include "budget_render/megatron.hpp"
#include "budget_render/memory.hpp"
#include "budget_render/step_time.hpp"
#include "budget_render/table.hpp"

namespace budget::cli {

std::vector<std::string> megatron_notes(const std::string& path, const MegatronRun& run) {
  const std::vector<render::MegatronNote> notes = render::megatron_notes(run, "config");
  std::vector<std::string> lines;
  for (const render::MegatronNote& note : notes) lines.push_back(render::note_line(note));
  lines.front() = fmt::format("{} ({}): {}",
                              run.bridge.given ? "Megatron-Bridge config, as Megatron-LM arguments"
                                               : "Megatron-LM arguments",
                              path, lines.front());
  return lines;
}

namespace {

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
std::string counted(std::int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string layout_text(const ParallelLayout& l) {
  return fmt::format(
      "{}: TP {}{} x CP {} x DP {} x PP {}{}; experts ETP {} x EP {} x EDP {}; {} of {} of {} tokens; "
      "recompute {}{}; {}{}",
      counted(l.gpus, "GPU", "GPUs"), l.tp, l.sequence_parallel_active() ? " (SP)" : "", l.cp, l.data_parallel(), l.pp,
      (l.virtual_stages > 1 ? fmt::format(" (V {})", l.virtual_stages) : "") +
          (l.loop_placement != LoopPlacement::in_chunk ? fmt::format(", loop placement {}", to_string(l.loop_placement))
                                                       : ""),
      l.expert_tp(), l.ep, l.expert_data_parallel(), counted(l.micro_batches, "micro-batch", "micro-batches"),
      counted(l.micro_batch_size, "sequence", "sequences"), l.seq_len, to_string(l.recompute.kind),
      l.recompute.kind == RecomputeKind::full && l.recompute.full_layers > 0
          ? fmt::format(":{}", l.recompute.full_layers)
          : "",
      to_string(l.precision), l.distributed_optimizer ? ", distributed optimizer" : "");
}

std::string verdict_text(const TrainingMemory& m, const ClusterSpec& cluster, double min_headroom_bytes) {
  const std::string capacity = fmt::format("{} GiB usable of {} GiB on {}", gib(m.capacity_bytes),
                                           gib(static_cast<double>(cluster.memory_bytes)), cluster.gpu_name);
  if (m.fits && m.headroom_bytes < min_headroom_bytes) {
    return fmt::format(
        "does not fit with the headroom asked for: peak {} GiB on stage {} leaves {} GiB, less than the "
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

/// What every searched layout holds (LayoutRecipe): "bf16, FP8 tensorwise, micro-batch size 1,
/// recompute selective, distributed optimizer; searched: ..." (the settings the search varies last).
std::string recipe_text(const LayoutRecipe& r) {
  const TrainingRecipe& b = r.base;
  std::string held = fmt::format("{}{}", to_string(b.precision),
                                 b.fp8 != Fp8Recipe::none ? fmt::format(", FP8 {}", to_string(b.fp8)) : "");
  if (b.optimizer_dtypes.bf16_main_grads) held += ", bf16 main gradients";
  if (b.optimizer_dtypes.precision_aware) held += ", precision-aware optimizer";
  if (b.fsdp != FsdpKind::none) held += fmt::format(", {} ({})", to_string(b.fsdp), to_string(b.fsdp_sharding));
  if (b.cpu_offload_layers > 0) held += fmt::format(", {} layers offloaded", b.cpu_offload_layers);
  std::string searched;
  if (r.hold_micro_batch_size)
    held += fmt::format(", micro-batch size {}", b.micro_batch_size);
  else
    searched += "micro-batch size 1, 2, 4; ";
  if (r.hold_recompute)
    held += fmt::format(", recompute {}", to_string(b.recompute.kind));
  else
    searched += "recompute none, selective, full; ";
  if (r.hold_distributed_optimizer)
    held += b.distributed_optimizer ? ", distributed optimizer" : ", no distributed optimizer";
  else
    searched += "distributed optimizer on, off; ";
  if (r.hold_loop_placement)
    held += fmt::format(", loop placement {}", to_string(b.loop_placement));
  else
    searched += "loop placement (looped configs); ";
  return held + "; searched: " + searched + "TP, CP, PP, V, EP, ETP";
}

}  // namespace

Document layout_document(const LayoutResult& r) {
  Document doc;
  nlohmann::ordered_json out{{"schema_version", output_schema_version},
                             {"budget_version", version_string},
                             {"config", r.config_name},
                             {"cluster", r.cluster.name.empty() ? r.cluster.gpu_name : r.cluster.name}};
  const nlohmann::ordered_json body = render::training_memory_json(r.memory);
  for (const auto& [key, value] : body.items()) out[key] = value;
  out["min_headroom_bytes"] = r.min_headroom_bytes;
  out["fits_with_min_headroom"] = r.fits();
  out["attended_keys"] =
      r.attended_keys > 0.0 ? r.attended_keys : (static_cast<double>(r.memory.layout.seq_len) + 1.0) / 2.0;
  out["attention"] = r.attention;
  if (r.time) {
    out["time"] = render::cluster_step_time_json(*r.time);
    if (r.run) out["time"]["run"] = render::run_cost_json(*r.run);
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
  std::string tail =
      fmt::format("\n{:.4f} s a step of {} tokens, {:.0f} tokens/s per GPU, MFU {:.1f}% ({})\n", st.seconds_per_step,
                  st.tokens_per_step, st.tokens_per_second_per_gpu, 100.0 * st.mfu, st.mfu_denominator);
  if (r.run) {
    tail += fmt::format("run: {:.0f} steps, {:.1f} h wall clock, {:.0f} GPU-hours\n", r.run->steps,
                        r.run->wall_clock_seconds / 3600.0, r.run->gpu_hours);
  }
  for (const std::string& note : st.notes) tail += "note: " + note + "\n";
  doc.text(tail + "\n" + render::cost_validation_text(st));
  return doc;
}

Document search_document(const std::string& name, const ClusterSpec& cluster, const LayoutSearchOptions& so,
                         const LayoutSearchResult& found, const std::string& attention,
                         const std::optional<MegatronRun>& megatron) {
  Document doc;
  // The JSON body is render's layout_search_json(): the same object Python's layout_search returns.
  nlohmann::ordered_json out{{"schema_version", output_schema_version}, {"budget_version", version_string}};
  const nlohmann::ordered_json body = render::layout_search_json(found, name, cluster, so);
  for (const auto& [key, value] : body.items()) out[key] = value;
  if (megatron) out["megatron_args"] = megatron_args_json(*megatron);
  doc.set_json(std::move(out));

  doc.text(fmt::format(
      "{} on {} of {} GPUs ({} node{} of {} x {}): {} layouts enumerated, {} valid, {} fit{}\n"
      "attention: {}\nrecipe held: {}\n",
      name, so.gpus, cluster.total_gpus(), cluster.nodes, cluster.nodes == 1 ? "" : "s", cluster.gpus_per_node,
      cluster.gpu_name, found.enumerated, found.valid, found.fitting,
      so.min_headroom_bytes > 0.0 ? fmt::format(" with {} GiB of headroom", gib(so.min_headroom_bytes)) : "", attention,
      recipe_text(so.recipe)));
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
    std::vector<std::string> cells{
        std::to_string(rank++),
        layout_brief(l),
        fmt::format("{:.4f}", st.seconds_per_step),
        fmt::format("{:.0f}", st.tokens_per_second_per_gpu),
        fmt::format("{:.1f}%", 100.0 * st.mfu),
        fmt::format("{:.4f}", slow.compute_seconds),
        fmt::format("{:.4f}", slow.exposed_communication_seconds + slow.late_overlap_seconds),
        fmt::format("{:.4f}", st.bubble_seconds),
        gib(r.memory.headroom_bytes)};
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
  if (!found.layouts.empty()) {
    doc.text("\nthe best layout's " + render::cost_validation_text(found.layouts.front().time), Forms::text);
  }
  doc.text(min_headroom_footer(so), Forms::text);
  return doc;
}

}  // namespace budget::cli
