#include "budget/progress.hpp"

#include <chrono>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget {
namespace {

using Clock = std::chrono::steady_clock;

struct ProgressState {
  ProgressCallback callback;
  CancelCheck cancel_check;
  std::mutex mutex;                      // one callback at a time; guards last_report
  Clock::time_point last_report{};
  double limit_s = 0;                    // 0: no time limit
  Clock::time_point limit_start{};
  std::string how_to_raise;
};

ProgressState& state() {
  static ProgressState instance;
  return instance;
}

}  // namespace

void set_progress_callback(ProgressCallback cb) { state().callback = std::move(cb); }

void set_cancel_check(CancelCheck check) { state().cancel_check = std::move(check); }

void set_work_time_limit(double seconds, std::string_view how_to_raise) {
  ProgressState& s = state();
  s.limit_s = seconds > 0 ? seconds : 0;
  s.limit_start = Clock::now();
  s.how_to_raise = std::string(how_to_raise);
}

namespace {

/// Throws budget::TimeLimitError when the limit is set and `now` is past it.
void check_limit_at(const ProgressState& s, Clock::time_point now, std::string_view what, std::uint64_t done,
                    std::uint64_t total) {
  if (s.limit_s <= 0 || (total > 0 && done >= total)) return;
  const double elapsed_s = std::chrono::duration<double>(now - s.limit_start).count();
  if (elapsed_s > s.limit_s) {
    throw TimeLimitError(fmt::format("stopped after {:.0f} s, the time limit of {:g} s, at {}{}{}{}", elapsed_s, s.limit_s, done,
                            total > 0 ? fmt::format(" of {}", total) : std::string(), s.how_to_raise.empty() ? "" : "; ",
                            s.how_to_raise),
                std::string(what), std::string(time_limit_error_path));
  }
}

}  // namespace

void check_work_time_limit(std::string_view what, std::uint64_t done, std::uint64_t total) {
  const ProgressState& s = state();
  if (s.cancel_check) s.cancel_check();
  if (s.limit_s > 0) check_limit_at(s, Clock::now(), what, done, total);
}

void report_progress(std::string_view what, std::uint64_t done, std::uint64_t total) {
  ProgressState& s = state();
  if (s.cancel_check) s.cancel_check();
  if (!s.callback && s.limit_s <= 0) return;
  const bool finished = total > 0 && done >= total;
  const auto now = Clock::now();
  check_limit_at(s, now, what, done, total);
  if (!s.callback) return;
  std::unique_lock lock(s.mutex, std::try_to_lock);
  if (!lock.owns_lock()) {
    if (!finished) return;  // another thread is reporting
    lock.lock();
  }
  if (!finished && now - s.last_report < std::chrono::milliseconds(100)) return;
  s.last_report = now;
  s.callback(what, done, total);
}

}  // namespace budget
