#include "budget/text_escape.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget {
namespace {

/// Length (2..4) of the UTF-8 sequence starting at text[i] and its code point, or 0 when the bytes
/// there are not one well-formed sequence (RFC 3629: no overlong forms, no surrogates, <= U+10FFFF).
std::size_t utf8_sequence(std::string_view text, std::size_t i, std::uint32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  std::uint32_t minimum = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, minimum = 0x80, code_point = lead & 0x1fu;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, minimum = 0x800, code_point = lead & 0x0fu;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, minimum = 0x10000, code_point = lead & 0x07u;
  } else {
    return 0;
  }
  if (text.size() - i < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0u) != 0x80u) return 0;
    code_point = (code_point << 6) | (byte(i + k) & 0x3fu);
  }
  if (code_point < minimum || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) return 0;
  return length;
}

}  // namespace

std::string printable_text(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(text.size() < 4096 ? text.size() : 4096);
  for (std::size_t i = 0; i < text.size();) {
    if (out.size() >= max_bytes) {
      out += fmt::format("... ({} bytes in all)", text.size());
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\r') {
        out += "\\r";
      } else if (c < 0x20 || c == 0x7f) {
        out += fmt::format("\\x{:02x}", c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    std::uint32_t code_point = 0;
    const std::size_t length = utf8_sequence(text, i, code_point);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (code_point <= 0x9f) {
      out += fmt::format("\\u{:04x}", code_point);
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += printable_text(text.substr(start, end - start));
    if (end == text.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

std::string comment_text(std::string_view text) { return printable_text(text); }

std::string gnuplot_string_literal(std::string_view text) {
  const std::string safe = printable_text(text);
  std::string out = "'";
  for (char ch : safe) {
    if (ch == '\'') out += '\'';
    out += ch;
  }
  return out + "'";
}

const std::string& require_path_component(const std::string& value, const std::string& what,
                                          const std::string& source) {
  const auto refuse = [&](const char* why) {
    throw Error(fmt::format("the value \"{}\" put in place of {} {}; a placeholder expands to one file name "
                            "(no '/', no \"..\", no NUL or control character, not empty)",
                            printable_text(value, 200), what, why),
                source);
  };
  if (value.empty()) refuse("is empty");
  if (value == "." || value == "..") refuse("is a directory reference");
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '/') refuse("contains '/'");
    if (c < 0x20 || c == 0x7f) refuse("contains a control character");
  }
  return value;
}

}  // namespace budget
