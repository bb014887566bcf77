// Regression tests of the fourth audit (issue 33, docs/reliability.md) in the printers: names from
// data are printable in every human form, CSV cells are never live spreadsheet formulas, the time per
// token of a huge cluster keeps its digits.

#include <catch2/catch.hpp>

#include "budget_render/cluster_rank.hpp"
#include "budget_render/document.hpp"
#include "budget_render/table.hpp"

using namespace budget::render;

TEST_CASE("csv_cell neutralises formulas and keeps numbers", "[render]") {
  CHECK(csv_cell("=HYPERLINK(\"http://x\",\"y\")") == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  CHECK(csv_cell("=1+2") == "'=1+2");
  CHECK(csv_cell("@SUM(A1)") == "'@SUM(A1)");
  CHECK(csv_cell("+cmd|' /C calc'!A0") == "'+cmd|' /C calc'!A0");
  CHECK(csv_cell("-2+3") == "'-2+3");
  // Numbers and the placeholder stay as they are.
  for (const char* number : {"-1.5", "+24%", "-0.000123", "1e-06", "-3.2E+05", "42", ".5", "-"}) {
    INFO(number);
    CHECK(csv_cell(number) == number);
  }
  CHECK(csv_cell("a,b") == "\"a,b\"");
  CHECK(csv_cell("plain") == "plain");
}

TEST_CASE("table cells and text blocks reach a terminal printable", "[render]") {
  Table t;
  t.add_column("name", Align::left);
  t.add_row({"evil\x1b[2Jname"});
  t.add_row({"two\nlines"});
  Document doc;
  doc.text("config \x1b]0;owned\x07 on 8 GPUs\n");
  doc.table(t);
  for (const Format form : {Format::table, Format::markdown, Format::csv}) {
    const std::string out = doc.render(form);
    INFO(out);
    CHECK(out.find('\x1b') == std::string::npos);
    CHECK(out.find('\x07') == std::string::npos);
    CHECK(out.find("evil\\x1b[2Jname") != std::string::npos);
    CHECK(out.find("two\\nlines") != std::string::npos);
  }
  CHECK(doc.render(Format::table).rfind("config \\x1b]0;owned\\x07 on 8 GPUs\n", 0) == 0);
}

TEST_CASE("microseconds per token keep three significant digits below 1 us", "[render]") {
  CHECK(microseconds_per_token_text(6.2041e-6) == "6.204");
  CHECK(microseconds_per_token_text(6.2041e-12) == "6.2e-06");
  CHECK(microseconds_per_token_text(1.234e-7) == "0.123");
  CHECK(microseconds_per_token_text(0.0) == "0.000");
}
