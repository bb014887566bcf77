#include "plots.hpp"

#include <limits>

#include "budget/scaling_law.hpp"

namespace budget::cli {

namespace {
/// The right axis of every chart with time: the predicted time ratio at matched work, on its own
/// scale (never mixed with the deviations' %).
const char* const time_axis_label = "predicted time ratio at matched work (x)";

/// FLOPs, params and KV deviations (%) of a match's best candidate; NaN (no bar) when infeasible.
void push_deviations(const MatchResult& result, std::vector<BarSeries>& series) {
  const double none = std::numeric_limits<double>::quiet_NaN();
  const bool matched = !result.candidates.empty();
  const Deviation d = matched ? result.candidates.front().deviation : Deviation{};
  series[0].values.push_back(matched ? 100 * d.flops : none);
  series[1].values.push_back(matched ? 100 * d.params : none);
  series[2].values.push_back(matched ? 100 * d.kv : none);
}
}  // namespace


void plot_fit_parity(const std::vector<ArchLaw>& laws, const LossData& data, const std::string& path,
                     budget::OutputFiles* outputs) {
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
              "measured loss", series, "--plot", outputs);
}

void plot_grid_deviations(const std::vector<GridRow>& rows, const std::string& path,
                          const std::vector<BarSeries>& extra) {
  std::vector<std::string> labels;
  std::vector<BarSeries> series{{"FLOPs", {}}, {"params", {}}, {"KV cache", {}}};
  for (const GridRow& row : rows) {
    labels.push_back(row.result.baseline.name.empty() ? row.cell->size : row.result.baseline.name);
    push_deviations(row.result, series);
  }
  series.insert(series.end(), extra.begin(), extra.end());
  plot_grouped_bars(path, "Matched looped configs: signed deviation from each baseline", "deviation (%)", labels,
                    series, "--plot", time_axis_label);
}

void plot_ablation(const std::vector<AblationPoint>& points, const std::vector<std::optional<double>>& time_ratios,
                   const std::string& title, const std::string& path) {
  std::vector<std::string> labels;
  std::vector<BarSeries> series{{"FLOPs", {}}, {"params", {}}, {"KV cache", {}}};
  BarSeries time{"time ratio at matched work", {}, true};
  for (std::size_t i = 0; i < points.size(); ++i) {
    labels.push_back(points[i].label);
    push_deviations(points[i].result, series);
    const bool timed = i < time_ratios.size() && time_ratios[i].has_value();
    time.values.push_back(timed ? *time_ratios[i] : std::numeric_limits<double>::quiet_NaN());
  }
  if (!time_ratios.empty()) series.push_back(std::move(time));
  plot_grouped_bars(path, title, "deviation (%)", labels, series, "--plot", time_axis_label);
}

void plot_timed_grid(const std::vector<TimedGridRow>& rows, const std::string& path) {
  std::vector<GridRow> plain;
  BarSeries time{"time ratio at matched work", {}, true};
  for (const TimedGridRow& row : rows) {
    plain.push_back(GridRow{row.cell, row.match.result});
    time.values.push_back(row.match.time_ratios.empty() ? std::numeric_limits<double>::quiet_NaN()
                                                        : row.match.time_ratios.front());
  }
  plot_grid_deviations(plain, path, {time});
}

}  // namespace budget::cli
