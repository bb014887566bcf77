// VariableRange and LoopSpec: the lattice of one search variable, and where the loop goes.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/match.hpp"
#include "match/lattice.hpp"

namespace budget {

std::vector<std::int64_t> VariableRange::values() const {
  std::vector<std::int64_t> out;
  const match_detail::Progression p = match_detail::Progression::of(*this);
  for (std::int64_t i = 0; i < p.count(); ++i) out.push_back(p.at(i));
  return out;
}

std::int64_t VariableRange::size() const { return match_detail::Progression::of(*this).count(); }

std::string LoopSpec::validation_error() const {
  if (repeats < 1 || repeats > 1024) {
    return fmt::format("repeats = {} is not allowed; allowed: 1 to 1024 (1: no loop)", repeats);
  }
  if (!std::isfinite(span_fraction) || span_fraction < 0.0 || span_fraction > 1.0) {
    return fmt::format("span_fraction = {} is not allowed; allowed: a number in [0, 1] (0: no loop)", span_fraction);
  }
  if (first != 0 || last != 0) {
    if (first < 1 || last < first) {
      return fmt::format("loop layers {}-{} are not a range; allowed: 1 <= first <= last", first, last);
    }
  }
  if (period < 0 || period > 1'000'000) {
    return fmt::format("period = {} is not allowed; allowed: 0 (the baseline's layer pattern) to 1000000", period);
  }
  return {};
}

LoopSpec LoopSpec::for_baseline(const ArchConfig& baseline) const {
  LoopSpec out = *this;
  if (out.period == 0) out.period = std::max<std::int64_t>(1, baseline.layer_pattern_period());
  return out;
}

std::optional<LoopConfig> LoopSpec::resolve(std::int64_t num_layers) const {
  if (const std::string message = validation_error(); !message.empty()) throw Error(message, "", "/loop");
  if (repeats <= 1) return std::nullopt;
  if (first > 0) {
    if (last < first || last > num_layers) {
      throw Error(fmt::format("loop layers {}–{} do not fit in a stack of {} layers; allowed: 1 <= first <= "
                              "last <= {}",
                              first, last, num_layers, num_layers),
                  "", "/loop");
    }
    return LoopConfig{first, last, repeats};
  }
  if (span_fraction <= 0.0) return std::nullopt;
  if (period <= 1 || period > num_layers) return centred_loop(num_layers, span_fraction, repeats);
  // Whole periods: round half away from zero, as centred_loop() rounds layers.
  const std::int64_t periods = std::clamp<std::int64_t>(
      std::llround(span_fraction * static_cast<double>(num_layers) / static_cast<double>(period)), 1,
      num_layers / period);
  const std::int64_t span = periods * period;
  // Starts on a period boundary k·p + 1, the one that balances the layers before and after the loop
  // best (|L − span − 2kp| smallest; a tie keeps the earlier start, as centred_loop() puts an odd
  // layer after the loop).
  const std::int64_t free_layers = num_layers - span;
  std::int64_t k = free_layers / (2 * period);
  if (std::llabs(free_layers - 2 * period * (k + 1)) < std::llabs(free_layers - 2 * period * k)) ++k;
  const std::int64_t start = period * k + 1;
  return LoopConfig{start, start + span - 1, repeats};
}

std::string LoopSpec::describe() const {
  if (repeats <= 1 || (first == 0 && span_fraction <= 0.0)) return "no loop";
  if (first > 0) return fmt::format("layers {}–{} ×{}", first, last, repeats);
  if (period > 1) {
    return fmt::format("centred {:g}% of layers in whole periods of {} ×{}", 100.0 * span_fraction, period, repeats);
  }
  return fmt::format("centred {:g}% of layers ×{}", 100.0 * span_fraction, repeats);
}

}  // namespace budget
