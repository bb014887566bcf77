#include "budget/progress.hpp"

#include <chrono>
#include <utility>

namespace budget {
namespace {
ProgressCallback& callback() {
  static ProgressCallback instance;
  return instance;
}
std::chrono::steady_clock::time_point& last_report() {
  static std::chrono::steady_clock::time_point instance;
  return instance;
}
}  // namespace

void set_progress_callback(ProgressCallback cb) { callback() = std::move(cb); }

void report_progress(std::string_view what, std::uint64_t done, std::uint64_t total) {
  ProgressCallback& cb = callback();
  if (!cb) return;
  const auto now = std::chrono::steady_clock::now();
  const bool finished = total > 0 && done >= total;
  if (!finished && now - last_report() < std::chrono::milliseconds(100)) return;
  last_report() = now;
  cb(what, done, total);
}

}  // namespace budget
