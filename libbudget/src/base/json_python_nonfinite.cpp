// Python's JSON extensions (json.dumps writes float('inf'), -inf and nan as the bare tokens
// Infinity, -Infinity and NaN, which json.loads, and so transformers' PretrainedConfig, reads back:
// CPython Lib/json/encoder.py floatstr(), Lib/json/scanner.py py_make_scanner()). They are not JSON
// (RFC 8259 §6): read only where a caller allows them (Hugging Face configs, docs/config.md).
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/json_reader.hpp"

namespace budget::detail {

namespace {

/// The token of Python's extensions that starts at `text[i]` ("-Infinity", "Infinity", "NaN"),
/// when it stands where a JSON value may (after '[', ',', ':' or the start, before ']', '}', ','
/// or the end, with white space between), else empty.
std::string_view python_nonfinite_token_at(std::string_view text, std::size_t i) {
  static constexpr std::string_view tokens[] = {"-Infinity", "Infinity", "NaN"};
  std::size_t before = i;
  while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t' || text[before - 1] == '\r' ||
                        text[before - 1] == '\n')) {
    --before;
  }
  if (before > 0 && text[before - 1] != '[' && text[before - 1] != ',' && text[before - 1] != ':') return {};
  for (const std::string_view token : tokens) {
    if (text.substr(i, token.size()) != token) continue;
    std::size_t after = i + token.size();
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t' || text[after] == '\r' || text[after] == '\n')) {
      ++after;
    }
    if (after == text.size() || text[after] == ']' || text[after] == '}' || text[after] == ',') return token;
  }
  return {};
}

constexpr std::string_view nonfinite_marker = "\x01" "budget-python-nonfinite:";

/// Replaces the string values that python_nonfinite_text() put for each token by the token's
/// double, recording each one's JSON pointer and token.
void restore_nonfinite(nlohmann::json& value, const std::string& pointer, std::vector<PythonNonfinite>& found) {
  if (value.is_object()) {
    for (auto& [key, child] : value.items()) restore_nonfinite(child, pointer + "/" + escape_pointer_token(key), found);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) restore_nonfinite(value[i], pointer + "/" + std::to_string(i), found);
  } else if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s.rfind(nonfinite_marker, 0) != 0) return;
    const std::string token = s.substr(nonfinite_marker.size());
    const double d = token == "NaN"         ? std::numeric_limits<double>::quiet_NaN()
                     : token == "-Infinity" ? -std::numeric_limits<double>::infinity()
                                            : std::numeric_limits<double>::infinity();
    found.push_back({pointer.empty() ? "/" : pointer, token});
    value = d;
  }
}

}  // namespace

std::optional<nlohmann::json> parse_json_text_with_python_nonfinite(std::string_view text, const std::string& source,
                                                                   std::vector<PythonNonfinite>& found) {
  found.clear();
  // The marker cannot come from the file: a text that holds it, or the escape of its first character
  // (U+0001, which JSON can only spell \u0001), is left to the strict reader.
  if (text.find("budget-python-nonfinite:") != std::string_view::npos ||
      text.find("\\u0001") != std::string_view::npos) {
    return std::nullopt;
  }
  std::string rewritten;
  rewritten.reserve(text.size());
  bool in_string = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      rewritten += ch;
      if (ch == '\\' && i + 1 < text.size()) {
        rewritten += text[++i];
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') in_string = true;
    const std::string_view token = ch == '-' || ch == 'I' || ch == 'N' ? python_nonfinite_token_at(text, i) : std::string_view();
    if (token.empty()) {
      rewritten += ch;
      continue;
    }
    rewritten += "\"\\u0001budget-python-nonfinite:" + std::string(token) + "\"";
    i += token.size() - 1;
    any = true;
  }
  if (!any) return std::nullopt;
  nlohmann::json document;
  try {
    document = parse_json_text(rewritten, source);
  } catch (const Error&) {
    return std::nullopt;  // not JSON for another reason too: the strict reader's error stands
  }
  restore_nonfinite(document, "", found);
  return document;
}

std::string number_text(const nlohmann::json& value) {
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  }
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace budget::detail
