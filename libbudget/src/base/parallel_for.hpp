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
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/progress.hpp"

namespace budget::detail {

/// The threads for `tasks` tasks: `requested` (0: std::thread::hardware_concurrency()), at least 1
/// and at most `tasks`.
inline unsigned thread_count(unsigned requested, std::size_t tasks) {
  const unsigned threads = requested != 0 ? requested : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::clamp<std::size_t>(tasks, 1, threads));
}

/// Starts one worker thread (std::thread's constructor); a test passes its own to fail on purpose.
using StartThread = std::function<std::thread(std::function<void()>)>;

inline std::thread start_std_thread(std::function<void()> body) { return std::thread(std::move(body)); }

/// The budget::Error of a worker thread that could not be started (std::system_error from
/// std::thread: EAGAIN under `ulimit -u` or a container's pids limit).
[[noreturn]] inline void throw_thread_start_error(std::string_view what, unsigned started, unsigned wanted,
                                                  const std::system_error& e) {
  throw Error(fmt::format("cannot start worker thread {} of {} ({}): the process may start no more threads (ulimit -u, "
                          "a container's pids limit); the {} started were stopped and joined. Run on fewer threads "
                          "(one thread runs on the calling thread and starts none)",
                          started + 1, wanted, e.what(), started),
              std::string(what));
}

/// Runs task(i) once for each i in [0, count) on `threads` worker threads, started by `start`.
/// The calling thread waits and, every 200 ms, calls `progress(done, count)` (when set) and
/// report_progress(what, done, count): the process-wide progress line and time limit
/// (budget/progress.hpp), so a limit reached stops the hand-out of new indices. The first exception
/// a task lets escape (or the time limit's) stops the hand-out too, and is rethrown after every
/// thread has joined. One thread: the tasks run on the calling thread, reporting after each, and no
/// thread is started. A thread that cannot be started stops the hand-out; the threads started are
/// joined and budget::Error says so (never std::terminate from a joinable std::thread).
template <typename Task>
void parallel_for_with(std::size_t count, unsigned threads, std::string_view what, const Task& task,
                       const std::function<void(std::size_t, std::size_t)>& progress, const StartThread& start) {
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) {
      if (progress) progress(i, count);
      report_progress(what, i, count);
      task(i);
    }
    if (progress) progress(count, count);
    return;
  }
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
  pool.reserve(threads);
  try {
    for (unsigned t = 0; t < threads; ++t) pool.push_back(start(worker));
  } catch (const std::system_error& e) {
    next.store(count);
    for (auto& thread : pool) thread.join();
    throw_thread_start_error(what, static_cast<unsigned>(pool.size()), threads, e);
  }
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

/// parallel_for_with() on std::thread.
template <typename Task>
void parallel_for(std::size_t count, unsigned threads, std::string_view what, const Task& task,
                  const std::function<void(std::size_t, std::size_t)>& progress = {}) {
  parallel_for_with(count, threads, what, task, progress, start_std_thread);
}

}  // namespace budget::detail
