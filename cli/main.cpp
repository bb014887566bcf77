// budget-match: plans compute-matched architectures for looped MoE transformers.
// Error model: the library throws budget::Error; this is the one place that catches it, prints
// one line ("budget-match: error: <what>") on stderr and returns a documented exit code.

#include <cstdio>
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/version.hpp"
#include "command_registry.hpp"

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

  try {
    app.parse(argc, argv);
    // `budget-match --baseline ...` runs the matcher registered on the top-level app; with neither
    // a subcommand nor --baseline there is nothing to do, so show the help.
    const CLI::Option* baseline = app.get_option_no_throw("--baseline");
    if (app.get_subcommands().empty() && (baseline == nullptr || baseline->count() == 0)) {
      std::cout << app.help();
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "budget-match: error: " << e.what() << "\n"
              << "Run with --help for usage.\n";
    return exit_usage_error;
  } catch (const CommandExit& e) {
    return e.code;
  } catch (const budget::Error& e) {
    std::cerr << "budget-match: error: " << e.what() << "\n";
    return exit_input_error;
  } catch (const std::exception& e) {
    std::cerr << "budget-match: internal error: " << e.what() << "\n";
    return exit_internal_error;
  }
  return exit_ok;
}
