#include "did_you_mean.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/edit_distance.hpp"
#include "budget/text_escape.hpp"

namespace budget::cli {
namespace {

std::vector<const CLI::App*> subcommands_of(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) out.push_back(sub);
  return out;
}

/// "--name" for each long option of `command` (and "-x" for each short one).
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> out;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) out.push_back("--" + name);
    for (const std::string& name : option->get_snames()) out.push_back("-" + name);
  }
  return out;
}

/// The subcommand named on the line (the first word that names one), or null.
const CLI::App* command_on_line(const CLI::App& app, const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg.empty() || arg[0] == '-') continue;
    for (const CLI::App* sub : subcommands_of(app)) {
      if (sub->get_name() == arg) return sub;
    }
  }
  return nullptr;
}

/// The hint for the first option on the line that `command` (or the top level) does not have.
std::string unknown_option_hint(const CLI::App& app, const CLI::App* command, const std::vector<std::string>& args) {
  const std::vector<std::string> known = option_names(command != nullptr ? *command : app);
  for (const std::string& arg : args) {
    if (arg.size() < 2 || arg[0] != '-' || arg == "--") continue;
    const std::string flag = arg.substr(0, arg.find('='));
    if (flag.size() < 2 || (flag[1] != '-' && flag.size() > 2) || flag.find_first_of("0123456789.") == 1) continue;
    if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
    const std::string shown = printable_text(flag, 60);
    const std::string near = closest_word(flag, known);
    if (!near.empty()) return fmt::format(" ({}: did you mean {}?)", shown, near);
    // An option of other commands (or of the matcher, the top level): say which.
    std::vector<std::string> owners;
    if (command != nullptr) {
      const std::vector<std::string> top = option_names(app);
      if (std::find(top.begin(), top.end(), flag) != top.end()) owners.push_back("the matcher (budget-match --baseline)");
    }
    for (const CLI::App* sub : subcommands_of(app)) {
      const std::vector<std::string> names = option_names(*sub);
      if (std::find(names.begin(), names.end(), flag) != names.end()) owners.push_back(sub->get_name());
    }
    const std::string where = command != nullptr ? "budget-match " + command->get_name() : std::string("budget-match");
    if (!owners.empty()) {
      std::string list;
      for (std::size_t i = 0; i < owners.size(); ++i) list += (i ? ", " : "") + owners[i];
      return fmt::format(" ({} is an option of {}, not of `{}`; `{} --help` lists its options)", shown, list, where,
                         where);
    }
    return fmt::format(" ({} is not an option of `{}`; `{} --help` lists them)", shown, where, where);
  }
  return {};
}

}  // namespace

std::string closest_word(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = word.size() < 5 ? 2 : 3;  // at most 1 edit under 5 characters, else 2
  for (const std::string& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance && 2 * d < word.size()) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string command_line_hint(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty()) return {};
  const CLI::App* command = command_on_line(app, args);
  if (std::string hint = unknown_option_hint(app, command, args); !hint.empty()) return hint;
  const std::string& first = args.front();
  if (first.empty() || first[0] == '-') return {};
  if (command != nullptr && command->get_name() == first) {
    return fmt::format(" (`budget-match {} --help` lists what it takes)", first);
  }
  std::vector<std::string> names;
  for (const CLI::App* sub : subcommands_of(app)) names.push_back(sub->get_name());
  if (const std::string near = closest_word(first, names); !near.empty()) {
    return fmt::format(" (did you mean the subcommand \"{}\"?)", near);
  }
  std::error_code ec;
  const bool file = std::filesystem::is_regular_file(first, ec) ||
                    (first.size() > 5 && first.compare(first.size() - 5, 5, ".json") == 0);
  if (file) {
    const std::string shown = printable_text(first, 200);
    return fmt::format(" (a config is not a subcommand: `budget-match --baseline {}` matches it, `budget-match report "
                       "{}` reports its budgets)",
                       shown, shown);
  }
  return {};
}

std::vector<std::string> match_alias(std::vector<std::string> args) {
  if (args.empty() || args.front() != "match") return args;
  args.erase(args.begin());
  if (!args.empty() && !args.front().empty() && args.front()[0] != '-') args.insert(args.begin(), "--baseline");
  return args;
}

}  // namespace budget::cli
