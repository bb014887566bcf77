#pragma once
/// \file
/// The layout's field table (issue 40): one row per scalar field of a ParallelLayout and its
/// TrainingRecipe that the layout's JSON forms and the Python keywords name, with its JSON name, the
/// older name still read (run files' "vp"), its Python keyword, its type and range (or its choices,
/// from the enum's name table), a one-line doc and the member it reads and writes. The default of a
/// field is its value in a default ParallelLayout (get(ParallelLayout{}, {})).
///
/// Driven by it: the "layout" object of `budget-match layout --format json` (every row, in table
/// order, layout_field_values(), render/'s training_memory_json()), the "layout" object of a run file
/// (runs/run_reader.cpp: read_layout_fields(), which reads the written object back to an equal
/// layout: every setting of a ParallelLayout has a row), the Python keywords of budget.layout and the
/// keyword part of its help (python/layout_arguments.cpp), and the help and binding of `budget-match layout`'s
/// plain scalar flags (cli/commands/layout_options.cpp, field_flags: the flag names stay the command
/// line's own; the flags whose form differs, --recompute full:N, --no-flash-attention, --precision,
/// the optimizer dtypes, are written there by hand).
///
/// Thread safety: the table is built once (a function-local static) and read only.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "budget/parallel_layout.hpp"

namespace budget {

/// How a field's value is written in JSON and given in Python.
enum class LayoutFieldType {
  integer,  ///< an integer in [minimum, maximum]
  number,   ///< a real number in [minimum, maximum]
  boolean,
  choice,  ///< one of choices() (an enum's names)
  text,    ///< a string the row parses (recompute's none | selective | full:N ..., Megatron's layout string)
  names,   ///< a list of choices() (recompute_modules)
};

/// A field's role: a setting is read and written; a derived field is written from the layout and,
/// where read, must equal what the layout derives (a budget::Error names the field, the value given
/// and the value derived).
enum class LayoutFieldRole { setting, derived };

/// One value of a field: std::int64_t (integer), double (number), bool (boolean), std::string
/// (choice, text), std::vector<std::string> (names).
using LayoutFieldValue = std::variant<std::int64_t, double, bool, std::string, std::vector<std::string>>;

/// What a derived field needs beyond the layout: the vocabulary as trained (ParallelLayout::padded_vocab()
/// of the config's vocab_size).
struct LayoutDerivation {
  std::int64_t padded_vocab = 0;
};

struct LayoutField {
  std::string_view name;    ///< JSON key (run files' "layout", `layout --format json`'s "layout")
  std::string_view alias;   ///< an older JSON key read as the same field ("vp"); empty: none
  std::string_view python;  ///< the budget.layout keyword; empty: not a keyword
  LayoutFieldType type = LayoutFieldType::integer;
  LayoutFieldRole role = LayoutFieldRole::setting;
  bool required = false;  ///< a run file's "layout" must give it (micro_batch_size, micro_batches)
  double minimum = 0.0;   ///< integer, number: the range read from JSON
  double maximum = 0.0;
  /// choice, names: the allowed names (an enum's to_string() names in declaration order); else empty.
  std::vector<std::string_view> (*choices)() = nullptr;
  std::string_view doc;  ///< one line: what it is, with the Megatron-LM argument that sets it
  /// The field's value in `layout` (derived fields: from the layout and `derivation`).
  LayoutFieldValue (*get)(const ParallelLayout& layout, const LayoutDerivation& derivation) = nullptr;
  /// Sets the field from `value` (of the row's type; a choice is parsed: budget::Error naming `where`
  /// and the allowed names). Null for derived fields.
  void (*set)(ParallelLayout& layout, const LayoutFieldValue& value, const std::string& where) = nullptr;
};

/// The table, in the order `layout --format json` writes the layout's keys (it writes every row).
const std::vector<LayoutField>& layout_fields();

/// The row named `name` (its JSON name, or its alias when `alias` is true), or nullptr.
const LayoutField* find_layout_field(std::string_view name, bool alias = false);

/// Every field in table order with its value in `layout`: what every JSON writer of a layout object
/// walks (render/'s layout_json()), so that the written object is the one a run file's "layout" reads
/// back.
std::vector<std::pair<std::string_view, LayoutFieldValue>> layout_field_values(const ParallelLayout& layout,
                                                                               const LayoutDerivation& derivation);

/// Every JSON name and alias a layout object may hold, in table order (the "allowed:" list of an
/// unknown key).
std::vector<std::string> layout_field_json_names();

/// A field's value as text for docs and errors: 4, 1.5, true, "bf16", ["mlp", "moe"].
std::string layout_field_value_text(const LayoutFieldValue& value);

}  // namespace budget
