#pragma once
// What a command line that CLI11 refused probably meant (CLI11 2.1 has no suggestions of its own),
// written once and used for every command: a mistyped subcommand, a mistyped option of the
// subcommand given (or of the top level: the matcher's --baseline ...), `budget-match match CFG`
// and a config file given where a subcommand belongs. main() appends it to CLI11's message.

#include <string>
#include <vector>

#include "cli11_fwd.hpp"

namespace budget::cli {

/// The candidate nearest `word` by Levenshtein distance when it is a slip (at most 2 edits, 1 for
/// words under 5 characters, and less than half the word), else empty. Ties: the first candidate.
std::string closest_word(const std::string& word, const std::vector<std::string>& candidates);

/// A hint for the arguments of a failed parse (argv[1..argc)), starting with " (" and ending with
/// ")", or empty: "did you mean --gpus?" for "--gpu" among the options of the subcommand on the
/// line (or of the top level), "did you mean the subcommand \"report\"?" for "reprot", the matcher's
/// form for "match CFG" or a lone config path.
std::string command_line_hint(const CLI::App& app, const std::vector<std::string>& args);

/// `budget-match match CFG [options]` rewritten as `budget-match --baseline CFG [options]` (and
/// `budget-match match --baseline ...` as `budget-match --baseline ...`): "match" is accepted as
/// the name of the matcher, which has no subcommand of its own. Other argument lists unchanged.
std::vector<std::string> match_alias(std::vector<std::string> args);

}  // namespace budget::cli
