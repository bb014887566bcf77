#pragma once
/// \file
/// The matching solver: given a baseline and a loop, the looped configs whose per-token training
/// FLOPs, non-embedding parameters and KV cache per token match the baseline's, found exactly
/// over a constrained discrete space. Method and ranking rules: docs/matching.md.
///
/// Thread safety: match(), default_constraints(), validation_error(), validate(),
/// parse_constraints(), load_constraints(), constraint_sensitivity() and evaluate_candidate() are
/// reentrant: concurrent calls are safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "budget/accounting.hpp"
#include "budget/config.hpp"
#include "budget/kernel_stack.hpp"
#include "budget/workload.hpp"

namespace budget {

/// The integers min..max that are multiples of `multiple_of` (min == max: a fixed value, which
/// need not be a multiple).
struct VariableRange {
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::int64_t multiple_of = 1;

  static VariableRange fixed(std::int64_t value) { return {value, value, 1}; }
  bool is_fixed() const { return min == max; }
  /// The admissible values in increasing order.
  std::vector<std::int64_t> values() const;
  /// How many values (0 when empty).
  std::int64_t size() const;
};

/// Where the loop goes in a candidate of `num_layers` layers.
struct LoopSpec {
  /// Centred span of round(span_fraction·L) layers (used when `first` is 0); 0 means no loop.
  double span_fraction = 0.5;
  std::int64_t first = 0;  ///< explicit 1-based range when > 0
  std::int64_t last = 0;
  std::int64_t repeats = 2;
  /// The centred loop spans whole periods of this many layers, starting on a period boundary
  /// (a hybrid stack's pattern: gpt-oss's sliding/full pair, Qwen3-Next's 3 linear : 1 full); 1: any
  /// span; 0: the baseline's layer_pattern_period() (for_baseline(), which match() applies; a stack
  /// without a repeating pattern spans layers as with 1). An explicit first/last is kept as given.
  std::int64_t period = 0;

  /// The SMELT default: the centred middle half, twice.
  static LoopSpec smelt() { return {}; }
  /// This spec with `period` 0 replaced by the baseline's pattern period (1 when it has none).
  LoopSpec for_baseline(const ArchConfig& baseline) const;
  /// The loop for a stack of `num_layers` (nullopt for span 0 or repeats 1). budget::Error if an
  /// explicit range does not fit in the stack. With a period p > 1 the centred span is round(f·L/p)
  /// periods (at least one, at most ⌊L/p⌋) and starts on the period boundary k·p + 1 that best
  /// balances the layers before and after it (the earlier on a tie).
  std::optional<LoopConfig> resolve(std::int64_t num_layers) const;
  std::string describe() const;
  /// What is wrong with the spec, or empty: repeats in [1, 1024] (1: no loop), span_fraction
  /// finite in [0, 1] (0: no loop), an explicit range with 1 <= first <= last (first = last = 0:
  /// none). resolve() throws it as budget::Error.
  std::string validation_error() const;
  /// The two digit runs of a layer range "FIRST-LAST" or "FIRST:LAST" (ASCII whitespace allowed
  /// around each part; the digits unbounded, the caller checks their range), or nullopt. One scan,
  /// no std::regex (whose recursion overflowed the stack on a 50,000-digit range: `--loop`, Python's
  /// loop=).
  static std::optional<std::pair<std::string, std::string>> range_digits(std::string_view text);
};

/// Weights of the proportion-preference rule (docs/matching.md): the distance of a candidate
/// from the baseline's proportions is Σ weight·|ln(candidate ratio / baseline ratio)|, plus the
/// kernel head-dim term weight·ln(kernel head dim / head dim) (kernel_head_dim()).
struct ProportionWeights {
  double expert_dim_to_hidden = 1.0;  ///< expert width / hidden size
  double head_dim = 1.0;              ///< head dim
  double query_to_hidden = 1.0;       ///< query width / hidden size (only matters when freed)
  double shared_expert_dim_to_hidden = 1.0;
  /// ln(kernel_head_dim(hd) / hd): the share of FlashAttention-2's work a head dim wastes on
  /// padding (0 at the fused sizes 32, 64, 96, 128, 192, 256); the preference for those sizes.
  double kernel_head_dim = 1.0;
};

/// What a padded head dim adds to the proportion distance under a kernel target, before
/// ln(executed head dim / head dim): larger than any distance of a native shape, so that among the
/// equally matched a native shape is row #1 whenever there is one (docs/matching.md).
inline constexpr double padded_head_dim_penalty = 100.0;

/// The largest attention head dim the fused kernels take (cuDNN SDPA, FlashAttention 2/3;
/// kernel_shapes.hpp).
inline constexpr std::int64_t max_fused_head_dim = 256;

/// The head dim FlashAttention-2 runs a head dim `head_dim` at: the smallest of 32, 64, 96, 128,
/// 192, 256 at or above it (its HEADDIM_SWITCH, csrc/flash_attn/src/static_switch.h:90-111 at
/// Dao-AILab/flash-attention 0251105a; flash_api.cpp:458 rounds the same way); `head_dim` itself
/// above 256 (no fused kernel: off_kernel_path() says so).
std::int64_t kernel_head_dim(std::int64_t head_dim);

/// Which default search space default_constraints() builds (docs/matching.md, "The search space").
enum class ShapeSpace {
  /// Shapes a team would train: head dims multiples of 8 and at most 256, expert counts that keep
  /// the baseline's expert-parallel degrees, query and expert widths within
  /// default_proportion_factor of the baseline's proportions (the default).
  trainable,
  /// The whole lattice (--free-shapes; constraints key "free_shapes"): the defaults before issue 30.
  free,
  /// The trainable ranges restricted to the shapes every kernel target runs natively (issue 43;
  /// the CLI's default without --gpu): GQA head dims portable_head_dims(), GEMM widths multiples
  /// of portable_width_multiple(). With a kernel target the space is `trainable` plus the target.
  portable,
};
/// "trainable", "free", "portable".
std::string_view to_string(ShapeSpace shapes);
/// The default search space of a request, the one rule of the CLI (--free-shapes,
/// --all-trainable-shapes, --gpu) and Python (free_shapes=, all_trainable_shapes=, gpu=), issue 43
/// (docs/kernels.md): free_shapes gives ShapeSpace::free; else a kernel target, or
/// all_trainable_shapes, gives ShapeSpace::trainable; else ShapeSpace::portable. Asking for
/// all_trainable_shapes with a target is the caller's to refuse (the target decides the shapes).
ShapeSpace default_shape_space(bool free_shapes, bool all_trainable_shapes, bool kernel_target);

/// Which equally matched shape is row #1, and how the rows are ordered (--order; constraints key
/// "order"; docs/matching.md, "Objective and ranking").
enum class MatchOrder {
  /// Nearest the baseline's proportions first (the default): row #1 is the shape a team would train.
  proportions,
  /// The tightest match first (smallest largest deviation as shown), the rest by proportions.
  tightest,
};
/// "proportions", "tightest".
std::string_view to_string(MatchOrder order);

/// The proportion factor of the trainable defaults: query width / hidden (when searched) and
/// expert, dense and shared widths / hidden within 2× of the baseline's ratios either way.
inline constexpr double default_proportion_factor = 2.0;

struct MatchConstraints {
  VariableRange hidden_size;
  VariableRange num_experts;
  VariableRange expert_dim;          ///< dense_dim when the baseline is dense
  VariableRange head_dim;
  VariableRange num_heads;           ///< used only when query_equals_hidden is false
  VariableRange num_kv_heads;
  VariableRange shared_expert_dim;
  VariableRange num_layers;
  VariableRange top_k;
  /// MLA baselines: the KV latent width kv_lora_rank (the KV cache is executed layers ·
  /// (kv_lora_rank + qk_rope_head_dim)); q_lora_rank, qk_nope/qk_rope/v head dims, head_dim and
  /// the single KV head are held at the baseline's. Unused (fixed 0) for GQA baselines.
  VariableRange kv_lora_rank = VariableRange::fixed(0);
  /// num_heads·head_dim = hidden_size (the baseline convention); false frees the query width.
  bool query_equals_hidden = true;
  /// Shared experts keep the routed width: every candidate has shared_expert_dim = expert_dim
  /// (the shared_expert_dim range is then not searched). The DeepSeek families' configs
  /// (DeepSeek-MoE/V2/V3, Kimi-K2) can only express shared experts as a count of routed-width
  /// experts (n_shared_experts), so a match with another shared width cannot be written as their
  /// config.json. default_constraints() sets it when the baseline's shared experts have its
  /// routed width and no shared-expert gate; constraints file key "tie_shared_expert_dim".
  bool tie_shared_expert_dim = false;
  /// Puts the LM head's training FLOPs into the matched F, for the baseline and every candidate
  /// (matched_flops_per_token()). Off by default (F is non-embedding, as in the scaling-law
  /// literature); constraints file key "count_lm_head", CLI --count-lm-head.
  bool count_lm_head = false;

  /// Optional caps on |relative deviation| of each budget.
  std::optional<double> max_flops_deviation;
  std::optional<double> max_params_deviation;
  std::optional<double> max_kv_deviation;
  /// The fourth budget, for baselines with linear-attention or Mamba-2 layers: the recurrent state
  /// per sequence (Budgets::state_elements_per_sequence), which a loop multiplies as it does the KV
  /// cache. The search holds the mixers' sizes, so at the baseline's depth every candidate has the
  /// state the loop gives: it is reported, and held only when asked (weight_state > 0 puts it in the
  /// objective; a cap accepts or refuses the loop). Deviation 0 when the baseline keeps no state.
  /// Constraints file: "max_deviation": {"state": ...}, "weights": {"state": ...}.
  std::optional<double> max_state_deviation;
  /// Objective: minimise max(w_F·|dF|, w_N·|dN|, w_KV·|dKV|, w_S·|dS|).
  double weight_flops = 1.0;
  double weight_params = 1.0;
  double weight_kv = 1.0;
  double weight_state = 0.0;  ///< 0: the state is reported, not matched
  /// The window of "equally matched" (absolute, as a fraction; docs/matching.md, "Equally
  /// matched"): a point is equally matched when its objective is within `tolerance` of the best
  /// g* and each budget's weighted |deviation| is within `tolerance` (plus the excess x*) of the
  /// smallest any such point attains on that budget (EqualMatchBounds).
  double tolerance = 0.0025;
  ProportionWeights proportions;
  /// Query width / hidden (when the query width is searched: query_equals_hidden false) and
  /// expert (dense) and shared widths / hidden within this factor of the baseline's ratios,
  /// either way; nullopt: any ratio. The trainable defaults set default_proportion_factor;
  /// constraints key "proportion_factor" (a number >= 1).
  std::optional<double> proportion_factor;
  /// Row #1 and the row order (--order). Default: nearest the baseline's proportions.
  MatchOrder order = MatchOrder::proportions;
  /// Which defaults these constraints started from (default_constraints(); "free_shapes" in a
  /// constraints file): reported, not searched (the ranges above are what is searched).
  ShapeSpace shapes = ShapeSpace::free;
  /// The kernels the team trains on (issue 43; docs/kernels.md): the search keeps the head dims
  /// they run natively or padded (attention_fit() not refused), a padded head dim's proportion
  /// distance carries padded_head_dim_penalty (so that row #1 is native when an equally matched
  /// native shape exists), and each candidate's kernel_fit is reported. nullopt: no target.
  std::optional<KernelTarget> kernels = std::nullopt;
  /// When not empty, the only head dims searched (within the head_dim range): the portable set of
  /// the default space without a target (64, 128, 256).
  std::vector<std::int64_t> head_dim_set;
  /// Every GEMM width searched is a multiple of this: the defaults make the hidden, expert, shared
  /// and KV-latent ranges multiples of it, and the search skips query and KV widths
  /// (heads·head_dim) off it. 1: no filter.
  std::int64_t gemm_width_multiple = 1;

  /// Work limits (docs/reliability.md). A space with more than `max_structures` structures to
  /// calibrate from the op list (num_layers, top_k, num_kv_heads, head_dim, hidden_size; with a
  /// free query width, three heads values per hidden size), or more than
  /// max_structures / 10 (num_layers, top_k, num_kv_heads, head_dim) combinations, is refused
  /// before the search starts; a search that needs more than `max_work` units (a structure
  /// calibrated counts 16, a shared-width step or a closed-form solve over experts 1) stops with
  /// budget::Error (source "search space"). Memory stays bounded: ranges are never materialised.
  std::int64_t max_structures = default_max_structures;
  std::int64_t max_work = default_max_work;
  static constexpr std::int64_t default_max_structures = 2'000'000;
  static constexpr std::int64_t default_max_work = 2'000'000'000;
};

/// Why `constraints` cannot be searched, as one line naming the field (its JSON pointer in a
/// constraints file), its value and what is allowed; empty when they are valid. Checks every
/// search range (multiple_of >= 1, a non-empty range holding a multiple, at or above the least
/// value the variable allows), the weights (finite, >= 0, one positive), the caps (finite, >= 0),
/// the tolerance ([0, 1)) and the work limits (>= 1). Ranges that cannot fit the baseline (a
/// hidden size no head count divides) are found by the search, not here.
std::string validation_error(const MatchConstraints& constraints);
/// Throws budget::Error (path: the JSON pointer) with the problem validation_error() reports.
void validate(const MatchConstraints& constraints);

/// The documented defaults for `baseline` (docs/matching.md, "The search space").
/// ShapeSpace::free (the whole lattice): hidden multiple of 8 in [H/4, 2H]; head dim multiple of
/// 4 in [max(4, hd/4), 2·hd]; experts multiple of 8 in [top_k, 8E]; expert width multiple of 8 in
/// [8, 4·width]; KV heads, depth and top_k fixed to the baseline's; shared-expert width (when the
/// baseline has shared experts) multiple of 8 in [8, 4·width]; query width = hidden. MLA
/// baselines: head dim fixed, query width free (num_heads in [1, 4·heads]), kv_lora_rank multiple
/// of 16 in [max(16, r/4), 2r].
/// ShapeSpace::trainable (the default) changes these: head dim multiple of 8 in
/// [max(8, hd/4), min(256, 2·hd)]; KV heads the baseline's or half of them (an even count);
/// experts a multiple of expert_parallel_multiple(baseline); proportion_factor
/// default_proportion_factor.
MatchConstraints default_constraints(const ArchConfig& baseline, ShapeSpace shapes = ShapeSpace::trainable);
/// The defaults for the kernels of `kernels` (issue 43; docs/kernels.md): with a target (and
/// `shapes` trainable or portable), the trainable ranges above with every GEMM width a multiple
/// of width_multiple(precision) and the head dims the target does not refuse (shapes trainable);
/// without one, ShapeSpace::portable is the portable set, shapes every target runs natively
/// (portable_head_dims(), widths multiples of portable_width_multiple()), and trainable the
/// ranges above. ShapeSpace::free ignores the target's shapes (the whole lattice) but keeps it for
/// reporting each candidate's fit.
MatchConstraints default_constraints(const ArchConfig& baseline, ShapeSpace shapes,
                                     const std::optional<KernelTarget>& kernels);
/// The head dims of the portable set: 64 and 128 (native on every backend and architecture),
/// 256 (native on Hopper and on Blackwell's cuDNN >= 9.23 and FA4); MLA baselines keep their own.
std::vector<std::int64_t> portable_head_dims();
/// The GEMM width multiple of the portable set: 128 (FP8 blockwise's blocks, which every other
/// recipe's multiple divides) when the baseline's hidden size and FFN width are multiples of 128,
/// else 32 (every recipe but FP8 blockwise).
std::int64_t portable_width_multiple(const ArchConfig& baseline);

/// The expert-count multiple of the trainable defaults: the largest power of two dividing the
/// baseline's expert count E that is at most min(64, E/4) (at least 1; 0 for a dense baseline).
/// Every expert-parallel degree at which each rank holds at least 4 of the baseline's experts (a
/// power of two dividing E, up to 64: DeepSeek-V3 trains its 256 experts on EP 64) divides every
/// candidate's count too. A layout with fewer experts a rank (Megatron-LM's Mixtral example: 8
/// experts on EP 8) is asked for with MatchConstraints' "expert_parallel" key.
std::int64_t expert_parallel_multiple(const ArchConfig& baseline);

/// One line saying which search space `constraints` are (from which defaults, the rules that
/// make shapes trainable, and how to open the whole lattice): the footer and JSON say it.
std::string describe_search_space(const MatchConstraints& constraints);

/// Reads a constraints JSON file over `defaults` (docs/matching.md): unknown keys are errors.
/// "free_shapes" must agree with defaults.shapes here (the free defaults need the baseline: use
/// the overloads below); budget::Error otherwise.
MatchConstraints parse_constraints(std::string_view json_text, const std::string& source,
                                   MatchConstraints defaults);
MatchConstraints load_constraints(const std::string& path, MatchConstraints defaults);
/// The same over default_constraints(baseline, shapes), where "free_shapes": true in the file
/// (or `shapes` free) starts from the free defaults.
MatchConstraints parse_constraints(std::string_view json_text, const std::string& source, const ArchConfig& baseline,
                                   ShapeSpace shapes = ShapeSpace::trainable,
                                   const std::optional<KernelTarget>& kernels = std::nullopt);
MatchConstraints load_constraints(const std::string& path, const ArchConfig& baseline,
                                  ShapeSpace shapes = ShapeSpace::trainable,
                                  const std::optional<KernelTarget>& kernels = std::nullopt);

/// Whether `candidate`'s query width / hidden (when constraints.query_equals_hidden is false),
/// FFN width / hidden and shared-expert width / hidden are within constraints.proportion_factor
/// of `baseline`'s (true without a factor): |ln(ratio / baseline ratio)| <= ln(factor).
bool within_proportion_factor(const ArchConfig& candidate, const ArchConfig& baseline,
                              const MatchConstraints& constraints);

/// The LM head's training FLOPs per token: training_passes · lm_head_forward_flops_per_token, the
/// accounting's convention for every matmul (docs/accounting.md): with 3 passes (forward, input
/// gradient, weight gradient) 3 · 2·H·V = 6·H·V, + 3·V with an LM-head bias. Not part of
/// Budgets::training_flops_per_token.
double lm_head_training_flops_per_token(const Budgets& budgets, const Workload& workload);
/// The F that matching locks: Budgets::training_flops_per_token, plus
/// lm_head_training_flops_per_token() when `count_lm_head` (MatchConstraints::count_lm_head).
double matched_flops_per_token(const Budgets& budgets, const Workload& workload, bool count_lm_head);

/// Signed relative deviations (candidate − baseline)/baseline of the three budgets (flops: of
/// matched_flops_per_token()).
struct Deviation {
  double flops = 0;
  double params = 0;
  double kv = 0;
  double state = 0;  ///< recurrent state per sequence (0 when the baseline keeps none)
  /// The largest |deviation| of F, N and KV (the state is shown apart; weighted, it is in the objective).
  double max_abs() const;
};

/// A searched variable of a candidate at a bound of its search range (docs/matching.md, "Range
/// edges"): the optimum may lie beyond it.
struct RangeEdge {
  std::string variable;  ///< "hidden_size", "expert_dim", ...: a constraints-file key
  std::int64_t value = 0;
  bool lower = true;     ///< at the lower bound (else the upper)
  std::string bound;     ///< which bound: "range [1792, 14336] (multiples of 64)", "proportion factor 2"
  std::string widen;     ///< how to widen it: a constraints-file fragment or an option
};

struct Candidate {
  ArchConfig config;
  Budgets budgets;
  Deviation deviation;
  double objective = 0;            ///< max of the weighted |deviations|
  double second_objective = 0;     ///< second largest weighted |deviation|
  double third_objective = 0;      ///< smallest weighted |deviation|
  double proportion_distance = 0;  ///< distance from the baseline's proportions
  /// Relative deviation of the training FLOPs per token without and with the LM head's
  /// (deviation.flops is one of them: the one matched, MatchConstraints::count_lm_head).
  double flops_deviation_without_lm_head = 0;
  double flops_deviation_with_lm_head = 0;
  /// Searched variables at a bound of their range (match() fills it; range_edges()).
  std::vector<RangeEdge> range_edges;
  /// How it runs on MatchConstraints::kernels (match() fills it when a target is set).
  std::optional<KernelFit> kernel_fit;
};

/// The variables of `candidate` that `constraints` search (not fixed) and that sit on the lowest
/// or highest value their range allows (for the FFN and shared widths and a free query width: also
/// the proportion factor's bound at the candidate's hidden size), each with how to widen it.
std::vector<RangeEdge> range_edges(const ArchConfig& candidate, const ArchConfig& baseline,
                                   const MatchConstraints& constraints);

/// How the rows of a match are ordered (MatchSummary::order; docs/matching.md, "Ranking").
enum class RowOrder {
  /// Nearest the baseline's proportions first (MatchOrder::proportions): the distance, then the
  /// best matched.
  proportions,
  /// Best first by the largest |deviation| as shown (rounded to 0.01%), ties by the second and the
  /// third largest (as shown), then by the proportion distance: the order when every weight is 1.
  shown_deviation,
  /// By the weighted objective, then the second and third largest weighted |deviation|, then the
  /// proportion distance: the order when the weights are not all 1.
  weighted_objective,
  /// The equally matched by predicted time, fastest first, then the others (--rank-by time).
  predicted_time,
  /// As predicted_time, but the equally matched within the time model's ± of the fastest come
  /// first, ordered by match quality: equal in time as far as the model can tell (time_rank.hpp).
  predicted_time_within_accuracy,
};
/// "proportions", "shown_deviation", "weighted_objective", "predicted_time",
/// "predicted_time_within_accuracy" (the JSON values of summary.order).
std::string_view to_string(RowOrder order);
/// The order match() gives rows under `constraints`' order and weights: proportions, else
/// shown_deviation (unit weights) or weighted_objective.
RowOrder row_order(const MatchConstraints& constraints);
/// The tightest-first order under `constraints`' weights: shown_deviation or weighted_objective.
RowOrder tightest_order(const MatchConstraints& constraints);
/// One line for a table footer: how the rows are ordered and why.
std::string describe(RowOrder order);

/// Why a budget cannot be met under the constraints.
struct InfeasibleBudget {
  std::string budget;                   ///< "flops", "params", "kv" or "state"
  double best_attainable = 0;           ///< smallest |deviation| of that budget alone
  std::vector<std::string> binding;     ///< constraints whose relaxation alone makes it attainable
};

/// What "equally matched" meant in a search (docs/matching.md, "Equally matched"), on weighted
/// |deviations| t_b = w_b·|d_b| of the budgets b (FLOPs, parameters, KV). P is the set of points
/// with objective <= g* + tolerance; e_b the smallest t_b in P; the excess of a point
/// max_b (t_b − e_b), and x* its smallest value in P (0 when one point is the best of P on every
/// budget at once; more when the budgets pull apart, as for a dense baseline). A point is equally
/// matched when it is in P and t_b <= e_b + x* + tolerance for every budget.
struct EqualMatchBounds {
  double objective = 0;  ///< g* + tolerance
  double flops = 0, params = 0, kv = 0;  ///< e_b
  double excess = 0;     ///< x*
  double tolerance = 0;
  /// The largest t_b of an equally matched point: min(objective, e_b + x* + tolerance).
  double cap(double best) const { return best + excess + tolerance < objective ? best + excess + tolerance : objective; }
};

/// Ceres-style summary of a search.
struct MatchSummary {
  bool feasible = false;
  std::int64_t space_size = 0;     ///< points of the full discrete space (all variables)
  std::int64_t evaluated = 0;      ///< (structure, width) points solved in closed form over experts
  std::int64_t structures = 0;     ///< (depth, heads, hidden, top_k) points calibrated from the op list
  /// The weighted objective max(w_F·|dF|, w_N·|dN|, w_KV·|dKV|) minimised over the space (g*);
  /// with every weight 1 it is the smallest largest |deviation| of any point.
  double best_objective = 0;
  /// The first row's largest |deviation| (unweighted): what the row shows.
  double best_max_deviation = 0;
  /// Whether every weight is 1 (the weighted objective is then the largest |deviation|).
  bool unit_weights = true;
  /// Whether F includes the LM head's training FLOPs (MatchConstraints::count_lm_head).
  bool lm_head_in_flops = false;
  RowOrder order = RowOrder::proportions;
  /// The bounds of the equally matched set (feasible searches).
  EqualMatchBounds equal_match;
  /// The tightest of the equally matched (first by tightest_order()), whatever the row order.
  std::optional<Candidate> tightest;
  /// Which search space (describe_search_space()).
  ShapeSpace shapes = ShapeSpace::trainable;
  std::string search_space;
  /// The kernel target searched for (MatchConstraints::kernels; nullopt: the portable set or the
  /// free lattice, as search_space says).
  std::optional<KernelTarget> kernels = std::nullopt;
  double seconds = 0;              ///< wall-clock time (not in brief(): outputs stay deterministic)
  std::string message;             ///< empty when feasible; else why not
  /// Remarks on the request worth reading even when feasible (e.g. a dense baseline).
  std::vector<std::string> notes;
  std::vector<InfeasibleBudget> infeasible;
  /// Best objective attainable without the caps (when infeasible), and its candidate.
  std::optional<Candidate> uncapped_best;

  /// One line: outcome, the first row's max deviation (and the weighted objective unless every
  /// weight is 1), space searched (no time: deterministic).
  std::string brief() const;
  /// Several lines: the brief, the search counts, infeasibility reasons and notes.
  std::string full_report() const;
};

struct MatchResult {
  ArchConfig baseline;
  Budgets baseline_budgets;
  /// The baseline's LM-head training FLOPs per token (lm_head_training_flops_per_token()).
  double baseline_lm_head_training_flops_per_token = 0;
  std::vector<Candidate> candidates;  ///< best first (ranking in docs/matching.md)
  MatchSummary summary;
};

/// Finds the `top_n` best candidates. Throws budget::Error for invalid inputs (bad baseline,
/// empty ranges, a loop outside the stack); an infeasible request returns summary.feasible =
/// false with the reasons.
MatchResult match(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                  const MatchConstraints& constraints, int top_n = 5);

/// How a search of a relaxed request ended.
enum class SearchStatus {
  feasible,           ///< searched; a best objective was found
  infeasible,         ///< searched in full: no point meets the caps (proven)
  over_search_limit,  ///< not searched: the space or the search exceeds max_structures or max_work
};
/// "feasible", "infeasible", "over_search_limit" (the JSON values).
std::string_view to_string(SearchStatus status);

/// What one constraint costs: the best objective with that constraint alone relaxed.
struct ConstraintSensitivity {
  std::string constraint;        ///< as a user would write it: "head_dim multiple of 4"
  double relaxed_objective = 0;  ///< best objective with it relaxed (+inf unless status is feasible)
  SearchStatus status = SearchStatus::feasible;
  std::string limit_message;     ///< over_search_limit: which limit (the search's error message)
};

/// For every constraint that can be relaxed on its own (a fixed variable freed to [1, 4·value],
/// a multiple_of dropped, a range widened to [step, 4·max], the query width freed), the best
/// objective without it; sorted by relaxed objective, best first (a relaxation over the search
/// limits is reported as such, never as infeasible, and sorts last with the infeasible ones).
/// Tells which constraint binds the match (docs/matching.md, "Which constraint binds"). Costs one
/// branch-and-bound pass per constraint.
std::vector<ConstraintSensitivity> constraint_sensitivity(const ArchConfig& baseline, const LoopSpec& loop,
                                                          const Workload& workload,
                                                          const MatchConstraints& constraints);

/// Deviations and objective of `candidate` against `baseline_budgets` under `constraints`' weights
/// (used by match() and by tests to re-check its answers).
Candidate evaluate_candidate(const ArchConfig& candidate, const ArchConfig& baseline,
                             const Budgets& baseline_budgets, const Workload& workload,
                             const MatchConstraints& constraints);

}  // namespace budget
