#include "match/ranking.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>

#include "budget/accounting.hpp"
#include "base/enum_names.hpp"

namespace budget {
namespace match_detail {
namespace {
double log_ratio(double x, double y) { return std::fabs(std::log(x / y)); }

double ffn_width(const ArchConfig& a) { return static_cast<double>(a.ffn.is_moe() ? a.ffn.expert_dim : a.ffn.dense_dim); }
}  // namespace

double proportion_distance(const ArchConfig& c, const ArchConfig& b, const ProportionWeights& w) {
  const double H = static_cast<double>(c.hidden_size);
  const double Hb = static_cast<double>(b.hidden_size);
  double d = w.expert_dim_to_hidden * log_ratio(ffn_width(c) / H, ffn_width(b) / Hb) +
             w.head_dim * log_ratio(static_cast<double>(c.attention.head_dim), static_cast<double>(b.attention.head_dim)) +
             w.query_to_hidden * log_ratio(static_cast<double>(c.attention.query_width()) / H,
                                           static_cast<double>(b.attention.query_width()) / Hb);
  if (c.ffn.num_shared_experts > 0 && b.ffn.shared_expert_dim > 0 && c.ffn.shared_expert_dim > 0) {
    d += w.shared_expert_dim_to_hidden * log_ratio(static_cast<double>(c.ffn.shared_expert_dim) / H,
                                                   static_cast<double>(b.ffn.shared_expert_dim) / Hb);
  }
  return d;
}

double structure_proportion_bound(std::int64_t head_dim, std::int64_t heads, std::int64_t hidden,
                                  const ArchConfig& b, const ProportionWeights& w) {
  return w.head_dim * log_ratio(static_cast<double>(head_dim), static_cast<double>(b.attention.head_dim)) +
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
}  // namespace

bool shows_before(const Candidate& a, const Candidate& b, RowOrder order) {
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

namespace {
double deviation_sum(const Candidate& c) {
  return std::fabs(c.deviation.flops) + std::fabs(c.deviation.params) + std::fabs(c.deviation.kv);
}
}  // namespace

bool better_match(const Candidate& a, const Candidate& b) {
  if (a.objective != b.objective) return a.objective < b.objective;
  if (a.second_objective != b.second_objective) return a.second_objective < b.second_objective;
  return deviation_sum(a) < deviation_sum(b);
}

bool first_row_before(const Candidate& a, const Candidate& b, RowOrder order) {
  if (shows_before(a, b, order)) return true;
  if (shows_before(b, a, order)) return false;
  return better_match(a, b);
}

std::vector<Candidate> rank(std::vector<Candidate> all, int top_n, RowOrder order) {
  const auto key = [](const Candidate& c) {
    const auto& a = c.config;
    return std::array<std::int64_t, 7>{a.num_layers,         a.ffn.top_k,       a.attention.num_kv_heads,
                                       a.attention.head_dim, a.attention.num_heads, a.hidden_size,
                                       a.attention.mla ? a.attention.mla->kv_lora_rank : 0};
  };
  std::stable_sort(all.begin(), all.end(), [&](const Candidate& a, const Candidate& b) {
    const auto ka = key(a), kb = key(b);
    if (ka != kb) return ka < kb;
    return better_match(a, b);
  });
  std::vector<Candidate> representatives, others;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool first_of_structure = i == 0 || key(all[i]) != key(all[i - 1]);
    (first_of_structure ? representatives : others).push_back(std::move(all[i]));
  }
  if (representatives.empty()) return representatives;
  std::size_t first = 0;
  for (std::size_t i = 1; i < representatives.size(); ++i) {
    if (first_row_before(representatives[i], representatives[first], order)) first = i;
  }
  std::rotate(representatives.begin(), representatives.begin() + static_cast<std::ptrdiff_t>(first),
              representatives.begin() + static_cast<std::ptrdiff_t>(first) + 1);
  std::stable_sort(representatives.begin() + 1, representatives.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.proportion_distance != b.proportion_distance) return a.proportion_distance < b.proportion_distance;
    return better_match(a, b);
  });
  std::stable_sort(others.begin(), others.end(), better_match);
  const auto n = static_cast<std::size_t>(top_n);
  for (auto& c : others) {
    if (representatives.size() >= n) break;
    representatives.push_back(std::move(c));
  }
  if (representatives.size() > n) representatives.resize(n);
  // Row #1 stays first: no representative shows before it, and a point of step 5 (another member
  // of a shape, kept only when fewer shapes than top_n) can at most tie its largest printed
  // deviation (its shape's representative is better matched, and row #1 shows no later than
  // that), though it may print a smaller second or third or be nearer the proportions: it must
  // not take row #1 from the representatives.
  std::stable_sort(representatives.begin() + 1, representatives.end(),
                   [order](const Candidate& a, const Candidate& b) { return shows_before(a, b, order); });
  return representatives;
}

}  // namespace match_detail

double lm_head_training_flops_per_token(const Budgets& b, const Workload& workload) {
  return static_cast<double>(workload.training_passes) * b.lm_head_forward_flops_per_token;
}

double matched_flops_per_token(const Budgets& b, const Workload& workload, bool count_lm_head) {
  return b.training_flops_per_token + (count_lm_head ? lm_head_training_flops_per_token(b, workload) : 0.0);
}

namespace {
constexpr auto row_order_names = detail::enum_names<RowOrder::predicted_time_within_accuracy>({
    {RowOrder::shown_deviation, "shown_deviation"}, {RowOrder::weighted_objective, "weighted_objective"},
    {RowOrder::predicted_time, "predicted_time"},
    {RowOrder::predicted_time_within_accuracy, "predicted_time_within_accuracy"}});
}  // namespace

std::string_view to_string(RowOrder order) { return detail::name_of(row_order_names, order, "shown_deviation"); }

RowOrder row_order(const MatchConstraints& c) {
  // The recurrent state is matched only when weighted (MatchConstraints::weight_state, default 0).
  const bool unit = c.weight_flops == 1.0 && c.weight_params == 1.0 && c.weight_kv == 1.0 && c.weight_state == 0.0;
  return unit ? RowOrder::shown_deviation : RowOrder::weighted_objective;
}

std::string describe(RowOrder order) {
  switch (order) {
    case RowOrder::shown_deviation:
      return "rows: one per shape among the equally matched, best first by the largest |deviation| shown, ties by "
             "the second and third largest, then by distance from the baseline's proportions";
    case RowOrder::weighted_objective:
      return "rows: one per shape among the equally matched, best first by the weighted objective (weights are not "
             "all 1), ties by the second and third largest weighted |deviation|, then by distance from the "
             "baseline's proportions";
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
  c.proportion_distance = match_detail::proportion_distance(candidate, baseline, constraints.proportions);
  return c;
}

}  // namespace budget
