#include "scaling_args.hpp"

#include <charconv>
#include <cmath>
#include <string_view>

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::cli {

void add_budget_sparsity_options(CLI::App& command, BudgetSparsityLists& lists, const std::string& budgets_help) {
  command.add_option("--C", lists.budgets_text, budgets_help)->required();
  command.add_option("--S", lists.sparsities_text, "Sparsities in [0, 1), comma-separated")->required();
}

void parse_budget_sparsity_lists(BudgetSparsityLists& lists) {
  lists.budgets = parse_number_list(lists.budgets_text, "--C");
  lists.sparsities = parse_number_list(lists.sparsities_text, "--S");
}

std::vector<double> parse_number_list(const std::vector<std::string>& items, const std::string& option) {
  std::vector<double> out;
  for (const std::string& item : items) {
    std::string_view rest = item;
    while (true) {
      const auto comma = rest.find(',');
      std::string_view token = rest.substr(0, comma);
      while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
      while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
      if (token.empty()) {
        throw Error(fmt::format("\"{}\" has an empty item; allowed: numbers separated by commas", item), option);
      }
      if (token.front() == '+') token.remove_prefix(1);
      double value = 0.0;
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || end != token.data() + token.size()) {
        throw Error(fmt::format("\"{}\" is not a number; allowed: numbers separated by commas", std::string(token)),
                    option);
      }
      out.push_back(value);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return out;
}

void warn_extrapolation(const CoefficientsFile& law, const std::string& law_path, const std::vector<double>& budgets) {
  const double lo = law.fitted_compute_min, hi = law.fitted_compute_max;
  if (!(lo > 0.0 && hi >= lo)) return;  // no range (read checked): nothing to compare with
  constexpr double factor = 100.0;
  for (double C : budgets) {
    if (C > hi * factor || C < lo / factor) {
      std::cerr << fmt::format("budget-match: warning: C = {:g} FLOPs is {:.3g}× {} the compute of the data {} was "
                               "fitted on (C = F·D in [{:g}, {:g}]): an extrapolation far outside the data\n",
                               C, C > hi ? C / hi : lo / C, C > hi ? "beyond" : "below", law_path, lo, hi);
    }
  }
}

void check_budget_and_sparsity_lists(const std::vector<double>& budgets, const std::vector<double>& sparsities) {
  for (double C : budgets) {
    if (!(C > 0.0 && C <= max_training_budget)) {
      throw Error(fmt::format("value {:g} is not allowed; allowed: budgets in FLOPs in (0, {:g}]", C, max_training_budget),
                  "--C");
    }
  }
  for (double S : sparsities) {
    if (!(S >= 0.0 && S < 1.0)) throw Error(fmt::format("value {} is not allowed; allowed: sparsities in [0, 1)", S), "--S");
  }
}

}  // namespace budget::cli
