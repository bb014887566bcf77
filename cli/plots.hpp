#pragma once
// The plots of budget-match (through gnuplot.hpp): what each command draws with --plot.

#include <string>
#include <vector>

#include "budget/grid.hpp"
#include "budget/scaling_data.hpp"
#include "budget/scaling_fit.hpp"
#include "gnuplot.hpp"

namespace budget::cli {

/// `fit --plot`: observed loss against the fitted law's prediction at every point, one colour per
/// architecture (domain rows predicted by their domain's intercepts), with the y = x line.
void plot_fit_parity(const std::vector<ArchLaw>& laws, const LossData& data, const std::string& path);

/// `grid --plot`: the signed deviations (%) of FLOPs, parameters and KV cache of each cell's best
/// matched config, one group of bars per cell; `extra` adds series (e.g. predicted step-time
/// ratio − 1, in %, once a calibration is given), one value per row.
void plot_grid_deviations(const std::vector<GridRow>& rows, const std::string& path,
                          const std::vector<BarSeries>& extra = {});

}  // namespace budget::cli
