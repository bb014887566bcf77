// The matcher's public entry point (docs/matching.md): validation, then the candidate search over
// one search space, then the explanation of an infeasible request. The pipeline, lowest first:
//   lattice.hpp          integer lattices of the search variables
//   search_space         the search variables as rows of one table; KV structures; points
//   closed_form          the bilinear budget model of a structure and the exact solve over experts
//   structure_walk.hpp   the enumeration both passes share
//   bound_pass           pass 1: branch and bound for the optimum g*
//   collecting_pass      pass 2: the points within g* + tolerance, in bounded memory
//   ranking              exact re-accounting order and the proportion preference
//   candidate_search     pass 1 + pass 2 + re-accounting + ranking
//   explanation          relaxations (--explain) and infeasibility reasons, on candidate_search
//   constraints          defaults, validation, constraints files

#include "budget/match.hpp"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "match/candidate_search.hpp"
#include "match/explanation.hpp"
#include "match/lattice.hpp"
#include "match/search_space.hpp"

namespace budget {

MatchResult match(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                  const MatchConstraints& constraints, int top_n) {
  const auto start = std::chrono::steady_clock::now();
  validate(baseline);
  validate(workload);
  validate(constraints);
  if (top_n < 1) throw Error(fmt::format("top {} must be at least 1", top_n), "", "--top");
  MatchResult result;
  result.baseline = baseline;
  const match_detail::SearchSpace space(baseline, loop, workload, constraints);  // checks the work limits first
  {
    const match_detail::Progression layers = match_detail::Progression::of(constraints.num_layers);
    for (std::int64_t i = 0; i < layers.count(); ++i) (void)loop.resolve(layers.at(i));  // loop fits every depth
  }
  result.baseline_budgets = space.baseline_budgets();
  result.summary.space_size = space.space_size();

  match_detail::CandidateSearch search = match_detail::search_candidates(space, top_n);
  if (search.best_objective) {
    result.summary.best_objective = *search.best_objective;
    result.candidates = std::move(search.candidates);
    result.summary.feasible = !result.candidates.empty();
  }
  if (!result.summary.feasible) {
    match_detail::explain_infeasibility(baseline, loop, workload, constraints, result.summary);
  }
  if (!baseline.ffn.is_moe() && loop.resolve(baseline.num_layers)) {
    result.summary.notes.push_back(
        "the baseline is dense: a loop adds FLOPs per token without adding parameters, and a dense FFN cannot "
        "trade parameters for compute the way extra experts do, so FLOPs and parameters cannot both be matched");
  }
  result.summary.evaluated = search.counters.evaluated;
  result.summary.structures = search.counters.structures;
  result.summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string MatchSummary::brief() const {
  if (!feasible) return "infeasible: " + message;
  // No wall-clock time here: outputs are byte-identical across runs (docs/reliability.md).
  return fmt::format("matched: best max deviation {:.3f}% over a space of {} points ({} structures, {} closed-form "
                     "solves)",
                     100.0 * best_objective, space_size, structures, evaluated);
}

std::string MatchSummary::full_report() const {
  std::string out = brief() + "\n";
  out += fmt::format("  space: {} points; structures calibrated from the op list: {}; closed-form expert solves: {}\n",
                     space_size, structures, evaluated);
  out += fmt::format("  time: {:.3f} ms\n", 1e3 * seconds);
  for (const auto& reason : infeasible) {
    std::string binding;
    for (const auto& b : reason.binding) binding += (binding.empty() ? "" : "; ") + b;
    out += fmt::format("  {} cannot be met: best attainable {:.4f}%; binding: {}\n", reason.budget,
                       100.0 * reason.best_attainable, binding.empty() ? "none alone" : binding);
  }
  if (uncapped_best) {
    out += fmt::format("  best without caps: largest deviation {:.4f}%\n", 100.0 * uncapped_best->deviation.max_abs());
  }
  for (const auto& note : notes) out += "  note: " + note + "\n";
  return out;
}

}  // namespace budget
