#include "profile_table.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace budget::profiler::tool {

std::string render(const std::vector<std::vector<std::string>>& cells) {
  std::vector<std::size_t> width;
  for (const auto& row : cells)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i)
      out += (i == 0 ? fmt::format("{:<{}}", row[i], width[i]) : fmt::format("  {:>{}}", row[i], width[i]));
    out += "\n";
  }
  return out;
}

std::string rows_table(const std::vector<MeasuredRow>& rows, const Peaks& peaks) {
  std::vector<std::vector<std::string>> cells{{"op", "pass", "shape", "backend", "ms", "rate", "% peak"}};
  for (const MeasuredRow& r : rows) {
    std::string shape;
    for (const auto& [k, v] : r.op.shape) shape += fmt::format("{}{}={}", shape.empty() ? "" : ",", k, v);
    if (!r.op.matrix.empty()) shape += "," + r.op.matrix;
    if (r.op.routing == "skewed") shape += ",skewed";
    if (r.timing.refused) {
      cells.push_back({std::string(to_string(r.op.op)), r.op.pass, shape, r.timing.backend, "refused", "", ""});
      continue;
    }
    const double s = r.timing.ms * 1e-3;
    std::string rate, pct;
    if (r.op.flops > 0) {
      const double tflops = r.op.flops / s / 1e12;
      rate = fmt::format("{:.1f} TFLOP/s", tflops);
      if (peaks.bf16_gemm_tflops > 0) pct = fmt::format("{:.0f}%", 100.0 * tflops / peaks.bf16_gemm_tflops);
    } else {
      const double gbs = r.op.bytes / s / 1e9;
      rate = fmt::format("{:.0f} GB/s", gbs);
      if (peaks.copy_gbytes_per_s > 0) pct = fmt::format("{:.0f}%", 100.0 * gbs / peaks.copy_gbytes_per_s);
    }
    const std::string ms = fmt::format("{:.4f}", r.timing.ms);
    cells.push_back({std::string(to_string(r.op.op)), r.op.pass, shape, r.timing.backend, ms, rate, pct});
  }
  return render(cells);
}

std::string summary_table(const std::vector<MeasuredRow>& rows, const Peaks& peaks) {
  struct Group {
    std::vector<double> pct;
    int refused = 0;
    bool flops = false;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
  for (const MeasuredRow& r : rows) {
    Group& g = groups[{std::string(to_string(r.op.op)), r.op.pass, r.timing.backend}];
    if (r.timing.refused) {
      ++g.refused;
      continue;
    }
    const double s = r.timing.ms * 1e-3;
    g.flops = r.op.flops > 0;
    g.pct.push_back(g.flops ? 100.0 * r.op.flops / s / 1e12 / peaks.bf16_gemm_tflops
                            : 100.0 * r.op.bytes / s / 1e9 / peaks.copy_gbytes_per_s);
  }
  std::vector<std::vector<std::string>> cells{{"op", "pass", "backend", "rows", "refused", "median % of peak"}};
  for (auto& [key, g] : groups) {
    std::string median = "-";
    if (!g.pct.empty()) {
      std::sort(g.pct.begin(), g.pct.end());
      median = fmt::format("{:.0f}% ({})", g.pct[g.pct.size() / 2], g.flops ? "GEMM peak" : "copy peak");
    }
    cells.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::to_string(g.pct.size()),
                     std::to_string(g.refused), median});
  }
  return render(cells);
}

std::string checks_table(const std::vector<CheckResult>& checks) {
  std::vector<std::vector<std::string>> cells{{"check", "rel. error", "tolerance", "result", "note"}};
  for (const CheckResult& c : checks)
    cells.push_back({c.name, fmt::format("{:.2e}", c.rel_error), fmt::format("{:.0e}", c.tolerance),
                     c.passed ? "PASS" : "FAIL", c.note});
  return render(cells);
}

}  // namespace budget::profiler::tool
