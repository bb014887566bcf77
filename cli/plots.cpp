#include "plots.hpp"

#include <limits>

#include "budget/scaling_law.hpp"

namespace budget::cli {

void plot_fit_parity(const std::vector<ArchLaw>& laws, const LossData& data, const std::string& path) {
  std::vector<ScatterSeries> series;
  for (const ArchLaw& law : laws) {
    ScatterSeries s{law.arch, {}, {}};
    for (const LossPoint& p : data.points) {
      if (p.arch != law.arch) continue;
      const ScalingCoefficients* k = &law.overall.coefficients;
      if (!p.domain.empty()) {
        k = nullptr;
        for (const DomainLaw& d : law.domains) {
          if (d.domain == p.domain) k = &d.fit.coefficients;
        }
        if (k == nullptr) continue;
      }
      s.x.push_back(predict_loss(*k, p.F, p.S, p.D));
      s.y.push_back(p.loss);
    }
    series.push_back(std::move(s));
  }
  plot_parity(path, "Fitted L = E + A(1-S)^b F^-a + K D^-c against the measured loss", "fitted loss",
              "measured loss", series);
}

void plot_grid_deviations(const std::vector<GridRow>& rows, const std::string& path,
                          const std::vector<BarSeries>& extra) {
  std::vector<std::string> labels;
  std::vector<BarSeries> series{{"FLOPs", {}}, {"params", {}}, {"KV cache", {}}};
  const double none = std::numeric_limits<double>::quiet_NaN();
  for (const GridRow& row : rows) {
    labels.push_back(row.result.baseline.name.empty() ? row.cell->size : row.result.baseline.name);
    const bool matched = !row.result.candidates.empty();
    const Deviation d = matched ? row.result.candidates.front().deviation : Deviation{};
    series[0].values.push_back(matched ? 100 * d.flops : none);
    series[1].values.push_back(matched ? 100 * d.params : none);
    series[2].values.push_back(matched ? 100 * d.kv : none);
  }
  series.insert(series.end(), extra.begin(), extra.end());
  plot_grouped_bars(path, "Matched looped configs: signed deviation from each baseline", "deviation (%)", labels,
                    series);
}

}  // namespace budget::cli
