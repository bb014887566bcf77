#include "match/explanation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "match/bound_pass.hpp"
#include "match/candidate_search.hpp"
#include "match/search_space.hpp"
#include "base/enum_names.hpp"

namespace budget {
namespace match_detail {
namespace {

constexpr double cap_slack = 1e-12;

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : "; ") + name;
  return out;
}

/// Relaxations the work limits refused are named as not searched: they may or may not help.
std::string not_searched_note(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  return "; not searched (over the search limit; raise --max-structures or --max-work): " + joined(names);
}

void add_range_relaxations(const MatchConstraints& c, const SearchVariable& v, std::vector<Relaxation>& out) {
  VariableRange MatchConstraints::*field = v.range;
  const VariableRange r = c.*field;
  if (r.is_fixed()) {
    out.push_back({fmt::format("{} fixed at {}", v.name, r.min), [field, r](MatchConstraints& m) {
                     m.*field = {1, std::max<std::int64_t>(8, 4 * r.max), 1};
                   }});
    return;
  }
  if (r.multiple_of > 1) {
    out.push_back({fmt::format("{} multiple of {}", v.name, r.multiple_of),
                   [field](MatchConstraints& m) { (m.*field).multiple_of = 1; }});
  }
  out.push_back({fmt::format("{} in [{}, {}]", v.name, r.min, r.max), [field, r](MatchConstraints& m) {
                   (m.*field).min = std::min<std::int64_t>(r.min, std::max<std::int64_t>(1, r.multiple_of));
                   (m.*field).max = 4 * r.max;
                 }});
}

/// One capped budget alone (weight 1, the others 0, no caps): its best attainable |deviation|
/// and, when it misses the cap, the relaxations that reach it. Nullopt when the cap is met.
std::optional<InfeasibleBudget> budget_alone(const ArchConfig& baseline, const LoopSpec& loop,
                                             const Workload& workload, const MatchConstraints& c,
                                             const MatchConstraints& uncapped, const char* name, double cap,
                                             double MatchConstraints::*weight, std::string& part) {
  MatchConstraints alone = uncapped;
  alone.weight_flops = alone.weight_params = alone.weight_kv = alone.weight_state = 0;
  alone.*weight = 1;
  const RelaxedSearch attainable = search_relaxed(baseline, loop, workload, alone);
  if (attainable.objective <= cap + cap_slack) return std::nullopt;
  InfeasibleBudget reason{name, attainable.objective, {}};
  std::vector<std::string> not_searched;
  for (const Relaxation& r : relaxations(c)) {
    MatchConstraints relaxed = alone;
    r.apply(relaxed);
    const RelaxedSearch s = search_relaxed(baseline, loop, workload, relaxed);
    if (s.objective <= cap + cap_slack) reason.binding.push_back(r.name);
    if (s.status == SearchStatus::over_search_limit) not_searched.push_back(r.name);
  }
  const std::string binding = joined(reason.binding);
  const std::string closest = attainable.status == SearchStatus::over_search_limit
                                  ? std::string("it could not be searched alone: over the search limit")
                                  : fmt::format("the closest attainable is {:.3f}%", 100.0 * attainable.objective);
  part = fmt::format("the {} budget cannot be met within {:.3g}%: {}{}{}", name, 100.0 * cap, closest,
                     binding.empty() ? std::string(" (no single constraint relaxation helps)")
                                     : "; binding constraint(s): " + binding,
                     not_searched_note(not_searched));
  return reason;
}

/// Every capped budget can be met alone: which single relaxations make the request feasible.
std::string jointly_infeasible(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                               const MatchConstraints& c, const MatchSummary& summary) {
  std::vector<std::string> helping, not_searched;
  for (const Relaxation& r : relaxations(c)) {
    MatchConstraints relaxed = c;
    r.apply(relaxed);
    const SearchStatus status = search_relaxed(baseline, loop, workload, relaxed).status;
    if (status == SearchStatus::feasible) helping.push_back(r.name);
    if (status == SearchStatus::over_search_limit) not_searched.push_back(r.name);
  }
  const std::string binding = joined(helping);
  return fmt::format("each capped budget can be met alone, but not all at once{}{}{}",
                     summary.uncapped_best ? fmt::format("; without caps the best largest deviation is {:.3f}%",
                                                         100.0 * summary.uncapped_best->deviation.max_abs())
                                           : std::string(),
                     binding.empty() ? std::string() : "; relaxing any one of these makes it feasible: " + binding,
                     not_searched_note(not_searched));
}

}  // namespace

std::vector<Relaxation> relaxations(const MatchConstraints& c) {
  std::vector<Relaxation> out;
  for (const SearchVariable& v : search_variables()) {
    if (offered_as_relaxation(v, c)) add_range_relaxations(c, v, out);
  }
  if (c.query_equals_hidden) {
    out.push_back({"query width = hidden_size", [](MatchConstraints& m) { m.query_equals_hidden = false; }});
  }
  if (c.proportion_factor) {
    out.push_back({fmt::format("widths within {:g}× of the baseline's proportions", *c.proportion_factor),
                   [](MatchConstraints& m) { m.proportion_factor.reset(); }});
  }
  return out;
}

/// Relaxations widen ranges four-fold; one the work limits refuse is reported as not searched
/// (it cannot be recommended), never as infeasible.
RelaxedSearch search_relaxed(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                             const MatchConstraints& c) {
  RelaxedSearch out;
  // A widened depth range keeps only the stacks that hold an explicit loop (layers first..last):
  // LoopSpec::resolve() refuses a shallower stack, and the relaxation, not the user, made it.
  MatchConstraints held = c;
  if (loop.repeats > 1 && loop.first > 0 && !held.num_layers.is_fixed() && held.num_layers.min < loop.last) {
    held.num_layers.min = std::min(loop.last, held.num_layers.max);
  }
  try {
    const SearchSpace space(baseline, loop, workload, held);
    SearchCounters counters;
    out.objective = find_best_objective(space, counters);
    out.status = std::isfinite(out.objective) ? SearchStatus::feasible : SearchStatus::infeasible;
  } catch (const Error& e) {
    if (e.source() != "search space") throw;
    out.status = SearchStatus::over_search_limit;
    out.objective = std::numeric_limits<double>::infinity();
    out.limit_message = e.message();
  }
  return out;
}

void explain_infeasibility(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                           const MatchConstraints& c, MatchSummary& summary) {
  MatchConstraints uncapped = c;
  uncapped.max_flops_deviation.reset();
  uncapped.max_params_deviation.reset();
  uncapped.max_kv_deviation.reset();
  uncapped.max_state_deviation.reset();
  {
    const SearchSpace space(baseline, loop, workload, uncapped);
    CandidateSearch free_search = search_candidates(space, 1);
    if (!free_search.candidates.empty()) summary.uncapped_best = std::move(free_search.candidates.front());
  }
  struct Budget {
    const char* name;
    std::optional<double> cap;
    double MatchConstraints::*weight;
  };
  const Budget budgets[] = {{"flops", c.max_flops_deviation, &MatchConstraints::weight_flops},
                            {"params", c.max_params_deviation, &MatchConstraints::weight_params},
                            {"kv", c.max_kv_deviation, &MatchConstraints::weight_kv},
                            {"state", c.max_state_deviation, &MatchConstraints::weight_state}};
  std::vector<std::string> parts;
  for (const Budget& b : budgets) {
    if (!b.cap) continue;
    std::string part;
    if (auto reason = budget_alone(baseline, loop, workload, c, uncapped, b.name, *b.cap, b.weight, part)) {
      summary.infeasible.push_back(std::move(*reason));
      parts.push_back(std::move(part));
    }
  }
  if (parts.empty()) parts.push_back(jointly_infeasible(baseline, loop, workload, c, summary));
  for (const auto& p : parts) summary.message += (summary.message.empty() ? "" : "; ") + p;
}

}  // namespace match_detail

namespace {
constexpr auto search_status_names = detail::enum_names<SearchStatus::over_search_limit>({
    {SearchStatus::feasible, "feasible"}, {SearchStatus::infeasible, "infeasible"},
    {SearchStatus::over_search_limit, "over_search_limit"}});
}  // namespace

std::string_view to_string(SearchStatus status) { return detail::name_of(search_status_names, status); }

std::vector<ConstraintSensitivity> constraint_sensitivity(const ArchConfig& baseline, const LoopSpec& loop,
                                                          const Workload& workload,
                                                          const MatchConstraints& constraints) {
  validate(baseline);
  validate(workload);
  validate(constraints);
  std::vector<ConstraintSensitivity> out;
  for (const match_detail::Relaxation& r : match_detail::relaxations(constraints)) {
    MatchConstraints relaxed = constraints;
    r.apply(relaxed);
    match_detail::RelaxedSearch s = match_detail::search_relaxed(baseline, loop, workload, relaxed);
    out.push_back({r.name, s.objective, s.status, std::move(s.limit_message)});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.relaxed_objective < b.relaxed_objective;
  });
  return out;
}

}  // namespace budget
