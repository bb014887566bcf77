// budget-match: plans compute-matched architectures for looped MoE transformers.
// Error model: the library throws budget::Error; this is the one place that catches it, prints
// one line ("budget-match: error: <what>") on stderr and returns a documented exit code.

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "budget/version.hpp"
#include "command_registry.hpp"
#include "did_you_mean.hpp"
#include "output_file.hpp"
#include "progress_output.hpp"

namespace {

/// A message made safe for one terminal line (budget::printable_text: control bytes, NUL, C1
/// escapes and invalid UTF-8 shown as \xNN / \u00NN; an overlong message cut with its size).
std::string printable_message(std::string_view text) { return budget::printable_text(text, 2000); }

/// The library names an option it refuses by its field (Python's keyword argument); budget-match
/// names it by its flag: the error's source "min_headroom" is printed as "--min-headroom".
const std::set<std::string, std::less<>> library_option_names = {
    "align", "attention_backend", "from_runs", "global_batch_tokens", "gpu", "gpus", "max_time_ratio",
    "megatron_args", "megatron_out", "min_headroom", "run_tokens", "seq_len", "top"};

/// The error's line as budget-match prints it: a library option named by its flag.
std::string cli_error_text(const budget::Error& e) {
  if (library_option_names.count(e.source()) == 0) return e.text();
  std::string flag = "--" + e.source();
  std::replace(flag.begin(), flag.end(), '_', '-');
  return budget::Error(e.message(), flag, e.path()).text();
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

  // `budget-match match CFG ...` is the matcher (`budget-match --baseline CFG ...`): did_you_mean.hpp.
  const std::vector<std::string> args = match_alias(std::vector<std::string>(argv + 1, argv + argc));
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the words last first
    app.parse(reversed);
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
    // A mistyped option or subcommand, a config where a subcommand belongs: one hint (did_you_mean.hpp).
    const std::string suggestion = command_line_hint(app, args);
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
    std::cerr << "budget-match: error: " << printable_message(cli_error_text(e)) << "\n";
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
