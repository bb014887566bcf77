#pragma once
// The plots of budget-match (through gnuplot.hpp): what each command draws with --plot.

#include <optional>
#include <string>
#include <vector>

#include "budget/grid.hpp"
#include "budget/scaling_data.hpp"
#include "budget/scaling_fit.hpp"
#include "budget/time_rank.hpp"
#include "gnuplot.hpp"

namespace budget::cli {

/// `fit --plot`: observed loss against the fitted law's prediction at every point, one colour per
/// architecture (domain rows predicted by their domain's intercepts), with the y = x line.
/// With `outputs`, the plot is staged there (written with the coefficient files, all or none).
void plot_fit_parity(const std::vector<ArchLaw>& laws, const LossData& data, const std::string& path,
                     budget::OutputFiles* outputs = nullptr);

/// `grid --plot`: the signed deviations (%) of FLOPs, parameters and KV cache of each cell's best
/// matched config, one group of bars per cell; `extra` adds series (e.g. predicted step-time
/// ratio − 1, in %, once a calibration is given), one value per row.
void plot_grid_deviations(const std::vector<GridRow>& rows, const std::string& path,
                          const std::vector<BarSeries>& extra = {});

/// `grid --plot --calibration`: the deviations above plus each matched config's predicted step-time
/// ratio to its baseline, as (ratio − 1) in %, so all four bars share one axis.
void plot_timed_grid(const std::vector<TimedGridRow>& rows, const std::string& path);

/// `grid --ablation … --plot`: the same bars for each ablation point's matched config (labelled by
/// the point), plus its predicted step-time ratio − 1 (%) where `time_ratios` has one (with
/// --calibration; empty otherwise). Infeasible points have no bars.
void plot_ablation(const std::vector<AblationPoint>& points, const std::vector<std::optional<double>>& time_ratios,
                   const std::string& title, const std::string& path);

}  // namespace budget::cli
