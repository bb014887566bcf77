#pragma once
// Private to the interop domain: Megatron-LM arguments parsed as argparse would (values by arity,
// types, choices), before they are turned into a layout (megatron_reader.cpp, megatron_run.cpp).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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

/// read_megatron_args() of arguments parsed once (megatron_run.cpp): the run's layout, overlap, batch
/// and notes; read_megatron_timed_run() reads the kernel settings from the same parse.
MegatronRun read_parsed_megatron_args(const ParsedMegatronArgs& p, const ArchConfig& config, std::int64_t gpus);

/// The flex dispatcher's SM count (megatron_kernel_options.cpp): --moe-flex-dispatcher-num-sms, else
/// the deprecated --moe-deepep-num-sms / --moe-hybridep-num-sms it takes over (transformer_config.py
/// :964-973, routed in __post_init__ :1792-1810 at d98e8a64); 0 when none is given. p.fail for a
/// count outside [1, 4096] or two deprecated counts that differ.
std::int64_t flex_dispatcher_num_sms(const ParsedMegatronArgs& p);

/// --moe-layer-freq as Megatron-LM evaluates it (moe_layer_freq.cpp): one entry per layer of
/// `layers`, 1 = MoE, 0 = dense, 2 = any other integer; budget::Error (through p.fail) for a text
/// Megatron refuses, one not understood here, or a pattern of another length than `layers`.
std::vector<std::uint8_t> megatron_moe_layer_pattern(const ParsedMegatronArgs& p, const std::string& text,
                                                     std::int64_t layers);

/// What Python's int() or float() makes of a text (python_numbers.cpp states the grammar).
enum class PythonNumberStatus {
  value,            ///< read; the value is exact (int) or correctly rounded (float)
  not_a_number,     ///< Python refuses it too (ValueError)
  too_many_digits,  ///< an int of more than python_int_max_digits digits: Python >= 3.11 refuses it
  out_of_range,     ///< Python reads it, but not into an int64 (int) or a finite double (float: inf)
  non_finite,       ///< inf, infinity or nan spelled out (float): Python reads it; refused here
};
/// sys.int_info.default_max_str_digits (Python >= 3.11): int() of more digits raises ValueError.
constexpr std::size_t python_int_max_digits = 4300;
struct PythonInt {
  PythonNumberStatus status;
  std::int64_t value;
};
struct PythonFloat {
  PythonNumberStatus status;
  double value;
};
/// Python's int(text) (base 10) and float(text): whitespace around, '_' between digits, any length.
PythonInt read_python_int(std::string_view text);
PythonFloat read_python_float(std::string_view text);
/// Arguments as Python prints them (megatron_printed.cpp; the arguments block of a Megatron-LM log,
/// the Megatron-LM fields of a Megatron-Bridge config), keyed by argparse destination.
/// The argument whose destination is `dest` (the first of its rows), or nullptr.
const MegatronArgument* megatron_argument_by_dest(const std::string& dest);
/// A printed value as the parser takes it: an enum member printed "Class.member" as its name, a torch
/// dtype ("torch.float32") as its dtype choice (arguments.py:1078's map read backwards); else unchanged.
std::string printed_parser_value(const MegatronArgument& a, const std::string& value);
/// The command-line words of one printed value: None and a flag at its default give none; True a
/// store_true flag's name, False a store_false flag's --no-… name; a list its items. budget::Error
/// (naming `source`) for a value argparse would read as an option (one that begins with '-').
std::vector<std::string> printed_argument_words(const MegatronArgument& a, const std::string& value,
                                               const std::string& source);
/// Why the printed argument `dest` is left out (its feature printed off: "fp8 None: where Megatron
/// reads it"), or nullopt when it is read; `printed` the values by destination.
std::optional<std::string> printed_feature_off_reason(const std::string& dest,
                                                      const std::map<std::string, std::string>& printed);

/// The value when the status is `value` (Python's int() and float() above), else nullopt.
std::optional<std::int64_t> python_int(const std::string& text);
std::optional<double> python_float(const std::string& text);

}  // namespace budget::interop_detail
