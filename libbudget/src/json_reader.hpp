#pragma once
// Private: strict, path-tracking reading of JSON objects for the config parsers. Every failure
// throws budget::Error naming the source, the JSON pointer, the value and what is allowed.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "budget/error.hpp"

namespace budget::detail {

/// Levenshtein edit distance (for "did you mean" suggestions).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The closest candidate to `word` if it is plausibly a typo of it, else empty.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// Parses JSON text; a syntax error or an empty text becomes budget::Error naming `source`.
nlohmann::json parse_json_text(std::string_view text, const std::string& source);

/// Reads a whole file (budget::Error if it cannot be opened).
std::string read_text_file(const std::string& path);

/// A view of one JSON object at `pointer` inside the document read from `source`.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& object, std::string source, std::string pointer);

  /// Rejects keys that are not in `allowed`, suggesting the nearest allowed key.
  void reject_unknown_keys(std::initializer_list<std::string_view> allowed) const;

  bool has(std::string_view key) const;
  const nlohmann::json& raw(std::string_view key) const;  // the key must exist

  /// An integer in [min, max]. JSON floats are accepted only when they are exactly integral.
  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) const;
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                          std::int64_t max) const;
  /// A finite number in [min, max].
  double number(std::string_view key, double min, double max) const;
  double number_or(std::string_view key, double fallback, double min, double max) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  std::string string_or(std::string_view key, std::string fallback) const;
  std::string string(std::string_view key) const;
  /// One of `choices`.
  std::string choice_or(std::string_view key, std::string fallback,
                        std::initializer_list<std::string_view> choices) const;

  /// The child object at `key` (budget::Error if it is not an object).
  ObjectReader object(std::string_view key) const;

  /// Throws budget::Error at `key` with "<message>".
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;
  [[noreturn]] void fail_here(const std::string& message) const;

  std::string pointer_to(std::string_view key) const;
  const std::string& source() const { return source_; }
  const std::string& pointer() const { return pointer_; }
  const nlohmann::json& json() const { return object_; }

 private:
  const nlohmann::json& object_;
  std::string source_;
  std::string pointer_;
};

/// A short rendering of a JSON value for error messages ("\"12\"", "-3", "true", "[...]").
std::string describe_value(const nlohmann::json& value);

}  // namespace budget::detail
