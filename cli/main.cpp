// budget-match: plans compute-matched architectures for looped MoE transformers.
// Error model: the library throws budget::Error; this is the one place that catches it, prints
// one line ("budget-match: error: <what>") on stderr and returns a documented exit code.

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "budget/version.hpp"
#include "command_registry.hpp"
#include "output_file.hpp"
#include "progress_output.hpp"

namespace {

/// A message made safe for one terminal line (budget::printable_text: control bytes, NUL, C1
/// escapes and invalid UTF-8 shown as \xNN / \u00NN; an overlong message cut with its size).
std::string printable_message(std::string_view text) { return budget::printable_text(text, 2000); }

/// The subcommand `word` is probably a slip of (at most two edits, one for words under 5
/// letters), or empty. Levenshtein distance, one row at a time.
std::string closest_subcommand(const CLI::App& app, const std::string& word) {
  const auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_distance = word.size() < 5 ? 2 : 3;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::size_t d = distance(word, sub->get_name());
    if (d < best_distance) {
      best_distance = d;
      best = sub->get_name();
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace budget::cli;
  CLI::App app{
      "budget-match: compute-matched architectures for looped Mixture-of-Experts transformers.\n"
      "Locks per-token training FLOPs, non-embedding parameters and KV cache at once.",
      "budget-match"};
  app.set_version_flag("--version", std::string("budget-match ") + budget::version_string);
  app.require_subcommand(0, 1);
  app.fallthrough(false);
  for (const auto& command : registered_commands()) command.add(app);
  install_interrupt_handler();
  add_progress_options(app);  // --quiet, --max-seconds; progress lines on stderr (progress_output.hpp)

  try {
    app.parse(argc, argv);
    // `budget-match --baseline ...` runs the matcher registered on the top-level app; with neither
    // a subcommand nor --baseline there is nothing to do, so show the help.
    const CLI::Option* baseline = app.get_option_no_throw("--baseline");
    if (app.get_subcommands().empty() && (baseline == nullptr || baseline->count() == 0)) {
      std::cout << app.help();
    }
    check_stdout();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string suggestion;
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && argc > 1 && argv[1][0] != '-') {
      const std::string word = closest_subcommand(app, argv[1]);
      // The word may be the subcommand itself (its extra arguments are the error): point to its help.
      if (word == argv[1]) {
        suggestion = fmt::format(" (`budget-match {} --help` lists what it takes)", word);
      } else if (!word.empty()) {
        suggestion = fmt::format(" (did you mean the subcommand \"{}\"?)", word);
      }
    }
    std::cerr << "budget-match: error: " << printable_message(e.what()) << suggestion << "\n"
              << "Run with --help for usage.\n";
    return exit_usage_error;
  } catch (const CommandExit& e) {
    try {
      check_stdout();
    } catch (const budget::Error& write_error) {
      std::cerr << "budget-match: error: " << printable_message(write_error.text()) << "\n";
      return exit_input_error;
    }
    return e.code;
  } catch (const budget::Error& e) {
    std::cerr << "budget-match: error: " << printable_message(e.text()) << "\n";
    return exit_input_error;
  } catch (const std::bad_alloc&) {
    std::cerr << "budget-match: error: out of memory; the request needs more memory than this machine gives "
                 "(see docs/reliability.md for the input limits)\n";
    return exit_internal_error;
  } catch (const std::exception& e) {
    std::cerr << "budget-match: internal error: " << printable_message(e.what()) << "\n";
    return exit_internal_error;
  }
  return exit_ok;
}
