#pragma once
// Option checks shared by the scaling-law subcommands (frontier, ce-gain).

#include <vector>

namespace budget::cli {

/// --C values must be finite and > 0 FLOPs, --S values in [0, 1); budget::Error naming the option.
void check_budget_and_sparsity_lists(const std::vector<double>& budgets, const std::vector<double>& sparsities);

}  // namespace budget::cli
