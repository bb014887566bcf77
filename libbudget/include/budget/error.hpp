#pragma once
/// \file
/// The one error type of libbudget. Every function of the library that rejects its input throws
/// budget::Error; nothing else is thrown on purpose (std::bad_alloc aside). The time limit of long
/// work throws its subclass budget::TimeLimitError, so that work which turns a unit's error into a
/// skipped unit can tell it apart by type.
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

/// The time limit of long work passed (budget/progress.hpp, set_work_time_limit(); the CLI's
/// --max-seconds, Python's max_seconds=): thrown by report_progress() and check_work_time_limit(),
/// with path() "time limit" and a message saying how far the work got and how to raise the limit.
/// Work that records a unit's budget::Error as a failure catches this type first and passes it on
/// (or stops there, keeping what it finished). Copy it as itself: with_source() and a new Error
/// built from its parts are plain budget::Error.
class TimeLimitError : public Error {
 public:
  using Error::Error;
};

}  // namespace budget
