#include "layout_arguments.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <variant>

#include "budget/error.hpp"
#include "budget/layout_fields.hpp"
#include "budget/training_memory.hpp"
#include "arguments.hpp"

namespace budget_python {
namespace {

/// kwargs[key], when given, into `target` as an int (arguments.hpp: budget.Error naming key).
void read_int(const py::kwargs& kwargs, const char* key, std::int64_t& target) {
  if (kwargs.contains(key)) target = budget_python::int_argument(kwargs[key], key);
}

/// Whether the field table reads a row's keyword itself: the rows with a Python keyword, but those
/// whose Python form differs from their JSON one, read by hand below: replicate_loop_weights (a
/// setting here, derived in JSON) with loop_placement, and the pipeline split (a layout string
/// excludes the first/last counts, with its own message).
bool read_by_table(const budget::LayoutField& f) {
  if (f.python.empty() || f.role != budget::LayoutFieldRole::setting) return false;
  for (const std::string_view hand_read :
       {"loop_placement", "pipeline_layout", "first_stage_layers", "last_stage_layers"}) {
    if (f.name == hand_read) return false;
  }
  return true;
}

/// The keyword's value as the row's type (arguments.hpp: budget.Error naming the keyword).
budget::LayoutFieldValue keyword_value(const py::handle& value, const budget::LayoutField& f, const char* key) {
  switch (f.type) {
    case budget::LayoutFieldType::integer: return int_argument(value, key);
    case budget::LayoutFieldType::number: return float_argument(value, key);
    case budget::LayoutFieldType::boolean: return bool_argument(value, key);
    case budget::LayoutFieldType::choice:
    case budget::LayoutFieldType::text: return string_argument(value, key);
    case budget::LayoutFieldType::names: break;
  }
  throw std::logic_error("a layout field of a list type has no Python keyword");
}

/// pipeline_layout (a Megatron layout string; "" for none), else first_stage_layers and
/// last_stage_layers (-1: not given); both forms together: budget::Error.
void read_pipeline_split(const py::kwargs& kwargs, budget::ParallelLayout& l) {
  std::int64_t first = -1, last = -1;
  read_int(kwargs, "first_stage_layers", first);
  read_int(kwargs, "last_stage_layers", last);
  const std::optional<std::int64_t> first_given = first == -1 ? std::nullopt : std::optional<std::int64_t>(first);
  const std::optional<std::int64_t> last_given = last == -1 ? std::nullopt : std::optional<std::int64_t>(last);
  const std::string text =
      kwargs.contains("pipeline_layout") ? string_argument(kwargs["pipeline_layout"], "pipeline_layout") : std::string();
  if (text.empty()) {
    l.split = budget::PipelineSplit::first_last(first_given, last_given);
    return;
  }
  if (first_given || last_given) {
    throw budget::Error(
        "a pipeline layout string excludes first/last-stage layer counts and the embedding/loss in the split",
        "pipeline_layout");
  }
  l.split = budget::PipelineSplit::per_stage(text, "pipeline_layout");
}

/// A row's value as Python writes it: 4, 1.5, True, "bf16", ["core_attn"].
std::string python_value_text(const budget::LayoutFieldValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "True" : "False";
  return budget::layout_field_value_text(value);
}

/// A bound of an integer or a number row as text: 16777216, 1e+06.
std::string bound_text(const budget::LayoutField& f, double bound) {
  std::ostringstream out;
  if (f.type == budget::LayoutFieldType::integer) {
    out << static_cast<std::int64_t>(bound);
  } else {
    out << bound;
  }
  return out.str();
}

/// A row's Python type: "int 1 to 16777216", "float 0 to 1e+06", "bool", "\"bf16\" | \"fp16\" | \"fp32\"",
/// "str", "list of \"core_attn\" | ...".
std::string python_type_text(const budget::LayoutField& f) {
  std::string names;
  if (f.choices != nullptr) {
    for (const std::string_view name : f.choices()) {
      names += (names.empty() ? "\"" : " | \"") + std::string(name) + "\"";
    }
  }
  switch (f.type) {
    case budget::LayoutFieldType::integer:
      return "int " + bound_text(f, f.minimum) + " to " + bound_text(f, f.maximum);
    case budget::LayoutFieldType::number:
      return "float " + bound_text(f, f.minimum) + " to " + bound_text(f, f.maximum);
    case budget::LayoutFieldType::boolean: return "bool";
    case budget::LayoutFieldType::choice: return names;
    case budget::LayoutFieldType::text: return "str";
    case budget::LayoutFieldType::names: return "list of " + names;
  }
  return {};
}

}  // namespace

std::string layout_keyword_line(const budget::LayoutField& f) {
  return "  " + std::string(f.python) + " (" + python_type_text(f) + "; default " +
         python_value_text(f.get(budget::ParallelLayout{}, {})) + "): " + std::string(f.doc) + "\n";
}

std::string layout_docstring() {
  std::string doc =
      "Memory per GPU per pipeline stage under a parallel layout (docs/cluster.md): the dict of `budget-match "
      "layout ... --format json` without its schema keys: layout, memory (peak_bytes, stages[i] with layers, "
      "peak_bytes, by_component), notes. With a calibration profile (calibration=, default the cluster file's "
      "gpu.compute.calibration) the dict has `time`, the step time `budget-match layout` prints with its defaults. "
      "budget.Error when the layout does not divide, or an argument is unknown or of the wrong type.\n\n"
      "Keywords of the layout's field table (budget.layout_fields(); docs/calibration.md, \"Run files\"), each "
      "with its type, its default and what it is:\n";
  // The table's settings; a derived row's doc describes its JSON key, not its keyword (below).
  for (const budget::LayoutField& f : budget::layout_fields()) {
    if (!f.python.empty() && f.role == budget::LayoutFieldRole::setting) doc += layout_keyword_line(f);
  }
  // Hand-written: replicate_loop_weights is derived in JSON but a setting here; the rest are not rows.
  doc +=
      "  replicate_loop_weights (bool; default False): the same as loop_placement=\"replicated\"\n"
      "\nOther keywords:\n"
      "  nodes (int; default the cluster file's): nodes of the cluster\n"
      "  megatron_args=FILE (with gpus=N): the layout from Megatron-LM's arguments instead of the keywords "
      "(docs/megatron.md); adds megatron_args (what was read)\n"
      "  bridge_config=FILE.yaml: the same from a Megatron-Bridge config (--bridge-config)\n"
      "  calibration (a profile dict or path; default the cluster file's): the step time's profile\n"
      "  run_tokens (float above 0, at most 1e30): adds time.run, the run's steps, wall_clock_seconds and "
      "gpu_hours (--run-tokens)\n";
  return doc;
}

LayoutArguments::LayoutArguments(const py::kwargs& kwargs) {
  check_keywords(kwargs);
  read_table_fields(kwargs);
  read_loop_and_split(kwargs);
  read_files(kwargs);
}

void LayoutArguments::check_keywords(const py::kwargs& kwargs) {
  for (const auto& item : kwargs) {
    const std::string key = py::str(item.first).cast<std::string>();
    const std::vector<std::string> keys = known_keys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string allowed;
      for (const std::string& k : keys) allowed += (allowed.empty() ? "" : ", ") + k;
      throw budget::Error("unexpected keyword argument; allowed: " + allowed, key);
    }
  }
}

void LayoutArguments::read_table_fields(const py::kwargs& kwargs) {
  budget::ParallelLayout& l = layout;
  l.dp = 0;
  for (const budget::LayoutField& f : budget::layout_fields()) {
    const std::string key(f.python);
    if (!read_by_table(f) || !kwargs.contains(key)) continue;
    f.set(l, keyword_value(kwargs[key.c_str()], f, key.c_str()), key);
  }
  if (l.gpus == 0 && l.dp == 0) l.dp = 1;
}

void LayoutArguments::read_loop_and_split(const py::kwargs& kwargs) {
  budget::ParallelLayout& l = layout;
  bool replicate = false;
  if (kwargs.contains("replicate_loop_weights")) {
    replicate = bool_argument(kwargs["replicate_loop_weights"], "replicate_loop_weights");
  }
  if (replicate) l.loop_placement = budget::LoopPlacement::replicated;
  if (kwargs.contains("loop_placement")) {
    const budget::LoopPlacement p =
        budget::parse_loop_placement(string_argument(kwargs["loop_placement"], "loop_placement"), "loop_placement");
    if (replicate && p != budget::LoopPlacement::replicated) {
      throw budget::Error("replicate_loop_weights=True means loop_placement=\"replicated\"; give one", "loop_placement");
    }
    l.loop_placement = p;
  }
  read_pipeline_split(kwargs, l);
  if (kwargs.contains("nodes")) nodes = optional_int_argument(kwargs["nodes"], "nodes");
}

void LayoutArguments::read_files(const py::kwargs& kwargs) {
  if (kwargs.contains("megatron_args") && !kwargs["megatron_args"].is_none()) {
    megatron_args = string_argument(kwargs["megatron_args"], "megatron_args");
  }
  if (kwargs.contains("bridge_config") && !kwargs["bridge_config"].is_none()) {
    if (megatron_args) throw budget::Error("megatron_args and bridge_config both give the recipe; give one", "bridge_config");
    megatron_args = string_argument(kwargs["bridge_config"], "bridge_config");
    bridge_config = true;
  }
  if (kwargs.contains("calibration") && !kwargs["calibration"].is_none()) calibration = kwargs["calibration"];
  if (kwargs.contains("run_tokens")) {
    // As --run-tokens (a positive number of training tokens, at most 10^30).
    const double tokens = float_argument(kwargs["run_tokens"], "run_tokens");
    if (!(tokens > 0.0 && tokens <= 1e30)) {
      std::ostringstream message;
      message << "run_tokens = " << tokens << "; allowed: a number of tokens above 0, at most 1e30";
      throw budget::Error(message.str(), "run_tokens");
    }
    run_tokens = tokens;
  }
}

std::vector<std::string> LayoutArguments::known_keys() {
  std::vector<std::string> keys;
  for (const budget::LayoutField& f : budget::layout_fields()) {
    if (!f.python.empty()) keys.emplace_back(f.python);
  }
  for (const char* key : {"nodes", "megatron_args", "bridge_config", "calibration", "run_tokens"})
    keys.emplace_back(key);
  return keys;
}

std::vector<std::string> LayoutArguments::search_keys() {
  return {"micro_batch_size", "recompute", "distributed_optimizer", "cross_entropy_fusion", "capacity_factor",
          "vocab_divisible_by", "precision", "replicate_loop_weights", "loop_placement", "fsdp", "fsdp_sharding", "fp8",
          "fp8_param_gather", "cpu_offload_layers", "dispatcher", "megatron_args", "bridge_config", "moe_permute_fusion",
          "moe_grouped_gemm", "grad_reduce_in_bf16", "precision_aware_optimizer", "main_params_dtype", "exp_avg_dtype",
          "exp_avg_sq_dtype"};
}

void check_search_keywords(const py::kwargs& kwargs) {
  const std::vector<std::string> keys = LayoutArguments::search_keys();
  for (const auto& item : kwargs) {
    const std::string key = py::str(item.first).cast<std::string>();
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string allowed;
    for (const std::string& k : keys) allowed += (allowed.empty() ? "" : ", ") + k;
    throw budget::Error("not a keyword of the layout search (it chooses TP, PP, V, EP, ETP, CP, DP and the "
                        "micro-batch count); allowed besides the named arguments: " + allowed,
                        key);
  }
}

}  // namespace budget_python

namespace budget_python {
namespace {

const char* field_type_name(budget::LayoutFieldType type) {
  switch (type) {
    case budget::LayoutFieldType::integer: return "integer";
    case budget::LayoutFieldType::number: return "number";
    case budget::LayoutFieldType::boolean: return "boolean";
    case budget::LayoutFieldType::choice: return "choice";
    case budget::LayoutFieldType::text: return "text";
    case budget::LayoutFieldType::names: return "names";
  }
  return "";
}

/// A row as a dict; empty names, and the range of a row without one, are None.
py::dict layout_field_dict(const budget::LayoutField& f) {
  const auto name_or_none = [](std::string_view name) {
    return name.empty() ? py::object(py::none()) : py::object(py::str(std::string(name)));
  };
  const bool ranged = f.type == budget::LayoutFieldType::integer || f.type == budget::LayoutFieldType::number;
  py::dict row;
  row["name"] = std::string(f.name);
  row["alias"] = name_or_none(f.alias);
  row["python"] = name_or_none(f.python);
  row["type"] = field_type_name(f.type);
  row["role"] = f.role == budget::LayoutFieldRole::setting ? "setting" : "derived";
  row["minimum"] = ranged ? py::object(py::float_(f.minimum)) : py::object(py::none());
  row["maximum"] = ranged ? py::object(py::float_(f.maximum)) : py::object(py::none());
  py::list choices;
  if (f.choices != nullptr) {
    for (const std::string_view c : f.choices()) choices.append(std::string(c));
  }
  row["choices"] = f.choices != nullptr ? py::object(choices) : py::object(py::none());
  row["default"] = std::visit([](const auto& v) { return py::cast(v); }, f.get(budget::ParallelLayout{}, {}));
  row["doc"] = std::string(f.doc);
  return row;
}

}  // namespace

void bind_layout_fields(py::module_& m) {
  m.def(
      "layout_fields",
      []() {
        py::list rows;
        for (const budget::LayoutField& f : budget::layout_fields()) rows.append(layout_field_dict(f));
        return rows;
      },
      "The layout's field table (budget/layout_fields.hpp): one dict a field, in the order `budget-match layout "
      "--format json` writes the layout's keys: name (its JSON key), alias (an older key read as it, or None), "
      "python (its budget.layout keyword, or None), type (integer, number, boolean, choice, text, names), role "
      "(setting; derived: written, and checked where read), minimum and maximum (integer, number; else None), "
      "choices (choice, names; else None), default (its value in a default layout; a derived field's with an "
      "unpadded vocabulary of 0) and doc.");
}

}  // namespace budget_python
