#pragma once
// One command's result, ready for every printer (nvbench / google-benchmark style: one result,
// several reporters). A command fills a Document once: its JSON form (the versioned object of
// docs/cli.md) and the blocks of its human forms (paragraphs of text and tables); render() then
// prints it as aligned text ("table"), Markdown, CSV or JSON. Each block says in which forms it
// appears, so a form that differs (a Markdown heading, a CSV-only table) is one more block, not
// another code path in the command.

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "budget_render/schema.hpp"
#include "budget_render/table.hpp"

namespace budget::render {

/// The four output forms of --format.
enum class Format { table, json, markdown, csv };

/// Where a block appears: a set of forms (JSON is the document's JSON object alone).
enum class Forms : unsigned {
  table = 1u << 0,
  markdown = 1u << 1,
  csv = 1u << 2,
  text = table | markdown,  ///< the aligned-text and Markdown forms
  all = table | markdown | csv,
};
constexpr Forms operator|(Forms a, Forms b) { return static_cast<Forms>(static_cast<unsigned>(a) | static_cast<unsigned>(b)); }
constexpr bool contains(Forms set, Format format) {
  switch (format) {
    case Format::table: return (static_cast<unsigned>(set) & static_cast<unsigned>(Forms::table)) != 0;
    case Format::markdown: return (static_cast<unsigned>(set) & static_cast<unsigned>(Forms::markdown)) != 0;
    case Format::csv: return (static_cast<unsigned>(set) & static_cast<unsigned>(Forms::csv)) != 0;
    case Format::json: return false;
  }
  return false;
}

class Document {
 public:
  Document();
  ~Document();
  Document(Document&&) noexcept;
  Document& operator=(Document&&) noexcept;

  /// The JSON form (an object whose first keys are "schema_version" and "budget_version" by the
  /// commands' convention; the Document does not add them). Null until set.
  nlohmann::ordered_json& json();
  const nlohmann::ordered_json& json() const;
  void set_json(nlohmann::ordered_json value);

  /// Text printed as given (the caller ends its lines) in the forms `where`.
  Document& text(std::string text, Forms where = Forms::text);
  /// A table: aligned columns in "table", a GitHub table in "markdown", RFC 4180 in "csv".
  Document& table(Table table, Forms where = Forms::all);

  /// Whether any block appears in `format` (json: whether the JSON form is set).
  bool has(Format format) const;

  /// The whole document in `format`. JSON: two-space indentation, invalid UTF-8 replaced (U+FFFD),
  /// one final newline; the other forms: the blocks of that form in order.
  std::string render(Format format) const;

 private:
  struct Block {
    std::string text;   ///< used when !is_table
    Table table;        ///< used when is_table
    bool is_table = false;
    Forms where = Forms::text;
  };
  std::unique_ptr<nlohmann::ordered_json> json_;
  std::vector<Block> blocks_;
};

/// JSON text as every budget-match output writes it: dump(2), invalid UTF-8 replaced, a final newline.
std::string json_text(const nlohmann::ordered_json& value);

}  // namespace budget::render
