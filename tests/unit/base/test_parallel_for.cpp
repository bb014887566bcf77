// The library's one parallel loop (base/parallel_for.hpp): every index once, results in their own
// slots, the first error rethrown after every thread has joined, the work time limit obeyed.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/error.hpp"
#include "budget/progress.hpp"
#include "base/parallel_for.hpp"

using namespace budget;

TEST_CASE("parallel for: each index runs once, for any thread count", "[base][parallel]") {
  for (const unsigned threads : {1u, 2u, 7u, 64u}) {
    std::vector<int> runs(1000, 0);
    std::vector<std::size_t> squares(1000, 0);
    detail::parallel_for(runs.size(), threads, "test", [&](std::size_t i) {
      ++runs[i];
      squares[i] = i * i;
    });
    INFO(threads << " threads");
    CHECK(std::count(runs.begin(), runs.end(), 1) == 1000);
    for (std::size_t i = 0; i < squares.size(); ++i) CHECK(squares[i] == i * i);
  }
  std::atomic<int> calls{0};
  detail::parallel_for(0, 4, "test", [&](std::size_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("parallel for: thread counts are clamped to the tasks", "[base][parallel]") {
  CHECK(detail::thread_count(8, 3) == 3);
  CHECK(detail::thread_count(8, 0) == 1);
  CHECK(detail::thread_count(2, 100) == 2);
  CHECK(detail::thread_count(0, 1) == 1);
  CHECK(detail::thread_count(0, 1u << 20) >= 1);
}

TEST_CASE("parallel for: the first error stops the hand-out and is rethrown", "[base][parallel]") {
  // One thread: the indices after the failing one are never handed out.
  std::atomic<int> started{0};
  const auto task = [&](std::size_t i) {
    ++started;
    if (i == 5) throw Error("candidate 5 failed", "x");
  };
  CHECK_THROWS_WITH(detail::parallel_for(100000, 1, "test", task), "x: candidate 5 failed");
  CHECK(started == 6);
  // Several: the error reaches the caller after every thread has joined; how many other indices
  // ran meanwhile depends on timing, but none ran twice.
  std::vector<std::atomic<int>> runs(20000);
  const auto counted = [&](std::size_t i) {
    ++runs[i];
    if (i == 5) throw Error("candidate 5 failed", "x");
  };
  CHECK_THROWS_WITH(detail::parallel_for(runs.size(), 4, "test", counted), "x: candidate 5 failed");
  CHECK(runs[5] == 1);
  CHECK(std::all_of(runs.begin(), runs.end(), [](const std::atomic<int>& r) { return r <= 1; }));
  CHECK_THROWS_AS(detail::parallel_for(3, 2, "test", [](std::size_t) { throw std::runtime_error("other"); }),
                  std::runtime_error);
}

TEST_CASE("parallel for: the work time limit stops a long loop with budget::TimeLimitError", "[base][parallel]") {
  set_work_time_limit(0.05, "raise it with --max-seconds");
  std::atomic<int> finished{0};
  const auto slow = [&](std::size_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ++finished;
  };
  // Its own type through the worker threads' rethrow (callers catch it by type), a budget::Error
  // with the time limit's path.
  std::string path;
  try {
    detail::parallel_for(10000, 2, "slow work", slow);
  } catch (const TimeLimitError& e) {
    path = e.path();
  }
  CHECK(path == time_limit_error_path);
  set_work_time_limit(0);
  CHECK(finished < 10000);
}

TEST_CASE("cancel check: called at every progress report and limit check, on the calling thread of a parallel loop",
          "[base][parallel][progress]") {
  // Python's Ctrl-C goes through it (python/call_limits.cpp): a check that throws stops the work
  // between units, from report_progress(), check_work_time_limit() and a parallel loop's waiting thread.
  struct Cancelled {};
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> calls{0};
  set_cancel_check([&] {
    if (std::this_thread::get_id() == caller && ++calls >= 3) throw Cancelled{};
  });
  CHECK_NOTHROW(report_progress("work", 1, 10));
  CHECK_NOTHROW(check_work_time_limit("work", 2, 10));
  CHECK_THROWS_AS(report_progress("work", 3, 10), Cancelled);
  calls = 0;
  std::atomic<int> finished{0};
  const auto slow = [&](std::size_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ++finished;
  };
  CHECK_THROWS_AS(detail::parallel_for(10000, 2, "slow work", slow), Cancelled);
  set_cancel_check({});
  CHECK(finished < 10000);
  CHECK_NOTHROW(report_progress("work", 4, 10));
}
