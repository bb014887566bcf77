#pragma once
// Plain tables for the terminal (aligned text), Markdown and CSV, and number formatting with SI
// prefixes. Shared by every subcommand (and the Python module) so outputs look alike.

#include <string>
#include <vector>

namespace budget::render {

enum class Align { left, right };

class Table {
 public:
  void add_column(std::string header, Align align = Align::right);
  /// A row must have one cell per column. Cells (and headers) are stored made printable
  /// (budget::printable_text): no newline, escape sequence or NUL from a name reaches any form.
  void add_row(std::vector<std::string> cells);
  /// A horizontal rule before the next row (text output only).
  void add_separator();

  std::string render_text() const;      ///< aligned columns, header underlined
  std::string render_markdown() const;  ///< GitHub-flavoured Markdown table
  std::string render_csv() const;       ///< RFC 4180 (cells quoted when needed), formulas neutralised (csv_cell)

  std::size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> separators_before_;
};

/// One CSV field (RFC 4180, quoted when needed) that a spreadsheet reads as text, never as a
/// formula: a cell starting with =, +, -, @, a tab or a carriage return gets a leading ' unless it
/// is a plain number ("-1.5", "+24%") or a lone "-" (OWASP, "CSV Injection").
std::string csv_cell(const std::string& cell);

/// `value` with an SI prefix and `significant` significant digits: 1.33e9 -> "1.33 G",
/// 6144 -> "6.14 k", 0.5 -> "500 m". Values under 1000 and over 0.1 get no prefix. `unit` is
/// appended after the prefix ("1.33 GFLOP").
std::string si(double value, const std::string& unit = "", int significant = 3);

/// A signed percentage with `decimals` decimals: 0.0291 -> "+2.91%".
std::string signed_percent(double fraction, int decimals = 2);

/// A percentage without sign: 0.946 -> "94.60%".
std::string percent(double fraction, int decimals = 2);

/// An integer with thousands separators: 3872226560 -> "3,872,226,560".
std::string grouped(long long value);

}  // namespace budget::render
