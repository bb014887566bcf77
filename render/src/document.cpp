#include "budget_render/document.hpp"

#include <nlohmann/json.hpp>

#include "budget/text_escape.hpp"

namespace budget::render {

Document::Document() : json_(std::make_unique<nlohmann::ordered_json>()) {}
Document::~Document() = default;
Document::Document(Document&&) noexcept = default;
Document& Document::operator=(Document&&) noexcept = default;

nlohmann::ordered_json& Document::json() { return *json_; }
const nlohmann::ordered_json& Document::json() const { return *json_; }
void Document::set_json(nlohmann::ordered_json value) { *json_ = std::move(value); }

Document& Document::text(std::string text, Forms where) {
  Block block;
  block.text = std::move(text);
  block.where = where;
  blocks_.push_back(std::move(block));
  return *this;
}

Document& Document::table(Table table, Forms where) {
  Block block;
  block.table = std::move(table);
  block.is_table = true;
  block.where = where;
  blocks_.push_back(std::move(block));
  return *this;
}

bool Document::has(Format format) const {
  if (format == Format::json) return !json_->is_null();
  for (const Block& block : blocks_) {
    if (contains(block.where, format)) return true;
  }
  return false;
}

std::string Document::render(Format format) const {
  if (format == Format::json) return json_text(*json_);
  std::string out;
  for (const Block& block : blocks_) {
    if (!contains(block.where, format)) continue;
    if (!block.is_table) {
      out += terminal_text(block.text);  // names from data in text blocks: printable lines
    } else if (format == Format::markdown) {
      out += block.table.render_markdown();
    } else if (format == Format::csv) {
      out += block.table.render_csv();
    } else {
      out += block.table.render_text();
    }
  }
  return out;
}

std::string json_text(const nlohmann::ordered_json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace budget::render
