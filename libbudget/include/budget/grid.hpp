#pragma once
/// \file
/// Families of baselines ("grids", like the SMELT paper's 4 sizes × 4 sparsities), their matched
/// looped configs, and the paper's three ablations. File format: docs/matching.md ("Grid files").
///
/// Thread safety: parse_grid(), load_grid(), match_grid() and run_ablation() are reentrant;
/// paper_grid() returns one immutable grid, built once on first use (thread-safe static
/// initialisation).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "budget/config.hpp"
#include "budget/match.hpp"
#include "budget/workload.hpp"

namespace budget {

/// Published columns of one architecture in one cell (any may be absent).
struct PublishedColumns {
  std::optional<double> total_params_B;
  std::optional<double> active_params_B;
  std::optional<double> sparsity_pct;
  std::optional<std::int64_t> hidden_size;
  std::optional<std::int64_t> num_experts;
  std::optional<double> flops_ratio;  ///< looped / baseline training FLOPs
  std::optional<double> kv_ratio;     ///< looped / baseline KV cache
};

struct GridCell {
  std::string size;                     ///< size label ("200M")
  ArchConfig baseline;
  std::optional<LoopConfig> loop;       ///< the cell's loop if the file gives one (else the default)
  PublishedColumns published_baseline;
  PublishedColumns published_looped;

  /// The published largest deviation of the looped model: max(|flops_ratio − 1|, |kv_ratio − 1|,
  /// |total_looped/total_baseline − 1|) over the published columns present (nullopt if none).
  std::optional<double> published_max_deviation() const;
};

struct Grid {
  std::string description;
  std::vector<GridCell> cells;
};

Grid parse_grid(std::string_view json_text, const std::string& source);
Grid load_grid(const std::string& path);

/// The SMELT paper's 4×4 grid with its published columns (compiled in from
/// examples/grids/paper_grid.json); its source name is "<paper grid>".
const Grid& paper_grid();

struct GridRow {
  const GridCell* cell = nullptr;
  MatchResult result;
};

/// The loop a cell is matched with: the cell's own layer range if given, else `loop`.
LoopSpec cell_loop_spec(const GridCell& cell, const LoopSpec& loop);
/// A cell's constraints: default_constraints(cell baseline), overridden by the file at
/// `constraints_path` when not empty (load_constraints(path, baseline): its "free_shapes" picks
/// the defaults).
MatchConstraints cell_constraints(const GridCell& cell, const std::string& constraints_path);

/// Matches every cell: the cell's own loop if given, else `loop`; constraints are
/// default_constraints(cell baseline), overridden by `constraints_path` when not empty.
std::vector<GridRow> match_grid(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                const std::string& constraints_path = {});

/// One point of an ablation: a loop (and depth) matched to the baseline.
struct AblationPoint {
  std::string label;           ///< "span 6", "repeats 3", "12 layers, looped"
  std::int64_t num_layers = 0;
  LoopSpec loop;
  MatchResult result;
  std::optional<double> paper_loss;  ///< the paper's validation loss for this point, if published
};

enum class Ablation { span, repeats, depth };

/// The paper's ablations around `baseline` (all budget-matched to it):
///  span:    centred loops of 0, 2, 4, 6, 8, 10, 12 layers, twice;
///  repeats: 1–4 passes over the centred middle half;
///  depth:   6–18 physical layers (step 2), unlooped and with the middle half twice.
/// `paper_sparsity_pct` (85 or 95) selects which published loss column to attach, if any.
std::vector<AblationPoint> run_ablation(Ablation kind, const ArchConfig& baseline, const Workload& workload,
                                        std::optional<int> paper_sparsity_pct = std::nullopt);

}  // namespace budget
