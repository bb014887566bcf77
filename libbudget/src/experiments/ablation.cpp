// The paper's ablations around one baseline (budget/grid.hpp), every point in one shape family
// where the budgets allow (docs/matching.md, "Ablations in one shape family").

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "budget/grid.hpp"
#include "base/checked_math.hpp"

namespace budget {

namespace {

/// The paper's published validation losses of the 200M ablations (PAPER.md, "Ablations").
/// Keys: loop span (centred layers) → {loss at S≈85%, loss at S≈95%}.
const std::map<std::int64_t, std::pair<double, double>>& paper_span_losses() {
  static const std::map<std::int64_t, std::pair<double, double>> losses{
      {0, {1.9445, 1.8735}}, {4, {1.9275, 1.8524}}, {6, {1.9257, 1.8517}}, {8, {1.9374, 1.8544}}, {12, {1.9322, 1.8601}}};
  return losses;
}
/// Repeats over the middle half → loss (published at S≈85% only).
const std::map<std::int64_t, double>& paper_repeat_losses() {
  static const std::map<std::int64_t, double> losses{{1, 1.9445}, {2, 1.9257}, {3, 1.9385}, {4, 1.9360}};
  return losses;
}

LoopSpec centred_span(std::int64_t num_layers, std::int64_t span, std::int64_t repeats) {
  LoopSpec loop;
  loop.repeats = repeats;
  if (span == 0 || repeats <= 1) {
    loop.repeats = 1;
    return loop;
  }
  // Same centring rule as centred_loop(): first = floor((L − span)/2) + 1.
  loop.first = (num_layers - span) / 2 + 1;
  loop.last = loop.first + span - 1;
  return loop;
}

/// The points of an ablation before matching: label, depth, loop and the paper's loss.
std::vector<AblationPoint> ablation_setups(Ablation kind, std::int64_t L, std::optional<int> paper_sparsity_pct) {
  std::vector<AblationPoint> points;
  const bool s85 = paper_sparsity_pct == 85, s95 = paper_sparsity_pct == 95;
  const auto add = [&](std::string label, std::int64_t layers, LoopSpec loop) {
    AblationPoint p;
    p.label = std::move(label);
    p.num_layers = layers;
    p.loop = loop;
    points.push_back(std::move(p));
  };
  switch (kind) {
    case Ablation::span:
      for (std::int64_t span = 0; span <= L; span += 2) {
        add(fmt::format("span {}", span), L, centred_span(L, span, 2));
        const auto it = paper_span_losses().find(span);
        if (it != paper_span_losses().end() && (s85 || s95) && L == 12) {
          points.back().paper_loss = s85 ? it->second.first : it->second.second;
        }
      }
      break;
    case Ablation::repeats:
      for (std::int64_t r = 1; r <= 4; ++r) {
        add(fmt::format("repeats {}", r), L, centred_span(L, std::llround(0.5 * static_cast<double>(L)), r));
        const auto it = paper_repeat_losses().find(r);
        if (it != paper_repeat_losses().end() && s85 && L == 12) points.back().paper_loss = it->second;
      }
      break;
    case Ablation::depth:
      for (std::int64_t depth = 6; depth <= 18; depth += 2) {
        add(fmt::format("{} layers, unlooped", depth), depth, centred_span(depth, 0, 1));
        add(fmt::format("{} layers, middle half ×2", depth), depth,
            centred_span(depth, std::llround(0.5 * static_cast<double>(depth)), 2));
      }
      break;
  }
  return points;
}

/// One ablation: the baseline, the workload and each point's space (the depth fixed to its own).
struct AblationSearch {
  const ArchConfig& baseline;
  const Workload& workload;
  std::vector<MatchConstraints> spaces;  ///< parallel to the points
  /// The points the family is held over: matched (the whole space holds a match), not the reference.
  std::vector<bool> feasible;
};

/// A value of the KV heads or the head dim and the points it is held at.
struct HeldValue {
  std::int64_t value = 0;
  std::vector<bool> at;            ///< held at point i: its best in the family is within its window
  std::vector<double> objective;   ///< the best objective in the family at each point (inf: none)
  std::vector<std::string> cost;   ///< at points not holding it: what it would cost, for the notes
  int count = 0;
  double worst = 0;                ///< the largest objective over the points holding it
};

constexpr double no_match = std::numeric_limits<double>::infinity();

/// For each point in `eligible`, the best match with `fix` applied to its space, and whether it is
/// within the point's window (g* + tolerance of its whole space).
template <class Fix>
HeldValue held_value(const AblationSearch& s, const std::vector<AblationPoint>& points,
                     const std::vector<bool>& eligible, std::int64_t value, Fix fix) {
  HeldValue h;
  h.value = value;
  h.at.assign(points.size(), false);
  h.objective.assign(points.size(), no_match);
  h.cost.assign(points.size(), "");
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!eligible[i]) continue;
    MatchConstraints c = s.spaces[i];
    fix(c, value);
    const MatchResult r = match(s.baseline, points[i].loop, s.workload, c, 1);
    if (!r.summary.feasible) {
      h.cost[i] = "no match";
      continue;
    }
    h.objective[i] = r.summary.best_objective;
    // The point's window compared to an objective of a sub-space: equal when the sub-space holds g*.
    h.at[i] = h.objective[i] <= points[i].window * (1 + 1e-12);
    if (h.at[i]) {
      ++h.count;
      h.worst = std::max(h.worst, h.objective[i]);
    } else {
      const Candidate& t = r.summary.tightest ? *r.summary.tightest : r.candidates.front();
      h.cost[i] = fmt::format("KV {:+.2f}%, max deviation {:.2f}% at best, beyond the point's window {:.2f}%",
                              100 * t.deviation.kv, 100 * h.objective[i], 100 * points[i].window);
    }
  }
  return h;
}

/// The value of `range` held at the most eligible points (ties: the smaller worst objective, then
/// nearest `baseline_value`, then the smaller); nullopt when none is held at two points.
template <class Fix>
std::optional<HeldValue> most_held(const AblationSearch& s, const std::vector<AblationPoint>& points,
                                   const std::vector<bool>& eligible, const VariableRange& range,
                                   std::int64_t baseline_value, Fix fix) {
  std::optional<HeldValue> best;
  const auto distance = [&](std::int64_t v) {
    return std::fabs(std::log(static_cast<double>(v) / static_cast<double>(std::max<std::int64_t>(baseline_value, 1))));
  };
  for (const std::int64_t v : range.values()) {
    HeldValue h = held_value(s, points, eligible, v, fix);
    if (h.count < 2) continue;
    const bool better = !best || h.count > best->count ||
                        (h.count == best->count && (h.worst < best->worst ||
                                                    (h.worst == best->worst && distance(v) < distance(best->value))));
    if (better) best = std::move(h);
  }
  return best;
}

/// "span 0, span 2 and span 4": the labels of the points `which` marks.
std::string point_list(const std::vector<AblationPoint>& points, const std::vector<bool>& which) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (which[i]) names.push_back(points[i].label);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return out;
}

/// The note on a held value: at how many of the eligible points, naming the fewer of those held
/// and those not (each of the latter says why in its own note).
std::string held_note(const char* what, const HeldValue& h, const std::vector<AblationPoint>& points,
                      const std::vector<bool>& eligible) {
  std::vector<bool> missed(points.size(), false);
  int total = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    missed[i] = eligible[i] && !h.at[i];
    total += eligible[i] ? 1 : 0;
  }
  const std::string head = fmt::format("{} {} held at {} of {} points", what, h.value, h.count, total);
  if (h.count == total) return head;
  if (2 * h.count <= total) return head + ": " + point_list(points, h.at);
  return head + "; not at " + point_list(points, missed);
}

/// Each point's head dim and executed layers: what the KV cache ties together.
std::string head_dims_by_depth(const std::vector<AblationPoint>& points) {
  std::string out;
  for (const AblationPoint& p : points) {
    if (p.result.candidates.empty()) continue;
    const ArchConfig& c = p.result.candidates.front().config;
    out += fmt::format("{}{}: {}×{} at {} executed", out.empty() ? "" : ", ", p.label, c.attention.num_kv_heads,
                       c.attention.head_dim, c.executed_layers());
  }
  return out;
}

/// The most equally matched shapes of a point's family kept to hold the query heads among.
constexpr int family_pool = 4096;

/// A point's match in the family it holds (`kv`, `head_dim` when set), within its own window: every
/// equally matched shape of it (at most family_pool), best first.
MatchResult family_match(const AblationSearch& s, const AblationPoint& p, std::size_t i,
                         std::optional<std::int64_t> kv, std::optional<std::int64_t> head_dim, double objective) {
  MatchConstraints c = s.spaces[i];
  if (kv) c.num_kv_heads = VariableRange::fixed(*kv);
  if (head_dim) c.head_dim = VariableRange::fixed(*head_dim);
  // The equally matched of the family are those within the point's own window g* + tolerance: all
  // of them (up to family_pool), best first, so that the query heads can be held among them.
  c.tolerance = std::max(0.0, p.window - objective);
  (void)i;
  return match(s.baseline, p.loop, s.workload, c, family_pool);
}

void fix_kv_heads(MatchConstraints& c, std::int64_t v) { c.num_kv_heads = VariableRange::fixed(v); }

/// Each feasible point's row #1 in the family it holds (its equally matched shapes there, best first,
/// in p.result), what it holds, and why not where it does not.
void apply_family(const AblationSearch& s, std::vector<AblationPoint>& points, const AblationFamily& family,
                  const std::optional<HeldValue>& kv, const std::optional<HeldValue>& hd,
                  const std::vector<bool>& kv_points) {
  const std::optional<std::int64_t> kv_fix = kv ? std::optional<std::int64_t>(kv->value) : std::nullopt;
  for (std::size_t i = 0; i < points.size(); ++i) {
    AblationPoint& p = points[i];
    if (!s.feasible[i]) continue;  // infeasible, or the reference
    const bool holds_kv = kv && kv->at[i], holds_hd = hd && hd->at[i];
    if (holds_hd) {
      p.result = family_match(s, p, i, kv_fix, hd->value, hd->objective[i]);
    } else if (holds_kv) {
      p.result = family_match(s, p, i, kv->value, std::nullopt, kv->objective[i]);
    }
    const ArchConfig& first = p.result.candidates.front().config;
    p.holds_kv_heads = family.num_kv_heads && first.attention.num_kv_heads == *family.num_kv_heads;
    p.holds_head_dim = family.head_dim && first.attention.head_dim == *family.head_dim;
    if (kv && !kv->at[i]) p.family_note = fmt::format("{} KV heads: {}", kv->value, kv->cost[i]);
    if (hd && kv_points[i] && !hd->at[i]) {
      p.family_note += fmt::format("{}head_dim {}: {}", p.family_note.empty() ? "" : "; ", hd->value, hd->cost[i]);
    }
  }
}

/// The query heads of a point's row #1 candidates: how many of its equally matched shapes (in
/// p.result, best first) have `heads`, and the first that does.
std::ptrdiff_t first_with_heads(const AblationPoint& p, std::int64_t heads) {
  const std::vector<Candidate>& c = p.result.candidates;
  const auto it = std::find_if(c.begin(), c.end(), [&](const Candidate& x) { return x.config.attention.num_heads == heads; });
  return it == c.end() ? -1 : it - c.begin();
}

/// Why point `i` leaves the family's `heads`: none of its equally matched shapes has them, and what
/// its best match with them costs at its own head dim (the KV cache fixes it) and KV heads.
std::string heads_cost(const AblationSearch& s, const AblationPoint& p, std::size_t i, std::int64_t heads) {
  const AttentionConfig& a = p.result.candidates.front().config.attention;
  const std::int64_t width = detail::checked_mul(heads, a.head_dim, "query heads x head_dim");
  MatchConstraints c = s.spaces[i];
  c.num_kv_heads = VariableRange::fixed(a.num_kv_heads);
  c.head_dim = VariableRange::fixed(a.head_dim);
  if (c.query_equals_hidden) {
    c.hidden_size = VariableRange::fixed(width);
  } else {
    c.num_heads = VariableRange::fixed(heads);
  }
  const MatchResult r = match(s.baseline, p.loop, s.workload, c, 1);
  std::string out = fmt::format("{} query heads: none of its {} equally matched shape{} in the family ha{} them (row #1 "
                                "{}×{})",
                                heads, p.result.candidates.size(), p.result.candidates.size() == 1 ? "" : "s",
                                p.result.candidates.size() == 1 ? "s" : "ve", a.num_heads, a.head_dim);
  const std::string shape = c.query_equals_hidden ? fmt::format("hidden {}", width)
                                                  : fmt::format("query width {}", width);
  if (!r.summary.feasible) return out + fmt::format("; with them at head_dim {} ({}): no match", a.head_dim, shape);
  return out + fmt::format("; with them at head_dim {} ({}): max deviation {:.2f}% at best, beyond the point's window "
                           "{:.2f}%",
                           a.head_dim, shape, 100 * r.summary.best_objective, 100 * p.window);
}

/// The query heads held at the most of the points holding the KV heads, among each one's equally
/// matched shapes in the family (ties: nearest `baseline_heads`, then fewer); nullopt when no value
/// is held at two points. Each such point's row #1 becomes its first shape with those heads.
std::optional<std::int64_t> hold_num_heads(const AblationSearch& s, std::vector<AblationPoint>& points,
                                           std::int64_t baseline_heads) {
  std::map<std::int64_t, int> held;  // heads → points whose equally matched shapes have them
  for (const AblationPoint& p : points) {
    if (!p.holds_kv_heads || p.reference) continue;
    std::vector<std::int64_t> seen;
    for (const Candidate& c : p.result.candidates) seen.push_back(c.config.attention.num_heads);
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (const std::int64_t h : seen) ++held[h];
  }
  const auto distance = [&](std::int64_t h) {
    return std::fabs(std::log(static_cast<double>(h) / static_cast<double>(std::max<std::int64_t>(baseline_heads, 1))));
  };
  std::optional<std::int64_t> best;
  for (const auto& [h, count] : held) {  // ascending heads: a tie keeps the fewer
    if (count < 2) continue;
    if (!best || count > held[*best] || (count == held[*best] && distance(h) < distance(*best))) best = h;
  }
  if (!best) return std::nullopt;
  for (std::size_t i = 0; i < points.size(); ++i) {
    AblationPoint& p = points[i];
    if (!p.holds_kv_heads || p.reference) continue;
    const std::ptrdiff_t at = first_with_heads(p, *best);
    if (at < 0) {
      p.family_note += (p.family_note.empty() ? "" : "; ") + heads_cost(s, p, i, *best);
      continue;
    }
    std::rotate(p.result.candidates.begin(), p.result.candidates.begin() + at, p.result.candidates.begin() + at + 1);
    p.holds_num_heads = true;
  }
  return best;
}

/// The note on the held query heads: where, and what it leaves to move the hidden size.
std::string heads_note(std::int64_t heads, const std::vector<AblationPoint>& points, bool query_equals_hidden) {
  std::vector<bool> at(points.size(), false), missed(points.size(), false);
  int count = 0, total = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].holds_kv_heads || points[i].reference) continue;
    ++total;
    at[i] = points[i].holds_num_heads;
    missed[i] = !at[i];
    count += at[i] ? 1 : 0;
  }
  std::string out = fmt::format("query heads {} held at {} of {} points among each one's equally matched shapes ({})",
                                heads, count, total,
                                query_equals_hidden ? fmt::format("hidden = {} × head_dim: it changes with the head dim "
                                                                  "only", heads)
                                                    : fmt::format("query width {} × head_dim", heads));
  if (count < total) out += "; not at " + point_list(points, missed);
  return out;
}

/// Each point keeps its row #1 only, with the range edges of the point's whole space (the family's
/// fixed values are no edges of it).
void keep_row_one(const AblationSearch& s, std::vector<AblationPoint>& points) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::vector<Candidate>& c = points[i].result.candidates;
    if (c.empty()) continue;
    c.resize(1);
    c.front().range_edges = range_edges(c.front().config, s.baseline, s.spaces[i]);
  }
}

/// The family's note on the reference point (the baseline's depth unlooped, matched outside it).
void add_reference_notes(AblationFamily& family, const std::vector<AblationPoint>& points) {
  for (const AblationPoint& p : points) {
    if (!p.reference || p.result.candidates.empty()) continue;
    const AttentionConfig& a = p.result.candidates.front().config.attention;
    family.notes.push_back(fmt::format("{} is the reference, the baseline's depth unlooped: matched over its whole "
                                       "space ({}×{}, KV heads × head_dim), outside the family",
                                       p.label, a.num_kv_heads, a.head_dim));
  }
}

}  // namespace

AblationResult run_ablation(Ablation kind, const ArchConfig& baseline, const Workload& workload,
                            std::optional<int> paper_sparsity_pct, const GridConstraints& constraints) {
  AblationResult out;
  out.points = ablation_setups(kind, baseline.num_layers, paper_sparsity_pct);
  std::vector<AblationPoint>& points = out.points;
  const MatchConstraints base = grid_constraints(baseline, constraints);
  AblationSearch s{baseline, workload, {}, {}};
  for (AblationPoint& p : points) {
    MatchConstraints c = base;
    c.num_layers = VariableRange::fixed(p.num_layers);
    p.result = match(baseline, p.loop, workload, c, 1);
    s.spaces.push_back(c);
    p.reference = p.num_layers == baseline.num_layers && !p.loop.resolve(p.num_layers);
    // The reference is the baseline itself (its g* is 0): the family is held over the looped points.
    s.feasible.push_back(p.result.summary.feasible && !p.reference);
    if (p.result.summary.feasible) {
      p.best_objective_any_family = p.result.summary.best_objective;
      p.window = p.best_objective_any_family + c.tolerance;
    }
  }
  AblationFamily& family = out.family;
  family.kv_heads_fixed = base.num_kv_heads.is_fixed();
  family.head_dim_fixed = base.head_dim.is_fixed();
  // The KV heads first (the coarse lever of the KV cache), then the head dim among the points
  // holding them (the fine one, which the executed depth usually forces).
  std::optional<HeldValue> kv;
  if (family.kv_heads_fixed) {
    family.num_kv_heads = base.num_kv_heads.min;
  } else {
    kv = most_held(s, points, s.feasible, base.num_kv_heads, baseline.attention.num_kv_heads, fix_kv_heads);
    if (kv) family.num_kv_heads = kv->value;
  }
  const std::vector<bool> kv_points = kv ? kv->at : s.feasible;
  const std::optional<std::int64_t> kv_fix = kv ? std::optional<std::int64_t>(kv->value) : std::nullopt;
  std::optional<HeldValue> hd;
  if (family.head_dim_fixed) {
    family.head_dim = base.head_dim.min;
  } else {
    hd = most_held(s, points, kv_points, base.head_dim, baseline.attention.head_dim,
                   [&](MatchConstraints& c, std::int64_t v) {
                     if (kv_fix) c.num_kv_heads = VariableRange::fixed(*kv_fix);
                     c.head_dim = VariableRange::fixed(v);
                   });
    if (hd) family.head_dim = hd->value;
  }
  apply_family(s, points, family, kv, hd, kv_points);
  family.notes.push_back(family.kv_heads_fixed ? fmt::format("KV heads fixed at {} by the search space", *family.num_kv_heads)
                         : kv ? held_note("KV heads", *kv, points, s.feasible)
                              : "KV heads: no value is within the equally matched window at two points");
  if (family.head_dim_fixed) {
    family.notes.push_back(fmt::format("head_dim fixed at {} by the search space", *family.head_dim));
  } else if (hd) {
    family.notes.push_back(held_note("head_dim", *hd, points, kv_points));
  } else {
    family.notes.push_back(
        "head_dim follows the executed depth: no value is within the equally matched window at two points, since "
        "the KV cache per token (2 · executed attention layers · KV heads · head_dim) ties KV heads × head_dim to "
        "each point's executed layers (" + head_dims_by_depth(points) + ")");
  }
  family.num_heads = hold_num_heads(s, points, baseline.attention.num_heads);
  if (family.num_heads) family.notes.push_back(heads_note(*family.num_heads, points, base.query_equals_hidden));
  keep_row_one(s, points);
  add_reference_notes(family, points);
  return out;
}

}  // namespace budget
