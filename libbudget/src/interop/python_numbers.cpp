// Python's int() and float() of a text, as Megatron-LM's argparse types (type=int, type=float) read
// its arguments (megatron_reader.hpp). One left-to-right scan, no std::regex and no recursion: a
// number of any length is read in time and stack linear in its length (a regex of the same grammar
// recursed once per character and overflowed the stack at about 50,000 digits).
//
// The grammar of CPython 3.11 (checked against python3.11; Objects/longobject.c PyLong_FromString and Python/pystrtod.c
// _Py_string_to_number_with_underscores / PyOS_string_to_double):
//   int:   ws* [+-] digit ('_'? digit)* ws*                         (base 10, leading zeros allowed)
//   float: ws* [+-] (mantissa [(e|E) [+-] digits] | inf | infinity | nan) ws*    (case-insensitive)
//          mantissa = digits ['.' [digits]] | '.' digits, digits = digit ('_'? digit)*
// where ws is the ASCII whitespace Python strips (space, \t \n \v \f \r; not \x1c-\x1f, checked on
// CPython 3.11); Python also strips non-ASCII whitespace (U+00A0, U+3000, ...) and reads non-ASCII
// digits, which are refused here as not numbers. int() refuses more than
// 4,300 digits (sys.int_info.default_max_str_digits, Python >= 3.11). float() of a finite text too
// large for a double is inf (Python does not refuse it); a text too small is 0 or a subnormal, as in
// Python. Values: int within int64, float finite; anything else is reported, never wrapped.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "interop/megatron_reader.hpp"

namespace budget::interop_detail {
namespace {

bool is_python_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// `text` without the whitespace Python strips at either end.
std::string_view strip_python_space(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && is_python_space(text[begin])) ++begin;
  while (end > begin && is_python_space(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

/// Reads `digit ('_'? digit)*` at text[at], appending the digits to `out`; false when there is no
/// digit at `at` or an underscore is not between two digits. `at` ends after the run.
bool read_digit_run(std::string_view text, std::size_t& at, std::string& out) {
  if (at >= text.size() || !is_digit(text[at])) return false;
  while (at < text.size()) {
    if (is_digit(text[at])) {
      out += text[at++];
    } else if (text[at] == '_' && at + 1 < text.size() && is_digit(text[at + 1])) {
      ++at;
    } else {
      break;
    }
  }
  return true;
}

bool equals_ignoring_case(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != lower[i]) return false;
  }
  return true;
}

/// The float grammar's mantissa and exponent (no sign, no whitespace) as strtod's C-locale text;
/// false when `body` is not one.
bool float_body_text(std::string_view body, std::string& out) {
  std::size_t at = 0;
  const bool integer_part = read_digit_run(body, at, out);
  bool fraction_part = false;
  if (at < body.size() && body[at] == '.') {
    out += '.';
    ++at;
    fraction_part = read_digit_run(body, at, out);
  }
  if (!integer_part && !fraction_part) return false;
  if (at < body.size() && (body[at] == 'e' || body[at] == 'E')) {
    out += 'e';
    ++at;
    if (at < body.size() && (body[at] == '+' || body[at] == '-')) out += body[at++];
    if (!read_digit_run(body, at, out)) return false;
  }
  return at == body.size();
}

}  // namespace

PythonInt read_python_int(std::string_view text) {
  const std::string_view t = strip_python_space(text);
  std::size_t at = 0;
  const bool negative = at < t.size() && t[at] == '-';
  if (at < t.size() && (t[at] == '+' || t[at] == '-')) ++at;
  std::string digits;
  if (!read_digit_run(t, at, digits) || at != t.size()) return {PythonNumberStatus::not_a_number, 0};
  if (digits.size() > python_int_max_digits) return {PythonNumberStatus::too_many_digits, 0};
  // Accumulated negatively so that -2^63 is reachable; any step past the int64 range stops.
  std::int64_t value = 0;
  for (const char d : digits) {
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_sub_overflow(value, d - '0', &value)) {
      return {PythonNumberStatus::out_of_range, 0};
    }
  }
  if (!negative && value == std::numeric_limits<std::int64_t>::min()) return {PythonNumberStatus::out_of_range, 0};
  return {PythonNumberStatus::value, negative ? value : -value};
}

PythonFloat read_python_float(std::string_view text) {
  const std::string_view t = strip_python_space(text);
  std::size_t at = 0;
  std::string c_text;
  if (at < t.size() && (t[at] == '+' || t[at] == '-')) c_text += t[at++];
  const std::string_view body = t.substr(at);
  if (equals_ignoring_case(body, "inf") || equals_ignoring_case(body, "infinity") || equals_ignoring_case(body, "nan")) {
    return {PythonNumberStatus::non_finite, 0.0};
  }
  if (!float_body_text(body, c_text)) return {PythonNumberStatus::not_a_number, 0.0};
  // strtod reads the C-locale text just built exactly (correctly rounded, any length); ERANGE on
  // underflow leaves 0 or a subnormal, Python's value too.
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(c_text.c_str(), &end);
  if (end != c_text.c_str() + c_text.size()) return {PythonNumberStatus::not_a_number, 0.0};
  if (!std::isfinite(value)) return {PythonNumberStatus::out_of_range, 0.0};
  return {PythonNumberStatus::value, value};
}

std::optional<std::int64_t> python_int(const std::string& text) {
  const PythonInt n = read_python_int(text);
  if (n.status != PythonNumberStatus::value) return std::nullopt;
  return n.value;
}

std::optional<double> python_float(const std::string& text) {
  const PythonFloat x = read_python_float(text);
  if (x.status != PythonNumberStatus::value) return std::nullopt;
  return x.value;
}

}  // namespace budget::interop_detail
