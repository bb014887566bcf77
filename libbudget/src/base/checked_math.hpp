#pragma once
// Private: integer arithmetic on sizes (tokens, widths, counts) that cannot overflow silently.
// Each helper returns the exact result or throws budget::Error naming the quantity, its operands
// and the int64 limit: a signed overflow is undefined behaviour in C++ and, in practice, a silently
// wrong answer (a negative token count, an op that vanishes from a table).

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::detail {

[[noreturn]] inline void throw_integer_overflow(std::string_view quantity, std::int64_t a, std::int64_t b,
                                                char operation) {
  throw Error(fmt::format("{} = {} {} {} is outside the 64-bit integer range (|x| <= {}); the input is too large",
                          quantity, a, operation, b, std::numeric_limits<std::int64_t>::max()));
}

/// a · b, exactly, or budget::Error "<quantity> = a * b is outside the 64-bit integer range".
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view quantity) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) throw_integer_overflow(quantity, a, b, '*');
  return out;
}

/// a + b, exactly, or budget::Error naming `quantity`.
inline std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view quantity) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) throw_integer_overflow(quantity, a, b, '+');
  return out;
}

/// a - b, exactly, or budget::Error naming `quantity`.
inline std::int64_t checked_sub(std::int64_t a, std::int64_t b, std::string_view quantity) {
  std::int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out)) throw_integer_overflow(quantity, a, b, '-');
  return out;
}

/// The product of `factors` (each >= 0) when it is at most `limit`, else std::nullopt; never
/// overflows. For sizes that multiply into a count a caller compares or divides by (b·s·DP tokens
/// of a micro-batch step, TP·CP·PP GPUs): a product past the limit is "too large", not a wrapped
/// value (a product that wraps to 0 and is then used as a divisor is a SIGFPE).
inline std::optional<std::int64_t> product_within(std::initializer_list<std::int64_t> factors, std::int64_t limit) {
  std::int64_t out = 1;
  for (const std::int64_t f : factors) {
    if (f < 0 || __builtin_mul_overflow(out, f, &out)) return std::nullopt;
  }
  if (out > limit) return std::nullopt;
  return out;
}

}  // namespace budget::detail
