// The matcher's public entry point (docs/matching.md): validation, then the candidate search over
// one search space, then the explanation of an infeasible request. The pipeline, lowest first:
//   lattice.hpp          integer lattices of the search variables
//   search_space         the search variables as rows of one table; KV structures; points
//   closed_form          the bilinear budget model of a structure and the exact solve over experts
//   structure_walk.hpp   the enumeration every pass shares
//   bound_pass           pass 1: branch and bound for the optimum g*
//   equal_match          the bounds of the equally matched: each budget's best e_b, the excess x*
//   collecting_pass      pass 2: the equally matched points, in bounded memory
//   ranking              exact re-accounting order and the proportion preference
//   range_edges          candidates on a bound of their search range
//   candidate_search     pass 1 + bounds + pass 2 + re-accounting + ranking
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
#include "match/loop_kinds.hpp"
#include "match/search_space.hpp"

namespace budget {

MatchResult match(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                  const MatchConstraints& constraints, int top_n) {
  const auto start = std::chrono::steady_clock::now();
  validate(baseline);
  validate(workload);
  validate(constraints);
  if (top_n < 1) throw Error(fmt::format("top {} must be at least 1", top_n), "top");
  if (constraints.count_lm_head && baseline.vocab_size == 0) {
    throw Error("count_lm_head is set but the baseline has no vocabulary (vocab_size 0), so it has no LM head to "
                "count; allowed: a baseline with vocab_size > 0, or count_lm_head false",
                "", "/count_lm_head");
  }
  MatchResult result;
  result.baseline = baseline;
  const match_detail::SearchSpace space(baseline, loop, workload, constraints);  // checks the work limits first
  const LoopSpec effective = loop.for_baseline(baseline);  // whole periods of a hybrid stack's pattern
  {
    const match_detail::Progression layers = match_detail::Progression::of(constraints.num_layers);
    for (std::int64_t i = 0; i < layers.count(); ++i) (void)effective.resolve(layers.at(i));  // fits every depth
  }
  if (baseline.has_per_layer_kinds()) {
    if (const std::string note = match_detail::loop_kinds_note(baseline, effective); !note.empty()) {
      result.summary.notes.push_back(note);
    }
  }
  result.baseline_budgets = space.baseline_budgets();
  result.baseline_lm_head_training_flops_per_token = lm_head_training_flops_per_token(result.baseline_budgets, workload);
  result.summary.space_size = space.space_size();
  result.summary.order = row_order(constraints);
  result.summary.unit_weights = tightest_order(constraints) == RowOrder::shown_deviation;
  result.summary.lm_head_in_flops = constraints.count_lm_head;
  result.summary.shapes = constraints.shapes;
  result.summary.search_space = describe_search_space(constraints);
  result.summary.kernels = constraints.kernels;

  match_detail::CandidateSearch search = match_detail::search_candidates(space, top_n);
  if (search.best_objective) {
    result.summary.best_objective = *search.best_objective;
    result.summary.equal_match = search.equal_match;
    result.candidates = std::move(search.candidates);
    result.summary.tightest = std::move(search.tightest);
    result.summary.feasible = !result.candidates.empty();
    if (result.summary.feasible) result.summary.best_max_deviation = result.candidates.front().deviation.max_abs();
    for (Candidate& c : result.candidates) {
      c.range_edges = range_edges(c.config, baseline, constraints);
      if (constraints.kernels) c.kernel_fit = kernel_fit(c.config, *constraints.kernels);
    }
    if (result.summary.tightest && constraints.kernels) {
      result.summary.tightest->kernel_fit = kernel_fit(result.summary.tightest->config, *constraints.kernels);
    }
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
  // "best max deviation" is the first row's largest |deviation|; the weighted objective (the
  // minimised max(w·|d|)) is named apart, and only when it differs from it by definition.
  const std::string weighted =
      unit_weights ? std::string() : fmt::format(", weighted objective {:.3f}%", 100.0 * best_objective);
  const std::string tightest_text =
      tightest ? fmt::format(" (the tightest equally matched: {:.3f}%)", 100.0 * tightest->deviation.max_abs())
               : std::string();
  return fmt::format("matched: #1 max deviation {:.3f}%{}{}{} over a space of {} points ({} structures, {} "
                     "closed-form solves)",
                     100.0 * best_max_deviation, tightest_text, weighted, lm_head_in_flops ? " (F with the LM head)" : "",
                     space_size, structures, evaluated);
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
