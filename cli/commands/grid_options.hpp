#pragma once
// The `grid` command's options and the parts its files share: grid.cpp (the grid, the ablations,
// the command) and grid_timed.cpp (the grid with step times: --calibration, --cluster).

#include <optional>
#include <string>
#include <vector>

#include "budget/grid.hpp"
#include "budget/time_rank.hpp"
#include "budget/workload.hpp"
#include "cluster_options.hpp"
#include "options.hpp"
#include "output_format.hpp"

namespace budget::cli {

struct GridOptions {
  std::string grid_path;  // empty: the built-in paper grid
  std::string ablation;
  std::string cell;
  WorkloadOption workload;
  std::string constraints_path;
  bool free_shapes = false;  // --free-shapes: ShapeSpace::free
  std::string order;         // --order: empty keeps the constraints' (default proportions)
  double span_fraction = 0.5;
  std::int64_t repeats = 2;
  OutputFormat format = OutputFormat::table;
  CalibrationOptions calibration;
  std::string rank_by = "budget";
  double max_time_ratio = 0;
  std::string plot_path;
  ClusterRankOptions cluster;
  KernelOptions kernels;  // --gpu, --precision (and --attention-backend of calibration)
};

/// Every cell's constraints, as `budget-match --baseline` makes them (--constraints, --free-shapes,
/// --order).
GridConstraints grid_constraints_of(const GridOptions& o);

/// Which search space every cell was matched in and how its row #1 was chosen (the matcher's footer
/// says it per match; docs/matching.md).
std::string grid_space_line(const MatchSummary& s);

/// The grid with each looped config's predicted time ratio to its baseline (grid --calibration).
Table timed_grid_table(const std::vector<TimedGridRow>& rows, const TimeAccuracy& accuracy);

/// grid --calibration: each cell's match ranked with the profile's step times.
void run_timed_grid(const GridOptions& o, const Grid& grid, const Workload& workload, const LoopSpec& loop);

/// grid --cluster: per cell the equally matched candidates at their best layouts on the cluster,
/// the fastest kept, beside the baseline at its best layout.
void run_cluster_grid(const GridOptions& o, const Grid& grid, const Workload& workload, const LoopSpec& loop);

}  // namespace budget::cli
