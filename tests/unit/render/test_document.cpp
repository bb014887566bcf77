// The render library's Document (render/include/budget_render/document.hpp): one result, printed
// in each form with exactly the blocks of that form, in order; JSON as every output writes it.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "budget_render/document.hpp"
#include "budget_render/table.hpp"

using namespace budget::render;

namespace {
Table two_by_two() {
  Table t;
  t.add_column("name", Align::left);
  t.add_column("value");
  t.add_row({"a", "1"});
  t.add_row({"b, c", "22"});
  return t;
}
}  // namespace

TEST_CASE("render: a document prints each form's blocks in order", "[render][document]") {
  Document doc;
  doc.text("heading\n\n", Forms::table);
  doc.text("**heading**\n\n", Forms::markdown);
  doc.table(two_by_two());
  doc.text("\nfooter\n");  // Forms::text: table and Markdown, not CSV
  // Aligned text, written out by hand: widths 4 ("name", "b, c") and 5 ("value"), two spaces apart,
  // right-aligned numbers, trailing spaces trimmed.
  CHECK(doc.render(Format::table) ==
        "heading\n\n"
        "name  value\n"
        "----  -----\n"
        "a         1\n"
        "b, c     22\n"
        "\nfooter\n");
  CHECK(doc.render(Format::markdown) ==
        "**heading**\n\n"
        "| name | value |\n"
        "|---|---:|\n"
        "| a | 1 |\n"
        "| b, c | 22 |\n"
        "\nfooter\n");
  // CSV: the table alone; the cell with a comma quoted (RFC 4180).
  CHECK(doc.render(Format::csv) == "name,value\na,1\n\"b, c\",22\n");
  CHECK(doc.has(Format::table));
  CHECK(doc.has(Format::csv));
  CHECK_FALSE(doc.has(Format::json));
}

TEST_CASE("render: the JSON form is the document's object, two-space indented", "[render][document]") {
  Document doc;
  doc.set_json(nlohmann::ordered_json{{"schema_version", output_schema_version}, {"b", 1}, {"a", "x"}});
  doc.table(two_by_two(), Forms::csv);
  CHECK(doc.has(Format::json));
  // Keys stay in insertion order (ordered_json); one final newline.
  CHECK(doc.render(Format::json) == "{\n  \"schema_version\": 1,\n  \"b\": 1,\n  \"a\": \"x\"\n}\n");
  CHECK_FALSE(doc.has(Format::table));
  CHECK(doc.render(Format::table).empty());
  CHECK(doc.render(Format::csv) == "name,value\na,1\n\"b, c\",22\n");
}

TEST_CASE("render: JSON text replaces invalid UTF-8 instead of throwing", "[render][document]") {
  const nlohmann::ordered_json value{{"name", std::string("ok\xff")}};
  CHECK(json_text(value) == "{\n  \"name\": \"ok\xef\xbf\xbd\"\n}\n");
}

TEST_CASE("render: a moved document keeps its JSON and blocks", "[render][document]") {
  Document doc;
  doc.set_json(nlohmann::ordered_json{{"k", 2}});
  doc.text("t\n");
  Document moved = std::move(doc);
  CHECK(moved.render(Format::json) == "{\n  \"k\": 2\n}\n");
  CHECK(moved.render(Format::table) == "t\n");
}
