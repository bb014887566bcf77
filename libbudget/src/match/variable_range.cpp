// VariableRange and LoopSpec: the lattice of one search variable, and where the loop goes.

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
  return {};
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
  return centred_loop(num_layers, span_fraction, repeats);
}

std::string LoopSpec::describe() const {
  if (repeats <= 1 || (first == 0 && span_fraction <= 0.0)) return "no loop";
  if (first > 0) return fmt::format("layers {}–{} ×{}", first, last, repeats);
  return fmt::format("centred {:g}% of layers ×{}", 100.0 * span_fraction, repeats);
}

}  // namespace budget
