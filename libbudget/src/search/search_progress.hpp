#pragma once
// Private: progress and the time limit (budget/progress.hpp, the CLI's --max-seconds) of the
// search domain's searches (the layout search, the smallest fitting layout). Every search calls
// it once per layout it visits, so none runs past the limit by more than one layout's work.

#include <cstdint>
#include <string_view>

#include "budget/progress.hpp"

namespace budget::detail {

/// `done` of `total` (0: not known yet) units of `what`: reported (the progress line and the time
/// limit) when `shown`, else the time limit alone (a search nested in work that reports its own
/// progress: the cluster ranking's layout search per candidate).
inline void search_progress(bool shown, std::string_view what, std::int64_t done, std::int64_t total) {
  const auto d = static_cast<std::uint64_t>(done), t = static_cast<std::uint64_t>(total);
  if (shown) {
    report_progress(what, d, t);
  } else {
    check_work_time_limit(what, d, t);
  }
}

}  // namespace budget::detail
