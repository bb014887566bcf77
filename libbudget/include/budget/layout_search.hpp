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

#include <cstddef>
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

/// One named time component of a candidate and the baseline, each at its own best layout, per token,
/// and its share of the ratio's departure from 1:
///
///   contribution_c = (x_c / X_tok − b_c / B_tok) / (B / B_tok),  Σ_c contribution_c = ratio − 1,
///
/// x_c, b_c the component's exposed seconds per step (by_component of the slowest stage; overlapped
/// collectives count 0), X_tok, B_tok tokens per step, B the baseline's seconds per step: the
/// components of a step sum to its seconds per step, so the contributions sum to the cluster ratio
/// minus one exactly.
struct RatioComponent {
  std::string name;                     ///< compute, bubble, ep_all_to_all, tp_all_gather, ...
  double seconds_per_token = 0.0;       ///< the candidate's exposed seconds per token (whole cluster)
  double baseline_seconds_per_token = 0.0;
  double contribution = 0.0;            ///< to ratio − 1
  /// Per token: calls of this component's collective (0 for compute and bubble), and its bytes per call.
  double calls_per_token = 0.0;
  double baseline_calls_per_token = 0.0;
  double bytes_per_call = 0.0;
  double baseline_bytes_per_call = 0.0;
};

/// One config at its best layout on the cluster, beside its single-GPU prediction.
struct ClusterCandidateTime {
  std::string name;
  std::size_t input_index = 0;  ///< position in the candidates given to rank_by_cluster_time (baseline: 0)
  bool found = false;  ///< some layout fits
  RankedLayout best;
  double seconds_per_token = 0.0;             ///< cluster: seconds per step / tokens per step (whole cluster)
  double gpu_seconds_per_token = 0.0;         ///< cluster: seconds_per_token × N
  double single_gpu_seconds_per_token = 0.0;  ///< predict_step_time at 8 sequences of s on one GPU
  double ratio_to_baseline = 0.0;             ///< cluster seconds per token / the baseline's
  double single_gpu_ratio_to_baseline = 0.0;  ///< the same on one GPU
  double moe_executions_per_token = 0.0;      ///< executed MoE layers (each one EP dispatch + combine a pass)
  double training_flops_per_token = 0.0;      ///< F, non-embedding (accounting's Budgets), at options' workload
  /// GPU-seconds per training FLOP: gpu_seconds_per_token / training_flops_per_token (0 when not found).
  double gpu_seconds_per_flop = 0.0;
  std::vector<std::string> differences;       ///< what moves the cluster ratio away from the single-GPU one
  std::vector<RatioComponent> ratio_components;  ///< for candidates that fit: the ratio split by component
};

struct ClusterRanking {
  ClusterCandidateTime baseline;
  std::vector<ClusterCandidateTime> candidates;  ///< fitting ones by seconds per token, then those with no layout
};

/// The ratio decomposition of `candidate` against `baseline` (both found): one entry per component
/// name of either's best layout, in the baseline's order, then the candidate's own.
std::vector<RatioComponent> ratio_components(const ClusterCandidateTime& candidate,
                                             const ClusterCandidateTime& baseline);

/// Each config (and the baseline) at its own best layout (search_layouts with `options`), ranked
/// by time per token on the cluster, with its ratio to the baseline beside the single-GPU ratio.
/// budget::Error as search_layouts; a baseline with no fitting layout is an error.
ClusterRanking rank_by_cluster_time(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options);

}  // namespace budget
