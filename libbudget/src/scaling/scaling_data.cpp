#include "budget/scaling_data.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "base/json_reader.hpp"

namespace budget {
namespace {

// ---------------------------------------------------------------------------------------------
// Lines and fields

struct Line {
  std::string_view text;
  std::size_t number;  // 1-based
};

std::string line_label(std::size_t number) { return fmt::format("line {}", number); }

/// Splits on '\n', dropping a trailing '\r' (CRLF files) and a leading UTF-8 byte-order mark.
std::vector<Line> split_lines(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<Line> lines;
  std::size_t number = 1;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({line, number++});
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

bool is_skipped(std::string_view line) {
  const std::string_view t = trim(line);
  return t.empty() || t.front() == '#';
}

/// One field starting at `pos` in quotes: "..." with "" for a quote. Advances `pos` past it.
std::string read_quoted_field(std::string_view line, std::size_t& pos, const std::string& source,
                              std::size_t number) {
  std::string field;
  ++pos;  // opening quote
  while (true) {
    if (pos >= line.size()) {
      throw Error("a quoted field is not closed on this line (fields cannot span lines)", source,
                  line_label(number));
    }
    const char ch = line[pos++];
    if (ch != '"') {
      field += ch;
    } else if (pos < line.size() && line[pos] == '"') {
      field += '"';
      ++pos;
    } else {
      break;
    }
  }
  const std::size_t next = line.find_first_not_of(" \t", pos);
  if (next != std::string_view::npos && line[next] != ',') {
    throw Error(fmt::format("unexpected text after the closing quote of field \"{}\"", field), source,
                line_label(number));
  }
  pos = next == std::string_view::npos ? line.size() : next;
  return field;
}

/// Comma-separated fields, unquoted ones trimmed of spaces and tabs.
std::vector<std::string> split_fields(std::string_view line, const std::string& source, std::size_t number) {
  std::vector<std::string> fields;
  std::size_t pos = 0;
  while (true) {
    const std::size_t start = line.find_first_not_of(" \t", pos);
    if (start != std::string_view::npos && line[start] == '"') {
      pos = start;
      fields.push_back(read_quoted_field(line, pos, source, number));
    } else {
      const std::size_t comma = line.find(',', pos);
      fields.emplace_back(trim(line.substr(pos, comma == std::string_view::npos ? comma : comma - pos)));
      pos = comma == std::string_view::npos ? line.size() : comma;
    }
    if (pos >= line.size()) break;
    ++pos;  // the comma
    if (pos == line.size()) {
      fields.emplace_back();  // a trailing comma ends with an empty field
      break;
    }
  }
  return fields;
}

// ---------------------------------------------------------------------------------------------
// Header

enum Column : std::size_t { arch, cell, F, N, S, D, loss, domain, column_count };

constexpr std::array<const char*, column_count> column_names{"arch", "cell", "F", "N", "S", "D", "loss", "domain"};

/// Field index of each column in the file, if present.
using ColumnMap = std::array<std::optional<std::size_t>, column_count>;

std::string known_columns_text() {
  return "arch, cell, F or N, S (optional), D, loss, domain (optional)";
}

[[noreturn]] void reject_unknown_column(const std::string& name, const std::string& source, std::size_t number) {
  const std::vector<std::string> names(column_names.begin(), column_names.end());
  std::string message = fmt::format("unknown column \"{}\"", name);
  const std::string suggestion = detail::closest_match(name, names);
  if (!suggestion.empty()) message += fmt::format(" (did you mean \"{}\"?)", suggestion);
  message += "; allowed columns: " + known_columns_text();
  throw Error(message, source, line_label(number));
}

void require_columns(const ColumnMap& map, const std::string& source, std::size_t number) {
  for (const Column required : {Column::arch, Column::cell, Column::D, Column::loss}) {
    if (!map[required]) {
      throw Error(fmt::format("the header has no column \"{}\"; required columns: arch, cell, F or N, D, loss",
                              column_names[required]),
                  source, line_label(number));
    }
  }
  if (map[Column::F] && map[Column::N]) {
    throw Error("the header has both F and N; give per-token FLOPs F or parameters N (F = 6N), not both",
                source, line_label(number));
  }
  if (!map[Column::F] && !map[Column::N]) {
    throw Error("the header has neither F (per-token training FLOPs) nor N (parameters, F = 6N)", source,
                line_label(number));
  }
}

ColumnMap read_header(const std::vector<std::string>& fields, const std::string& source, std::size_t number) {
  ColumnMap map;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string& name = fields[i];
    if (name.empty()) {
      throw Error(fmt::format("header column {} has no name", i + 1), source, line_label(number));
    }
    const auto it = std::find(column_names.begin(), column_names.end(), name);
    if (it == column_names.end()) reject_unknown_column(name, source, number);
    const auto column = static_cast<std::size_t>(it - column_names.begin());
    if (map[column]) {
      throw Error(fmt::format("column \"{}\" appears twice in the header", name), source, line_label(number));
    }
    map[column] = i;
  }
  require_columns(map, source, number);
  return map;
}

// ---------------------------------------------------------------------------------------------
// Rows

struct RowContext {
  const std::vector<std::string>& fields;
  const ColumnMap& map;
  const std::string& source;
  std::size_t line_number;

  [[noreturn]] void fail(Column column, const std::string& message) const {
    throw Error(fmt::format("column '{}': {}", column_names[column], message), source, line_label(line_number));
  }

  const std::string& field(Column column) const { return fields[*map[column]]; }

  std::string text(Column column) const {
    const std::string& value = field(column);
    if (value.empty() && column != Column::domain) fail(column, "the value is empty");
    return value;
  }

  /// A finite number satisfying `allowed`; `allowed_text` says what that is.
  template <typename Predicate>
  double number(Column column, Predicate allowed, const char* allowed_text) const {
    const std::string& value = field(column);
    if (value.empty()) fail(column, fmt::format("the value is empty; allowed: {}", allowed_text));
    std::string_view digits = value;
    if (digits.front() == '+') digits.remove_prefix(1);
    double result = 0.0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), result);
    if (ec != std::errc{} || end != digits.data() + digits.size()) {
      fail(column, fmt::format("value \"{}\" is not a number; allowed: {}", value, allowed_text));
    }
    if (!std::isfinite(result) || !allowed(result)) {
      fail(column, fmt::format("value {} is not allowed; allowed: {}", value, allowed_text));
    }
    return result;
  }
};

// Documented limits (docs/reliability.md): beyond them the law's terms leave double precision.
bool flops_or_tokens(double v) { return v > 0.0 && v <= 1e30; }
bool loss_value(double v) { return v >= 1e-6 && v <= 1e6; }
bool sparsity(double v) { return v >= 0.0 && v < 1.0; }

LossPoint parse_row(const RowContext& row) {
  LossPoint point;
  point.arch = row.text(Column::arch);
  point.cell = row.text(Column::cell);
  if (row.map[Column::F]) {
    point.F = row.number(Column::F, flops_or_tokens, "a number in (0, 1e30] (per-token training FLOPs)");
  } else {
    point.F = 6.0 * row.number(Column::N, flops_or_tokens, "a number in (0, 1e30] (parameters; F = 6N)");
  }
  if (row.map[Column::S]) point.S = row.number(Column::S, sparsity, "a number in [0, 1)");
  point.D = row.number(Column::D, flops_or_tokens, "a number in (0, 1e30] (training tokens)");
  point.loss = row.number(Column::loss, loss_value, "a loss in [1e-6, 1e6]");
  if (row.map[Column::domain]) point.domain = row.text(Column::domain);
  point.line = row.line_number;
  return point;
}

}  // namespace

LossData parse_loss_csv(std::string_view text, const std::string& source) {
  const std::vector<Line> lines = split_lines(text);
  auto it = std::find_if(lines.begin(), lines.end(), [](const Line& l) { return !is_skipped(l.text); });
  if (it == lines.end()) {
    throw Error("the file is empty; expected a header line naming the columns (" + known_columns_text() + ")",
                source);
  }
  const ColumnMap map = read_header(split_fields(it->text, source, it->number), source, it->number);
  const std::size_t header_fields = std::count_if(map.begin(), map.end(), [](const auto& c) { return c.has_value(); });

  LossData data;
  data.source = source;
  data.parameters_column = map[Column::N].has_value();
  data.sparsity_column = map[Column::S].has_value();
  data.domain_column = map[Column::domain].has_value();
  for (++it; it != lines.end(); ++it) {
    if (is_skipped(it->text)) continue;
    const std::vector<std::string> fields = split_fields(it->text, source, it->number);
    if (fields.size() != header_fields) {
      throw Error(fmt::format("the row has {} fields but the header has {} columns", fields.size(), header_fields),
                  source, line_label(it->number));
    }
    data.points.push_back(parse_row(RowContext{fields, map, source, it->number}));
  }
  if (data.points.empty()) throw Error("the file has a header but no data rows", source);
  return data;
}

LossData read_loss_csv(const std::string& path) { return parse_loss_csv(detail::read_text_file(path), path); }

namespace {
template <typename Key>
std::vector<std::string> distinct_in_order(const std::vector<LossPoint>& points, Key key) {
  std::vector<std::string> out;
  for (const auto& p : points) {
    const std::string& value = key(p);
    if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
  }
  return out;
}
}  // namespace

std::vector<std::string> architectures(const std::vector<LossPoint>& points) {
  return distinct_in_order(points, [](const LossPoint& p) -> const std::string& { return p.arch; });
}

std::vector<std::string> domains(const std::vector<LossPoint>& points) {
  std::vector<std::string> out =
      distinct_in_order(points, [](const LossPoint& p) -> const std::string& { return p.domain; });
  out.erase(std::remove(out.begin(), out.end(), std::string{}), out.end());
  return out;
}

std::vector<std::string> cells(const std::vector<LossPoint>& points) {
  return distinct_in_order(points, [](const LossPoint& p) -> const std::string& { return p.cell; });
}

std::vector<LossPoint> points_of_arch(const std::vector<LossPoint>& points, const std::string& arch,
                                      const std::string& source) {
  std::vector<LossPoint> out;
  std::copy_if(points.begin(), points.end(), std::back_inserter(out), [&](const LossPoint& p) { return p.arch == arch; });
  if (out.empty()) {
    std::string present;
    for (const auto& name : architectures(points)) present += (present.empty() ? "" : ", ") + name;
    throw Error(fmt::format("no points of architecture \"{}\"; the data has: {}", arch,
                            present.empty() ? "no points" : present),
                source);
  }
  return out;
}

std::vector<LossPoint> points_of_domain(const std::vector<LossPoint>& points, const std::string& domain) {
  std::vector<LossPoint> out;
  std::copy_if(points.begin(), points.end(), std::back_inserter(out),
               [&](const LossPoint& p) { return p.domain == domain; });
  return out;
}

}  // namespace budget
