#pragma once
// The matcher's search space (docs/matching.md, "Method"): the search variables as rows of one
// table, the KV structures (what fixes the KV cache) in enumeration order, and the points and
// configs the passes produce. Built once per search; read-only afterwards, shared by both passes.

#include <array>
#include <memory>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "budget/accounting.hpp"
#include "budget/config.hpp"
#include "budget/match.hpp"
#include "budget/workload.hpp"
#include "match/lattice.hpp"

namespace budget::match_detail {

struct CalibrationCache;  // closed_form.hpp

/// Which requests a search variable takes part in.
enum class VariableScope {
  always,
  gqa_only,         ///< relaxed only for GQA baselines (MLA holds head_dim and its single KV head)
  mla_only,         ///< MLA baselines only (the KV latent width)
  free_query_only,  ///< only when the query width is free (query_equals_hidden false)
};

/// One search variable of MatchConstraints. Validation, the space size, the constraints file and
/// the relaxations of --explain all read this table, in this order (the order of the
/// relaxations, which breaks ties among equally good ones).
struct SearchVariable {
  const char* name;                        ///< key in a constraints file and in messages
  VariableRange MatchConstraints::*range;  ///< the field
  std::int64_t min_allowed;                ///< smallest admissible value (0: may be absent)
  VariableScope scope;
  bool relaxable;                          ///< offered as a relaxation by constraint_sensitivity()
  /// The variable's field in a config; nullptr where the config has none (the KV latent of a GQA
  /// config). The expert width of a dense config is its dense_dim.
  std::int64_t* (*field)(ArchConfig& config);
};

const std::array<SearchVariable, 10>& search_variables();
/// The row named `name` (a name of the table; std::logic_error for any other).
const SearchVariable& search_variable(std::string_view name);

/// `config`'s value of `variable`: 0 where the config has no such field.
std::int64_t config_value(const SearchVariable& variable, const ArchConfig& config);
/// Writes `value` into `config`'s field of `variable`; nothing where the config has none.
void assign(const SearchVariable& variable, ArchConfig& config, std::int64_t value);

/// Whether `variable` counts in the space size of a request (`mla`: the baseline is MLA).
bool in_space(const SearchVariable& variable, const MatchConstraints& c, bool mla);
/// Whether the baseline's attention kind holds `variable` at the baseline's value: an MLA
/// baseline holds head_dim (qk_nope + qk_rope) and its single latent KV head (gqa_only), a GQA
/// baseline has no KV latent (mla_only, held at 0).
bool held_by_attention(const SearchVariable& variable, bool mla);
/// Whether `variable` is offered as a relaxation of `c` (an MLA request has kv_lora_rank.max > 0).
bool offered_as_relaxation(const SearchVariable& variable, const MatchConstraints& c);

/// σ without hidden/heads: what fixes the KV cache.
struct KvStructure {
  std::int64_t num_layers, top_k, num_kv_heads, head_dim;
  std::optional<LoopConfig> loop;
  double kv_term;            ///< w_KV·|dKV|
  std::int64_t kv_lora = 0;  ///< MLA only: the KV latent width
  double kv_dev;             ///< dKV, signed
};

/// A point of the space in compact form, with its model values (exact up to rounding).
struct Point {
  std::int64_t num_layers, top_k, num_kv_heads, head_dim, hidden, num_heads, experts, width, shared;
  double objective;  ///< largest weighted |deviation|
  double second;     ///< second largest weighted |deviation|
  double sum;        ///< |dF| + |dN| + |dKV|
  double kv_term;    ///< of its KV structure (enumeration order)
  std::int64_t kv_lora = 0;  ///< MLA only
  /// quantized() objective, second and sum: the keys of better_model_match().
  double q_objective = 0, q_second = 0, q_sum = 0;
  double distance = 0;  ///< proportion distance (set by the collecting pass in the proportions order)
};

/// `x` rounded to 40 significant bits (relative 1e-12): model values that differ only by rounding
/// compare equal, so that ties fall to the enumeration order as in the exact ranking.
double quantized(double x);

/// The ranking's "better matched" order on model values; ties (up to rounding) by the enumeration
/// order of the exhaustive search (shared width, then width, ascending), which is what the exact
/// ranking's stable sort falls back to.
bool better_model_match(const Point& a, const Point& b);

/// The enumeration order of the exhaustive search: KV structures by KV term (then depth, top_k,
/// KV heads, head dim, MLA latent), hidden, heads, shared width, width. The exact ranking's
/// stable sorts break exact ties in this order, as they did when every point was collected in it.
bool enumeration_order(const Point& a, const Point& b);

/// Work units of one structure's calibration (five account() calls) against one closed-form
/// solve: the weight of a structure in MatchConstraints::max_work.
inline constexpr std::int64_t calibration_work = 16;
/// Rounding slack of every bound comparison.
inline constexpr double slack = 1e-12;

/// What both passes count: work (against max_work), closed-form solves and structures.
struct SearchCounters {
  std::int64_t work = 0;  ///< structures·calibration_work + shared-width steps + closed-form solves
  std::int64_t evaluated = 0;
  std::int64_t structures = 0;
  /// Adds `units`; budget::Error (source "search space") once the total exceeds `max_work`.
  void count_work(std::int64_t units, std::int64_t max_work);
};

/// The indices [begin, end) of a progression's values inside a window.
struct IndexWindow {
  std::int64_t begin = 0, end = 0;
};

/// |ln(ratio / baseline_ratio)| <= ln(factor) (1e-12 of slack): the one test of the proportion
/// factor (MatchConstraints::proportion_factor), for within_proportion_factor() and the windows.
bool ratio_within_factor(double ratio, double baseline_ratio, double factor);

/// The template candidates are made from: `baseline` with the widths the search holds (the
/// first dense layers' dense_dim of an MoE stack, MLA's q_lora_rank) rounded up to
/// c.gemm_width_multiple in a trainable space (a kernel target's, or the portable set's), so that
/// no candidate keeps a width its GEMMs refuse; `baseline` itself otherwise.
ArchConfig held_widths_on_multiple(const ArchConfig& baseline, const MatchConstraints& c);

class SearchSpace {
 public:
  /// Accounts the baseline, refuses a space over the work limits (docs/reliability.md) and lists
  /// the KV structures within the KV cap, sorted by KV term. References must outlive the space.
  SearchSpace(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
              const MatchConstraints& constraints);
  ~SearchSpace();
  SearchSpace(const SearchSpace&) = delete;
  SearchSpace& operator=(const SearchSpace&) = delete;

  /// The structures' coefficients read off the op list so far, shared by every pass over this
  /// space (a search's passes each visit many of the same structures): one calibration per
  /// structure and search. Not thread-safe (a space serves one search).
  CalibrationCache& calibrations() const { return *calibrations_; }

  const ArchConfig& baseline() const { return baseline_; }
  const Workload& workload() const { return workload_; }
  const MatchConstraints& constraints() const { return c_; }
  const Budgets& baseline_budgets() const { return base_; }
  double baseline_flops() const { return F_b_; }
  double baseline_params() const { return N_b_; }
  bool dense() const { return dense_; }
  bool has_shared() const { return has_shared_; }
  /// Shared experts keep the routed width (MatchConstraints::tie_shared_expert_dim).
  bool tied_shared() const { return tied_shared_; }
  const VariableRange& experts() const { return c_.num_experts; }
  const Progression& widths() const { return widths_; }
  const Progression& shareds() const { return shareds_; }
  const Progression& hiddens() const { return hiddens_; }
  const Progression& heads() const { return heads_; }
  /// Sorted by kv_term (stable: enumeration order among equal terms).
  const std::vector<KvStructure>& kv_structures() const { return kv_structures_; }

  /// The proportion factor's windows at hidden size `hidden` (MatchConstraints::proportion_factor;
  /// every index without one): the widths() whose ratio to hidden is within the factor of the
  /// baseline's FFN width / hidden; the shareds() likewise for the shared width (every index when
  /// the shared width is tied to the routed one or absent); whether a query width is (always when
  /// the query width is not searched).
  IndexWindow width_window(std::int64_t hidden) const;
  IndexWindow shared_window(std::int64_t hidden) const;
  bool query_in_proportion(std::int64_t query_width, std::int64_t hidden) const;
  /// Whether `heads` heads of `head_dim` give GEMM widths on MatchConstraints::gemm_width_multiple
  /// (the query width; for MLA also the value width heads·v_head_dim).
  bool heads_fit_gemms(std::int64_t heads, std::int64_t head_dim) const;
  /// Whether a KV structure's attention shape is in the space: a head dim of head_dim_set (when
  /// given) that the kernel target does not refuse (trainable shapes only), and a KV width
  /// kv_heads·head_dim on the GEMM multiple (GQA).
  bool keeps_attention_shape(std::int64_t kv_heads, std::int64_t head_dim) const;

  /// Points of the full discrete space (all variables in it), saturating.
  std::int64_t space_size() const;
  /// Relative deviation of `shape`'s recurrent state from the baseline's (0 without one).
  double state_deviation(const ArchConfig& shape) const;
  /// The config of structure (kv, hidden, heads), widths and experts at the baseline's.
  ArchConfig structure_config(const KvStructure& kv, std::int64_t hidden, std::int64_t heads) const;
  /// The config of a point (named after the baseline, "-matched").
  ArchConfig make_config(const Point& p) const;

  /// The lattice the KV structures are enumerated over for `variable`: its range where the
  /// variable is in the space (in_space()), else the baseline's value alone (the latent of a GQA
  /// baseline: 0).
  Progression lattice(const SearchVariable& variable) const;
  /// The values of lattice() a KV structure takes, in order: where the baseline's attention kind
  /// holds the variable (held_by_attention()) only the baseline's value, else those >= 1.
  std::vector<std::int64_t> structure_values(const SearchVariable& variable) const;

 private:
  void check_work_limits() const;
  void build_kv_structures();

  const ArchConfig& baseline_;
  ArchConfig shape_template_;  ///< held_widths_on_multiple(baseline_, c_)
  LoopSpec loop_;
  const Workload& workload_;
  const MatchConstraints& c_;
  const SearchVariable& kv_heads_ = search_variable("num_kv_heads");
  const SearchVariable& head_dim_ = search_variable("head_dim");
  const SearchVariable& latent_ = search_variable("kv_lora_rank");
  Budgets base_;
  double F_b_ = 0, N_b_ = 0, KV_b_ = 0;
  bool dense_ = false, has_shared_ = false, tied_shared_ = false;
  Progression widths_, shareds_, hiddens_, heads_;
  std::vector<KvStructure> kv_structures_;
  std::unique_ptr<CalibrationCache> calibrations_;
};

}  // namespace budget::match_detail
