// POSIX-shell word splitting without a shell (budget/megatron_args.hpp: split_shell_words,
// megatron_words). The rules are those of POSIX.1-2017 XCU 2.2 (quoting) and 2.3 (token
// recognition: comments, blanks, backslash-newline), and bash's array assignment NAME=( ... ).
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"

namespace budget {
namespace {

enum class ShellTokenKind { word, array_open, array_close };

struct ShellToken {
  ShellTokenKind kind = ShellTokenKind::word;
  std::string text;
  std::size_t line = 1;
};

/// Splits shell text into words and array brackets; everything a shell would expand is refused.
class ShellSplitter {
 public:
  ShellSplitter(std::string_view text, const std::string& source) : s_(text), source_(source) {}

  std::vector<ShellToken> run() {
    while (at_ < s_.size()) step();
    end_word();
    if (array_depth_ > 0) fail("a bash array NAME=( is not closed with )");
    return tokens_;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("line {}: {}; the arguments are read as shell words and no shell is run", line_, what),
                source_);
  }

  void end_word() {
    if (!in_word_) return;
    tokens_.push_back({ShellTokenKind::word, word_, word_line_});
    word_.clear();
    in_word_ = false;
  }

  void begin_word() {
    if (!in_word_) {
      word_line_ = line_;
      quoted_part_ = false;
    }
    in_word_ = true;
  }

  /// A word so far NAME= (unquoted, a shell name) followed by '(' opens an array.
  bool word_is_array_name() const {
    if (!in_word_ || quoted_part_ || word_.size() < 2 || word_.back() != '=') return false;
    for (std::size_t i = 0; i + 1 < word_.size(); ++i) {
      const char c = word_[i];
      const bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9');
      if (!ok) return false;
    }
    return true;
  }

  void single_quoted() {
    const std::size_t close = s_.find('\'', at_ + 1);
    if (close == std::string_view::npos) fail("a single quote is not closed");
    for (std::size_t i = at_ + 1; i < close; ++i) line_ += s_[i] == '\n' ? 1 : 0;
    word_.append(s_.substr(at_ + 1, close - at_ - 1));
    at_ = close + 1;
  }

  void double_quoted() {
    ++at_;
    while (true) {
      if (at_ >= s_.size()) fail("a double quote is not closed");
      const char c = s_[at_];
      if (c == '"') break;
      if (c == '$' || c == '`') fail(fmt::format("'{}' inside double quotes would be expanded by a shell", c));
      if (c == '\\' && at_ + 1 < s_.size()) {
        const char n = s_[at_ + 1];
        if (n == '\n') {
          ++line_;
          at_ += 2;
          continue;
        }
        if (n == '"' || n == '\\' || n == '$' || n == '`') {
          word_ += n;
          at_ += 2;
          continue;
        }
      }
      if (c == '\n') ++line_;
      word_ += c;
      ++at_;
    }
    ++at_;
  }

  void step() {
    const char c = s_[at_];
    if (c == ' ' || c == '\t' || c == '\n') {
      end_word();
      if (c == '\n') ++line_;
      ++at_;
      return;
    }
    if (c == '#' && !in_word_) {
      while (at_ < s_.size() && s_[at_] != '\n') ++at_;
      return;
    }
    if (c == '\\') {
      if (at_ + 1 >= s_.size()) fail("a backslash ends the text");
      if (s_[at_ + 1] == '\n') {
        ++line_;
        at_ += 2;
        return;
      }
      begin_word();
      word_ += s_[at_ + 1];
      quoted_part_ = true;
      at_ += 2;
      return;
    }
    if (c == '\'' || c == '"') {
      begin_word();
      quoted_part_ = true;
      c == '\'' ? single_quoted() : double_quoted();
      return;
    }
    if (c == '(' && word_is_array_name() && array_depth_ == 0) {
      word_.pop_back();
      tokens_.push_back({ShellTokenKind::array_open, word_, word_line_});
      word_.clear();
      in_word_ = false;
      ++array_depth_;
      ++at_;
      return;
    }
    if (c == ')' && array_depth_ > 0) {
      end_word();  // an unquoted ')' ends the word before it, as in bash
      tokens_.push_back({ShellTokenKind::array_close, "", line_});
      --array_depth_;
      ++at_;
      return;
    }
    if (std::string_view("$`;&|<>()*?[").find(c) != std::string_view::npos || (c == '~' && !in_word_)) {
      fail(fmt::format("unquoted '{}' would be interpreted by a shell (quote the value, e.g. '...')", c));
    }
    begin_word();
    word_ += c;
    ++at_;
  }

  std::string_view s_;
  const std::string& source_;
  std::vector<ShellToken> tokens_;
  std::string word_;
  bool in_word_ = false;
  bool quoted_part_ = false;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
  std::size_t word_line_ = 1;
  int array_depth_ = 0;
};

}  // namespace

std::vector<std::string> split_shell_words(std::string_view text, const std::string& source) {
  std::vector<std::string> words;
  for (ShellToken& t : ShellSplitter(text, source).run()) {
    if (t.kind == ShellTokenKind::word) words.push_back(std::move(t.text));
  }
  return words;
}

std::vector<std::string> megatron_words(std::string_view text, const std::string& source) {
  const std::vector<ShellToken> tokens = ShellSplitter(text, source).run();
  bool arrays = false;
  for (const ShellToken& t : tokens) arrays = arrays || t.kind == ShellTokenKind::array_open;
  std::vector<std::string> words;
  int depth = 0;
  for (const ShellToken& t : tokens) {
    if (t.kind == ShellTokenKind::array_open) ++depth;
    if (t.kind == ShellTokenKind::array_close) --depth;
    if (t.kind != ShellTokenKind::word) continue;
    if (arrays && depth == 0) {
      throw Error(fmt::format("line {}: \"{}\" stands outside the file's bash arrays NAME=( ... ); a file of arrays "
                              "may hold only arrays and comments",
                              t.line, t.text),
                  source);
    }
    words.push_back(t.text);
  }
  return words;
}

}  // namespace budget
