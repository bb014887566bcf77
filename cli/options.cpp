#include "options.hpp"

#include <charconv>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/calibration.hpp"
#include "budget/error.hpp"
#include "budget/text_escape.hpp"

namespace budget::cli {

Workload WorkloadOption::load() const { return path.empty() ? paper_workload() : load_workload(path); }

CLI::Option* add_workload_option(CLI::App& command, WorkloadOption& target, const std::string& help) {
  return command.add_option("--workload", target.path, help);
}

TimeModel CalibrationOptions::load(Fp8Recipe fp8) const {
  TimeModelOptions options{attention_backend};
  options.fp8 = fp8;
  return TimeModel(load_calibration_profile(path), options);
}

std::optional<TimeModel> CalibrationOptions::load_if_given() const {
  if (!given()) return std::nullopt;
  return load();
}

CLI::Option* add_calibration_options(CLI::App& command, CalibrationOptions& target, const std::string& help) {
  CLI::Option* calibration = command.add_option("--calibration", target.path, help);
  command
      .add_option("--attention-backend", target.attention_backend,
                  "With --calibration: auto (default), cudnn, flash, default or fallback-<name>")
      ->needs(calibration);
  return calibration;
}

LoopSpec LoopOptions::spec() const {
  LoopSpec spec;
  spec.repeats = repeats;
  spec.span_fraction = span_fraction;
  if (range.empty()) return spec;
  const auto range_parts = LoopSpec::range_digits(range);
  if (!range_parts) {
    throw Error(
        fmt::format("value \"{}\" is not a layer range; allowed: FIRST-LAST, 1-based inclusive (e.g. 4-9)",
                    printable_text(range, 80)),
        "--loop");
  }
  const auto layer = [&](const std::string& digits) {
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || value > max_dimension) {
      throw Error(
          fmt::format("layer {} in \"{}\" is out of range; allowed: layers 1 to {}", printable_text(digits, 40),
                      printable_text(range, 80), max_dimension),
          "--loop");
    }
    return value;
  };
  spec.first = layer(range_parts->first);
  spec.last = layer(range_parts->second);
  if (spec.first < 1 || spec.last < spec.first) {
    throw Error(fmt::format("layer range {}–{} is empty or starts below 1", spec.first, spec.last), "--loop");
  }
  return spec;
}

void add_loop_options(CLI::App& command, LoopOptions& target) {
  CLI::Option* loop = command.add_option("--loop", target.range, "Loop layers FIRST-LAST (1-based, inclusive)");
  command
      .add_option("--span-fraction", target.span_fraction,
                  "Loop the centred span of round(f·L) layers (default 0.5: the middle half)")
      ->check(CLI::Range(0.0, 1.0))
      ->excludes(loop);
  command.add_option("--repeats", target.repeats, "Times the loop runs (default 2)")->check(CLI::Range(1, 1024));
}

}  // namespace budget::cli
