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
#include "budget/progress.hpp"
#include "budget/version.hpp"
#include "command_registry.hpp"
#include "output_file.hpp"

namespace {

/// A message made safe for one terminal line: control bytes (NUL, escape sequences, newlines from
/// a file's contents) become \xNN and an overlong message is cut with its size stated.
std::string printable_message(const std::string& text) {
  constexpr std::size_t max_bytes = 2000;
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= max_bytes) {
      out += fmt::format("... ({} bytes in all)", text.size());
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

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
  if (stderr_is_terminal()) {
    // Long work (simulations of many documents, long files) shows how far it is; on a terminal only.
    budget::set_progress_callback([](std::string_view what, std::uint64_t done, std::uint64_t total) {
      if (total > 0) {
        std::fprintf(stderr, "\r%.*s: %llu/%llu (%.0f%%)", static_cast<int>(what.size()), what.data(),
                     static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                     100.0 * static_cast<double>(done) / static_cast<double>(total));
        if (done >= total) std::fprintf(stderr, "\r\033[K");
      } else {
        std::fprintf(stderr, "\r%.*s: %llu", static_cast<int>(what.size()), what.data(),
                     static_cast<unsigned long long>(done));
      }
      std::fflush(stderr);
    });
  }

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
      if (!word.empty()) suggestion = fmt::format(" (did you mean the subcommand \"{}\"?)", word);
    }
    std::cerr << "budget-match: error: " << e.what() << suggestion << "\n"
              << "Run with --help for usage.\n";
    return exit_usage_error;
  } catch (const CommandExit& e) {
    try {
      check_stdout();
    } catch (const budget::Error& write_error) {
      std::cerr << "budget-match: error: " << printable_message(write_error.what()) << "\n";
      return exit_input_error;
    }
    return e.code;
  } catch (const budget::Error& e) {
    std::cerr << "budget-match: error: " << printable_message(e.what()) << "\n";
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
