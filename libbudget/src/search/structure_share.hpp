#pragma once
// Private (search domain): the work the layout searches of one cluster ranking share across its
// candidates (docs/cluster.md, "Shared work across candidates").
//
// A *structure* is the set of configs equal in every field but the routed experts' count and
// width and the shared experts' width (and the name and notes): the matcher's candidates of one
// shape differ only there. Their layout searches share
//   - the part times of each shard (PartTimesCache, keyed by the shard's sizes and the expert fields
//     each part group reads: the attention group once per structure, the router and shared experts
//     per (count, shared width), the routed experts per (count, width));
//   - the stage executions per (PP, V, recompute kind), which depend on the layer structure only;
// and each search may be told the step time above which a layout cannot matter (the top-th best
// candidate found so far): a layout whose compute bound exceeds it is neither memory-checked nor
// timed (search_layouts_shared()).
//
// What a cache key must include (the invariants this rests on): the structure key is the native
// JSON of the config (arch_config_to_json(): every field a config file can say) with those three
// fields, the name and the notes blanked, so a field added to ArchConfig is part of it as soon as
// the native format writes it; the layout's part of the key is layer_times()'s: TP (with SP), CP,
// the micro-batch size, EP, ETP and the recompute kind (search_layouts()' shard key), the tokens and
// passes of each part, and the options are the ranking's (one workload, one imbalance, one time
// model for all candidates). A layout dimension that changes part times must enter the shard key.

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/config.hpp"
#include "budget/layout_search.hpp"
#include "budget/time_model.hpp"
#include "layout/stage_executions.hpp"
#include "step_time/step_compute.hpp"

namespace budget::detail {

/// What the layout searches of the configs of one structure share. Thread-safe.
class StructureShare {
 public:
  /// `reference`: the part times of the search as it was before sharing (PartTimesCache::time_every_op).
  explicit StructureShare(bool reference = false);
  StructureShare(const StructureShare&) = delete;
  StructureShare& operator=(const StructureShare&) = delete;

  PartTimesCache& indexed() { return indexed_; }  ///< the ranking's part times (indexed path)
  PartTimesCache& rows() { return rows_; }        ///< the kept layouts' part times (row path)
  /// Each pipeline rank's executions under `layout` (its PP, V, first/last-stage counts, recompute,
  /// loop placement and pipeline layout string).
  const std::vector<StageExecutions>& stage_executions_of(const ArchConfig& config, const ParallelLayout& layout);

 private:
  std::mutex parts_mutex_, executions_mutex_;
  PartTimesCache indexed_, rows_;
  std::map<std::tuple<std::int64_t, std::int64_t, PipelineSplit, int, std::int64_t, int>,
           std::vector<StageExecutions>>
      executions_;
};

/// The structure of `config`: its native JSON with the routed expert count and width, the shared
/// expert width, the name and the notes blanked.
std::string structure_key(const ArchConfig& config);

/// One StructureShare per structure, made on first use. Thread-safe.
class StructureShares {
 public:
  StructureShare& of(const ArchConfig& config);
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<StructureShare>> shares_;
};

/// One search's share and the step time above which its layouts need not be timed.
struct SearchSharing {
  StructureShare* share = nullptr;  ///< none: the search's own caches
  /// A layout whose compute bound exceeds this (by more than 10⁻⁹ relative) is neither
  /// memory-checked nor timed: the search then returns its best among the others, which is its
  /// true best whenever that is at most this (docs/cluster.md, "Shared work across candidates").
  double prune_above_seconds = std::numeric_limits<double>::infinity();
  /// With no share: the search's own caches time every op of a part's config (the reference).
  bool reference = false;
};

/// search_layouts() with the structure's shared caches and the pruning bound of `sharing`.
LayoutSearchResult search_layouts_shared(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                         const LayoutSearchOptions& options, const SearchSharing& sharing);

/// A candidate on the cluster: the best layout (search_layouts_shared(), keep 1, memory checked only
/// where the bound reaches) and its seconds per token; no single-GPU figures (single_gpu_figures()).
ClusterCandidateTime best_layout_on_cluster(const TimeModel& model, const ArchConfig& config,
                                            const ClusterSpec& cluster, const LayoutSearchOptions& options,
                                            const SearchSharing& sharing);

/// The figures of a ClusterCandidateTime that do not depend on the cluster: the single-GPU seconds
/// per token (predict_step_time's, 8 sequences a step), the executed MoE layers and the training
/// FLOPs per token; gpu_seconds_per_flop when the candidate was found.
void add_single_gpu_figures(ClusterCandidateTime& candidate, const TimeModel& model, const ArchConfig& config,
                            const LayoutSearchOptions& options);

/// The candidate's ratios to the baseline and what makes its cluster ratio differ from the
/// single-GPU one (`differences`, `ratio_components`); both carry their single-GPU figures.
void compare_with_baseline(ClusterCandidateTime& candidate, const ClusterCandidateTime& baseline);

/// The baseline at the team's layout (options.team_layout): ClusterRanking::team_baseline, its ratio
/// over `searched` (the baseline at its searched best).
ClusterCandidateTime team_baseline_on_cluster(const TimeModel& model, const ArchConfig& baseline,
                                             const ClusterSpec& cluster, const LayoutSearchOptions& options,
                                             const ClusterCandidateTime& searched);

/// The baseline at its best layout with its single-GPU figures and ratios 1; budget::Error
/// ("--baseline") when no layout of it fits.
ClusterCandidateTime baseline_on_cluster(const TimeModel& model, const ArchConfig& baseline, const ClusterSpec& cluster,
                                         const LayoutSearchOptions& options, const SearchSharing& sharing);

/// The training FLOPs per token a ClusterCandidateTime carries (account() at the single-GPU
/// reference workload of add_single_gpu_figures(): the same double).
double training_flops_per_token(const ArchConfig& config, const LayoutSearchOptions& options);

/// rank_by_cluster_time(..., top, order) with options.share_work (shared_ranking.cpp).
ClusterRanking rank_top_shared(const TimeModel& model, const ArchConfig& baseline,
                               const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                               const LayoutSearchOptions& options, std::size_t top, const ClusterRankOrder& order);

}  // namespace budget::detail
