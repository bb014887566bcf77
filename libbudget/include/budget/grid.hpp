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
#include <utility>
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

/// How every cell's constraints are made (grid --constraints, --free-shapes, --order; Python
/// grid(constraints=, free_shapes=, order=)): default_constraints(baseline, shapes), or over them a
/// constraints file (load_constraints(path, baseline, shapes): its "free_shapes": true opens the
/// whole lattice too, --free-shapes wins over its false), then `order` when given (it wins over the
/// file's "order"), as `budget-match --baseline` does (docs/matching.md).
struct GridConstraints {
  std::string path;  ///< a constraints file applied to every cell (empty: none)
  ShapeSpace shapes = ShapeSpace::trainable;
  std::optional<MatchOrder> order;
  /// The kernel target every cell is matched for (grid --gpu; budget/kernel_stack.hpp).
  std::optional<KernelTarget> kernels;

  GridConstraints() = default;
  /// A constraints file alone (empty: none), the defaults' shapes and the file's order. Implicit,
  /// so that a path converts where a GridConstraints is asked for.
  GridConstraints(std::string constraints_path) : path(std::move(constraints_path)) {}  // NOLINT(google-explicit-constructor)
  GridConstraints(const char* constraints_path) : path(constraints_path) {}             // NOLINT(google-explicit-constructor)
};

/// `baseline`'s constraints under `constraints` (above). budget::Error as load_constraints().
MatchConstraints grid_constraints(const ArchConfig& baseline, const GridConstraints& constraints);
/// A cell's constraints: grid_constraints(cell.baseline, constraints).
MatchConstraints cell_constraints(const GridCell& cell, const GridConstraints& constraints);

/// Matches every cell: the cell's own loop if given, else `loop`; constraints by cell_constraints().
std::vector<GridRow> match_grid(const Grid& grid, const LoopSpec& loop, const Workload& workload,
                                const GridConstraints& constraints = {});

/// One point of an ablation: a loop (and depth) matched to the baseline.
struct AblationPoint {
  std::string label;           ///< "span 6", "repeats 3", "12 layers, looped"
  std::int64_t num_layers = 0;
  LoopSpec loop;
  /// The point's match: in the ablation's shape family where the point holds it (AblationFamily),
  /// else over the point's whole space; row #1 is the point's matched config.
  MatchResult result;
  std::optional<double> paper_loss;  ///< the paper's validation loss for this point, if published
  /// The smallest objective of the point's whole space (g*, any head dim and KV heads) and the
  /// point's equally matched window g* + tolerance: a family is held at the point only when a
  /// match in it is within the window (0, 0 when the point is infeasible).
  double best_objective_any_family = 0;
  double window = 0;
  /// The baseline's depth without a loop (span 0, repeats 1, the baseline's depth unlooped): the
  /// ablation's reference, matched over its whole space (row #1 the baseline itself when the space
  /// holds it: the paper's loss there is the baseline's), outside the family.
  bool reference = false;
  bool holds_kv_heads = false;  ///< row #1 has the family's KV heads (AblationFamily::num_kv_heads)
  bool holds_head_dim = false;  ///< row #1 has the family's head dim (AblationFamily::head_dim)
  bool holds_num_heads = false;  ///< row #1 has the family's query heads (AblationFamily::num_heads)
  /// Why the point does not hold the family (what it would cost), or empty.
  std::string family_note;
};

/// What an ablation holds across its points but the reference (docs/matching.md, "Ablations in one
/// shape family"): the KV heads, then the head dim, each the value held at the most points (ties: the smaller
/// worst objective over those points, then the baseline's nearest). A point holds a value when its
/// best match with it is within the point's equally matched window (g* + tolerance of its own
/// space); a point's row #1 is then the match in that family with the same window. The KV cache
/// per token (2 · executed attention layers · KV heads · head dim) ties KV heads × head dim to the
/// executed depth, so across depths one of them (the head dim, the finer lever) must follow it.
/// Third, among the points holding the KV heads, the query heads: the value the most points' equally
/// matched shapes in the family have (ties: nearest the baseline's, then fewer), so that the hidden
/// size (heads × head dim where the query width is the hidden size) changes only as the head dim
/// must (issue 44 §5: the span ablation's hidden went 1120 → 1344 → 1008 → 760 → 1088 → 1024).
struct AblationFamily {
  std::optional<std::int64_t> num_kv_heads;  ///< held at two points or more (nullopt: none)
  std::optional<std::int64_t> head_dim;      ///< held (with num_kv_heads) at two points or more
  std::optional<std::int64_t> num_heads;     ///< query heads held (with num_kv_heads) at two points or more
  bool kv_heads_fixed = false;  ///< one value in the search space: held at every point by it
  bool head_dim_fixed = false;
  /// One line each: what is held and where, and why the others do not hold it.
  std::vector<std::string> notes;
};

struct AblationResult {
  std::vector<AblationPoint> points;
  AblationFamily family;
};

enum class Ablation { span, repeats, depth };

/// The paper's ablations around `baseline` (all budget-matched to it, the depth fixed to each
/// point's over grid_constraints(baseline, constraints)):
///  span:    centred loops of 0, 2, 4, 6, 8, 10, 12 layers, twice;
///  repeats: 1–4 passes over the centred middle half;
///  depth:   6–18 physical layers (step 2), unlooped and with the middle half twice.
/// Every point in one shape family where the budgets allow (AblationFamily). `paper_sparsity_pct`
/// (85 or 95) selects which published loss column to attach, if any.
AblationResult run_ablation(Ablation kind, const ArchConfig& baseline, const Workload& workload,
                            std::optional<int> paper_sparsity_pct = std::nullopt,
                            const GridConstraints& constraints = {});

}  // namespace budget
