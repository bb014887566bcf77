#include "budget_render/step_time.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace budget::render {

std::string profile_label(const TimeModel& model) {
  const auto& p = model.profile();
  return fmt::format("{}, {}", p.device.name, p.source.tool);
}

std::string time_ratio_text(double ratio) { return fmt::format("{:.3f}×", ratio); }

nlohmann::ordered_json step_time_json(const StepTime& t, const TimeModel& model) {
  using json = nlohmann::ordered_json;
  json by_op = json::array();
  for (const auto& op : t.by_op) {
    by_op.push_back({{"op", std::string(to_string(op.kind))},
                     {"seconds_per_step", op.seconds_per_step},
                     {"share", op.seconds_per_step / t.seconds_per_step},
                     {"training_flops_per_step", op.flops_per_step},
                     {"out_of_range", op.out_of_range},
                     {"no_rows", op.no_rows},
                     {"note", op.note}});
  }
  const auto& p = model.profile();
  return json{{"profile", {{"device", p.device.name}, {"tool", p.source.tool}, {"created", p.source.created},
                           {"bf16_gemm_tflops", p.peaks.bf16_gemm_tflops}}},
              {"tokens_per_step", t.tokens_per_step},
              {"seconds_per_step", t.seconds_per_step},
              {"seconds_per_token", t.seconds_per_token},
              {"tokens_per_second", t.tokens_per_second},
              {"mfu", t.mfu},
              {"attention_backend", t.attention_backend},
              {"out_of_range", t.out_of_range},
              {"by_op", by_op}};
}

Table step_time_table(const StepTime& t) {
  Table table;
  table.add_column("op", Align::left);
  table.add_column("training FLOPs / step");
  table.add_column("time / step");
  table.add_column("share");
  table.add_column("TFLOP/s");
  table.add_column("note", Align::left);
  for (const auto& op : t.by_op) {
    std::string note = op.note;
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

}  // namespace budget::render
