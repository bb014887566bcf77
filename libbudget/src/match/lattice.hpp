#pragma once
// Integer lattices of the matcher: the admissible values of a VariableRange as an arithmetic
// progression iterated by index (a range may hold 2^31 values: the matcher never materialises
// one), the outward visiting order, and overflow-free products of counts.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numeric>

#include "budget/match.hpp"

namespace budget::match_detail {

/// The smallest multiple of `step` >= value (step >= 1).
inline std::int64_t ceil_to_multiple(std::int64_t value, std::int64_t step) {
  const std::int64_t q = value / step;
  return (q * step >= value ? q : q + 1) * step;
}
/// The largest multiple of `step` <= value (step >= 1).
inline std::int64_t floor_to_multiple(std::int64_t value, std::int64_t step) {
  const std::int64_t q = value / step;
  return (q * step <= value ? q : q - 1) * step;
}

/// A double clamped into the int64 range before conversion (never UB for huge or NaN values).
inline std::int64_t to_int64_clamped(double x) {
  if (!(x > -9.2e18)) return std::numeric_limits<std::int64_t>::min() / 2;
  if (!(x < 9.2e18)) return std::numeric_limits<std::int64_t>::max() / 2;
  return static_cast<std::int64_t>(x);
}

/// Saturating product of counts (the size of a product space without overflow).
inline std::int64_t saturating_product(std::initializer_list<std::int64_t> counts) {
  long double p = 1;
  for (std::int64_t c : counts) p *= static_cast<long double>(c);
  return p >= 9.2e18L ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(p);
}

inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max() : a + b;
}

/// The values first, first + step, ..., last (empty when last < first).
struct Progression {
  std::int64_t first = 0;
  std::int64_t last = -1;
  std::int64_t step = 1;

  static Progression of(const VariableRange& r) {
    if (r.is_fixed()) return {r.min, r.min, 1};
    const std::int64_t step = std::max<std::int64_t>(1, r.multiple_of);
    return {ceil_to_multiple(r.min, step), floor_to_multiple(r.max, step), step};
  }
  std::int64_t count() const { return last < first ? 0 : (last - first) / step + 1; }
  std::int64_t at(std::int64_t i) const { return first + i * step; }
  /// Index of the first value >= x, count() if none (std::lower_bound on the values; x integral).
  std::int64_t index_not_below(double x) const {
    if (!(x > static_cast<double>(first))) return 0;
    if (x > static_cast<double>(last)) return count();
    const auto xi = static_cast<std::int64_t>(x);
    return (xi - first + step - 1) / step;
  }
  /// Index of the first value > x, count() if none (std::upper_bound on the values; x integral).
  std::int64_t index_above(double x) const {
    if (x < static_cast<double>(first)) return 0;
    if (!(x < static_cast<double>(last))) return count();
    const auto xi = static_cast<std::int64_t>(x);
    return (xi - first) / step + 1;
  }
  /// The values that are also multiples of m >= 1. The values are multiples of `step` (of 1 for a
  /// fixed value), so these are the multiples of lcm(step, m) in [first, last].
  Progression multiples_of(std::int64_t m) const {
    if (count() == 0) return {};
    const std::int64_t g = std::gcd(step, m);
    const std::int64_t a = step / g;
    if (last < 1 || a > last / m) {  // lcm(step, m) = a·m > last: only 0 could be a multiple
      return first <= 0 && last >= 0 ? Progression{0, 0, 1} : Progression{};
    }
    const std::int64_t l = a * m;
    return {ceil_to_multiple(first, l), floor_to_multiple(last, l), l};
  }
};

/// The index of the value of `p` nearest `x` (search order only).
inline std::int64_t nearest_index(const Progression& p, double x) {
  if (p.count() == 0) return 0;
  const double i = std::round((x - static_cast<double>(p.first)) / static_cast<double>(p.step));
  return std::clamp<std::int64_t>(to_int64_clamped(i), 0, p.count() - 1);
}

/// Visits 0..n-1 from `centre` outward (c, c+1, c−1, c+2, ...); `visit(i)` returns false to stop
/// going further in that direction. A search order only: the matcher's results do not depend on
/// it (pass 1 finds a minimum, pass 2 a set), but good structures found first tighten the bounds.
template <typename Visit>
void outward(std::int64_t n, std::int64_t centre, Visit&& visit) {
  if (n <= 0) return;
  std::int64_t up = std::clamp<std::int64_t>(centre, 0, n - 1), down = up - 1;
  bool go_up = true, go_down = true;
  while ((go_up && up < n) || (go_down && down >= 0)) {
    if (go_up && up < n) go_up = visit(up++);
    if (go_down && down >= 0) go_down = visit(down--);
  }
}

}  // namespace budget::match_detail
