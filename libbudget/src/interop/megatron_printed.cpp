// Arguments as Python prints them, back to command-line words (interop/megatron_reader.hpp): the
// arguments block of a Megatron-LM log (interop/megatron_log.cpp; docs/calibration.md, "Megatron-LM
// logs") and the fields of a Megatron-Bridge config that are Megatron-LM arguments
// (bridge_config.cpp; docs/megatron.md, "Megatron-Bridge configs"). _print_args (megatron/training/arguments.py:1990-2001 at
// d98e8a64) prints each value with Python's str() AFTER Megatron has converted and validated the
// arguments, so a log prints values the command line never holds:
//   - an enum member as "Class.member": --attention-backend's converter makes AttnBackend[name]
//     (megatron/core/transformer/enums.py:51), printed "AttnBackend.auto": read as its member's name;
//   - a dtype choice as its torch dtype: main_grads_dtype, main_params_dtype, exp_avg_dtype and
//     exp_avg_sq_dtype are mapped fp32 → torch.float32, bf16 → torch.bfloat16, fp16 → torch.float16,
//     fp8 → torch.uint8 (arguments.py:1078-1085): read back through the same map;
//   - the defaults of a feature that is off: Megatron prints fp8_recipe "delayed" with fp8 None, the
//     recompute method with no recompute granularity, the MoE router's top-k with no experts, the MLA
//     ranks without multi-latent attention. Megatron uses none of them then (the table below names
//     where each feature reads them), so they are left out of the words, as a command line that
//     turns the feature off would have them.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "interop/megatron_reader.hpp"

namespace budget::interop_detail {

namespace {

std::string trimmed_item(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

/// Python's str() of a list, "['a', 'b']" or "[1, 2]", as its items ("" items dropped).
std::vector<std::string> python_list_items(const std::string& value) {
  std::vector<std::string> items;
  std::string inner = value.substr(1, value.size() - 2);
  std::size_t start = 0;
  while (start <= inner.size()) {
    const std::size_t end = std::min(inner.find(',', start), inner.size());
    std::string item = trimmed_item(std::string_view(inner).substr(start, end - start));
    if (item.size() >= 2 && (item.front() == '\'' || item.front() == '"') && item.back() == item.front()) {
      item = item.substr(1, item.size() - 2);
    }
    if (!item.empty()) items.push_back(item);
    start = end + 1;
  }
  return items;
}

/// The command-line words of one printed argument (the rules above); nothing when it is left out.
std::vector<std::string> argument_words_of(const MegatronArgument& a, const std::string& value) {
  const auto named = [&a](bool negative) -> const std::string* {
    for (const std::string& n : a.names) {
      const bool is_negative = n.rfind("--no-", 0) == 0 || n.rfind("--disable-", 0) == 0;
      if (is_negative == negative) return &n;
    }
    return nullptr;
  };
  if (value == "None") return {};
  if (a.arity == "0") {
    const std::string* name = value == "True" ? named(false) : value == "False" ? named(true) : nullptr;
    // A store_false flag printed True (or a store_true printed False) is at its default.
    if (name == nullptr) return {};
    return {*name};
  }
  const std::string& flag = a.names.front();
  if (a.arity != "+" && a.arity != "*" && !value.empty() && value.front() == '[') {
    // A list Megatron evaluated from its argument (--moe-layer-freq): given back without the spaces
    // Python's str() puts after the commas.
    std::string compact;
    for (const char c : value) {
      if (c != ' ') compact += c;
    }
    return {flag, compact};
  }
  if (a.arity == "+" || a.arity == "*") {
    if (value.size() < 2 || value.front() != '[' || value.back() != ']') return {flag, value};
    std::vector<std::string> items = python_list_items(value);
    if (items.empty()) return {};
    items.insert(items.begin(), flag);
    return items;
  }
  return {flag, value};
}

/// Megatron's arguments by destination (the first of a destination's rows).
const std::map<std::string, const MegatronArgument*>& arguments_by_dest_table() {
  static const std::map<std::string, const MegatronArgument*> table = [] {
    std::map<std::string, const MegatronArgument*> t;
    for (const MegatronArgument& a : megatron_arguments()) t.emplace(a.dest, &a);
    return t;
  }();
  return table;
}

/// One line of the arguments block: "  dest ..... value".

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// "Class.member" (Python's str() of an enum member: the class name, a dot, the member name), or
/// nullopt. The class name begins with a capital letter, so a number ("1.0") never matches.
std::optional<std::string> enum_member_name(const std::string& value) {
  const std::size_t dot = value.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= value.size()) return std::nullopt;
  if (!(value[0] >= 'A' && value[0] <= 'Z')) return std::nullopt;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (i != dot && !identifier_char(value[i])) return std::nullopt;
  }
  return value.substr(dot + 1);
}

/// arguments.py:1078's dtype_map read backwards.
std::optional<std::string> dtype_choice(const std::string& value) {
  static const std::map<std::string, std::string> names = {{"torch.float32", "fp32"},
                                                           {"torch.bfloat16", "bf16"},
                                                           {"torch.float16", "fp16"},
                                                           {"torch.uint8", "fp8"}};
  const auto it = names.find(value);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

bool is_choice(const MegatronArgument& a, const std::string& value) {
  for (const std::string& c : a.choices) {
    if (c == value) return true;
  }
  return false;
}

/// A feature and the printed values that say it is off.
struct FeatureOff {
  const char* dest_prefix;  ///< the arguments of the feature: every destination that begins with it
  const char* feature;      ///< the destination that turns it on
  std::array<const char*, 2> off_values;  ///< its printed values when off
  const char* where;        ///< where Megatron reads the arguments only with the feature on (d98e8a64)
};

// The dependents are matched by prefix, except the recompute and MLA rows, which name one argument each.
constexpr FeatureOff features_off[] = {
    {"fp8_", "fp8", {"None", "None"}, "megatron/core/fp8_utils.py:832-929 (get_fp8_context: no FP8 recipe without fp8)"},
    {"recompute_method", "recompute_granularity", {"None", "selective"},
     "megatron/core/transformer/transformer_config.py:1900-1935 (full recompute only)"},
    {"recompute_num_layers", "recompute_granularity", {"None", "selective"},
     "megatron/core/transformer/transformer_config.py:1900-1935 (full recompute only)"},
    {"recompute_modules", "recompute_granularity", {"None", "full"},
     "megatron/core/transformer/transformer_config.py:1938-1966 (selective recompute only)"},
    {"fp4_", "fp4", {"None", "None"}, "megatron/core/fp4_utils.py:247-300 (get_fp4_context: no FP4 recipe without fp4)"},
    {"cuda_graph_modules", "cuda_graph_impl", {"none", "none"},
     "megatron/training/arguments.py:2047-2050 (the modules of CUDA graphs, none without an implementation)"},
    {"moe_", "num_experts", {"None", "None"},
     "megatron/core/models/gpt/gpt_layer_specs.py:157-313 (a dense MLP without num_experts)"},
    {"q_lora_rank", "multi_latent_attention", {"False", "False"}, "megatron/core/transformer/transformer_config.py (MLAConfig)"},
    {"kv_lora_rank", "multi_latent_attention", {"False", "False"}, "megatron/core/transformer/transformer_config.py (MLAConfig)"},
    {"qk_head_dim", "multi_latent_attention", {"False", "False"}, "megatron/core/transformer/transformer_config.py (MLAConfig)"},
    {"qk_pos_emb_head_dim", "multi_latent_attention", {"False", "False"}, "megatron/core/transformer/transformer_config.py (MLAConfig)"},
    {"v_head_dim", "multi_latent_attention", {"False", "False"}, "megatron/core/transformer/transformer_config.py (MLAConfig)"},
    {"num_query_groups", "group_query_attention", {"False", "False"}, "megatron/training/arguments.py (num_query_groups = heads without GQA)"},
    {"main_params_dtype", "use_precision_aware_optimizer", {"False", "False"},
     "megatron/core/optimizer/__init__.py:564-588 (the state dtypes with the precision-aware optimizer only)"},
    {"exp_avg_", "use_precision_aware_optimizer", {"False", "False"},
     "megatron/core/optimizer/__init__.py:564-588 (the state dtypes with the precision-aware optimizer only)"},
};

}  // namespace

std::vector<std::string> printed_argument_words(const MegatronArgument& a, const std::string& value,
                                               const std::string& source) {
  std::vector<std::string> words = argument_words_of(a, value);
  // argparse's _parse_optional (Python 3.12): a word that begins with '-' is read as an option unless
  // it is "-" alone, a negative number (_negative_number_matcher '^-\d+$|^-\d*\.\d+$') or holds a
  // space. Such a value cannot follow its flag on a command line, so the printed value is refused.
  static const std::regex negative_number(R"(^-\d+$|^-\d*\.\d+$)");
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w.front() != '-' || w.find(' ') != std::string::npos || std::regex_match(w, negative_number)) continue;
    throw Error(fmt::format("argument {} ({}) holds \"{}\": Megatron-LM's parser (argparse) reads a word that begins "
                            "with '-' as an option, so no command line gives this value",
                            a.dest, a.names.front(), w),
                source);
  }
  return words;
}

const MegatronArgument* megatron_argument_by_dest(const std::string& dest) {
  const auto it = arguments_by_dest_table().find(dest);
  return it == arguments_by_dest_table().end() ? nullptr : it->second;
}

std::string printed_parser_value(const MegatronArgument& a, const std::string& value) {
  if (const auto member = enum_member_name(value); member && (is_choice(a, *member) || a.type == "callable")) {
    return *member;
  }
  if (const auto dtype = dtype_choice(value); dtype && is_choice(a, *dtype)) return *dtype;
  return value;
}

std::optional<std::string> printed_feature_off_reason(const std::string& dest, const std::map<std::string, std::string>& printed) {
  for (const FeatureOff& f : features_off) {
    const std::string prefix = f.dest_prefix;
    const bool member = prefix.back() == '_' ? dest.rfind(prefix, 0) == 0 && dest != f.feature : dest == prefix;
    if (!member) continue;
    const auto it = printed.find(f.feature);
    // A feature the block does not print is treated as on: its arguments are kept and checked.
    if (it == printed.end() || (it->second != f.off_values[0] && it->second != f.off_values[1])) continue;
    return std::string(f.feature) + " " + it->second + ": " + f.where;
  }
  return std::nullopt;
}

}  // namespace budget::interop_detail
