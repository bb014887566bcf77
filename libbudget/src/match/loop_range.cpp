// LoopSpec::range_digits (budget/match.hpp): "FIRST-LAST" or "FIRST:LAST" read by one scan.
// Grammar: ws* digit+ ws* ('-' | ':') ws* digit+ ws*, ws one of " \t\n\v\f\r" (what the former
// std::regex ^\s*(\d+)\s*[-:]\s*(\d+)\s*$ accepted).
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "budget/match.hpp"

namespace budget {
namespace {

bool is_range_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

void skip_range_space(std::string_view text, std::size_t& at) {
  while (at < text.size() && is_range_space(text[at])) ++at;
}

std::string range_digit_run(std::string_view text, std::size_t& at) {
  const std::size_t start = at;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
  return std::string(text.substr(start, at - start));
}

}  // namespace

std::optional<std::pair<std::string, std::string>> LoopSpec::range_digits(std::string_view text) {
  std::size_t at = 0;
  skip_range_space(text, at);
  std::string first = range_digit_run(text, at);
  skip_range_space(text, at);
  if (first.empty() || at >= text.size() || (text[at] != '-' && text[at] != ':')) return std::nullopt;
  ++at;
  skip_range_space(text, at);
  std::string last = range_digit_run(text, at);
  skip_range_space(text, at);
  if (last.empty() || at != text.size()) return std::nullopt;
  return std::make_pair(std::move(first), std::move(last));
}

}  // namespace budget
