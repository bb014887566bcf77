#include "budget/profiler/run.hpp"

#include <ctime>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace budget::profiler {

namespace {

/// The timing of `c`; nullopt when it failed and `failures` collects failures (`label`: the
/// failure's text added there), the failure thrown on when there is no such list.
std::optional<Timing> time_or_record(Timer& timer, const OpCase& c, const std::string& label,
                                     std::vector<std::string>* failures) {
  try {
    return timer.time(c);
  } catch (const CaseFailed& e) {
    if (failures == nullptr) throw;
    failures->push_back(label + ": " + e.what());
    return std::nullopt;
  }
}

}  // namespace

std::vector<MeasuredRow> time_cases(const std::vector<OpCase>& cases, Timer& timer,
                                    const std::function<void(std::size_t, std::size_t, const MeasuredRow&)>& progress) {
  std::vector<MeasuredRow> rows;
  time_cases_into(cases, timer, rows, progress);
  return rows;
}

void time_cases_into(const std::vector<OpCase>& cases, Timer& timer, std::vector<MeasuredRow>& rows,
                     const std::function<void(std::size_t, std::size_t, const MeasuredRow&)>& progress,
                     std::vector<std::string>* failures) {
  rows.reserve(rows.size() + cases.size());
  const auto emit = [&](std::size_t i, MeasuredRow row) {
    rows.push_back(std::move(row));
    if (progress) progress(i, cases.size(), rows.back());
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const OpCase& c = cases[i];
    const std::optional<Timing> timed = time_or_record(timer, c, c.label(), failures);
    if (!timed) continue;
    const Timing& t = *timed;
    const bool pad_fallback = c.op == ProfileOp::attention && t.refused && c.at("head_dim") % 8 != 0;
    emit(i, MeasuredRow{c, t});
    if (pad_fallback) {
      OpCase padded = attention_case(c.at("docs"), c.at("doc_len"), c.at("num_heads"), c.at("num_kv_heads"),
                                     padded_head_dim(c.at("head_dim")), c.pass);
      std::optional<Timing> timed_fallback =
          time_or_record(timer, padded, padded.label() + " (padded fallback)", failures);
      if (!timed_fallback) continue;
      Timing& fallback = *timed_fallback;
      if (!fallback.refused) {
        fallback.backend = "fallback-pad8";
        fallback.note = fmt::format("cuDNN at head_dim {} (zero-padded from {})", padded.at("head_dim"), c.at("head_dim"));
        emit(i, MeasuredRow{c, fallback});
      }
    }
  }
}

std::set<std::string> failed_ops(const std::vector<CheckResult>& checks) {
  std::set<std::string> failed;
  for (const CheckResult& c : checks)
    if (!c.passed) failed.insert(c.op);
  return failed;
}

std::vector<OpCase> without_ops(const std::vector<OpCase>& cases, const std::set<std::string>& ops) {
  std::vector<OpCase> kept;
  for (const OpCase& c : cases)
    if (ops.count(std::string(to_string(c.op))) == 0) kept.push_back(c);
  return kept;
}

CalibrationProfile to_profile(const RunResult& run, const std::string& tool, const std::string& created,
                              const std::string& notes) {
  CalibrationProfile p;
  p.device = CalibrationDevice{run.device.name,      run.device.compute_capability, run.device.driver,
                               run.device.cuda_runtime, run.device.cublas,          run.device.cudnn,
                               run.device.sm_count,  run.device.memory_gib,         run.device.sm_clock_mhz,
                               run.device.memory_clock_mhz};
  p.peaks = CalibrationPeaks{run.peaks.bf16_gemm_tflops, run.peaks.copy_gbytes_per_s};
  p.source.tool = run.simulated ? tool + " (simulated: roofline, not a measurement)" : tool;
  p.source.method = run.method;
  p.source.created = created;
  std::string all_notes = notes;
  if (run.simulated) all_notes += std::string(all_notes.empty() ? "" : "; ") + "SIMULATED: these times come from a roofline, no GPU ran.";
  p.source.notes = all_notes;
  for (const MeasuredRow& r : run.rows) {
    CalibrationRow row;
    row.op = r.op.op;
    row.pass = r.op.pass;
    row.shape = r.op.shape;
    row.matrix = r.op.matrix;
    row.routing = r.op.routing;
    row.backend = r.timing.backend;
    row.refused = r.timing.refused;
    row.ms = r.timing.refused ? 0.0 : r.timing.ms;
    row.flops = r.op.flops;
    row.bytes = r.op.bytes;
    p.rows.push_back(std::move(row));
  }
  validate(p, "<budget-profile>");
  return p;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace budget::profiler
