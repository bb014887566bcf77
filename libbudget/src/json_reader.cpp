#include "json_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

namespace budget::detail {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& candidate : candidates) {
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

nlohmann::json parse_json_text(std::string_view text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw Error("the file is empty; expected a JSON object", source);
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line 1, ..."
    std::string what = e.what();
    const auto bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw Error("not valid JSON: " + what, source);
  }
}

std::string read_text_file(const std::string& path) {
  // Name the fault: std::ifstream alone reports every failure alike, and opens a directory without
  // complaint on POSIX, then reads nothing, which would surface as "the file is empty".
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw Error("cannot open file for reading: no such file", path);
  }
  if (status.type() == std::filesystem::file_type::directory) {
    throw Error("cannot open file for reading: it is a directory", path);
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
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
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
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (const auto& item : object_.items()) {
    if (std::find(names.begin(), names.end(), item.key()) != names.end()) continue;
    std::string message = fmt::format("unknown key \"{}\"", item.key());
    const std::string suggestion = closest_match(item.key(), names);
    if (!suggestion.empty()) {
      message += fmt::format(" (did you mean \"{}\"?)", suggestion);
    } else {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      message += "; allowed keys here: " + list;
    }
    fail(item.key(), message);
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
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) out_of_range(v.dump());
    result = static_cast<std::int64_t>(u);
  } else if (v.is_number_integer()) {
    result = v.get<std::int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) {
      fail(key, fmt::format("value {} is not an integer; allowed: an integer in [{}, {}]", v.dump(), min, max));
    }
    if (d < -9.2e18 || d > 9.2e18) out_of_range(v.dump());
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
    fail(key, fmt::format("value {} is out of range; allowed: a number in [{}, {}]", v.dump(), min, max));
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
  if (!has(key)) return fallback;
  const std::string value = string(key);
  std::vector<std::string> names(choices.begin(), choices.end());
  if (std::find(names.begin(), names.end(), value) != names.end()) return value;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
  std::string message = fmt::format("value \"{}\" is not allowed; allowed: {}", value, list);
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
