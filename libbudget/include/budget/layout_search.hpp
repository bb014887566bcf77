#pragma once
/// \file
/// The best layout of a config on N GPUs (docs/cluster.md, "Layout search"): every valid layout of
/// TP (powers of two up to a node), CP (1, 2, 4, 8), PP (divisors of the layer count), V (1, 2, 4),
/// EP (powers of two dividing the experts), ETP (1 or TP), micro-batch size (1, 2, 4), recompute
/// (none, selective, full) and the distributed optimizer (on, off) with DP = N / (TP·CP·PP) and
/// m = global batch / (b·s·DP) micro-batches, sequence parallelism on with TP > 1; those that do not
/// fit memory dropped; the rest ranked by step time (cluster_time.hpp), ties to more headroom.
///
/// Thread safety: reentrant; the TimeModel is shared read-only.

#include <cstdint>
#include <string>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/config.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"

namespace budget {

struct LayoutSearchOptions {
  std::int64_t gpus = 0;
  std::int64_t seq_len = 4096;
  /// Tokens per step (b·s·m·DP); a layout whose DP·b·s does not divide it is skipped.
  std::int64_t global_batch_tokens = 4 * 1024 * 1024;
  ClusterTimeOptions time;
  double imbalance = 1.0;
  std::size_t keep = 5;  ///< best layouts returned
};

struct RankedLayout {
  TrainingMemory memory;
  ClusterStepTime time;
};

struct LayoutSearchResult {
  std::vector<RankedLayout> layouts;  ///< best first
  std::int64_t enumerated = 0;        ///< combinations tried
  std::int64_t valid = 0;             ///< of them, valid for the config
  std::int64_t fitting = 0;           ///< of them, fitting memory (timed)
};

/// Every layout of the space above for `config` on `options.gpus` of `cluster`'s GPUs. budget::Error
/// when the GPU count exceeds the cluster or an option is out of range.
LayoutSearchResult search_layouts(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                  const LayoutSearchOptions& options);

/// True when `a` ranks before `b`: less time per step, then more headroom.
bool ranks_before(const RankedLayout& a, const RankedLayout& b);

/// One config at its best layout on the cluster, beside its single-GPU prediction.
struct ClusterCandidateTime {
  std::string name;
  bool found = false;  ///< some layout fits
  RankedLayout best;
  double seconds_per_token = 0.0;             ///< cluster: seconds per step / tokens per step (whole cluster)
  double gpu_seconds_per_token = 0.0;         ///< cluster: seconds_per_token × N
  double single_gpu_seconds_per_token = 0.0;  ///< predict_step_time at 8 sequences of s on one GPU
  double ratio_to_baseline = 0.0;             ///< cluster seconds per token / the baseline's
  double single_gpu_ratio_to_baseline = 0.0;  ///< the same on one GPU
  double moe_executions_per_token = 0.0;      ///< executed MoE layers (each one EP dispatch + combine a pass)
  std::vector<std::string> differences;       ///< what moves the cluster ratio away from the single-GPU one
};

struct ClusterRanking {
  ClusterCandidateTime baseline;
  std::vector<ClusterCandidateTime> candidates;  ///< fitting ones by seconds per token, then those with no layout
};

/// Each config (and the baseline) at its own best layout (search_layouts with `options`), ranked
/// by time per token on the cluster, with its ratio to the baseline beside the single-GPU ratio.
/// budget::Error as search_layouts; a baseline with no fitting layout is an error.
ClusterRanking rank_by_cluster_time(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options);

}  // namespace budget
