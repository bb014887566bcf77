// Range edges (docs/matching.md, "Range edges"): the searched variables of a candidate that sit on
// a bound of their range, or of the proportion factor, with how to widen it.

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/match.hpp"
#include "match/lattice.hpp"
#include "match/search_space.hpp"

namespace budget {
namespace {

using match_detail::Progression;

std::string lattice_text(const Progression& p) {
  return p.step > 1 ? fmt::format("range [{}, {}] (multiples of {})", p.first, p.last, p.step)
                    : fmt::format("range [{}, {}]", p.first, p.last);
}

/// The widening of a range bound as a constraints-file fragment: min halved (at least one step
/// down) or max doubled.
std::string widen_range(const std::string& name, const Progression& p, bool lower, std::int64_t min_allowed) {
  if (lower) {
    const std::int64_t to = std::max<std::int64_t>(std::max<std::int64_t>(1, min_allowed),
                                                   std::min(p.first / 2, p.first - p.step));
    return fmt::format("a constraints file with {{\"{}\": {{\"min\": {}}}}}", name, to);
  }
  return fmt::format("a constraints file with {{\"{}\": {{\"max\": {}}}}}", name, std::max(2 * p.last, p.last + p.step));
}

/// A value of `p` at its first or last value.
void add_lattice_edge(std::vector<RangeEdge>& out, const std::string& name, std::int64_t value, const Progression& p,
                      std::int64_t min_allowed) {
  if (p.count() < 2) return;  // one value: nothing was searched
  for (const bool lower : {true, false}) {
    if (value != (lower ? p.first : p.last)) continue;
    // A lower edge is the range's only when the lattice's next value down is one the variable
    // allows (one KV head, a hidden size that is a multiple of head_dim·kv_heads, ...): else no
    // widening of the range reaches further.
    if (lower && p.first - p.step < std::max<std::int64_t>(1, min_allowed)) continue;
    std::string widen = widen_range(name, p, lower, min_allowed);
    if (name == "head_dim" && !lower && p.last == max_fused_head_dim) {
      widen = fmt::format("{} is the largest head dim the fused attention kernels take; --free-shapes (off the fused "
                          "kernels) or {}",
                          max_fused_head_dim, widen);
    }
    out.push_back({name, value, lower, lattice_text(p), std::move(widen)});
  }
}

/// A ratio value / hidden at the proportion factor's bound: the next lattice value that way is in
/// the range but outside the factor.
void add_factor_edge(std::vector<RangeEdge>& out, const std::string& name, std::int64_t value, const Progression& p,
                     double hidden, double baseline_ratio, double factor) {
  const auto inside = [&](std::int64_t v) {
    return match_detail::ratio_within_factor(static_cast<double>(v) / hidden, baseline_ratio, factor);
  };
  for (const bool lower : {true, false}) {
    const std::int64_t next = lower ? value - p.step : value + p.step;
    if (next < p.first || next > p.last || inside(next)) continue;
    out.push_back({name, value, lower, fmt::format("proportion factor {:g}", factor),
                   fmt::format("a constraints file with {{\"proportion_factor\": {:g}}}, or --free-shapes", 2 * factor)});
  }
}

}  // namespace

std::vector<RangeEdge> range_edges(const ArchConfig& candidate, const ArchConfig& baseline,
                                   const MatchConstraints& c) {
  std::vector<RangeEdge> out;
  const bool mla = baseline.attention.mla.has_value();
  for (const match_detail::SearchVariable& v : match_detail::search_variables()) {
    if (!match_detail::in_space(v, c, mla) || match_detail::held_by_attention(v, mla)) continue;
    const std::string name = v.name;
    if (name == "shared_expert_dim" && (baseline.ffn.num_shared_experts == 0 || c.tie_shared_expert_dim)) continue;
    const VariableRange& range = c.*v.range;
    if (range.is_fixed()) continue;
    Progression p = Progression::of(range);
    const std::int64_t value = match_detail::config_value(v, candidate);
    // With query width = hidden, the hidden sizes searched are the multiples of head_dim·kv_heads.
    if (name == "hidden_size" && c.query_equals_hidden) p = p.multiples_of(candidate.attention.kv_width());
    if (name == "num_heads") p = p.multiples_of(std::max<std::int64_t>(1, candidate.attention.num_kv_heads));
    if (name == "num_experts" && p.first < candidate.ffn.top_k) p.first = match_detail::ceil_to_multiple(candidate.ffn.top_k, p.step);
    add_lattice_edge(out, name, value, p, v.min_allowed);
    if (!c.proportion_factor) continue;
    const double H = static_cast<double>(candidate.hidden_size), Hb = static_cast<double>(baseline.hidden_size);
    const double f = *c.proportion_factor;
    if (name == "expert_dim") {
      const double w = static_cast<double>(baseline.ffn.is_moe() ? baseline.ffn.expert_dim : baseline.ffn.dense_dim);
      add_factor_edge(out, name, value, p, H, w / Hb, f);
    } else if (name == "shared_expert_dim" && baseline.ffn.shared_expert_dim > 0) {
      add_factor_edge(out, name, value, p, H, static_cast<double>(baseline.ffn.shared_expert_dim) / Hb, f);
    } else if (name == "num_heads") {
      // q / H = heads · head_dim / H: heads at the factor's bound.
      const double hd = static_cast<double>(candidate.attention.head_dim);
      add_factor_edge(out, name, value, p, H / hd, static_cast<double>(baseline.attention.query_width()) / Hb, f);
    }
  }
  return out;
}

}  // namespace budget
