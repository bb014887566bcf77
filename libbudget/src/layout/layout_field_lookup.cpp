// Lookups over the layout's field table (budget/layout_fields.hpp): a row by name, every field's value
// in table order (what a layout object's JSON writers walk) and the names a layout object may hold.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "budget/layout_fields.hpp"

namespace budget {

const LayoutField* find_layout_field(std::string_view name, bool alias) {
  for (const LayoutField& f : layout_fields()) {
    if (f.name == name || (alias && !f.alias.empty() && f.alias == name)) return &f;
  }
  return nullptr;
}

std::vector<std::pair<std::string_view, LayoutFieldValue>> layout_field_values(const ParallelLayout& layout,
                                                                               const LayoutDerivation& derivation) {
  std::vector<std::pair<std::string_view, LayoutFieldValue>> fields;
  for (const LayoutField& f : layout_fields()) fields.emplace_back(f.name, f.get(layout, derivation));
  return fields;
}

std::vector<std::string> layout_field_json_names() {
  std::vector<std::string> names;
  for (const LayoutField& f : layout_fields()) {
    names.emplace_back(f.name);
    if (!f.alias.empty()) names.emplace_back(f.alias);
  }
  return names;
}

}  // namespace budget
