// A Megatron-Bridge ConfigContainer YAML read as Megatron-LM arguments (budget/megatron_args.hpp,
// bridge_config_args(); docs/megatron.md, "Megatron-Bridge configs").
//
// The format is what ConfigContainer.to_yaml() writes (NVIDIA-NeMo/Megatron-Bridge@067f987d:
// src/megatron/bridge/training/utils/config_utils.py, on NVIDIA/Megatron-LM@2a75ac12:
// megatron/training/config/container.py:124-213 and yaml_utils.py): one mapping per dataclass with
// its class in `_target_`; an enum member as {_target_: Class, _call_: true, _args_: [value], _name_:
// member} (yaml_utils.py:159-170); a torch dtype as {_target_: torch.bfloat16, _call_: false}
// (yaml_utils.py:_torch_dtype_representer); a function as {_target_: module.name, _call_: false}.
//
// Sections are applied as Bridge's runtime does: model, train, optimizer, ddp and dataset side by side
// (two that set one argument differently are refused), then comm_overlap's values that are not null
// (comm_overlap.py:588-600), then every mixed_precision field (mixed_precision.py:138-157,
// update_config_with_precision_overrides), and TP overlap turned off with TP < 2 or without sequence
// parallelism (comm_overlap.py:442-448).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "base/json_reader.hpp"
#include "interop/bridge_detail.hpp"

namespace budget {
namespace interop_detail {
namespace {

enum class BridgeSectionMode { side_by_side, unless_null, overrides };

struct BridgeRead {
  std::string source;
  std::map<std::string, std::string> printed;  ///< destination → the value as Python prints it
  std::map<std::string, std::string> set_by;   ///< destination → "section.field" that set it
  BridgeConfigArgs out;
};

[[noreturn]] void bridge_fail(const BridgeRead& r, const std::string& path, const YAML::Node& node,
                              const std::string& what) {
  throw Error(fmt::format("{} (line {}): {}", path, node.Mark().line + 1, what), r.source);
}

bool yaml_true(const std::string& s) { return s == "true" || s == "True" || s == "TRUE"; }
bool yaml_false(const std::string& s) { return s == "false" || s == "False" || s == "FALSE"; }

/// A scalar as Python's str() prints it: YAML booleans True/False, null None, others their text.
std::string python_scalar(const YAML::Node& node) {
  if (node.IsNull()) return "None";
  const std::string text = node.Scalar();
  if (node.Tag() != "!" && yaml_true(text)) return "True";
  if (node.Tag() != "!" && yaml_false(text)) return "False";
  return text;
}

/// One value of a field as Python's str() prints it (what the log reader reads too).
std::string python_value(const BridgeRead& r, const std::string& path, const YAML::Node& node) {
  if (node.IsNull() || node.IsScalar()) return python_scalar(node);
  if (node.IsSequence()) {
    std::string list = "[";
    for (const YAML::Node& item : node) {
      if (!item.IsScalar()) bridge_fail(r, path, item, "a list item that is not a single value");
      const std::string text = python_scalar(item);
      const bool quoted = !interop_detail::python_float(text) && text != "True" && text != "False" && text != "None";
      list += (list.size() > 1 ? ", " : "") + (quoted ? "'" + text + "'" : text);
    }
    return list + "]";
  }
  const YAML::Node target = node["_target_"];
  if (!target || !target.IsScalar()) bridge_fail(r, path, node, "a mapping is not a value this field can hold");
  const YAML::Node call = node["_call_"];
  const bool called = call && call.IsScalar() && yaml_true(call.Scalar());
  if (called && node["_name_"] && node["_name_"].IsScalar()) return node["_name_"].Scalar();  // an enum member
  if (call && !called) return target.Scalar();  // a torch dtype or a function
  bridge_fail(r, path, node,
              fmt::format("an object of class {} is not a value this field can hold", target.Scalar()));
}

void set_printed(BridgeRead& r, const std::string& dest, const std::string& value, const std::string& path,
                 const YAML::Node& node, BridgeSectionMode mode) {
  if (mode == BridgeSectionMode::unless_null && value == "None") return;
  const auto it = r.printed.find(dest);
  if (it != r.printed.end() && it->second != value && mode == BridgeSectionMode::side_by_side) {
    bridge_fail(r, path, node, fmt::format("{} disagrees with {} {} (both set Megatron-LM's {})", value,
                                           r.set_by.at(dest), it->second, dest));
  }
  r.printed[dest] = value;
  r.set_by[dest] = path;
}

void read_bridge_only(BridgeRead& r, const BridgeFieldRow& row, const std::string& path, const YAML::Node& node) {
  BridgeOnlySettings& b = r.out.bridge;
  if (row.field == "disable_parameter_transpose_cache") {
    const std::string v = python_value(r, path, node);
    if (v != "True" && v != "False") bridge_fail(r, path, node, fmt::format("\"{}\" is not true or false", v));
    b.parameter_transpose_cache_disabled = v == "True";
    return;
  }
  // comm_overlap.tp_comm_overlap_cfg: a file (Megatron-LM's --tp-comm-overlap-cfg) or the settings.
  if (node.IsNull()) return;
  if (node.IsScalar()) {
    set_printed(r, std::string(row.dest), node.Scalar(), path, node, BridgeSectionMode::unless_null);
    return;
  }
  // The settings' names only (one level: a YAML alias is never expanded).
  if (!node.IsMap()) bridge_fail(r, path, node, "expected a file name or the userbuffer settings (a mapping)");
  std::string names;
  for (const auto& item : node) {
    if (!item.first.IsScalar()) bridge_fail(r, path, item.first, "a setting's name is not a single value");
    names += (names.empty() ? "" : ", ") + item.first.Scalar();
  }
  b.tp_comm_overlap_cfg = "{" + names + "}";
}

void read_bridge_field(BridgeRead& r, const std::string& section, const std::string& field, const YAML::Node& node,
                       BridgeSectionMode mode) {
  const std::string path = section + "." + field;
  const BridgeFieldRow* row = bridge_field_row(section, field);
  if (row != nullptr && row->kind == BridgeFieldKind::bridge_only) return read_bridge_only(r, *row, path, node);
  const std::string dest = row != nullptr ? std::string(row->dest) : field;
  if (megatron_argument_by_dest(dest) == nullptr) {
    r.out.inert.push_back(path);
    return;
  }
  const std::string value = python_value(r, path, node);
  const auto negate = [&](const std::string& v) { return v == "True" ? "False" : v == "False" ? "True" : v; };
  if (row != nullptr && row->kind == BridgeFieldKind::true_sets) {
    if (value == "True") set_printed(r, dest, value, path, node, BridgeSectionMode::overrides);
    if (value != "True" && value != "False") bridge_fail(r, path, node, fmt::format("\"{}\" is not true or false", value));
    r.out.mapped.push_back(fmt::format("{} {} → {}", path, value, value == "True" ? megatron_argument_by_dest(dest)->names.front() : "nothing"));
    return;
  }
  if (row != nullptr && row->kind == BridgeFieldKind::grad_reduce) {
    if (value == "None") return;
    if (value != "True" && value != "False") bridge_fail(r, path, node, fmt::format("\"{}\" is not true or false", value));
    set_printed(r, dest, value, path, node, mode);
    set_printed(r, "grad_reduce_in_bf16", negate(value), path, node, mode);
  } else {
    const bool negated = row != nullptr && row->kind == BridgeFieldKind::negated_flag;
    set_printed(r, dest, negated ? negate(value) : value, path, node, mode);
  }
  r.out.mapped.push_back(fmt::format("{} {} → {}", path, value, megatron_argument_by_dest(dest)->names.front()));
}

void read_bridge_section(BridgeRead& r, const std::string& section, const YAML::Node& node, BridgeSectionMode mode) {
  if (node.IsNull()) return;
  if (!node.IsMap()) bridge_fail(r, section, node, "expected the section's fields (a mapping)");
  const std::map<std::string, std::string>& known = bridge_fields().at(section);
  std::vector<std::string> names;
  for (const auto& [name, where] : known) names.push_back(name);
  std::vector<std::string> seen;
  for (const auto& item : node) {
    const std::string field = item.first.as<std::string>();
    if (std::find(seen.begin(), seen.end(), field) != seen.end()) {
      bridge_fail(r, section + "." + field, item.first, "appears twice");
    }
    seen.push_back(field);
    if (field == "_target_") continue;
    if (known.count(field) == 0) {
      const std::string guess = detail::closest_match(field, names);
      bridge_fail(r, section + "." + field, item.first,
                  fmt::format("is not a field of Megatron-Bridge's {} config at 067f987d{}", section,
                              guess.empty() ? "" : fmt::format("; did you mean {}.{}?", section, guess)));
    }
    read_bridge_field(r, section, field, item.second, mode);
  }
}

/// mixed_precision: the resolved MixedPrecisionConfig, or the name of the two recipes without FP8.
void read_bridge_mixed_precision(BridgeRead& r, const YAML::Node& node) {
  if (!node.IsScalar()) return read_bridge_section(r, "mixed_precision", node, BridgeSectionMode::overrides);
  const std::string name = node.Scalar();
  if (name != "bf16_mixed" && name != "fp16_mixed") {
    bridge_fail(r, "mixed_precision", node,
                fmt::format("the recipe name \"{}\" is not read (bf16_mixed and fp16_mixed are): give the resolved "
                            "MixedPrecisionConfig, as to_yaml() writes it after setup",
                            name));
  }
  set_printed(r, "bf16", name == "bf16_mixed" ? "True" : "False", "mixed_precision", node, BridgeSectionMode::overrides);
  set_printed(r, "fp16", name == "fp16_mixed" ? "True" : "False", "mixed_precision", node, BridgeSectionMode::overrides);
}

void read_bridge_env_vars(BridgeRead& r, const YAML::Node& node) {
  if (node.IsNull()) return;
  if (!node.IsMap()) bridge_fail(r, "env_vars", node, "expected NAME: value pairs");
  for (const auto& item : node) {
    if (!item.second.IsScalar()) bridge_fail(r, "env_vars." + item.first.as<std::string>(), item.second, "expected a value");
    r.out.bridge.env_vars.emplace_back(item.first.as<std::string>(), item.second.Scalar());
  }
}

/// comm_overlap.py:442-448: TP overlap asked for is turned off with TP < 2 or without sequence parallelism.
void apply_bridge_tp_overlap_rule(BridgeRead& r) {
  const auto it = r.printed.find("tp_comm_overlap");
  if (it == r.printed.end() || it->second != "True") return;
  const auto tp = r.printed.find("tensor_model_parallel_size");
  const bool tp_below_2 = tp == r.printed.end() || !python_int(tp->second) || *python_int(tp->second) < 2;
  const bool no_sp = r.printed.count("sequence_parallel") == 0 || r.printed.at("sequence_parallel") != "True";
  if (!tp_below_2 && !no_sp) return;
  it->second = "False";
  r.out.left_out.push_back(fmt::format("{} true: turned off by Bridge with {} (comm_overlap.py:442-448)", r.set_by.at("tp_comm_overlap"),
                                       tp_below_2 ? "TP < 2" : "sequence_parallel false"));
}

/// The nesting yaml-cpp will recurse through, bounded before it parses (a config is 4 levels deep;
/// 16 MiB of "[" would overflow the stack): flow brackets at most 64 deep and no line indented past
/// 256 columns (64 levels of 4). Brackets inside quoted scalars and comments do not count; a quote
/// opens a scalar only where YAML lets one begin (after indentation, ": ", "- ", "[", "{", ",", "?").
/// budget::Error naming the line.
void check_bridge_yaml_nesting(std::string_view text, const std::string& source) {
  std::size_t line = 1, column = 0, depth = 0;
  char quote = 0, previous = ' ';  // the last character outside blanks on this line, ' ' at its start
  bool indent = true, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      column = 0;
      indent = true;
      previous = ' ';
      continue;
    }
    indent = indent && c == ' ';
    if (indent && ++column > 256) throw Error(fmt::format("line {}: indented past 256 columns", line), source);
    if (quote != 0) {
      if (quote == '"' && c == '\\' && !escaped) {
        escaped = true;
        continue;
      }
      if (c == quote && !escaped) quote = 0;
      escaped = false;
      continue;
    }
    if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;  // a comment, to the end of the line
      continue;
    }
    const bool scalar_may_begin = previous == ' ' || previous == ':' || previous == '-' || previous == '[' ||
                                  previous == '{' || previous == ',' || previous == '?';
    if ((c == '\'' || c == '"') && scalar_may_begin) {
      quote = c;
    } else if (c == '[' || c == '{') {
      if (++depth > 64) throw Error(fmt::format("line {}: nested more than 64 levels deep", line), source);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    if (c != ' ' && c != '\t') previous = c;
  }
}

YAML::Node load_bridge_yaml(std::string_view text, const std::string& source) {
  check_bridge_yaml_nesting(text, source);
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("line {}: the YAML does not parse: {}", e.mark.line + 1, e.msg), source);
  }
}

void read_bridge_top_level(BridgeRead& r, const YAML::Node& root) {
  if (!root.IsMap()) bridge_fail(r, "the file", root, "expected a ConfigContainer (a mapping of sections)");
  const std::map<std::string, std::string>& container = bridge_fields().at("container");
  std::vector<std::string> names;
  for (const auto& [name, where] : container) names.push_back(name);
  std::vector<std::string> seen;
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) bridge_fail(r, key, item.first, "appears twice");
    seen.push_back(key);
    if (key == "_target_" || container.count(key) > 0) continue;
    const std::string guess = detail::closest_match(key, names);
    bridge_fail(r, key, item.first,
                fmt::format("is not a section of Megatron-Bridge's ConfigContainer at 067f987d{}",
                            guess.empty() ? "" : fmt::format("; did you mean {}?", guess)));
  }
  for (const char* section : {"model", "train", "optimizer", "ddp", "dataset"}) {
    if (root[section]) read_bridge_section(r, section, root[section], BridgeSectionMode::side_by_side);
  }
  if (root["comm_overlap"]) read_bridge_section(r, "comm_overlap", root["comm_overlap"], BridgeSectionMode::unless_null);
  if (root["mixed_precision"]) read_bridge_mixed_precision(r, root["mixed_precision"]);
  if (root["env_vars"]) read_bridge_env_vars(r, root["env_vars"]);
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    static const std::vector<std::string> read_here = {"model", "train", "optimizer", "ddp", "dataset",
                                                       "comm_overlap", "mixed_precision", "env_vars", "_target_"};
    if (std::find(read_here.begin(), read_here.end(), key) == read_here.end()) r.out.inert.push_back(key + " (section)");
  }
}

}  // namespace
}  // namespace interop_detail

BridgeConfigArgs bridge_config_args(std::string_view yaml_text, const std::string& source) {
  using namespace interop_detail;
  check_bridge_field_rows();
  BridgeRead r;
  r.source = source;
  try {
    read_bridge_top_level(r, load_bridge_yaml(yaml_text, source));
  } catch (const YAML::Exception& e) {  // a key that is not a single value, ...
    throw Error(fmt::format("line {}: {}", e.mark.line + 1, e.msg), source);
  }
  apply_bridge_tp_overlap_rule(r);
  r.out.bridge.given = true;
  for (const auto& [dest, value] : r.printed) {
    if (const auto reason = printed_feature_off_reason(dest, r.printed)) {
      if (value != "None") r.out.left_out.push_back(fmt::format("{} {} ({})", r.set_by.at(dest), value, *reason));
      continue;
    }
    const MegatronArgument& a = *megatron_argument_by_dest(dest);
    for (std::string& w : printed_argument_words(a, printed_parser_value(a, value), source)) r.out.words.push_back(std::move(w));
  }
  return r.out;
}

MegatronRun read_bridge_config(std::string_view yaml_text, const ArchConfig& config, std::int64_t gpus,
                               const std::string& source) {
  const BridgeConfigArgs args = bridge_config_args(yaml_text, source);
  MegatronRun run = read_megatron_args(args.words, config, gpus, source);
  run.bridge = args.bridge;
  if (args.bridge.parameter_transpose_cache_disabled) {
    run.read.push_back("model.disable_parameter_transpose_cache true: read, not modelled (TE drops the FP8 weight "
                       "transpose after each use: less memory, a transpose per micro-batch)");
  }
  if (!args.bridge.tp_comm_overlap_cfg.empty()) {
    run.read.push_back("comm_overlap.tp_comm_overlap_cfg " + args.bridge.tp_comm_overlap_cfg +
                       ": read, not modelled (the userbuffer settings of each TP GEMM)");
  }
  for (const auto& [name, value] : args.bridge.env_vars) {
    run.read.push_back(fmt::format("env_vars.{} = {}: read, not modelled", name, value));
  }
  for (const std::string& field : args.inert) run.not_modelled.push_back(field);
  for (const std::string& field : args.left_out) run.not_modelled.push_back(field);
  return run;
}

MegatronRun load_bridge_config(const std::string& path, const ArchConfig& config, std::int64_t gpus) {
  return read_bridge_config(detail::read_text_file(path), config, gpus, path);
}

Fp8Recipe load_bridge_fp8_recipe(const std::string& path) {
  return megatron_fp8_recipe(bridge_config_args(detail::read_text_file(path), path).words, path);
}

MegatronRun load_team_recipe(const std::string& path, bool bridge_config, const ArchConfig& config, std::int64_t gpus) {
  return bridge_config ? load_bridge_config(path, config, gpus) : load_megatron_args(path, config, gpus);
}

namespace {
/// A team's recipe file as Megatron-LM argument words: a Bridge config's arguments (`bridge_config`) or
/// the file's own words; what every load_team_*() reads.
std::vector<std::string> team_recipe_words(const std::string& path, bool bridge_config) {
  const std::string text = detail::read_text_file(path);
  return bridge_config ? bridge_config_args(text, path).words : megatron_words(text, path);
}
}  // namespace

MegatronKernelOptions load_team_kernel_options(const std::string& path, bool bridge_config, const ArchConfig& config,
                                               std::int64_t gpus) {
  return read_megatron_timed_run(team_recipe_words(path, bridge_config), config, gpus, path).kernels;
}

AttentionBackend load_team_attention_backend(const std::string& path, bool bridge_config) {
  return megatron_attention_backend(team_recipe_words(path, bridge_config), path);
}

MegatronKernelOptions load_team_cuda_graphs(const std::string& path, bool bridge_config) {
  return megatron_cuda_graphs(team_recipe_words(path, bridge_config), path);
}

TrainingRecipe load_team_training_recipe(const std::string& path, bool bridge_config) {
  return megatron_training_recipe(team_recipe_words(path, bridge_config), path);
}

}  // namespace budget
