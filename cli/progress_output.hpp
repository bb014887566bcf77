#pragma once
// Progress of long work on stderr and the time limit of budget-match (budget/progress.hpp):
// on a terminal one line that overwrites itself; otherwise (a pipe, a CI log) a plain line at most
// every 5 s, the first once the work has run 2 s, so short commands print nothing. `--quiet` turns
// it off; `--max-seconds S` sets the time limit of long work (default 300 s, 0: none).

#include "cli11_fwd.hpp"

namespace budget::cli {

/// The default time limit of long work, in seconds.
inline constexpr double default_max_seconds = 300;

/// Adds --quiet and --max-seconds to `app` and to each of its subcommands (call after every
/// command is registered), and installs the progress callback and the default time limit.
void add_progress_options(CLI::App& app);

}  // namespace budget::cli
