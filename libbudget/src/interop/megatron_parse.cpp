// Megatron-LM arguments parsed as its argparse parser would (budget/megatron_args.hpp): option
// strings from the table only (allow_abbrev=False, megatron/training/arguments.py:120 at d98e8a64),
// values by arity, types and choices checked.
#include <limits>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "base/json_reader.hpp"
#include "interop/megatron_reader.hpp"

namespace budget::interop_detail {

namespace {

/// Why a value of a type=int or type=float argument is refused, or "" when it is read.
std::string megatron_number_problem(const std::string& type, const std::string& value) {
  const std::string shown = fmt::format("\"{}\"", printable_text(value, 60));
  if (type == "int") {
    switch (read_python_int(value).status) {
      case PythonNumberStatus::value:
      case PythonNumberStatus::out_of_range:  // Python reads it; a modelled argument refuses it when used
        return {};
      case PythonNumberStatus::too_many_digits:
        return fmt::format("{} has more than {} digits, which Python's int() refuses (sys.int_info."
                           "default_max_str_digits)",
                           shown, python_int_max_digits);
      default:
        return shown + " is not an integer (Python's int(): digits, '_' between digits, a sign, spaces around)";
    }
  }
  switch (read_python_float(value).status) {
    case PythonNumberStatus::value:
      return {};
    case PythonNumberStatus::out_of_range:
      return fmt::format("{} is outside the range of a double (|x| <= {:g}): Python's float() reads it as inf, "
                         "which is not modelled",
                         shown, std::numeric_limits<double>::max());
    case PythonNumberStatus::non_finite:
      return shown + " is not finite: Python's float() reads it, but an infinite or NaN setting is not modelled";
    default:
      return shown + " is not a number";
  }
}

}  // namespace

std::optional<std::string> ParsedMegatronArgs::text(const std::string& dest) const {
  const auto it = by_dest.find(dest);
  if (it == by_dest.end() || it->second.values.empty()) return std::nullopt;
  return it->second.values.front();
}

std::optional<std::int64_t> ParsedMegatronArgs::integer(const std::string& dest) const {
  const std::optional<std::string> t = text(dest);
  if (!t) return std::nullopt;
  const PythonInt n = read_python_int(*t);
  if (n.status == PythonNumberStatus::out_of_range) {
    fail(dest, fmt::format("\"{}\" is outside the 64-bit integer range this tool reads (|x| <= {})",
                           printable_text(*t, 60), std::numeric_limits<std::int64_t>::max()));
  }
  if (n.status != PythonNumberStatus::value) fail(dest, megatron_number_problem("int", *t));
  return n.value;
}

std::optional<double> ParsedMegatronArgs::number(const std::string& dest) const {
  const std::optional<std::string> t = text(dest);
  if (!t) return std::nullopt;
  const PythonFloat x = read_python_float(*t);
  if (x.status != PythonNumberStatus::value) fail(dest, megatron_number_problem("float", *t));
  return x.value;
}

void ParsedMegatronArgs::fail(const std::string& dest, const std::string& what) const {
  const auto it = by_dest.find(dest);
  const std::string name = it == by_dest.end() ? "--" + dest : it->second.name;
  throw Error(fmt::format("{}: {}", name, what), source);
}

namespace {

/// Whether `word` would be taken by argparse as an option string rather than a value: it starts
/// with '-' and is not a negative number (Megatron's parser has no option that looks like one).
/// A number here is anything Python's float() reads, of any length (-1e400 and -inf included, to
/// be refused by name as values); argparse's own test (^-\d+$|^-\d*\.\d+$) is narrower: a word such
/// as -1e5 is a value here where argparse would report a missing argument.
bool megatron_looks_like_option(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return false;
  return read_python_float(word).status == PythonNumberStatus::not_a_number;
}

[[noreturn]] void refuse_unknown_megatron_argument(const std::string& name, const std::string& source) {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> names;
    for (const MegatronArgument& a : megatron_arguments()) names.insert(names.end(), a.names.begin(), a.names.end());
    return names;
  }();
  const std::string guess = detail::closest_match(name, all);
  throw Error(fmt::format("{} is not an argument of Megatron-LM at {}{}", name, megatron_arguments_commit().substr(0, 8),
                          guess.empty() ? "" : fmt::format("; did you mean {}?", guess)),
              source);
}

void check_megatron_value(const MegatronArgument& a, const std::string& name, const std::string& value,
                          const std::string& source) {
  if (a.type == "int" || a.type == "float") {
    if (const std::string problem = megatron_number_problem(a.type, value); !problem.empty()) {
      throw Error(fmt::format("{}: {}", name, problem), source);
    }
  }
  if (!a.choices.empty() && std::find(a.choices.begin(), a.choices.end(), value) == a.choices.end()) {
    std::string allowed;
    for (const std::string& c : a.choices) allowed += (allowed.empty() ? "" : ", ") + c;
    throw Error(fmt::format("{}: \"{}\" is not one of Megatron's choices: {}", name, value, allowed), source);
  }
}

}  // namespace

ParsedMegatronArgs parse_megatron_words(const std::vector<std::string>& words, const std::string& source) {
  ParsedMegatronArgs out;
  out.source = source;
  for (std::size_t i = 0; i < words.size();) {
    const std::string& word = words[i++];
    if (word.rfind("--", 0) != 0) {
      throw Error(fmt::format("\"{}\" is not an argument (Megatron's arguments begin with --; give the arguments "
                              "alone, without the launcher or script)",
                              word),
                  source);
    }
    const std::size_t eq = word.find('=');
    const std::string name = word.substr(0, eq);
    const MegatronArgument* a = find_megatron_argument(name);
    if (a == nullptr) refuse_unknown_megatron_argument(name, source);
    ParsedMegatronArgs::Given given{a, name, {}};
    if (eq != std::string::npos) {
      if (a->arity == "0") throw Error(fmt::format("{} takes no value", name), source);
      given.values.push_back(word.substr(eq + 1));
    } else if (a->arity != "0") {
      const bool many = a->arity == "+" || a->arity == "*";
      while (i < words.size() && !megatron_looks_like_option(words[i])) {
        given.values.push_back(words[i++]);
        if (!many) break;
      }
      if (given.values.empty() && (a->arity == "1" || a->arity == "+")) {
        throw Error(fmt::format("{} expects {}", name, a->arity == "1" ? "a value" : "one or more values"), source);
      }
    }
    for (const std::string& v : given.values) check_megatron_value(*a, name, v, source);
    out.by_dest[a->dest] = std::move(given);
  }
  return out;
}

}  // namespace budget::interop_detail
