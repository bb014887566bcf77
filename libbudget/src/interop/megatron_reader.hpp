#pragma once
// Private to the interop domain: Megatron-LM arguments parsed as argparse would (values by arity,
// types, choices), before they are turned into a layout (megatron_reader.cpp, megatron_run.cpp).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "budget/megatron_args.hpp"

namespace budget::interop_detail {

/// The arguments given, by argparse destination: the values of the last occurrence (argparse keeps
/// the last) and the option string it was given as (store_false aliases differ from the dest).
struct ParsedMegatronArgs {
  struct Given {
    const MegatronArgument* argument = nullptr;
    std::string name;
    std::vector<std::string> values;
  };
  std::map<std::string, Given> by_dest;
  std::string source;

  bool has(const std::string& dest) const { return by_dest.count(dest) > 0; }
  /// The one value of `dest` (arity 1), or nullopt when not given.
  std::optional<std::string> text(const std::string& dest) const;
  std::optional<std::int64_t> integer(const std::string& dest) const;
  std::optional<double> number(const std::string& dest) const;
  /// budget::Error naming the argument as given.
  [[noreturn]] void fail(const std::string& dest, const std::string& what) const;
};

/// Words → arguments: each word an option string of Megatron's table (--name or --name=value),
/// then its values by arity; budget::Error for anything argparse would refuse (unknown arguments
/// with a did-you-mean, missing values, ints and floats that do not parse, choices).
ParsedMegatronArgs parse_megatron_words(const std::vector<std::string>& words, const std::string& source);

/// Python's int() and float() of a decimal text (no underscores or spaces), or nullopt.
std::optional<std::int64_t> python_int(const std::string& text);
std::optional<double> python_float(const std::string& text);

}  // namespace budget::interop_detail
