#include "budget_render/table.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "budget/text_escape.hpp"

namespace budget::render {

// Cells are made printable (budget::printable_text) as they are added: a name from data (a config,
// cluster or GPU name) cannot bring a newline, an escape sequence or a NUL into any form.
void Table::add_column(std::string header, Align align) {
  headers_.push_back(printable_text(header));
  aligns_.push_back(align);
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != headers_.size()) {
    throw std::logic_error(fmt::format("table row has {} cells for {} columns", cells.size(), headers_.size()));
  }
  for (std::string& cell : cells) cell = printable_text(cell);
  rows_.push_back(std::move(cells));
}

void Table::add_separator() { separators_before_.push_back(rows_.size()); }

namespace {
// Display width of UTF-8 text: counts code points (every character we print is single-width).
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0u) != 0x80u;
  return n;
}

std::string pad(const std::string& s, std::size_t width, Align align) {
  const std::size_t w = display_width(s);
  if (w >= width) return s;
  const std::string fill(width - w, ' ');
  return align == Align::left ? s + fill : fill + s;
}
}  // namespace

std::string Table::render_text() const {
  std::vector<std::size_t> widths(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    widths[c] = display_width(headers_[c]);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c) out += "  ";
      out += pad(cells[c], widths[c], aligns_[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string rule;
  for (std::size_t c = 0; c < widths.size(); ++c) {
    if (c) rule += "  ";
    rule += std::string(widths[c], '-');
  }
  rule += "\n";
  std::string out = line(headers_) + rule;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    if (std::find(separators_before_.begin(), separators_before_.end(), r) != separators_before_.end() && r > 0) {
      out += rule;
    }
    out += line(rows_[r]);
  }
  return out;
}

std::string Table::render_markdown() const {
  // Markdown drops leading spaces: keep indentation (sub-rows) as non-breaking spaces.
  const auto keep_indent = [](const std::string& cell) {
    std::size_t spaces = 0;
    while (spaces < cell.size() && cell[spaces] == ' ') ++spaces;
    std::string out;
    for (std::size_t i = 0; i < spaces; ++i) out += "&nbsp;";
    return out + cell.substr(spaces);
  };
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& cell : cells) out += " " + keep_indent(cell) + " |";
    return out + "\n";
  };
  std::string out = line(headers_) + "|";
  for (auto align : aligns_) out += align == Align::left ? "---|" : "---:|";
  out += "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

namespace {
/// A cell that is a plain number (optionally signed, with a fraction, an exponent or a trailing
/// '%'), or a lone "-": what a spreadsheet may read as a value without running anything.
bool plain_number_cell(std::string_view cell) {
  if (cell == "-") return true;
  if (!cell.empty() && cell.back() == '%') cell.remove_suffix(1);
  if (!cell.empty() && (cell.front() == '+' || cell.front() == '-')) cell.remove_prefix(1);
  const auto digits = [&cell] {
    std::size_t n = 0;
    while (n < cell.size() && cell[n] >= '0' && cell[n] <= '9') ++n;
    cell.remove_prefix(n);
    return n;
  };
  std::size_t mantissa = digits();
  if (!cell.empty() && cell.front() == '.') {
    cell.remove_prefix(1);
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (!cell.empty() && (cell.front() == 'e' || cell.front() == 'E')) {
    cell.remove_prefix(1);
    if (!cell.empty() && (cell.front() == '+' || cell.front() == '-')) cell.remove_prefix(1);
    if (digits() == 0) return false;
  }
  return cell.empty();
}
}  // namespace

std::string csv_cell(const std::string& cell) {
  // OWASP "CSV Injection": a cell starting with = + - @ (or a tab or carriage return) is a formula
  // to a spreadsheet; a leading ' makes it text. Numbers (-1.5, +24%) are left as they are.
  std::string text = cell;
  if (!text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos &&
      !plain_number_cell(text)) {
    text.insert(0, 1, '\'');
  }
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string Table::render_csv() const {
  const auto quote = [](const std::string& cell) { return csv_cell(cell); };
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + quote(cells[c]);
    return out + "\n";
  };
  std::string out = line(headers_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string si(double value, const std::string& unit, int significant) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  if (value == 0.0) return unit.empty() ? "0" : "0 " + unit;
  static constexpr const char* prefixes[] = {"a", "f", "p", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  const double magnitude = std::fabs(value);
  int exponent3 = static_cast<int>(std::floor(std::log10(magnitude) / 3.0));
  if (magnitude >= 0.1 && magnitude < 1000.0) exponent3 = 0;
  exponent3 = std::clamp(exponent3, -6, 6);
  double scaled = value / std::pow(10.0, 3 * exponent3);
  // Digits after the point so that `significant` digits are shown.
  int integer_digits = std::fabs(scaled) < 1.0 ? 1 : static_cast<int>(std::floor(std::log10(std::fabs(scaled)))) + 1;
  int decimals = std::max(0, significant - integer_digits);
  std::string number = fmt::format("{:.{}f}", scaled, decimals);
  const std::string prefix = prefixes[exponent3 + 6];
  if (prefix.empty() && unit.empty()) return number;
  return number + " " + prefix + unit;
}

std::string signed_percent(double fraction, int decimals) {
  return fmt::format("{:+.{}f}%", 100.0 * fraction, decimals);
}

std::string percent(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", 100.0 * fraction, decimals);
}

std::string grouped(long long value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

}  // namespace budget::render
