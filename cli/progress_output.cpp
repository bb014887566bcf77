#include "progress_output.hpp"

#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/progress.hpp"
#include "budget/text_escape.hpp"
#include "option_checks.hpp"
#include "output_file.hpp"

namespace budget::cli {
namespace {

using Clock = std::chrono::steady_clock;

bool g_quiet = false;
const Clock::time_point g_started = Clock::now();
Clock::time_point g_last_line{};

constexpr const char* how_to_raise = "raise the limit with --max-seconds S (0: no limit)";

std::string progress_text(std::string_view what, std::uint64_t done, std::uint64_t total) {
  if (total > 0) {
    return fmt::format("{}: {}/{} ({:.0f}%)", printable_text(what), done, total,
                       100.0 * static_cast<double>(done) / static_cast<double>(total));
  }
  return fmt::format("{}: {}", printable_text(what), done);
}

void print_progress(std::string_view what, std::uint64_t done, std::uint64_t total) {
  if (g_quiet) return;
  const bool finished = total > 0 && done >= total;
  if (stderr_is_terminal()) {
    std::fprintf(stderr, "\r%s", progress_text(what, done, total).c_str());
    if (finished) std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    return;
  }
  // Not a terminal: a line every 5 s once the work has run 2 s, and the final line of work that
  // printed any.
  const auto now = Clock::now();
  const bool printed_before = g_last_line != Clock::time_point{};
  if (finished) {
    if (!printed_before) return;
  } else if (now - g_started < std::chrono::seconds(2) ||
             (printed_before && now - g_last_line < std::chrono::seconds(5))) {
    return;
  }
  g_last_line = now;
  std::fprintf(stderr, "budget-match: %s\n", progress_text(what, done, total).c_str());
  std::fflush(stderr);
}

void add_to(CLI::App& app) {
  app.add_flag("--quiet", g_quiet, "Print no progress lines on stderr");
  app.add_option_function<double>(
         "--max-seconds", [](double seconds) { budget::set_work_time_limit(seconds, how_to_raise); },
         fmt::format("Stop long work after S seconds (default {:g}; 0: no limit)", default_max_seconds))
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (text == "0") return {};
            std::string copy = text;
            return positive_real(1e9)(copy);
          },
          "0 or POSITIVE"));
}

}  // namespace

void add_progress_options(CLI::App& app) {
  add_to(app);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) add_to(*sub);
  budget::set_work_time_limit(default_max_seconds, how_to_raise);
  budget::set_progress_callback(print_progress);
}

}  // namespace budget::cli
