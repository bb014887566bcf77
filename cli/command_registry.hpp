#pragma once
// Subcommand registry of budget-match. Each file under commands/ defines one subcommand and
// registers it with a static CommandRegistration:
//
//   static const budget::cli::CommandRegistration reg{"report", 10, &add_report_command};
//
// `add` receives the top-level app, creates its subcommand with app.add_subcommand(...), declares
// options and sets a callback. Callbacks throw budget::Error (or CLI::Error) on bad input; main()
// catches once and prints one line.

#include <functional>
#include <string>
#include <vector>

#include "cli11_fwd.hpp"

namespace budget::cli {

struct CommandRegistration {
  using AddFunction = void (*)(CLI::App& app);
  /// `order` sorts subcommands in --help (smaller first).
  CommandRegistration(std::string name, int order, AddFunction add);
};

struct RegisteredCommand {
  std::string name;
  int order;
  CommandRegistration::AddFunction add;
};

/// All registered subcommands, sorted by (order, name).
std::vector<RegisteredCommand> registered_commands();

/// Exit codes of budget-match (documented in README.md).
enum ExitCode : int {
  exit_ok = 0,
  exit_input_error = 2,     ///< bad config, workload, data or option value (budget::Error)
  exit_usage_error = 64,    ///< bad command line (CLI11 parse error)
  exit_infeasible = 3,      ///< a request that has no answer under its constraints
  exit_partial = 4,         ///< the time limit stopped long work: what was finished is printed, marked partial
  exit_internal_error = 70  ///< a bug: an unexpected exception
};

/// Thrown by a command that has printed its output and must still exit non-zero (for example
/// exit_infeasible after explaining why no candidate exists).
struct CommandExit {
  int code;
};

}  // namespace budget::cli
