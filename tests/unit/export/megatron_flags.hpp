#pragma once
// The Megatron-LM arguments as the export tests check them, from the library's one table of
// Megatron-LM's arguments at d98e8a64 (budget/megatron_args.hpp: every argument of Megatron's parser
// with its declaring source line, shared with the --megatron-args reader and the writer). This file
// only maps each row to the value kind the tests check.

#include <string>
#include <string_view>
#include <vector>

#include "budget/megatron_args.hpp"

namespace megatron_table {

enum class Kind {
  store_true,  ///< no value
  integer,     ///< type=int: a bare decimal integer
  floating,    ///< type=float: Python float() syntax
  choice,      ///< one of `choices`
  pattern,     ///< moe_freq_type (A:327): an int, or a list expression of ,0-9[]()+* (A:245-253)
};

struct Flag {
  std::string name;
  Kind kind;
  std::vector<std::string> choices;
  std::string source;
};

inline const std::vector<Flag>& flags() {
  static const std::vector<Flag> table = [] {
    std::vector<Flag> out;
    for (const budget::MegatronArgument& a : budget::megatron_arguments()) {
      Kind kind = Kind::store_true;
      if (a.dest == "moe_layer_freq") kind = Kind::pattern;
      else if (!a.choices.empty()) kind = Kind::choice;
      else if (a.type == "int") kind = Kind::integer;
      else if (a.type == "float") kind = Kind::floating;
      else if (a.arity != "0") continue;  // free-text values: the export writes none
      for (const std::string& name : a.names) out.push_back({name, kind, a.choices, a.source});
    }
    return out;
  }();
  return table;
}

/// validate_args' required arguments (A:1313-1316: num_layers, hidden_size, num_attention_heads,
/// max_position_embeddings) and the vocabulary gpt_config_from_args asserts
/// (argument_utils.py:478: --vocab-size or --padded-vocab-size).
inline const std::vector<std::string_view>& required() {
  static const std::vector<std::string_view> table{"--num-layers", "--hidden-size", "--num-attention-heads",
                                                   "--max-position-embeddings"};
  return table;
}

/// _eval_pattern (A:245-253): the characters a --moe-layer-freq list expression may contain.
inline constexpr std::string_view pattern_characters = ",0123456789[]()+*";

}  // namespace megatron_table
