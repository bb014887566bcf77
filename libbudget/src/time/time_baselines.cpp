// The baselines of a whole-layer validation against all their runs (budget/time_baselines.hpp).

#include "budget/time_baselines.hpp"

#include <algorithm>

namespace budget {

BaselineChecks check_baselines(const LayerValidation& validation) {
  BaselineChecks out;
  for (const auto& e : validation.entries) {
    if (e.tag != "baseline") continue;
    auto it = std::find_if(out.baselines.begin(), out.baselines.end(),
                           [&](const BaselineCheck& b) { return b.cell == e.cell && b.name == e.name; });
    if (it == out.baselines.end()) {
      out.baselines.push_back(BaselineCheck{});
      it = out.baselines.end() - 1;
      it->cell = e.cell;
      it->name = e.name;
      it->predicted_ms = e.predicted_ms;
    }
    it->runs.push_back(e.run);
    it->measured_ms.push_back(e.measured_ms);
    it->predicted_ms = std::max(it->predicted_ms, e.predicted_ms);
  }
  bool first = true;
  for (auto& b : out.baselines) {
    b.fastest_ms = *std::min_element(b.measured_ms.begin(), b.measured_ms.end());
    b.slowest_ms = *std::max_element(b.measured_ms.begin(), b.measured_ms.end());
    double sum = 0;
    for (const double ms : b.measured_ms) sum += ms;
    b.mean_ms = sum / static_cast<double>(b.measured_ms.size());
    b.error_vs_mean = b.predicted_ms / b.mean_ms - 1.0;
    b.error_vs_slowest = b.predicted_ms / b.slowest_ms - 1.0;
    b.over_predicted = b.predicted_ms > b.slowest_ms;
    if (b.over_predicted) ++out.over_predicted;
    out.max_error_vs_mean = first ? b.error_vs_mean : std::max(out.max_error_vs_mean, b.error_vs_mean);
    out.max_error_vs_slowest = first ? b.error_vs_slowest : std::max(out.max_error_vs_slowest, b.error_vs_slowest);
    first = false;
  }
  return out;
}

}  // namespace budget
