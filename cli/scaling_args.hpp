#pragma once
// Option checks shared by the scaling-law subcommands (frontier, ce-gain).

#include <string>
#include <vector>

#include "budget/scaling_law.hpp"
#include "cli11_fwd.hpp"

namespace budget::cli {

/// The largest training budget accepted by --C (documented in docs/reliability.md): about 10^4 ×
/// the largest runs of 2025; beyond it the frontier's F* and D* are extrapolations by many decades.
inline constexpr double max_training_budget = 1e30;

/// A comma-separated list of numbers, given once or several times ("--C 1e21,1e22 --C 1e23"):
/// every item must be a number (an empty item, as in "1e21,,1e22", is an error naming `option`).
std::vector<double> parse_number_list(const std::vector<std::string>& items, const std::string& option);

/// Warns on stderr for every budget more than 100× outside the compute range C = F·D of the data a
/// law was fitted on ("compute_range" of its fit_summary; nothing when absent): the frontier and
/// gains there are extrapolations.
void warn_extrapolation(const CoefficientsFile& law, const std::string& law_path, const std::vector<double>& budgets);

/// --C values must be finite and in (0, max_training_budget] FLOPs, --S values in [0, 1); budget::Error naming the option.
void check_budget_and_sparsity_lists(const std::vector<double>& budgets, const std::vector<double>& sparsities);

/// --C and --S of the scaling-law commands: as given (comma-separated lists, each option given once
/// or more) and as numbers (parse_budget_sparsity_lists()).
struct BudgetSparsityLists {
  std::vector<std::string> budgets_text;
  std::vector<std::string> sparsities_text;
  std::vector<double> budgets;
  std::vector<double> sparsities;
};

/// Declares --C (with `budgets_help`) and --S on `command`, both required, into `lists`' texts.
void add_budget_sparsity_options(CLI::App& command, BudgetSparsityLists& lists, const std::string& budgets_help);

/// parse_number_list() of --C into `lists.budgets` and of --S into `lists.sparsities`.
void parse_budget_sparsity_lists(BudgetSparsityLists& lists);

}  // namespace budget::cli
