// Escaping of text from data (budget/text_escape.hpp): the one function names pass through before
// a terminal, a gnuplot script or a file path. Properties checked on every input:
//  - printable_text's output has no control byte (C0, DEL), is valid UTF-8 with no C1 control,
//    and is a fixed point (escaping it again changes nothing), so it can hold no escape sequence;
//  - gnuplot_string_literal is one line, single-quoted, every inner quote doubled (the literal
//    cannot be left early, so no command substitution, newline or system() can follow it);
//  - require_path_component accepts only one path component (no '/', no NUL or control byte,
//    not empty, not "." or ".."), else throws budget::Error.
#include <cstring>
#include <string>

#include "budget/text_escape.hpp"
#include "fuzz_harness.hpp"

namespace {

constexpr const char* target = "fuzz_text_escape";

bool valid_utf8_without_controls(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (length == 0 || c > 0xf4 || s.size() - i < length) return false;
    std::uint32_t cp = c & (length == 2 ? 0x1fu : length == 3 ? 0x0fu : 0x07u);
    for (std::size_t k = 1; k < length; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0u) != 0x80u) return false;
      cp = (cp << 6) | (b & 0x3fu);
    }
    const std::uint32_t minimum = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
    if (cp < minimum || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f) return false;
    i += length;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using budget::fuzz::require;
  const std::string text(budget::fuzz::as_text(data, size));

  const std::string shown = budget::printable_text(text);
  require(valid_utf8_without_controls(shown), target, "printable_text left a control byte or invalid UTF-8");
  require(budget::printable_text(shown) == shown, target, "printable_text is not a fixed point on its output");
  const std::string cut = budget::printable_text(text, 16);
  require(valid_utf8_without_controls(cut), target, "a cut printable_text left a control byte");

  const std::string literal = budget::gnuplot_string_literal(text);
  require(literal.size() >= 2 && literal.front() == '\'' && literal.back() == '\'', target,
          "gnuplot literal not single-quoted");
  require(literal.find_first_of(std::string("\n\r\0", 3)) == std::string::npos, target,
          "gnuplot literal holds a line break or NUL");
  for (std::size_t i = 1; i + 1 < literal.size(); ++i) {
    if (literal[i] != '\'') continue;
    require(literal[i + 1] == '\'' && i + 2 < literal.size(), target, "gnuplot literal can be closed early");
    ++i;
  }

  budget::fuzz::expect_value_or_error(target, [&] {
    const std::string& name = budget::require_path_component(text, "{arch}", "--out");
    require(!name.empty() && name != "." && name != "..", target, "an empty or dot component was accepted");
    for (char ch : name) {
      const auto c = static_cast<unsigned char>(ch);
      require(ch != '/' && c >= 0x20 && c != 0x7f, target, "a separator or control byte was accepted");
    }
  });
  return 0;
}
