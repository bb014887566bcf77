#pragma once
// Matched candidates at their best layouts on a cluster (budget/layout_search.hpp,
// rank_by_cluster_time): the `cluster` object of each candidate in the JSON outputs, the ranking
// table (aligned text, Markdown, CSV) and the lines that say what moves the cluster ratio away
// from the single-GPU one. Shared by `budget-match --cluster` and `grid --cluster`.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "budget/cluster.hpp"
#include "budget/cluster_match.hpp"
#include "budget/config.hpp"
#include "budget/layout_search.hpp"
#include "budget_render/table.hpp"

namespace budget::render {

/// {found, layout, memory, time, seconds_per_token, gpu_seconds_per_token, training_flops_per_token,
/// gpu_seconds_per_flop, single_gpu_seconds_per_token, ratio_to_baseline, single_gpu_ratio_to_baseline,
/// ratio_components, differences}; without a fitting layout `found` is false, `layout`, `memory` and
/// `time` null and `reason` says so.
nlohmann::ordered_json cluster_candidate_json(const ClusterCandidateTime& candidate);

/// The run's settings and the baseline: {cluster, gpu, gpus, global_batch_tokens, seq_len,
/// attended_keys, baseline (cluster_candidate_json), candidates_without_layout}; when the time limit
/// stopped the ranking, `partial`: {finished, given, stopped_by, to_finish} (docs/cli.md, exit 4).
nlohmann::ordered_json cluster_ranking_json(const ClusterRanking& ranking, const ClusterSpec& cluster,
                                            const LayoutSearchOptions& options);

/// Microseconds per token of a whole cluster: three decimals ("6.204"), three significant digits
/// below 1 µs ("0.000123" on 10^6 GPUs), so a fast cluster never prints "0.000".
std::string microseconds_per_token_text(double seconds_per_token);
/// What narrows a cluster ranking the time limit stopped: fewer candidates, fewer GPUs, more time.
std::string partial_ranking_advice();
/// Empty unless ranking.partial: a paragraph saying that the rows are the best of the candidates
/// finished, what stopped it and how to finish it.
std::string partial_ranking_note(const ClusterRanking& ranking);

/// The last line of a layout search's or a cluster ranking's text: the headroom a layout had to leave
/// to fit (o.min_headroom_bytes; --min-headroom, default budget::default_min_headroom_gib) and why
/// that default ("headroom: a layout fits when it leaves at least 4 GiB free ...").
std::string min_headroom_footer(const LayoutSearchOptions& o);

/// "TP2 CP1 PP1 DP4 EP8 ETP1 b1 m128 selective dist-opt"; an uneven pipeline adds its first/last-stage
/// counts after PP (and V): "PP8 first 7 last 6" (or "(layout string)").
std::string layout_brief(const ParallelLayout& layout);

/// Baseline row, then one row per candidate of `ranking` (already in rank order, `configs` parallel
/// to ranking.candidates): shape, best layout, time per token, tokens/s/GPU, MFU, the cluster and
/// single-GPU ratios, headroom; "no layout fits memory" where none does.
Table cluster_ranking_table(const ClusterRanking& ranking, const std::vector<ArchConfig>& configs,
                            const ArchConfig& baseline);

/// The heading line (cluster, GPUs, batch) and, per candidate, what makes the difference.
std::string cluster_ranking_heading(const ClusterRanking& ranking, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options);
std::string cluster_ranking_differences(const ClusterRanking& ranking);

/// The equally matched candidates a cluster ranking passed over as not trainable at scale
/// (rank_matched_on_cluster()): [{config, reason}], the `cluster.dropped` of `budget-match --cluster`
/// and of each `grid --cluster` cell.
nlohmann::ordered_json cluster_dropped_json(const std::vector<ClusterDropped>& dropped);
/// "hidden 1008, heads 6×168 (KV 1), experts 288×368 (top 8): <reason>".
std::string cluster_dropped_line(const ClusterDropped& dropped);

}  // namespace budget::render
