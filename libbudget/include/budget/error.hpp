#pragma once
/// \file
/// The one error type of libbudget. Every function of the library that rejects its input throws
/// budget::Error; nothing else is thrown on purpose (std::bad_alloc aside).
///
/// Thread safety: budget::Error is an immutable value: its accessors may be called from any thread.

#include <stdexcept>
#include <string>

namespace budget {

/// An error in the caller's input or request.
///
/// `what()` is one line made for people: "<source>: <path>: <message>", with the parts that are
/// empty left out. `source` names where the input came from (a file path, "<baseline>", a CLI
/// option); `path` is the location inside it (a JSON pointer such as "/attention/num_kv_heads",
/// or "line 12" of a CSV). `message` says what the value is and what is allowed.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, std::string source = {}, std::string path = {});

  const std::string& source() const noexcept { return source_; }
  const std::string& path() const noexcept { return path_; }
  /// The message without source and path.
  const std::string& message() const noexcept { return message_; }
  /// The whole line what() gives, as a std::string: unlike what() (a C string) it keeps any NUL
  /// byte of the input it quotes. Print it through budget::printable_text (text_escape.hpp).
  const std::string& text() const noexcept { return text_; }

  /// The same error, attributed to `source` when it has none yet (used when a parser that only
  /// sees text is called on behalf of a file).
  Error with_source(const std::string& source) const;

 private:
  std::string message_;
  std::string source_;
  std::string path_;
  std::string text_;
};

}  // namespace budget
