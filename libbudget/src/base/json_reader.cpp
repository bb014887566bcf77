#include "base/json_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <unordered_set>
#include <utility>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "budget/edit_distance.hpp"
#include "budget/text_escape.hpp"

namespace budget::detail {

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& candidate : candidates) {
    // The distance is at least the length difference: skip the O(n·m) table for words far
    // longer than any candidate (a megabyte-long unknown key).
    const std::size_t gap = word.size() > candidate.size() ? word.size() - candidate.size() : candidate.size() - word.size();
    if (gap > std::max<std::size_t>(2, word.size() / 3)) continue;
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  // A typo is at most a third of the word away (at least 2 edits allowed for short words).
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_distance <= limit ? best : std::string{};
}

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

namespace {

/// nlohmann's DOM builder plus what the strict reader needs: the JSON pointer of the value being
/// parsed (to name the place of a duplicate key or a number out of range) and the byte offset of
/// a parse error. sax_parse() calls these members statically, so hiding the base's is enough.
/// BasicJson: nlohmann::json, or nlohmann::ordered_json where key order must be kept.
template <class BasicJson>
class StrictSax : public nlohmann::detail::json_sax_dom_parser<BasicJson> {
  using Base = nlohmann::detail::json_sax_dom_parser<BasicJson>;

 public:
  using typename Base::binary_t;
  using typename Base::number_float_t;
  using typename Base::number_integer_t;
  using typename Base::number_unsigned_t;
  using typename Base::string_t;

  StrictSax(BasicJson& result, const std::string& source) : Base(result, true), source_(source) {}

  bool null() { return element_done(Base::null()); }
  bool boolean(bool v) { return element_done(Base::boolean(v)); }
  bool number_integer(number_integer_t v) { return element_done(Base::number_integer(v)); }
  bool number_unsigned(number_unsigned_t v) { return element_done(Base::number_unsigned(v)); }
  bool number_float(number_float_t v, const string_t& text) { return element_done(Base::number_float(v, text)); }
  bool string(string_t& v) { return element_done(Base::string(v)); }
  bool binary(binary_t& v) { return element_done(Base::binary(v)); }

  bool start_object(std::size_t n) {
    check_depth();
    frames_.push_back({true, {}, {}, 0});
    return Base::start_object(n);
  }
  bool key(string_t& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      throw Error(fmt::format("duplicate key \"{}\": each key may appear once in an object", printable_text(k, 60)), source_,
                  pointer(frames_.size() - 1) + "/" + escape_pointer_token(printable_text(k, 60)));
    }
    f.key = k;
    return Base::key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return element_done(Base::end_object());
  }
  bool start_array(std::size_t n) {
    check_depth();
    frames_.push_back({false, {}, {}, 0});
    return Base::start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return element_done(Base::end_array());
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& ex) {
    error_position_ = position;
    error_token_ = token;
    error_pointer_ = pointer(frames_.size());
    return Base::parse_error(position, token, ex);
  }

  std::size_t error_position() const { return error_position_; }
  const std::string& error_token() const { return error_token_; }
  const std::string& error_pointer() const { return error_pointer_; }

 private:
  struct Frame {
    bool is_object;
    std::unordered_set<std::string> keys;
    std::string key;        // the key whose value is being parsed (objects)
    std::size_t index = 0;  // the element being parsed (arrays)
  };

  /// Refuses a container nested deeper than max_json_depth: no input of the project nests beyond
  /// a few levels, and a deep one would cost the serializers time, memory and stack per level.
  void check_depth() const {
    if (frames_.size() >= max_json_depth) {
      throw Error(fmt::format("objects and arrays are nested more than {} levels deep; no input of budget nests that "
                              "far (a real file has fewer than 10)",
                              max_json_depth),
                  source_, pointer(std::min<std::size_t>(frames_.size(), 8)) + (frames_.size() > 8 ? "/..." : ""));
    }
  }
  bool element_done(bool ok) {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().index;
    return ok;
  }
  /// The pointer of the value being parsed inside the first `depth` containers.
  std::string pointer(std::size_t depth) const {
    std::string out;
    for (std::size_t i = 0; i < depth; ++i) {
      const Frame& f = frames_[i];
      out += "/" + (f.is_object ? escape_pointer_token(printable_text(f.key, 60)) : std::to_string(f.index));
    }
    return out;
  }

  const std::string& source_;
  std::vector<Frame> frames_;
  std::size_t error_position_ = 0;
  std::string error_token_;
  std::string error_pointer_;
};

/// "line L, column C" of byte `offset` (1-based) in `text`.
std::string line_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

}  // namespace


namespace {
template <class BasicJson>
BasicJson parse_strict(std::string_view text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw Error("the file is empty; expected a JSON object", source);
  }
  if (text.size() > max_input_file_bytes()) {
    throw Error(fmt::format("the JSON text has {} bytes, more than the limit of {} bytes; raise it with the environment "
                            "variable {} (in MiB)",
                            text.size(), max_input_file_bytes(), max_input_file_env),
                source);
  }
  // nlohmann's lexer takes a NUL byte for the end of the input, so "{...}\0anything" would read
  // as a complete document with the rest ignored. No valid JSON text holds a NUL (inside a string
  // it must be written \u0000): refuse it where it is, so no byte after the document is ignored.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw Error(fmt::format("not valid JSON: a NUL byte at {} (JSON text holds none; inside a string write \\u0000)",
                            line_column(text, nul)),
                source);
  }
  BasicJson result;
  StrictSax<BasicJson> sax(result, source);
  try {
    BasicJson::sax_parse(text.begin(), text.end(), &sax);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 1, ..."
    std::string what = e.what();
    const auto bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw Error("not valid JSON: " + printable_text(what, 200), source);
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number beyond the double range (e.g. 1e400); others (excessive sizes)
    // are likewise faults of the input.
    const std::string where = line_column(text, sax.error_position());
    if (e.id == 406) {
      throw Error(fmt::format("number {} at {} is outside the range of a double (about ±1.8e308)",
                              printable_text(sax.error_token(), 40), where),
                  source, sax.error_pointer().empty() ? "/" : sax.error_pointer());
    }
    std::string what = e.what();
    const auto bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw Error(fmt::format("JSON value rejected at {}: {}", where, printable_text(what, 200)), source,
                sax.error_pointer());
  }
  return result;
}
}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& source) {
  return parse_strict<nlohmann::json>(text, source);
}

nlohmann::ordered_json parse_ordered_json_text(std::string_view text, const std::string& source) {
  return parse_strict<nlohmann::ordered_json>(text, source);
}

std::uint64_t max_input_file_bytes() {
  static const std::uint64_t limit = [] {
    std::uint64_t mib = default_max_input_file_mib;
    if (const char* env = std::getenv(max_input_file_env)) {
      std::uint64_t value = 0;
      const char* end = env + std::strlen(env);
      const auto [ptr, ec] = std::from_chars(env, end, value);
      if (ec == std::errc() && ptr == end && value >= 1 && value <= (std::uint64_t{1} << 20)) mib = value;
    }
    return mib << 20;
  }();
  return limit;
}

std::uintmax_t check_input_file(const std::string& path) {
  if (path.empty()) throw Error("the file name is empty; give the path of a file", "\"\"");
  // The system calls take the name up to its first NUL: "a.json\0x" would open a.json.
  if (path.find('\0') != std::string::npos) {
    throw Error("the file name holds a NUL byte, which no file name can hold (the name would be cut there)", path);
  }
  // Name the fault: std::ifstream alone reports every failure alike, opens a directory without
  // complaint on POSIX, and reads /dev/zero or a FIFO forever. Only regular files are read, and
  // only up to max_input_file_bytes().
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw Error("cannot open file for reading: no such file", path);
  }
  if (status.type() == std::filesystem::file_type::directory) {
    throw Error("cannot open file for reading: it is a directory", path);
  }
  if (!ec && status.type() != std::filesystem::file_type::regular) {
    throw Error("cannot read it: not a regular file (a device, FIFO or socket); give a file", path);
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

std::string read_text_file(const std::string& path) {
  const std::uintmax_t size = check_input_file(path);
  if (size > max_input_file_bytes()) {
    throw Error(fmt::format("the file has {} bytes, more than the limit of {} bytes ({} MiB); raise it with the "
                            "environment variable {} (in MiB)",
                            size, max_input_file_bytes(), max_input_file_bytes() >> 20, max_input_file_env),
                path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open file for reading: {}", std::strerror(errno)), path);
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw Error("error while reading the file", path);
  return contents.str();
}

std::string describe_value(const nlohmann::json& value) {
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  if (value.is_null()) return "null";
  std::string text = number_text(value);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return printable_text(text, 40);
}

namespace {
const char* type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}
}  // namespace

ObjectReader::ObjectReader(const nlohmann::json& object, std::string source, std::string pointer)
    : object_(object), source_(std::move(source)), pointer_(std::move(pointer)) {
  if (!object_.is_object()) {
    throw Error(fmt::format("expected a JSON object, found {} ({})", type_name(object_),
                            describe_value(object_)),
                source_, pointer_.empty() ? "/" : pointer_);
  }
}

std::string ObjectReader::pointer_to(std::string_view key) const {
  return pointer_ + "/" + std::string(key);
}

void ObjectReader::fail(std::string_view key, const std::string& message) const {
  throw Error(message, source_, pointer_to(key));
}

void ObjectReader::fail_here(const std::string& message) const {
  throw Error(message, source_, pointer_.empty() ? "/" : pointer_);
}

void ObjectReader::reject_unknown_keys(std::initializer_list<std::string_view> allowed) const {
  reject_unknown_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void ObjectReader::reject_unknown_keys(const std::vector<std::string>& names) const {
  for (const auto& item : object_.items()) {
    if (std::find(names.begin(), names.end(), item.key()) != names.end()) continue;
    std::string message = fmt::format("unknown key \"{}\"", printable_text(item.key(), 60));
    const std::string suggestion = closest_match(item.key(), names);
    if (!suggestion.empty()) {
      message += fmt::format(" (did you mean \"{}\"?)", suggestion);
    } else {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      message += "; allowed keys here: " + list;
    }
    fail(escape_pointer_token(printable_text(item.key(), 60)), message);
  }
}

bool ObjectReader::has(std::string_view key) const {
  return object_.contains(std::string(key)) && !object_.at(std::string(key)).is_null();
}

const nlohmann::json& ObjectReader::raw(std::string_view key) const {
  if (!object_.contains(std::string(key))) fail(key, "required key is missing");
  return object_.at(std::string(key));
}

std::int64_t ObjectReader::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  if (!object_.contains(std::string(key))) {
    fail(key, fmt::format("required key is missing (an integer in [{}, {}])", min, max));
  }
  const auto& v = object_.at(std::string(key));
  std::int64_t result = 0;
  const auto out_of_range = [&](const std::string& shown) {
    fail(key, fmt::format("value {} is out of range; allowed: an integer in [{}, {}]", shown, min, max));
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) out_of_range(number_text(v));
    result = static_cast<std::int64_t>(u);
  } else if (v.is_number_integer()) {
    result = v.get<std::int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) {
      fail(key, fmt::format("value {} is not an integer; allowed: an integer in [{}, {}]", number_text(v), min, max));
    }
    if (d < -9.2e18 || d > 9.2e18) out_of_range(number_text(v));
    result = static_cast<std::int64_t>(d);
  } else {
    fail(key, fmt::format("expected an integer in [{}, {}], found {} ({})", min, max, type_name(v),
                          describe_value(v)));
  }
  if (result < min || result > max) out_of_range(std::to_string(result));
  return result;
}

std::int64_t ObjectReader::integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                                      std::int64_t max) const {
  return has(key) ? integer(key, min, max) : fallback;
}

double ObjectReader::number(std::string_view key, double min, double max) const {
  if (!object_.contains(std::string(key))) {
    fail(key, fmt::format("required key is missing (a number in [{}, {}])", min, max));
  }
  const auto& v = object_.at(std::string(key));
  if (!v.is_number()) {
    fail(key, fmt::format("expected a number in [{}, {}], found {} ({})", min, max, type_name(v),
                          describe_value(v)));
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    fail(key, fmt::format("value {} is out of range; allowed: a number in [{}, {}]", number_text(v), min, max));
  }
  return d;
}

double ObjectReader::number_or(std::string_view key, double fallback, double min, double max) const {
  return has(key) ? number(key, min, max) : fallback;
}

bool ObjectReader::boolean_or(std::string_view key, bool fallback) const {
  if (!has(key)) return fallback;
  const auto& v = object_.at(std::string(key));
  if (!v.is_boolean()) {
    fail(key, fmt::format("expected true or false, found {} ({})", type_name(v), describe_value(v)));
  }
  return v.get<bool>();
}

std::string ObjectReader::string(std::string_view key) const {
  const auto& v = raw(key);
  if (!v.is_string()) {
    fail(key, fmt::format("expected a string, found {} ({})", type_name(v), describe_value(v)));
  }
  return v.get<std::string>();
}

std::string ObjectReader::string_or(std::string_view key, std::string fallback) const {
  return has(key) ? string(key) : fallback;
}

std::string ObjectReader::choice_or(std::string_view key, std::string fallback,
                                    std::initializer_list<std::string_view> choices) const {
  return choice_or(key, std::move(fallback), std::vector<std::string_view>(choices));
}

std::string ObjectReader::choice_or(std::string_view key, std::string fallback,
                                    const std::vector<std::string_view>& choices) const {
  if (!has(key)) return fallback;
  const std::string value = string(key);
  std::vector<std::string> names(choices.begin(), choices.end());
  if (std::find(names.begin(), names.end(), value) != names.end()) return value;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
  std::string message = fmt::format("value \"{}\" is not allowed; allowed: {}", printable_text(value, 60), list);
  const std::string suggestion = closest_match(value, names);
  if (!suggestion.empty()) message += fmt::format(" (did you mean \"{}\"?)", suggestion);
  fail(key, message);
}

ObjectReader ObjectReader::object(std::string_view key) const {
  const auto& v = raw(key);
  if (!v.is_object()) {
    fail(key, fmt::format("expected a JSON object, found {} ({})", type_name(v), describe_value(v)));
  }
  return ObjectReader(v, source_, pointer_to(key));
}

}  // namespace budget::detail
