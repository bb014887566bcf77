#include "ce_gain_options.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget_render/cluster_rank.hpp"
#include "budget_render/table.hpp"

namespace budget::cli {
namespace {

std::string verdict(const GpuHoursAtEqualLoss& g) {
  if (!(g.flops_gain.value > 0.0)) return "no FLOPs saving";
  if (g.saving_eaten) return "FLOPs saving eaten by the time per FLOP";
  return "saves GPU-hours";
}

Table gpu_hours_table(const GpuHoursReport& h) {
  Table t;
  for (const char* header : {"S", "C", "FLOPs gain", "GPU-hours gain", "GPU-h target", "GPU-h reference"}) {
    t.add_column(header);
  }
  t.add_column("verdict", Align::left);
  for (const auto& g : h.entries) {
    const std::string interval = g.gpu_hours_gain.has_interval()
                                     ? fmt::format(" [{}, {}]", signed_percent(g.gpu_hours_gain.lower, 1),
                                                   signed_percent(g.gpu_hours_gain.upper, 1))
                                     : "";
    t.add_row({fmt::format("{:g}", g.S), fmt::format("{:.3g}", g.C), signed_percent(g.flops_gain.value, 2),
               signed_percent(g.gpu_hours_gain.value, 2) + interval, fmt::format("{:.4g}", g.target_gpu_hours),
               fmt::format("{:.4g}", g.reference_gpu_hours.value), verdict(g)});
  }
  return t;
}

std::string architecture_line(const char* role, const std::string& path, const ClusterCandidateTime& c) {
  return fmt::format("  {} {} ({}): {}, {:.4g} GPU-s per token, F = {:.4g} FLOP/token, τ = {:.4g} GPU-s/FLOP\n", role,
                     c.name, path, layout_brief(c.best.memory.layout), c.gpu_seconds_per_token,
                     c.training_flops_per_token, c.gpu_seconds_per_flop);
}

}  // namespace

nlohmann::ordered_json estimate_json(const Estimate& e) {
  nlohmann::ordered_json out{{"value", e.value}};
  if (e.has_interval()) {
    out["lower"] = e.lower;
    out["upper"] = e.upper;
  }
  return out;
}

GpuHoursReport gpu_hours_report(const CeGainOptions& o, const GainReport& report) {
  GpuHoursReport out;
  out.ran = true;
  out.cluster = o.cluster.load();
  const Workload workload = o.workload.load();
  out.search = o.cluster.search_options(workload);
  const TimeModel model = o.calibration.load();
  const ArchConfig target = load_arch_config(o.target_config_path);
  const ArchConfig reference = load_arch_config(o.reference_config_path);
  try {
    out.timing = rank_by_cluster_time(model, reference, {target}, out.cluster, out.search);
  } catch (const Error& e) {
    if (e.source() == "--baseline") throw Error(e.message(), "--reference-config");
    if (e.source().empty() && e.path().empty()) throw Error(e.message(), "--cluster");
    throw;
  }
  const ClusterCandidateTime& t = out.timing.candidates.at(0);
  if (!t.found) {
    throw Error(fmt::format("no layout of the target config {} fits {} GPUs of {}", target.name, out.search.gpus,
                            out.cluster.gpu_name),
                "--target-config");
  }
  for (const auto& e : report.entries) {
    out.entries.push_back(gpu_hours_at_equal_loss(e, t.gpu_seconds_per_flop, out.timing.baseline.gpu_seconds_per_flop));
  }
  return out;
}

void add_gpu_hours_text(Document& doc, const GpuHoursReport& h, const CeGainOptions& o) {
  const ClusterCandidateTime& t = h.timing.candidates.at(0);
  const double rho = t.gpu_seconds_per_flop / h.timing.baseline.gpu_seconds_per_flop;
  doc.text(fmt::format("\nGPU-hours at equal loss on {} GPUs of {} ({}), each at its own best layout, {} tokens "
                       "a step: GPU-hours = FLOPs · τ / 3600, G_h = 1 − (1 − G)·ρ, ρ = τ_target/τ_reference\n",
                       h.search.gpus, h.cluster.name.empty() ? h.cluster.gpu_name : h.cluster.name,
                       h.cluster.gpu_name, grouped(h.search.global_batch_tokens)) +
           architecture_line("target", o.target_config_path, t) +
           architecture_line("reference", o.reference_config_path, h.timing.baseline) +
           fmt::format("  ρ = {:.4f}: the target's time per FLOP is {} the reference's; intervals are G's "
                       "bootstrap mapped through ρ (a point prediction); τ is the given configs' at every C\n\n",
                       rho, signed_percent(rho - 1.0, 1)));
  doc.table(gpu_hours_table(h), Forms::text);
  std::string eaten;
  for (const auto& g : h.entries) {
    if (g.saving_eaten) {
      eaten += fmt::format("S {:g}, C {:.3g}: the FLOPs saving of {} is eaten by the time per FLOP (ρ {:.4f} ≥ "
                           "break-even {:.4f}): the target costs more GPU-hours at equal loss\n",
                           g.S, g.C, signed_percent(g.flops_gain.value, 2), g.time_per_flop_ratio,
                           g.break_even_ratio);
    }
  }
  if (!eaten.empty()) doc.text(eaten);
}

nlohmann::ordered_json gpu_hours_json(const GpuHoursReport& h, const CeGainOptions& o) {
  const auto architecture = [](const ClusterCandidateTime& c, const std::string& path) {
    nlohmann::ordered_json a = cluster_candidate_json(c);
    a.erase("ratio_to_baseline");
    a.erase("single_gpu_ratio_to_baseline");
    a.erase("ratio_components");
    a.erase("differences");
    nlohmann::ordered_json out{{"config", c.name}, {"file", path}};
    for (const auto& [key, value] : a.items()) out[key] = value;
    return out;
  };
  const ClusterCandidateTime& t = h.timing.candidates.at(0);
  nlohmann::ordered_json out = cluster_ranking_json(h.timing, h.cluster, h.search);
  out.erase("baseline");
  out.erase("ranked");
  out.erase("candidates_without_layout");
  out["formula"] = "GPU-hours = FLOPs * gpu_seconds_per_flop / 3600; gpu_hours_gain = 1 - (1 - gain) * "
                   "time_per_flop_ratio";
  out["target"] = architecture(t, o.target_config_path);
  out["reference"] = architecture(h.timing.baseline, o.reference_config_path);
  out["time_per_flop_ratio"] = t.gpu_seconds_per_flop / h.timing.baseline.gpu_seconds_per_flop;
  out["entries"] = nlohmann::ordered_json::array();
  for (const auto& g : h.entries) {
    out["entries"].push_back({{"C", g.C},
                              {"S", g.S},
                              {"flops_gain", estimate_json(g.flops_gain)},
                              {"gpu_hours_gain", estimate_json(g.gpu_hours_gain)},
                              {"break_even_time_per_flop_ratio", g.break_even_ratio},
                              {"target_gpu_hours", g.target_gpu_hours},
                              {"reference_gpu_hours", estimate_json(g.reference_gpu_hours)},
                              {"saving_eaten", g.saving_eaten}});
  }
  return out;
}

}  // namespace budget::cli
