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
#include "base/enum_names.hpp"

namespace budget::detail {

/// The closest candidate to `word` if it is plausibly a typo of it, else empty.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// Parses JSON text strictly: a syntax error, an empty text, a duplicate key in an object, a number
/// outside the double range (1e400) or a text longer than max_input_file_bytes() becomes
/// budget::Error naming `source`, the JSON pointer and the line/column where it can.
/// Objects and arrays may nest at most this deep (a deeper document is budget::Error).
inline constexpr std::size_t max_json_depth = 64;
nlohmann::json parse_json_text(std::string_view text, const std::string& source);
/// The same, keeping the objects' key order (for documents written back, e.g. hf export templates).
nlohmann::ordered_json parse_ordered_json_text(std::string_view text, const std::string& source);

/// A value of Python's JSON extensions found by parse_json_text_with_python_nonfinite(): its JSON
/// pointer and its token (Infinity, -Infinity or NaN).
struct PythonNonfinite {
  std::string pointer;
  std::string token;
};
/// For a text the strict reader refuses: the document read with Python's JSON extensions (the bare
/// tokens Infinity, -Infinity and NaN where a value may stand, outside strings) as non-finite
/// numbers, each listed in `found`; nullopt when the text holds none of them or is not JSON for
/// another reason too (the strict reader's error then stands). Only for inputs whose format allows
/// them (Hugging Face configs: transformers reads them through Python's json module).
std::optional<nlohmann::json> parse_json_text_with_python_nonfinite(std::string_view text, const std::string& source,
                                                                   std::vector<PythonNonfinite>& found);

/// A JSON number as text, non-finite ones as Python writes them (Infinity, -Infinity, NaN); any
/// other value as compact JSON.
std::string number_text(const nlohmann::json& value);

/// JSON pointer escaping of one reference token (RFC 6901): "~" → "~0", "/" → "~1".
std::string escape_pointer_token(std::string_view token);

/// Reads a whole regular file of at most max_input_file_bytes() (budget::Error otherwise: a
/// missing file, an empty name, a directory, a device or FIFO, a file over the limit).
std::string read_text_file(const std::string& path);

/// The checks of read_text_file() without reading or the size limit (for streamed files): the
/// name is not empty, the file exists and is a regular file. Returns its size in bytes.
std::uintmax_t check_input_file(const std::string& path);

/// The environment variable that raises the input-file limit (MiB) and its default.
inline constexpr const char* max_input_file_env = "BUDGET_MAX_INPUT_MB";
inline constexpr std::uint64_t default_max_input_file_mib = 16;
/// The size limit of text inputs (JSON, CSV): BUDGET_MAX_INPUT_MB MiB (default 16), read once.
std::uint64_t max_input_file_bytes();


/// A view of one JSON object at `pointer` inside the document read from `source`.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& object, std::string source, std::string pointer);

  /// Rejects keys that are not in `allowed`, suggesting the nearest allowed key.
  void reject_unknown_keys(std::initializer_list<std::string_view> allowed) const;
  void reject_unknown_keys(const std::vector<std::string>& allowed) const;

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
  std::string choice_or(std::string_view key, std::string fallback, const std::vector<std::string_view>& choices) const;
  /// The enumerator named at `key`, one of the table's names (an error lists them), or `fallback`
  /// when the key is absent.
  template <class Enum, std::size_t N>
  Enum enum_or(std::string_view key, Enum fallback, const EnumNames<Enum, N>& names) const {
    std::vector<std::string_view> choices;
    for (const auto& row : names) choices.push_back(row.name);
    return *enum_named(names, choice_or(key, std::string(name_of(names, fallback)), choices));
  }

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
