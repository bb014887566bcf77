#pragma once
// Private: the library's one parallel loop (bootstrap resamples, the cluster ranking's layout
// searches). Indices are handed out one at a time from a shared counter, so the work balances
// itself; a task writes only its own slot of the caller's output, which keeps results identical for
// any thread count.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "budget/progress.hpp"

namespace budget::detail {

/// The threads for `tasks` tasks: `requested` (0: std::thread::hardware_concurrency()), at least 1
/// and at most `tasks`.
inline unsigned thread_count(unsigned requested, std::size_t tasks) {
  const unsigned threads = requested != 0 ? requested : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp<std::size_t>(tasks, 1, threads));
}

/// Runs task(i) once for each i in [0, count) on `threads` worker threads. The calling thread waits
/// and, every 200 ms, calls `progress(done, count)` (when set) and report_progress(what, done, count):
/// the process-wide progress line and time limit (budget/progress.hpp), so a limit reached stops
/// the hand-out of new indices. The first exception a task
/// lets escape (or the time limit's) stops the hand-out too, and is rethrown after every thread
/// has joined.
template <typename Task>
void parallel_for(std::size_t count, unsigned threads, std::string_view what, const Task& task,
                  const std::function<void(std::size_t, std::size_t)>& progress = {}) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex mutex;
  std::condition_variable finished;
  std::exception_ptr error;
  const auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < count;) {
      try {
        task(i);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        next.store(count);
        finished.notify_all();
      }
      if (done.fetch_add(1) + 1 >= count) {
        const std::lock_guard lock(mutex);
        finished.notify_all();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, threads); ++t) pool.emplace_back(worker);
  {
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, std::chrono::milliseconds(200), [&] { return done.load() >= count || error; })) {
      try {
        if (progress) progress(done.load(), count);
        lock.unlock();
        report_progress(what, done.load(), count);
        lock.lock();
      } catch (...) {
        if (!lock.owns_lock()) lock.lock();
        if (!error) error = std::current_exception();
        next.store(count);
        break;
      }
    }
  }
  for (auto& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
  if (progress) progress(done.load(), count);
}

}  // namespace budget::detail
