#include "budget_render/step_time.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace budget::render {

std::string profile_label(const TimeModel& model) {
  const auto& p = model.profile();
  return fmt::format("{}, {}", p.device.name, p.source.tool);
}

int time_ratio_decimals(double half_width) {
  if (!(half_width > 0) || !std::isfinite(half_width)) return 3;
  int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(half_width))));
  // 0.096 rounds to 0.1 at one significant digit: one decimal fewer.
  if (decimals > 0 && std::round(half_width * std::pow(10.0, decimals)) >= 10) --decimals;
  return std::min(decimals, 4);
}

std::string time_ratio_text(double ratio, double half_width) {
  if (!(half_width > 0)) return fmt::format("{:.3f}×", ratio);
  const int d = time_ratio_decimals(half_width);
  return fmt::format("{:.{}f}× ±{:.{}f}", ratio, d, half_width, d);
}

nlohmann::ordered_json time_ratio_interval_json(double ratio, const TimeAccuracy& accuracy) {
  const double hw = accuracy.ratio_half_width(ratio);
  return {{"low", ratio - hw}, {"high", ratio + hw}, {"half_width", hw}};
}

nlohmann::ordered_json time_accuracy_json(const TimeAccuracy& accuracy) {
  nlohmann::ordered_json j{{"source", accuracy.source}, {"from_layers", accuracy.from_layers}};
  if (accuracy.from_layers) j["ratio_error"] = accuracy.ratio_error;
  j["step_relative_error"] = accuracy.step_relative_error;
  j["validated"] = accuracy.validated;
  return j;
}

std::string mfu_text(const StepTime& t, const TimeModel& model) {
  const auto& peaks = model.profile().peaks;
  std::string out = fmt::format("{:.1f}% of the profile's measured GEMM peak {:.0f} TFLOP/s", 100 * t.mfu, t.mfu_peak_tflops);
  if (t.mfu_datasheet > 0) {
    out += fmt::format(" ({:.1f}% of the datasheet's {:.0f} TFLOP/s)", 100 * t.mfu_datasheet, peaks.datasheet_peak_tflops);
  }
  return out;
}

std::string mfu_denominator_text(const StepTime& t) {
  return fmt::format("the profile's measured bf16 GEMM peak, {:.0f} TFLOP/s", t.mfu_peak_tflops);
}

std::string SaidNotes::say(const std::string& note) {
  std::string out;
  bool repeated = false;
  for (std::size_t begin = 0; begin < note.size();) {
    std::size_t end = note.find("; ", begin);
    if (end == std::string::npos) end = note.size();
    const std::string fragment = note.substr(begin, end - begin);
    begin = end + 2;
    if (fragment.empty()) continue;
    // An out-of-range fragment of the time model ("<dim> <value> is <f>× the largest measured
    // (<edge>)", time/time_model.cpp); other notes are the op's own and always kept.
    const bool out_of_range = fragment.find("× the largest measured (") != std::string::npos ||
                              fragment.find("× below the smallest measured (") != std::string::npos;
    if (!out_of_range) {
      out += (out.empty() ? "" : "; ") + fragment;
      continue;
    }
    if (std::find(said_.begin(), said_.end(), fragment) != said_.end()) {
      repeated = true;
      continue;
    }
    said_.push_back(fragment);
    out += (out.empty() ? "" : "; ") + fragment;
  }
  return out.empty() && repeated ? "as above" : out;
}

nlohmann::ordered_json step_time_json(const StepTime& t, const TimeModel& model, SaidNotes* said) {
  using json = nlohmann::ordered_json;
  SaidNotes own;
  SaidNotes& notes = said != nullptr ? *said : own;
  json by_op = json::array();
  for (const auto& op : t.by_op) {
    by_op.push_back({{"op", std::string(to_string(op.kind))},
                     {"seconds_per_step", op.seconds_per_step},
                     {"share", op.seconds_per_step / t.seconds_per_step},
                     {"training_flops_per_step", op.flops_per_step},
                     {"out_of_range", op.out_of_range},
                     {"no_rows", op.no_rows},
                     {"note", notes.say(op.note)}});
  }
  const auto& p = model.profile();
  return json{{"profile", {{"device", p.device.name}, {"tool", p.source.tool}, {"created", p.source.created},
                           {"bf16_gemm_tflops", p.peaks.bf16_gemm_tflops}}},
              {"mfu_denominator", mfu_denominator_text(t)},
              {"tokens_per_step", t.tokens_per_step},
              {"seconds_per_step", t.seconds_per_step},
              {"seconds_per_token", t.seconds_per_token},
              {"tokens_per_second", t.tokens_per_second},
              {"mfu", t.mfu},
              {"mfu_peak_tflops", t.mfu_peak_tflops},
              {"mfu_datasheet", t.mfu_datasheet > 0 ? nlohmann::ordered_json(t.mfu_datasheet) : nlohmann::ordered_json(nullptr)},
              {"datasheet_peak_tflops", p.peaks.datasheet_peak_tflops > 0 ? nlohmann::ordered_json(p.peaks.datasheet_peak_tflops)
                                                                           : nlohmann::ordered_json(nullptr)},
              {"attention_backend", t.attention_backend},
              {"out_of_range", t.out_of_range},
              {"by_op", by_op}};
}

nlohmann::ordered_json step_time_with_accuracy_json(const StepTime& t, const TimeModel& model,
                                                    const TimeAccuracy& accuracy, SaidNotes* said) {
  nlohmann::ordered_json j = step_time_json(t, model, said);
  j["seconds_per_step_relative_error"] = accuracy.step_relative_error;
  j["accuracy"] = time_accuracy_json(accuracy);
  return j;
}

void add_one_gpu_fit_json(nlohmann::ordered_json& time, const OneGpuFit& fit) {
  using json = nlohmann::ordered_json;
  const char* source = fit.gpu.source == GpuCapacitySource::profile           ? "profile"
                       : fit.gpu.source == GpuCapacitySource::cluster_example ? "cluster_example"
                                                                              : "unknown";
  json memory{{"gpu", fit.gpu.gpu_name}, {"capacity_source", source}, {"capacity_from", fit.gpu.capacity_from}};
  memory["capacity_bytes"] = fit.fits ? json(fit.capacity_bytes) : json(nullptr);
  memory["needed_bytes"] = fit.fits ? json(fit.needed_bytes) : json(nullptr);
  json smallest = nullptr;
  if (fit.smallest && fit.smallest->found) {
    const TrainingMemory& m = fit.smallest->memory;
    const ParallelLayout& l = m.layout;
    smallest = {{"gpus", l.gpus}, {"tp", l.tp}, {"pp", l.pp}, {"dp", l.data_parallel()}, {"ep", l.ep},
                {"recompute", std::string(to_string(l.recompute.kind))}, {"peak_bytes", m.peak_bytes}};
  }
  memory["smallest_layout"] = smallest;
  memory["note"] = fit.note();
  time["fits_one_gpu"] = fit.fits ? json(*fit.fits) : json(nullptr);
  time["one_gpu_memory"] = std::move(memory);
}

Table step_time_table(const StepTime& t, SaidNotes* said) {
  SaidNotes own;
  SaidNotes& notes = said != nullptr ? *said : own;
  Table table;
  table.add_column("op", Align::left);
  table.add_column("training FLOPs / step");
  table.add_column("time / step");
  table.add_column("share");
  table.add_column("TFLOP/s");
  table.add_column("note", Align::left);
  for (const auto& op : t.by_op) {
    std::string note = notes.say(op.note);
    if (op.out_of_range) note = "out of measured range" + std::string(note.empty() ? "" : "; ") + note;
    table.add_row({std::string(to_string(op.kind)), op.flops_per_step > 0 ? si(op.flops_per_step, "FLOP") : "-",
                   si(op.seconds_per_step, "s"), percent(op.seconds_per_step / t.seconds_per_step, 1),
                   op.flops_per_step > 0 ? fmt::format("{:.0f}", op.flops_per_step / op.seconds_per_step / 1e12) : "-",
                   note});
  }
  table.add_separator();
  table.add_row({"step", "", si(t.seconds_per_step, "s"), "100.0%", "", ""});
  return table;
}

namespace {
std::string record_text(const ValidationRecord& r) {
  const std::string error =
      r.fitted == 1 ? fmt::format("the model alone {:+.1f}%", 100.0 * r.signed_error)
                    : fmt::format("leave-one-run-out median {:.1f}%, worst {:.1f}%", 100.0 * r.median_error,
                                  100.0 * r.worst_error);
  return fmt::format("{} {} {} ({}; {} run{} of {}, {})", r.gpu, r.precision, r.model_kind, r.models, r.fitted,
                     r.fitted == 1 ? "" : "s", r.runs_file, error);
}
}  // namespace

std::string cost_validation_text(const ClusterStepTime& time) {
  // Lines validated by the same record at the same distance are said together.
  std::vector<std::pair<std::string, std::string>> said;  // (record and distance, lines)
  for (const CostLineValidation& v : cost_line_validation(time)) {
    std::string where = "no measured run exercised it";
    if (v.nearest != nullptr) {
      where = record_text(*v.nearest) + ": ";
      if (v.differences.empty()) where += "inside the validated box";
      for (std::size_t i = 0; i < v.differences.size(); ++i) where += (i > 0 ? ", " : "differs in ") + v.differences[i];
    }
    auto it = std::find_if(said.begin(), said.end(), [&](const auto& s) { return s.first == where; });
    if (it == said.end()) {
      said.emplace_back(where, v.line);
    } else {
      it->second += ", " + v.line;
    }
  }
  std::string out = "cost lines and the measured runs that validated them (calibrate --from-runs):\n";
  for (const auto& [where, lines] : said) out += fmt::format("  {}: {}\n", lines, where);
  return out;
}

}  // namespace budget::render
