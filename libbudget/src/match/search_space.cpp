#include "match/search_space.hpp"

#include "match/closed_form.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/progress.hpp"

namespace budget::match_detail {

const std::array<SearchVariable, 10>& search_variables() {
  using M = MatchConstraints;
  using S = VariableScope;
  using C = ArchConfig;
  static const std::array<SearchVariable, 10> table{{
      {"head_dim", &M::head_dim, 1, S::gqa_only, true, [](C& c) { return &c.attention.head_dim; }},
      {"num_kv_heads", &M::num_kv_heads, 1, S::gqa_only, true, [](C& c) { return &c.attention.num_kv_heads; }},
      {"hidden_size", &M::hidden_size, 1, S::always, true, [](C& c) { return &c.hidden_size; }},
      {"num_experts", &M::num_experts, 0, S::always, true, [](C& c) { return &c.ffn.num_experts; }},
      {"expert_dim", &M::expert_dim, 1, S::always, true,
       [](C& c) { return c.ffn.is_moe() ? &c.ffn.expert_dim : &c.ffn.dense_dim; }},
      {"num_heads", &M::num_heads, 1, S::free_query_only, true, [](C& c) { return &c.attention.num_heads; }},
      {"num_layers", &M::num_layers, 1, S::always, true, [](C& c) { return &c.num_layers; }},
      {"top_k", &M::top_k, 0, S::always, true, [](C& c) { return &c.ffn.top_k; }},
      {"kv_lora_rank", &M::kv_lora_rank, 0, S::mla_only, true,
       [](C& c) { return c.attention.mla ? &c.attention.mla->kv_lora_rank : nullptr; }},
      {"shared_expert_dim", &M::shared_expert_dim, 0, S::always, false,
       [](C& c) { return &c.ffn.shared_expert_dim; }},
  }};
  return table;
}

const SearchVariable& search_variable(std::string_view name) {
  for (const SearchVariable& v : search_variables()) {
    if (name == v.name) return v;
  }
  throw std::logic_error("no search variable named " + std::string(name));
}

std::int64_t config_value(const SearchVariable& variable, const ArchConfig& config) {
  // field() only locates the member; nothing is written through it here.
  const std::int64_t* value = variable.field(const_cast<ArchConfig&>(config));
  return value ? *value : 0;
}

void assign(const SearchVariable& variable, ArchConfig& config, std::int64_t value) {
  if (std::int64_t* target = variable.field(config)) *target = value;
}

bool in_space(const SearchVariable& variable, const MatchConstraints& c, bool mla) {
  switch (variable.scope) {
    case VariableScope::mla_only: return mla;
    case VariableScope::free_query_only: return !c.query_equals_hidden;
    case VariableScope::always:
    case VariableScope::gqa_only: return true;  // held (fixed) for MLA: a factor 1 by default
  }
  return true;
}

bool held_by_attention(const SearchVariable& variable, bool mla) {
  switch (variable.scope) {
    case VariableScope::gqa_only: return mla;
    case VariableScope::mla_only: return !mla;
    case VariableScope::always:
    case VariableScope::free_query_only: return false;
  }
  return false;
}

bool offered_as_relaxation(const SearchVariable& variable, const MatchConstraints& c) {
  if (!variable.relaxable) return false;
  switch (variable.scope) {
    case VariableScope::gqa_only: return c.kv_lora_rank.max == 0;
    case VariableScope::mla_only: return c.kv_lora_rank.max > 0;
    case VariableScope::free_query_only: return !c.query_equals_hidden;
    case VariableScope::always: return true;
  }
  return true;
}

double quantized(double x) {
  if (x == 0.0 || !std::isfinite(x)) return x;
  int exponent = 0;
  const double mantissa = std::frexp(x, &exponent);
  return std::ldexp(std::round(std::ldexp(mantissa, 40)), exponent - 40);
}

bool better_model_match(const Point& a, const Point& b) {
  if (a.q_objective != b.q_objective) return a.q_objective < b.q_objective;
  if (a.q_second != b.q_second) return a.q_second < b.q_second;
  if (a.q_sum != b.q_sum) return a.q_sum < b.q_sum;
  if (a.shared != b.shared) return a.shared < b.shared;
  return a.width < b.width;
}

bool enumeration_order(const Point& a, const Point& b) {
  return std::tie(a.kv_term, a.num_layers, a.top_k, a.num_kv_heads, a.head_dim, a.kv_lora, a.hidden, a.num_heads,
                  a.shared, a.width) < std::tie(b.kv_term, b.num_layers, b.top_k, b.num_kv_heads, b.head_dim,
                                                b.kv_lora, b.hidden, b.num_heads, b.shared, b.width);
}

void SearchCounters::count_work(std::int64_t units, std::int64_t max_work) {
  const std::int64_t before = work;
  work += units;
  // Progress (and the process-wide time limit, budget/progress.hpp) every 2^16 units.
  if ((before >> 16) != (work >> 16)) {
    report_progress("matcher search (work units)", static_cast<std::uint64_t>(work),
                    static_cast<std::uint64_t>(max_work));
  }
  if (work > max_work) {
    throw Error(fmt::format("the search needed more than {} work units (a structure calibrated counts {}, a "
                            "closed-form solve 1) without finishing; narrow the ranges or loosen the caps, or "
                            "raise the limit with --max-work (\"max_work\" in a constraints file)",
                            max_work, calibration_work),
                "search space");
  }
}

SearchSpace::SearchSpace(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                         const MatchConstraints& c)
    : baseline_(baseline), loop_(loop.for_baseline(baseline)), workload_(workload), c_(c) {
  base_ = account(baseline, workload);
  if (base_.kv_elements_per_token == 0) {
    throw Error("the baseline keeps no per-token KV cache (every layer has sliding-window attention), so the "
                "KV budget cannot be matched; allowed: a baseline with at least one full-attention layer",
                "", "/attention/layer_types");
  }
  F_b_ = matched_flops_per_token(base_, workload, c.count_lm_head);
  N_b_ = static_cast<double>(base_.non_embedding_params_total);
  KV_b_ = static_cast<double>(base_.kv_elements_per_token);
  dense_ = !baseline.ffn.is_moe();
  shape_template_ = held_widths_on_multiple(baseline, c);
  has_shared_ = baseline.ffn.num_shared_experts > 0;
  widths_ = Progression::of(c.expert_dim);
  // Tied shared width (MatchConstraints::tie_shared_expert_dim): the shared widths walked are the
  // routed widths, and each is paired with the equal routed width only (structure_walk.hpp).
  tied_shared_ = has_shared_ && c.tie_shared_expert_dim;
  shareds_ = tied_shared_ ? widths_ : Progression::of(c.shared_expert_dim);
  hiddens_ = Progression::of(c.hidden_size);
  heads_ = Progression::of(c.num_heads);
  check_work_limits();
  build_kv_structures();
  calibrations_ = std::make_unique<CalibrationCache>();
}

SearchSpace::~SearchSpace() = default;

bool ratio_within_factor(double ratio, double baseline_ratio, double factor) {
  return std::fabs(std::log(ratio / baseline_ratio)) <= std::log(factor) + 1e-12;
}

namespace {
/// The indices of `values` whose ratio value / hidden is within `factor` of `baseline_ratio`.
IndexWindow ratio_window(const Progression& values, double hidden, double baseline_ratio, double factor) {
  const double centre = baseline_ratio * hidden;
  IndexWindow w{values.index_not_below(std::floor(centre / factor)), values.index_above(std::ceil(centre * factor))};
  const auto inside = [&](std::int64_t i) {
    return ratio_within_factor(static_cast<double>(values.at(i)) / hidden, baseline_ratio, factor);
  };
  while (w.begin < w.end && !inside(w.begin)) ++w.begin;
  while (w.end > w.begin && !inside(w.end - 1)) --w.end;
  return w;
}
}  // namespace

IndexWindow SearchSpace::width_window(std::int64_t hidden) const {
  if (!c_.proportion_factor) return {0, widths_.count()};
  const double Hb = static_cast<double>(baseline_.hidden_size);
  const double width = static_cast<double>(dense_ ? baseline_.ffn.dense_dim : baseline_.ffn.expert_dim);
  return ratio_window(widths_, static_cast<double>(hidden), width / Hb, *c_.proportion_factor);
}

IndexWindow SearchSpace::shared_window(std::int64_t hidden) const {
  if (!c_.proportion_factor || !has_shared_ || tied_shared_ || baseline_.ffn.shared_expert_dim < 1) {
    return {0, shareds_.count()};
  }
  const double Hb = static_cast<double>(baseline_.hidden_size);
  return ratio_window(shareds_, static_cast<double>(hidden), static_cast<double>(baseline_.ffn.shared_expert_dim) / Hb,
                      *c_.proportion_factor);
}

bool SearchSpace::query_in_proportion(std::int64_t query_width, std::int64_t hidden) const {
  if (!c_.proportion_factor || c_.query_equals_hidden) return true;
  return ratio_within_factor(static_cast<double>(query_width) / static_cast<double>(hidden),
                             static_cast<double>(baseline_.attention.query_width()) /
                                 static_cast<double>(baseline_.hidden_size),
                             *c_.proportion_factor);
}

std::int64_t SearchSpace::space_size() const {
  const bool mla = baseline_.attention.mla.has_value();
  double s = 1.0;  // exact for spaces below 2^53 points, whatever the order of the factors
  for (const SearchVariable& v : search_variables()) {
    if (in_space(v, c_, mla)) s *= static_cast<double>((c_.*v.range).size());
  }
  return s > 9e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(s);
}

double SearchSpace::state_deviation(const ArchConfig& shape) const {
  const double base = static_cast<double>(base_.state_elements_per_sequence);
  if (base <= 0.0) return 0.0;
  return static_cast<double>(shape.state_elements_per_sequence()) / base - 1.0;
}

ArchConfig SearchSpace::structure_config(const KvStructure& kv, std::int64_t hidden, std::int64_t heads) const {
  ArchConfig cfg = shape_template_;
  cfg.num_layers = kv.num_layers;
  cfg.loop = kv.loop;
  cfg.hidden_size = hidden;
  cfg.attention.num_heads = heads;
  cfg.attention.head_dim = kv.head_dim;
  cfg.attention.num_kv_heads = kv.num_kv_heads;
  assign(latent_, cfg, kv.kv_lora);
  cfg.ffn.top_k = dense_ ? 0 : kv.top_k;
  cfg.ffn.first_dense_layers = std::min(cfg.ffn.first_dense_layers, cfg.num_layers);
  return cfg;
}

ArchConfig SearchSpace::make_config(const Point& p) const {
  ArchConfig cfg = shape_template_;
  cfg.name = baseline_.name.empty() ? "matched" : baseline_.name + "-matched";
  cfg.num_layers = p.num_layers;
  cfg.loop = loop_.resolve(p.num_layers);
  cfg.hidden_size = p.hidden;
  cfg.attention.head_dim = p.head_dim;
  cfg.attention.num_heads = p.num_heads;
  cfg.attention.num_kv_heads = p.num_kv_heads;
  assign(latent_, cfg, p.kv_lora);
  cfg.ffn.top_k = dense_ ? 0 : p.top_k;
  if (dense_) {
    cfg.ffn.dense_dim = p.width;
  } else {
    cfg.ffn.num_experts = p.experts;
    cfg.ffn.expert_dim = p.width;
  }
  if (has_shared_) cfg.ffn.shared_expert_dim = p.shared;
  cfg.ffn.first_dense_layers = std::min(cfg.ffn.first_dense_layers, cfg.num_layers);
  // The baseline's expert groups (DeepSeek's n_group) stay where the candidate's experts still
  // split into them; otherwise the candidate routes ungrouped, and its notes say so.
  if (cfg.settings.router_groups && !cfg.settings.router_groups->fits(cfg.ffn)) {
    cfg.notes.push_back(fmt::format("the baseline's {} expert groups do not split {} experts with top_k {}: "
                                    "routing ungrouped", cfg.settings.router_groups->groups, cfg.ffn.num_experts,
                                    cfg.ffn.top_k));
    cfg.settings.router_groups.reset();
  }
  return cfg;
}

Progression SearchSpace::lattice(const SearchVariable& variable) const {
  if (in_space(variable, c_, baseline_.attention.mla.has_value())) return Progression::of(c_.*variable.range);
  const std::int64_t held = config_value(variable, baseline_);
  return {held, held, 1};
}

std::vector<std::int64_t> SearchSpace::structure_values(const SearchVariable& variable) const {
  const Progression values = lattice(variable);
  const bool held = held_by_attention(variable, baseline_.attention.mla.has_value());
  const std::int64_t baseline_value = config_value(variable, baseline_);
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < values.count(); ++i) {
    const std::int64_t value = values.at(i);
    if (held ? value == baseline_value : value >= 1) out.push_back(value);
  }
  return out;
}

/// Refuses, before any work, a space over the limits (docs/reliability.md): the (depth, top_k,
/// KV heads, head dim, latent) combinations held in memory, and the structures the search may visit.
void SearchSpace::check_work_limits() const {
  const Progression layers = Progression::of(c_.num_layers), top_k = Progression::of(c_.top_k),
                    kv_heads = lattice(kv_heads_), head_dims = lattice(head_dim_);
  const std::int64_t kv_limit = std::max<std::int64_t>(1, c_.max_structures / 10);
  const std::int64_t latents = lattice(latent_).count();
  const std::int64_t kv_count =
      saturating_product({layers.count(), top_k.count(), kv_heads.count(), head_dims.count(), latents});
  if (kv_count > kv_limit) {
    throw Error(fmt::format("{} (num_layers, top_k, num_kv_heads, head_dim, kv_lora_rank) "
                            "combinations ({} × {} × {} × {} × {}), more than the limit of {} (max_structures / 10); narrow these "
                            "ranges, or raise the limit with --max-structures (\"max_structures\" in a constraints "
                            "file)",
                            kv_count, layers.count(), top_k.count(), kv_heads.count(), head_dims.count(), latents,
                            kv_limit),
                "search space");
  }
  std::int64_t structures = 0;
  for (std::int64_t c = 0; c < kv_heads.count(); ++c) {
    const std::int64_t kvh = kv_heads.at(c);
    if (kvh < 1) continue;
    std::int64_t per_kv = 0;
    if (c_.query_equals_hidden) {
      for (std::int64_t d = 0; d < head_dims.count(); ++d) {
        const std::int64_t hd = head_dims.at(d);
        if (hd >= 1) per_kv = saturating_add(per_kv, hiddens_.multiples_of(hd * kvh).count());
      }
    } else {
      // Free heads: three calibrations per (KV structure, hidden) (heads_model()).
      per_kv = saturating_product(
          {head_dims.count(), hiddens_.count(), std::min<std::int64_t>(3, heads_.multiples_of(kvh).count())});
    }
    structures = saturating_add(structures, saturating_product({per_kv, layers.count(), top_k.count(), latents}));
    if (structures > c_.max_structures) break;
  }
  if (structures > c_.max_structures) {
    const bool saturated = structures == std::numeric_limits<std::int64_t>::max();
    throw Error(fmt::format("{}{} structures to calibrate (num_layers, top_k, num_kv_heads, "
                            "head_dim, hidden_size; with a free query width, three heads values each), more than "
                            "the limit of {}; narrow the ranges, or raise the limit with --max-structures "
                            "(\"max_structures\" in a constraints file)",
                            saturated ? "more than " : "",
                            saturated ? std::int64_t{9'200'000'000'000'000'000} : structures, c_.max_structures),
                "search space");
  }
}

void SearchSpace::build_kv_structures() {
  const Progression layers = Progression::of(c_.num_layers), top_k = Progression::of(c_.top_k);
  const std::vector<std::int64_t> kv_heads = structure_values(kv_heads_), head_dims = structure_values(head_dim_),
                                  latents = structure_values(latent_);
  for (std::int64_t a = 0; a < layers.count(); ++a) {
    const std::int64_t L = layers.at(a);
    const std::optional<LoopConfig> loop = loop_.resolve(L);  // throws if the loop does not fit L
    // Per-layer kinds (attention kinds, mixers, FFNs) are tied to the baseline's depth.
    if (baseline_.has_per_layer_kinds() && L != baseline_.num_layers) continue;
    for (std::int64_t b = 0; b < top_k.count(); ++b) {
      const std::int64_t k = top_k.at(b);
      if (!dense_ && (k < 1)) continue;
      for (const std::int64_t kvh : kv_heads) {
        for (const std::int64_t hd : head_dims) {
          if (!keeps_attention_shape(kvh, hd)) continue;
          for (const std::int64_t latent : latents) {
            // KV elements per token from the config (ArchConfig::kv_elements_per_token()).
            // Cross-checked against account() for every candidate reported.
            ArchConfig shape = shape_template_;
            shape.num_layers = L;
            shape.loop = loop;
            assign(kv_heads_, shape, kvh);
            assign(head_dim_, shape, hd);
            assign(latent_, shape, latent);
            const double kv = static_cast<double>(shape.kv_elements_per_token());
            if (c_.max_kv_deviation && std::fabs(kv / KV_b_ - 1.0) > *c_.max_kv_deviation + slack) continue;
            // The recurrent state, like the KV cache, is fixed by the structure: its weighted
            // deviation joins the KV term (the larger of the two bounds the objective).
            const double state_dev = state_deviation(shape);
            if (c_.max_state_deviation && std::fabs(state_dev) > *c_.max_state_deviation + slack) continue;
            const double term = std::max(c_.weight_kv * std::fabs(kv / KV_b_ - 1.0), c_.weight_state * std::fabs(state_dev));
            kv_structures_.push_back({L, k, kvh, hd, loop, term, latent, kv / KV_b_ - 1.0});
          }
        }
      }
    }
  }
  std::stable_sort(kv_structures_.begin(), kv_structures_.end(),
                   [](const KvStructure& a, const KvStructure& b) { return a.kv_term < b.kv_term; });
}

ArchConfig held_widths_on_multiple(const ArchConfig& baseline, const MatchConstraints& c) {
  ArchConfig out = baseline;
  const std::int64_t m = c.gemm_width_multiple;
  if (m <= 1 || c.shapes == ShapeSpace::free) return out;
  const auto up = [m](std::int64_t& width) {
    if (width > 0 && width % m != 0) width = ceil_to_multiple(width, m);
  };
  if (out.ffn.is_moe() && out.ffn.first_dense_layers > 0) up(out.ffn.dense_dim);
  if (out.attention.mla) up(out.attention.mla->q_lora_rank);
  return out;
}

bool SearchSpace::heads_fit_gemms(std::int64_t heads, std::int64_t head_dim) const {
  const std::int64_t m = c_.gemm_width_multiple;
  if (m <= 1) return true;
  if ((heads * head_dim) % m != 0) return false;
  return !baseline_.attention.mla || (heads * baseline_.attention.mla->v_head_dim) % m == 0;
}

bool SearchSpace::keeps_attention_shape(std::int64_t kv_heads, std::int64_t head_dim) const {
  if (baseline_.attention.mla) return true;  // MLA holds its head dims; the latent range carries the multiple
  if (!c_.head_dim_set.empty() &&
      std::find(c_.head_dim_set.begin(), c_.head_dim_set.end(), head_dim) == c_.head_dim_set.end()) {
    return false;
  }
  if (c_.gemm_width_multiple > 1 && (kv_heads * head_dim) % c_.gemm_width_multiple != 0) return false;
  if (!c_.kernels || c_.shapes == ShapeSpace::free) return true;
  return attention_fit_brief(*c_.kernels, head_dim, head_dim).kind != KernelFitKind::refused;
}

}  // namespace budget::match_detail

namespace budget {

bool within_proportion_factor(const ArchConfig& candidate, const ArchConfig& baseline, const MatchConstraints& c) {
  if (!c.proportion_factor) return true;
  const double f = *c.proportion_factor;
  const double H = static_cast<double>(candidate.hidden_size), Hb = static_cast<double>(baseline.hidden_size);
  using match_detail::ratio_within_factor;
  if (!c.query_equals_hidden &&
      !ratio_within_factor(static_cast<double>(candidate.attention.query_width()) / H,
                           static_cast<double>(baseline.attention.query_width()) / Hb, f)) {
    return false;
  }
  const auto width = [](const ArchConfig& a) {
    return static_cast<double>(a.ffn.is_moe() ? a.ffn.expert_dim : a.ffn.dense_dim);
  };
  if (!ratio_within_factor(width(candidate) / H, width(baseline) / Hb, f)) return false;
  const bool tied = baseline.ffn.num_shared_experts > 0 && c.tie_shared_expert_dim;
  if (baseline.ffn.num_shared_experts > 0 && !tied && baseline.ffn.shared_expert_dim > 0) {
    return ratio_within_factor(static_cast<double>(candidate.ffn.shared_expert_dim) / H,
                               static_cast<double>(baseline.ffn.shared_expert_dim) / Hb, f);
  }
  return true;
}

}  // namespace budget
