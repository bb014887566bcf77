#pragma once
/// \file
/// Text from outside input made safe for where it goes: a terminal line, a gnuplot script, one
/// component of a file path. Every name or message read from data passes through one of these
/// before it reaches stdout/stderr, an external program or the file system (docs/reliability.md).
///
/// Thread safety: pure functions.

#include <cstddef>
#include <string>
#include <string_view>

namespace budget {

/// `text` as one printable line: valid UTF-8 is kept, except control characters (C0 below 0x20,
/// DEL 0x7f and the C1 range U+0080..U+009F, which terminals read as escape sequences), which
/// become "\n", "\t", "\r", "\xNN" (C0, DEL) or "\u00NN" (C1); a byte that is not part of valid
/// UTF-8 (overlong, surrogate, above U+10FFFF, truncated) becomes "\xNN". NUL bytes are kept
/// visible as "\x00" (pass a std::string_view or std::string, never a C string). Past `max_bytes`
/// of output the rest is cut with "... (N bytes in all)".
std::string printable_text(std::string_view text, std::size_t max_bytes = std::string_view::npos);

/// `text` as printable lines for a terminal: each line (split at '\n', which is kept) made
/// printable as printable_text() makes it, so no escape sequence, carriage return or NUL from data
/// (a config's, cluster's or GPU's name) reaches the terminal raw; nothing is cut. The text forms
/// of every command's output pass through it (budget::render::Document).
std::string terminal_text(std::string_view text);

/// A name or note from data as part of one comment line of a generated file (a Megatron bash
/// array file that is `source`d, a torchtitan or torch Python module): printable_text() without a
/// length cut, so no newline, carriage return, NUL, form feed or other control character can end
/// the comment and start code, and invalid UTF-8 (a Python SyntaxError) becomes "\xNN". The one
/// function every export target uses for its comments (docs/reliability.md).
std::string comment_text(std::string_view text);

/// A gnuplot string literal holding `text` as data: single-quoted (gnuplot does neither backquote
/// command substitution, nor macro (@) expansion, nor backslash escapes inside single quotes), a
/// quote doubled (''), and the text first made printable (printable_text), so no newline, NUL or
/// control byte can end the command and start another. The result is always one line.
std::string gnuplot_string_literal(std::string_view text);

/// Checks that `value`, expanded into a `{placeholder}` of a path, is one path component:
/// not empty, not "." or "..", no '/', no NUL, no control character. budget::Error naming
/// `source` (the option) and `what` (the placeholder) otherwise; returns `value`.
const std::string& require_path_component(const std::string& value, const std::string& what,
                                          const std::string& source);

}  // namespace budget
