#pragma once
// The keywords of budget.layout() and budget.layout_search() (docs/python.md, docs/cluster.md): a
// parallel layout, its recipe and the files that give one, each converted by arguments.hpp.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "budget/layout_fields.hpp"
#include "budget/parallel_layout.hpp"

namespace budget_python {

/// layout()'s keywords, each converted by python/arguments.hpp (budget.Error naming it); an
/// unknown keyword is budget.Error too.
struct LayoutArguments {
  budget::ParallelLayout layout;
  std::optional<std::int64_t> nodes;
  std::optional<std::string> megatron_args;  ///< megatron_args=FILE: the layout from Megatron-LM's arguments
  bool bridge_config = false;  ///< bridge_config=FILE.yaml gave the file (a Megatron-Bridge config; --bridge-config)
  std::optional<double> run_tokens;          ///< run_tokens=N: the run's steps, wall clock and GPU-hours

  /// calibration=PROFILE (a dict or a path): the step time's profile; default the cluster file's.
  pybind11::object calibration = pybind11::none();

  explicit LayoutArguments(const pybind11::kwargs& kwargs);

  /// Every keyword layout() takes: the field table's Python keywords, then nodes and the files.
  static std::vector<std::string> known_keys();

  /// The keywords layout_search() takes beside its named arguments: the recipe (LayoutRecipe) and
  /// megatron_args; the parallel sizes and the pipeline split are the search's to choose.
  static std::vector<std::string> search_keys();

 private:
  /// An unknown keyword: budget::Error naming it, with the keywords allowed.
  void check_keywords(const pybind11::kwargs& kwargs);

  /// The keywords of the layout's field table (budget/layout_fields.hpp: LayoutField::python), each
  /// converted to its row's type and set by the row (dp 1 when neither gpus nor dp is given).
  void read_table_fields(const pybind11::kwargs& kwargs);

  /// replicate_loop_weights and loop_placement, the pipeline split and nodes (their Python forms
  /// differ from the table's JSON ones).
  void read_loop_and_split(const pybind11::kwargs& kwargs);

  /// megatron_args= or bridge_config= (one recipe file), calibration= and run_tokens=.
  void read_files(const pybind11::kwargs& kwargs);
};

/// One line of layout()'s help for a row of the layout's field table (budget/layout_fields.hpp): "  KEYWORD
/// (TYPE; default VALUE): DOC", TYPE its range (int, float) or its names (choice), VALUE the row's value in a
/// default ParallelLayout, as Python writes it.
std::string layout_keyword_line(const budget::LayoutField& field);

/// layout()'s docstring: what it returns, the keyword line of every setting row with a Python keyword in
/// table order, then the keywords whose form is not a row's (written by hand).
std::string layout_docstring();

/// budget.layout_fields(): the layout's field table as a list of dicts (name, alias, python, type, role,
/// minimum, maximum, choices, default, doc).
void bind_layout_fields(pybind11::module_& m);

/// layout_search()'s keywords: budget::Error naming one that is not a recipe keyword.
void check_search_keywords(const pybind11::kwargs& kwargs);

}  // namespace budget_python
