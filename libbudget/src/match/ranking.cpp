#include "match/ranking.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "budget/accounting.hpp"

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

std::vector<Candidate> rank(std::vector<Candidate> all, int top_n) {
  const auto key = [](const Candidate& c) {
    const auto& a = c.config;
    return std::array<std::int64_t, 6>{a.num_layers, a.ffn.top_k, a.attention.num_kv_heads, a.attention.head_dim,
                                       a.attention.num_heads, a.hidden_size};
  };
  const auto sum = [](const Candidate& c) {
    return std::fabs(c.deviation.flops) + std::fabs(c.deviation.params) + std::fabs(c.deviation.kv);
  };
  const auto better_match = [&](const Candidate& a, const Candidate& b) {
    if (a.objective != b.objective) return a.objective < b.objective;
    if (a.second_objective != b.second_objective) return a.second_objective < b.second_objective;
    return sum(a) < sum(b);
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
  std::stable_sort(representatives.begin(), representatives.end(), [&](const Candidate& a, const Candidate& b) {
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
  return representatives;
}

}  // namespace match_detail

double Deviation::max_abs() const { return std::max({std::fabs(flops), std::fabs(params), std::fabs(kv)}); }

Candidate evaluate_candidate(const ArchConfig& candidate, const ArchConfig& baseline, const Budgets& base,
                             const Workload& workload, const MatchConstraints& constraints) {
  Candidate c;
  c.config = candidate;
  c.budgets = account(candidate, workload);
  c.deviation.flops = relative_deviation(c.budgets.training_flops_per_token, base.training_flops_per_token);
  c.deviation.params = relative_deviation(static_cast<double>(c.budgets.non_embedding_params_total),
                                          static_cast<double>(base.non_embedding_params_total));
  c.deviation.kv = relative_deviation(static_cast<double>(c.budgets.kv_elements_per_token),
                                      static_cast<double>(base.kv_elements_per_token));
  // The weighted |deviations| sorted descending: the objective and the second largest.
  std::array<double, 3> w{constraints.weight_flops * std::fabs(c.deviation.flops),
                          constraints.weight_params * std::fabs(c.deviation.params),
                          constraints.weight_kv * std::fabs(c.deviation.kv)};
  std::sort(w.begin(), w.end(), std::greater<>());
  c.objective = w[0];
  c.second_objective = w[1];
  c.proportion_distance = match_detail::proportion_distance(candidate, baseline, constraints.proportions);
  return c;
}

}  // namespace budget
