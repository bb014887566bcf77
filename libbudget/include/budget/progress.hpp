#pragma once
/// \file
/// Progress of long work (document-length simulations of up to 2^40 documents, long files): the
/// library reports how far it is through one process-wide callback, which the CLI sets to a line
/// on stderr when stderr is a terminal. No callback (the default): no cost beyond a check.

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
/// done == total > 0). Cheap when no callback is set.
void report_progress(std::string_view what, std::uint64_t done, std::uint64_t total);

}  // namespace budget
