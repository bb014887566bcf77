#pragma once
/// \file
/// The best layout of a config on N GPUs (docs/cluster.md, "Layout search"): every valid layout of
/// TP (powers of two up to a node), CP (1, 2, 4, 8), PP (divisors of N up to the layer count), V
/// (1, 2, 4), the pipeline split (even where PP·V divides the layers, else the most balanced
/// first/last-stage counts Megatron accepts: layout/pipeline_split.hpp), EP (powers of two dividing
/// the experts), ETP (1 or TP), micro-batch size (1, 2, 4), recompute
/// (none, selective, full) and the distributed optimizer (on, off) with DP = N / (TP·CP·PP) and
/// m = global batch / (b·s·DP) micro-batches, sequence parallelism on with TP > 1; those that do not
/// fit memory dropped; the rest ranked by step time (cluster_time.hpp), ties to more headroom, then
/// to the first enumerated (the order of the list above, outermost first).
///
/// Speed (docs/cluster.md, "Layout search"): the part times are predicted once per shard through
/// the time model's indexed path, and a layout is timed only while its compute bound
///
///   (m + (PP − 1)/V) · max_s t_s  ≤  seconds_per_step
///
/// (t_s one micro-batch's compute on stage s without the embedding, LM head and final norm; the
/// communication and the late DP overlap are non-negative) can still beat the last layout kept,
/// layouts visited by increasing bound. The result equals the exhaustive search's (`exhaustive`),
/// layout for layout and bit for bit; the layouts kept are timed again through the row path for
/// their out-of-range flags and notes.
///
/// Thread safety: reentrant; the TimeModel is shared read-only.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/config.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "budget/workload.hpp"

namespace budget {

/// The headroom a layout must leave by default in the CLI (--min-headroom) and Python
/// (min_headroom=), in GiB: 4, the median slack of PyTorch's caching allocator over the 19 distinct
/// measured Megatron-Core runs of SimuMax v1.2 on 8x B200 (tests/data/measured/simumax_b200_runs.json:
/// torch.cuda.max_memory_reserved() − max_memory_allocated(), 0.83 to 12.92 GiB, median 4.12 GiB,
/// 2.8% to 9.3% of the allocated peak). The memory model predicts the allocated peak (docs/cluster.md,
/// "Memory to the allocator's peak"; gpu.reserved_GiB covers the CUDA context and NCCL); the
/// reserved-but-unallocated blocks are what fragmentation can leave unusable, so a layout that fits
/// with less than this has no margin for them (before issue 44 §5 the default was 0, and ranked #1
/// layouts ran at 0.20 GiB of headroom). 0 restores every layout within the usable memory.
inline constexpr double default_min_headroom_gib = 4.0;

struct LayoutSearchOptions {
  std::int64_t gpus = 0;
  std::int64_t seq_len = 4096;
  /// Tokens per step (b·s·m·DP); a layout whose DP·b·s does not divide it is skipped.
  std::int64_t global_batch_tokens = 4 * 1024 * 1024;
  ClusterTimeOptions time;
  double imbalance = 1.0;
  /// A layout fits when its headroom (usable memory − peak) is at least this many bytes (the CLI's
  /// --min-headroom GiB, default default_min_headroom_gib; 0: every layout within the usable memory):
  /// a margin for what the memory model leaves out (fragmentation, a framework's own buffers). The
  /// library's own default is 0 (the search as asked); the CLI and Python default to the margin.
  double min_headroom_bytes = 0.0;
  /// Training tokens of the run (0: none): render's layout_search_json() gives each layout's run cost
  /// (run_cost(): steps, wall clock, GPU-hours).
  double run_tokens = 0.0;
  std::size_t keep = 5;  ///< best layouts returned
  /// Check the memory of every valid layout, so that `fitting` counts them all (layout's output);
  /// false: only of the layouts whose compute bound can still beat the kept ones (the cluster
  /// ranking, which needs the best layout alone); `fitting` then counts those checked.
  bool count_fitting = true;
  /// Time every fitting layout through the row path, no bound: the reference the pruned search is
  /// tested against (tests/unit/cluster/test_layout_search.cpp) and measured beside (bench_cluster).
  bool exhaustive = false;
  /// Reports progress ("layout search", budget/progress.hpp) while searching; false: checks the
  /// time limit alone (the cluster ranking, which reports its own progress). The time limit
  /// (set_work_time_limit, the CLI's --max-seconds) bounds every search either way.
  bool report_progress = true;
  /// Threads of rank_by_cluster_time(), a layout search per candidate on each (0: every hardware
  /// thread). The ranking is identical for any count; search_layouts() itself runs on one.
  unsigned threads = 0;
  /// rank_by_cluster_time(): share part times and stage executions across the candidates of one
  /// structure and, with `top`, skip what cannot reach the top (docs/cluster.md, "Shared work across
  /// candidates"); false: every candidate searched on its own, the reference the shared ranking is
  /// tested against (bit for bit) and measured beside (bench_cluster).
  bool share_work = true;
  /// What every layout holds (above). Its FP8 recipe must be the time model's (TimeModelOptions::fp8):
  /// one recipe prices memory and time, and a search given two is refused.
  LayoutRecipe recipe;
  /// The cluster ranking only (rank_by_cluster_time()): the team's layout (--megatron-args). Every
  /// config is priced at its best layout searched with `recipe` held (one basis); the baseline is also
  /// priced at this layout (resolved for `gpus`), ClusterRanking::team_baseline, when it is valid for
  /// it and fits (with min_headroom_bytes).
  std::optional<ParallelLayout> team_layout;
};

struct RankedLayout {
  TrainingMemory memory;
  ClusterStepTime time;
};

struct LayoutSearchResult {
  std::vector<RankedLayout> layouts;  ///< best first
  std::int64_t enumerated = 0;        ///< combinations tried
  std::int64_t valid = 0;             ///< of them, valid for the config
  std::int64_t fitting = 0;           ///< of them, fitting memory (of those checked: count_fitting)
  std::int64_t timed = 0;             ///< of the fitting ones, timed (all of them when exhaustive)
  std::int64_t memory_checked = 0;    ///< layouts whose training memory was computed
  /// Why the first enumerated layout was invalid (ParallelLayout::validation_error), when none was
  /// valid: what to change (empty when some layout is valid or none was enumerated).
  std::string first_rejection;
  /// Combinations (TP, CP, PP, V, EP, ETP, micro-batch size b) not enumerated because b·seq_len·DP
  /// does not divide the global batch, and the first of them as (b, DP).
  std::int64_t batch_skipped = 0;
  std::pair<std::int64_t, std::int64_t> first_batch_skip{0, 0};
};

/// Why `found` holds no layout, in one sentence naming the cause: the global batch that divides
/// into no b·seq_len·DP micro-batch (with an example), the first layout refused and why, or, with
/// valid layouts, that none fits the memory (with the headroom asked for). Empty when a layout was
/// found.
std::string no_layout_reason(const LayoutSearchResult& found, const LayoutSearchOptions& options);

/// The mean attended keys a query of the step time for `workload`: a document mask's mean, else 0
/// (a causal window of the sequence, (s + 1)/2). The one default of `layout` and of the cluster
/// ranking (cluster_rank_search_options()).
double layout_attended_keys(const Workload& workload);

/// "400 mean attended keys a query" or "causal, (s + 1)/2 = 2048.5 keys a query": what a step time
/// was computed with (printed by `layout` and the cluster ranking).
std::string attended_keys_text(double attended_keys, std::int64_t seq_len);

/// Every layout of the space above for `config` on `options.gpus` of `cluster`'s GPUs. budget::Error
/// when the GPU count exceeds the cluster or an option is out of range.
LayoutSearchResult search_layouts(const TimeModel& model, const ArchConfig& config, const ClusterSpec& cluster,
                                  const LayoutSearchOptions& options);

/// The search options of the cluster ranking (`--cluster C --gpus N`, Python's match(cluster=...)):
/// the best layout alone on `gpus` GPUs at the workload's sequence length and, for a document mask,
/// its mean attended keys (a causal window is the search's default, 0).
LayoutSearchOptions cluster_rank_search_options(const Workload& workload, std::int64_t gpus,
                                                std::int64_t global_batch_tokens, std::int64_t max_nodes_per_token);

/// True when `a` ranks before `b`: less time per step, then more headroom (the search breaks the
/// remaining ties by enumeration order).
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
  std::string no_layout_reason;  ///< when not found: why (no_layout_reason())
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
  /// ClusterRanking::team_baseline: "the team's layout". Empty for a searched config.
  std::string layout_choice;
  bool at_team_layout = false;  ///< priced at the team's layout (ClusterRanking::team_baseline)
  std::vector<std::string> differences;       ///< what moves the cluster ratio away from the single-GPU one
  std::vector<RatioComponent> ratio_components;  ///< for candidates that fit: the ratio split by component
};

/// A candidate ClusterRankOrder::refuse kept out of the top, and why.
struct ClusterRankRefusal {
  std::size_t input_index = 0;
  std::string reason;
};

struct ClusterRanking {
  /// The one basis of every ratio (issue 41): the baseline at its best layout searched under the same
  /// recipe as the candidates (LayoutSearchOptions::recipe: the team's with --megatron-args).
  ClusterCandidateTime baseline;
  /// With a team layout (LayoutSearchOptions::team_layout): the baseline priced at it, its
  /// ratio_to_baseline over the searched baseline's seconds per token (found false, with
  /// no_layout_reason, when the layout is not valid for the baseline or does not fit). Shown apart;
  /// no candidate is priced at it.
  std::optional<ClusterCandidateTime> team_baseline;
  std::vector<ClusterCandidateTime> candidates;  ///< fitting ones by seconds per token, then those with no layout
  std::size_t given = 0;     ///< candidates given
  std::size_t finished = 0;  ///< of them, searched to the end (all but when `partial`)
  /// Of the finished ones, those whose best layout was established; the others were proven slower
  /// than the top-th by their layouts' compute bounds (rank_by_cluster_time(..., top)).
  std::size_t searched = 0;
  /// The time limit (--max-seconds, budget/progress.hpp) stopped the ranking: `candidates` are the
  /// best of the `finished` candidates, not of all of them; `stopped_by` is the limit's message.
  bool partial = false;
  std::string stopped_by;
  /// With ClusterRankOrder::refuse: the candidates it refused, in ranking order, that rank before the
  /// last row kept (every refused one when fewer than `top` rows are kept).
  std::vector<ClusterRankRefusal> refused;
  /// With ClusterRankOrder::refuse and `partial`: input indices of rows kept without asking it (the
  /// time limit came first).
  std::vector<std::size_t> unchecked;
};

/// The order of rank_by_cluster_time(..., top, order) and the candidates it lets into the top.
struct ClusterRankOrder {
  /// By GPU-seconds per training FLOP (ClusterCandidateTime::gpu_seconds_per_flop: the order at
  /// matched work, rank_matched_on_cluster()), the found ones first, ties by seconds per token, then
  /// in the order given; false: by seconds per token, ties in the order given.
  bool per_flop = false;
  /// Why a candidate may not take a row (empty: it may): it is then skipped, the next one taking its
  /// place, and listed in ClusterRanking::refused. Called for a candidate at its best layout (found
  /// or not; figures of the cluster and its F, not the comparison with the baseline) only where it
  /// could still take a row, from the ranking's threads (concurrently: it must be thread-safe) or the
  /// caller's. Empty function: every candidate may.
  std::function<std::string(const ClusterCandidateTime& candidate, std::size_t input_index)> refuse;
};

/// The ratio decomposition of `candidate` against `baseline` (both found): one entry per component
/// name of either's best layout, in the baseline's order, then the candidate's own.
std::vector<RatioComponent> ratio_components(const ClusterCandidateTime& candidate,
                                             const ClusterCandidateTime& baseline);

/// The source of the budget::Error rank_by_cluster_time() throws when the baseline has no layout
/// (a grid keeps the other cells: match_grid_on_cluster()).
inline constexpr const char* no_baseline_layout_source = "cluster ranking: the baseline";

/// Each config (and the baseline) at its own best layout (search_layouts with `options`), ranked
/// by time per token on the cluster, with its ratio to the baseline beside the single-GPU ratio.
/// budget::Error as search_layouts; a baseline with no fitting layout is an error whose source is
/// no_baseline_layout_source and whose message says why (no_layout_reason()).
ClusterRanking rank_by_cluster_time(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options);

/// The first `top` of rank_by_cluster_time()'s ranking, the same candidates in the same order with
/// the same figures, bit for bit. With options.share_work a candidate is searched only as far as it
/// can still reach the top: in the order given (put the likely fastest first), a layout whose
/// compute bound exceeds the top-th best step time found so far is neither memory-checked nor
/// timed, and a candidate left with none is dropped unranked (docs/cluster.md, "Shared work across
/// candidates"); when the time limit (budget/progress.hpp) stops it, it returns the best of the
/// candidates finished, `partial` set, instead of throwing. Without share_work: the reference
/// ranking cut to `top` (the time limit is then an error, as in the five-argument form).
ClusterRanking rank_by_cluster_time(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options, std::size_t top);

/// The first `top` candidates in `order` that it does not refuse, bit for bit those of the full
/// ranking in that order walked with `refuse` (what share_work false computes: every candidate
/// searched in full, then asked in order). With options.share_work, the pruning above in the
/// order's key: a candidate's layouts whose compute bound exceeds the step time that would put it
/// past the top-th admitted candidate so far (for per_flop, that candidate's GPU-seconds per FLOP
/// times its own F) are neither memory-checked nor timed, and `refuse` is asked, on the ranking's
/// threads, only of candidates that could still take a row.
ClusterRanking rank_by_cluster_time(const TimeModel& model, const ArchConfig& baseline,
                                    const std::vector<ArchConfig>& candidates, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& options, std::size_t top, const ClusterRankOrder& order);

/// The fewest-GPU layout under which `config` fits one of `cluster`'s GPUs: searched over TP
/// (powers of two up to the GPUs per node), PP (divisors of the layer count, one chunk a rank; for a
/// config with a repeated loop also each wrap layout of the search, search/search_pipelines.hpp, and
/// the even split of the executed layers replicated), DP and EP (powers of
/// two; experts with ETP = 1 folded over TP·DP), recompute none < selective < full, with sequence
/// parallelism and the distributed optimizer on, micro-batch size 1, m = PP micro-batches, and the
/// given sequence length. Ties go to less recompute, then fewer stages, then less TP, then the
/// placement in_chunk < wrap < replicated (the recipe's alone where it holds one). `found`
/// is false when nothing up to `max_gpus` fits. With a `recipe` (the cluster ranking's, from
/// --megatron-args) every layout takes its template (recipe_template()) and the micro-batch size,
/// recompute and distributed optimizer it holds, instead of those defaults.
struct SmallestLayout {
  bool found = false;
  TrainingMemory memory;
  std::int64_t candidates_tried = 0;
};
SmallestLayout smallest_fitting_layout(const ArchConfig& config, const ClusterSpec& cluster, std::int64_t seq_len,
                                       std::int64_t max_gpus = 4096, const LayoutRecipe* recipe = nullptr);

}  // namespace budget
