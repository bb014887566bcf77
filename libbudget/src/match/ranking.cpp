#include "match/ranking.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>

#include "budget/accounting.hpp"
#include "base/enum_names.hpp"
#include "match/match_names.hpp"

namespace budget {

std::int64_t kernel_head_dim(std::int64_t head_dim) {
  for (const std::int64_t size : {32, 64, 96, 128, 192, 256}) {
    if (head_dim <= size) return size;
  }
  return head_dim;
}

namespace match_detail {
namespace {
double log_ratio(double x, double y) { return std::fabs(std::log(x / y)); }

std::int64_t ffn_width(const ArchConfig& a) { return a.ffn.is_moe() ? a.ffn.expert_dim : a.ffn.dense_dim; }

}  // namespace

namespace {
/// The head dim the target executes (hd, hd) at: hd when native, the padded size, or -1 when
/// refused (attention_fit_brief()); memoized per thread for multiples of 8 up to 1024, the head
/// dims a search visits (the table is tiny and the rule the same for every call of a search).
std::int64_t executed_symmetric_head_dim(const KernelTarget& t, std::int64_t hd) {
  const auto compute = [&] {
    const AttentionFit fit = attention_fit_brief(t, hd, hd);
    return fit.kind == KernelFitKind::refused ? std::int64_t{-1} : fit.executed_qk;
  };
  constexpr std::size_t dims = 128, backends = 6, arches = 3;
  if (hd % 8 != 0 || hd / 8 >= static_cast<std::int64_t>(dims)) return compute();
  thread_local std::array<std::int64_t, dims * backends * arches> memo{};  // 0: not computed yet
  const std::size_t i = (static_cast<std::size_t>(t.arch) * backends + static_cast<std::size_t>(t.attention)) * dims +
                        static_cast<std::size_t>(hd / 8);
  if (memo[i] == 0) memo[i] = compute();
  return memo[i];
}
}  // namespace

double kernel_head_dim_term(std::int64_t head_dim, const ArchConfig& b, const MatchConstraints& c) {
  const double w = c.proportions.kernel_head_dim;
  if (w == 0 || head_dim < 1 || b.attention.mla) return 0.0;
  const double hd = static_cast<double>(head_dim);
  if (!c.kernels) return w * std::log(static_cast<double>(kernel_head_dim(head_dim)) / hd);
  const std::int64_t executed = executed_symmetric_head_dim(*c.kernels, head_dim);
  if (executed == head_dim) return 0.0;
  if (executed < 0) return w * 2.0 * padded_head_dim_penalty;
  return w * (padded_head_dim_penalty + std::log(static_cast<double>(executed) / hd));
}

double proportion_distance_of(std::int64_t head_dim, std::int64_t query_width, std::int64_t hidden,
                              std::int64_t ffn, std::int64_t shared, const ArchConfig& b, const MatchConstraints& c) {
  const ProportionWeights& w = c.proportions;
  const double H = static_cast<double>(hidden);
  const double Hb = static_cast<double>(b.hidden_size);
  double d = w.expert_dim_to_hidden * log_ratio(static_cast<double>(ffn) / H, static_cast<double>(ffn_width(b)) / Hb) +
             w.head_dim * log_ratio(static_cast<double>(head_dim), static_cast<double>(b.attention.head_dim)) +
             kernel_head_dim_term(head_dim, b, c) +
             w.query_to_hidden * log_ratio(static_cast<double>(query_width) / H,
                                           static_cast<double>(b.attention.query_width()) / Hb);
  if (shared > 0 && b.ffn.shared_expert_dim > 0) {
    d += w.shared_expert_dim_to_hidden * log_ratio(static_cast<double>(shared) / H,
                                                   static_cast<double>(b.ffn.shared_expert_dim) / Hb);
  }
  return d;
}

double proportion_distance(const ArchConfig& a, const ArchConfig& b, const MatchConstraints& c) {
  return proportion_distance_of(a.attention.head_dim, a.attention.query_width(), a.hidden_size, ffn_width(a),
                                a.ffn.num_shared_experts > 0 ? a.ffn.shared_expert_dim : 0, b, c);
}

double structure_proportion_bound(std::int64_t head_dim, std::int64_t heads, std::int64_t hidden,
                                  const ArchConfig& b, const MatchConstraints& c) {
  const ProportionWeights& w = c.proportions;
  return w.head_dim * log_ratio(static_cast<double>(head_dim), static_cast<double>(b.attention.head_dim)) +
         kernel_head_dim_term(head_dim, b, c) +
         w.query_to_hidden * log_ratio(static_cast<double>(heads * head_dim) / static_cast<double>(hidden),
                                       static_cast<double>(b.attention.query_width()) /
                                           static_cast<double>(b.hidden_size));
}

namespace {
/// |deviation| of the three budgets in units of the 0.01% the tables show (round(10^4·|d|)),
/// largest first. (The recurrent state orders rows only when it is weighted: weighted_objective.)
std::array<long long, 3> shown_deviations(const Deviation& d) {
  std::array<long long, 3> v{std::llround(1e4 * std::fabs(d.flops)), std::llround(1e4 * std::fabs(d.params)),
                             std::llround(1e4 * std::fabs(d.kv))};
  std::sort(v.begin(), v.end(), std::greater<>());
  return v;
}

double deviation_sum(const Candidate& c) {
  return std::fabs(c.deviation.flops) + std::fabs(c.deviation.params) + std::fabs(c.deviation.kv);
}

using ShapeKey = std::array<std::int64_t, 7>;
ShapeKey shape_of(const Candidate& c) {
  const auto& a = c.config;
  return {a.num_layers,           a.ffn.top_k,  a.attention.num_kv_heads, a.attention.head_dim,
          a.attention.num_heads, a.hidden_size, a.attention.mla ? a.attention.mla->kv_lora_rank : 0};
}
}  // namespace

bool better_match(const Candidate& a, const Candidate& b) {
  if (a.objective != b.objective) return a.objective < b.objective;
  if (a.second_objective != b.second_objective) return a.second_objective < b.second_objective;
  return deviation_sum(a) < deviation_sum(b);
}

bool nearer_proportions(const Candidate& a, const Candidate& b) {
  if (a.proportion_distance != b.proportion_distance) return a.proportion_distance < b.proportion_distance;
  return better_match(a, b);
}

bool shows_before(const Candidate& a, const Candidate& b, RowOrder order) {
  if (order == RowOrder::proportions) return nearer_proportions(a, b);
  if (order == RowOrder::weighted_objective) {
    const std::array<double, 3> wa{a.objective, a.second_objective, a.third_objective};
    const std::array<double, 3> wb{b.objective, b.second_objective, b.third_objective};
    if (wa != wb) return wa < wb;
  } else {
    const auto sa = shown_deviations(a.deviation), sb = shown_deviations(b.deviation);
    if (sa != sb) return sa < sb;
  }
  return a.proportion_distance < b.proportion_distance;
}

bool first_row_before(const Candidate& a, const Candidate& b, RowOrder order) {
  if (shows_before(a, b, order)) return true;
  if (shows_before(b, a, order)) return false;
  return better_match(a, b);
}

namespace {
/// The tightest-first rows (MatchOrder::tightest): row #1 the representative first by
/// first_row_before(); the other representatives chosen by proportion distance; shown after it
/// by shows_before(); then the other points by better_match().
std::vector<Candidate> tightest_rows(std::vector<Candidate> representatives, std::vector<Candidate> others,
                                     std::size_t first, std::size_t n, RowOrder order) {
  std::rotate(representatives.begin(), representatives.begin() + static_cast<std::ptrdiff_t>(first),
              representatives.begin() + static_cast<std::ptrdiff_t>(first) + 1);
  std::stable_sort(representatives.begin() + 1, representatives.end(), nearer_proportions);
  std::stable_sort(others.begin(), others.end(), better_match);
  for (auto& c : others) {
    if (representatives.size() >= n) break;
    representatives.push_back(std::move(c));
  }
  if (representatives.size() > n) representatives.resize(n);
  // Row #1 stays first: no representative shows before it, and a point of another member of a
  // shape (kept only when fewer shapes than top_n) can at most tie its largest printed deviation
  // (its shape's representative is better matched, and row #1 shows no later than that), though
  // it may print a smaller second or third or be nearer the proportions: it must not take row #1
  // from the representatives.
  std::stable_sort(representatives.begin() + 1, representatives.end(),
                   [order](const Candidate& a, const Candidate& b) { return shows_before(a, b, order); });
  return representatives;
}
}  // namespace

Ranking rank(std::vector<Candidate> all, int top_n, const MatchConstraints& constraints) {
  Ranking out;
  if (all.empty()) return out;
  const RowOrder tight = tightest_order(constraints);
  std::stable_sort(all.begin(), all.end(), [&](const Candidate& a, const Candidate& b) {
    const auto ka = shape_of(a), kb = shape_of(b);
    if (ka != kb) return ka < kb;
    return better_match(a, b);
  });
  // Per shape: its best-matched member (first) and its member nearest the proportions.
  std::vector<std::size_t> best, nearest;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i == 0 || shape_of(all[i]) != shape_of(all[i - 1])) {
      best.push_back(i);
      nearest.push_back(i);
    } else if (nearer_proportions(all[i], all[nearest.back()])) {
      nearest.back() = i;
    }
  }
  std::size_t first = 0;
  for (std::size_t k = 1; k < best.size(); ++k) {
    if (first_row_before(all[best[k]], all[best[first]], tight)) first = k;
  }
  out.tightest = all[best[first]];
  const bool by_proportions = constraints.order == MatchOrder::proportions;
  const std::vector<std::size_t>& chosen = by_proportions ? nearest : best;
  std::vector<bool> is_representative(all.size(), false);
  for (const std::size_t i : chosen) is_representative[i] = true;
  std::vector<Candidate> representatives, others;
  for (std::size_t i = 0; i < all.size(); ++i) {
    (is_representative[i] ? representatives : others).push_back(std::move(all[i]));
  }
  const auto n = static_cast<std::size_t>(top_n);
  if (!by_proportions) {
    out.rows = tightest_rows(std::move(representatives), std::move(others), first, n, tight);
    return out;
  }
  std::stable_sort(representatives.begin(), representatives.end(), nearer_proportions);
  std::stable_sort(others.begin(), others.end(), nearer_proportions);
  for (auto& c : others) {
    if (representatives.size() >= n) break;
    representatives.push_back(std::move(c));
  }
  if (representatives.size() > n) representatives.resize(n);
  out.rows = std::move(representatives);
  return out;
}

}  // namespace match_detail

double lm_head_training_flops_per_token(const Budgets& b, const Workload& workload) {
  return static_cast<double>(workload.training_passes) * b.lm_head_forward_flops_per_token;
}

double matched_flops_per_token(const Budgets& b, const Workload& workload, bool count_lm_head) {
  return b.training_flops_per_token + (count_lm_head ? lm_head_training_flops_per_token(b, workload) : 0.0);
}


std::string_view to_string(RowOrder order) {
  return detail::name_of(match_detail::row_order_names, order, "shown_deviation");
}
std::string_view to_string(MatchOrder order) { return detail::name_of(match_detail::match_order_names, order); }
std::string_view to_string(ShapeSpace shapes) { return detail::name_of(match_detail::shape_space_names, shapes); }

ShapeSpace default_shape_space(bool free_shapes, bool all_trainable_shapes, bool kernel_target) {
  if (free_shapes) return ShapeSpace::free;
  return kernel_target || all_trainable_shapes ? ShapeSpace::trainable : ShapeSpace::portable;
}

RowOrder tightest_order(const MatchConstraints& c) {
  // The recurrent state is matched only when weighted (MatchConstraints::weight_state, default 0).
  const bool unit = c.weight_flops == 1.0 && c.weight_params == 1.0 && c.weight_kv == 1.0 && c.weight_state == 0.0;
  return unit ? RowOrder::shown_deviation : RowOrder::weighted_objective;
}

RowOrder row_order(const MatchConstraints& c) {
  return c.order == MatchOrder::proportions ? RowOrder::proportions : tightest_order(c);
}

std::string describe(RowOrder order) {
  switch (order) {
    case RowOrder::proportions:
      return "rows: one per shape among the equally matched (each budget within the tolerance of the best any "
             "equally matched shape attains), nearest the baseline's proportions first: deviations inside the "
             "tolerance do not decide (--order tightest puts the tightest match first)";
    case RowOrder::shown_deviation:
      return "rows (--order tightest): the tightest of the equally matched first, by the largest |deviation| shown, "
             "ties by the second and third largest, then the other shapes nearest the baseline's proportions, shown "
             "best first";
    case RowOrder::weighted_objective:
      return "rows (--order tightest): the tightest of the equally matched first, by the weighted objective (weights "
             "are not all 1), ties by the second and third largest weighted |deviation|, then the other shapes "
             "nearest the baseline's proportions, shown best first";
    case RowOrder::predicted_time:
      return "rows: the equally matched fastest first by predicted time, then the others in budget order";
    case RowOrder::predicted_time_within_accuracy:
      return "rows: the equally matched within the model's ± of the fastest first, by match quality (equal in "
             "time within its accuracy), then the other equally matched fastest first, then the rest in budget "
             "order";
  }
  return "";
}

double Deviation::max_abs() const {
  return std::max({std::fabs(flops), std::fabs(params), std::fabs(kv)});
}

Candidate evaluate_candidate(const ArchConfig& candidate, const ArchConfig& baseline, const Budgets& base,
                             const Workload& workload, const MatchConstraints& constraints) {
  Candidate c;
  c.config = candidate;
  c.budgets = account(candidate, workload);
  c.flops_deviation_without_lm_head =
      relative_deviation(c.budgets.training_flops_per_token, base.training_flops_per_token);
  c.flops_deviation_with_lm_head = relative_deviation(matched_flops_per_token(c.budgets, workload, true),
                                                      matched_flops_per_token(base, workload, true));
  c.deviation.flops = constraints.count_lm_head ? c.flops_deviation_with_lm_head : c.flops_deviation_without_lm_head;
  c.deviation.params = relative_deviation(static_cast<double>(c.budgets.non_embedding_params_total),
                                          static_cast<double>(base.non_embedding_params_total));
  c.deviation.kv = relative_deviation(static_cast<double>(c.budgets.kv_elements_per_token),
                                      static_cast<double>(base.kv_elements_per_token));
  // The recurrent state, a fourth budget when the baseline keeps one (linear attention, Mamba-2).
  if (base.state_elements_per_sequence > 0) {
    c.deviation.state = relative_deviation(static_cast<double>(c.budgets.state_elements_per_sequence),
                                           static_cast<double>(base.state_elements_per_sequence));
  }
  // The weighted |deviations| sorted descending: the objective and the second largest.
  std::array<double, 4> w{constraints.weight_flops * std::fabs(c.deviation.flops),
                          constraints.weight_params * std::fabs(c.deviation.params),
                          constraints.weight_kv * std::fabs(c.deviation.kv),
                          constraints.weight_state * std::fabs(c.deviation.state)};
  std::sort(w.begin(), w.end(), std::greater<>());
  c.objective = w[0];
  c.second_objective = w[1];
  c.third_objective = w[2];
  c.proportion_distance = match_detail::proportion_distance(candidate, baseline, constraints);
  return c;
}

}  // namespace budget
