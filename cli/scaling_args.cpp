#include "scaling_args.hpp"

#include <cmath>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::cli {

void check_budget_and_sparsity_lists(const std::vector<double>& budgets, const std::vector<double>& sparsities) {
  for (double C : budgets) {
    if (!(C > 0.0) || !std::isfinite(C)) {
      throw Error(fmt::format("value {} is not allowed; allowed: budgets in FLOPs > 0", C), "--C");
    }
  }
  for (double S : sparsities) {
    if (!(S >= 0.0 && S < 1.0)) throw Error(fmt::format("value {} is not allowed; allowed: sparsities in [0, 1)", S), "--S");
  }
}

}  // namespace budget::cli
