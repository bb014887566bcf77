#pragma once
/// \file
/// Progress and time limit of long work (document-length simulations of up to 2^40 documents,
/// long files, the matcher's search, bootstrap resamples): the library reports how far it is
/// through one process-wide callback, which the CLI prints on stderr (a line that overwrites
/// itself on a terminal, a line every few seconds otherwise; `--quiet` turns it off). The same
/// calls enforce a process-wide time limit, so the work caps bound time, not only steps.
/// No callback and no limit (the library's default): no cost beyond a check.

#include <cstdint>
#include <functional>
#include <string_view>

namespace budget {

/// Called with what is being done ("simulation"), the units done and the total (0 when unknown),
/// at most about ten times a second, and once more with done == total at the end.
using ProgressCallback = std::function<void(std::string_view what, std::uint64_t done, std::uint64_t total)>;

/// Sets (or, with an empty function, clears) the process-wide progress callback. Not thread-safe:
/// set it before starting work.
void set_progress_callback(ProgressCallback callback);

/// Reports progress to the callback, rate-limited to about ten calls a second (always when
/// done == total > 0). Cheap when no callback is set. Safe to call from several threads (the
/// callback is called by one at a time).
///
/// Also the time limit's check: once more than the limit (set_work_time_limit) has passed since
/// the limit was set, it throws budget::TimeLimitError (a budget::Error) naming `what`, how far it
/// got and how to raise the limit. Work that calls it is therefore bounded in time as well as in steps.
void report_progress(std::string_view what, std::uint64_t done, std::uint64_t total);

/// The time limit's check alone (what report_progress() checks), without reporting: for work
/// nested inside work that reports its own progress (a layout search per candidate of the cluster
/// ranking), so that one progress line is shown while every level stays bounded in time.
void check_work_time_limit(std::string_view what, std::uint64_t done, std::uint64_t total);

/// Sets the time limit of long work in seconds, counted from now (0 or less: no limit, the
/// default). `how_to_raise` ends the error message (e.g. "raise it with --max-seconds").
/// Not thread-safe: set it before starting work.
void set_work_time_limit(double seconds, std::string_view how_to_raise = {});

/// The path() of the time limit's error, budget::TimeLimitError (budget/error.hpp): work that turns
/// a unit's budget::Error into a skipped unit (a run that cannot be priced) catches that type first
/// and passes it on.
inline constexpr std::string_view time_limit_error_path = "time limit";

/// Called by every progress report and time-limit check (report_progress, check_work_time_limit),
/// on the thread doing the work, so that work can be cancelled between its units: the function
/// throws to stop the work (Python's module checks for Ctrl-C there and raises KeyboardInterrupt).
/// Called from worker threads too: a check that must run on one thread tests which one it is on.
/// An empty function clears it. Not thread-safe: set it before starting work.
using CancelCheck = std::function<void()>;
void set_cancel_check(CancelCheck check);

}  // namespace budget
