#pragma once
/// \file
/// The edit distance behind every "did you mean" suggestion: the library's readers (unknown keys,
/// names, Megatron-LM arguments) and the command line's (options, subcommands).
///
/// Thread safety: a pure function.

#include <cstddef>
#include <string_view>

namespace budget {

/// Levenshtein distance between `a` and `b`: the fewest single-byte insertions, deletions and
/// substitutions that turn one into the other. One row of the table at a time: O(|a|·|b|) time,
/// O(|b|) memory. Example: edit_distance("kitten", "sitting") = 3.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace budget
