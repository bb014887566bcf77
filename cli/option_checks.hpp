#pragma once
// Validators for budget-match's numeric options, stricter than CLI11's own conversions (which
// let "nan" pass a positivity check, saturate 2^64 to 2^64 - 1, accept "-1" for an unsigned seed
// and read "010" as octal): a value is accepted only when it converts exactly and lies in range,
// and the message states the range in short form (1.8e+308, not 309 digits). Also the one way a
// command reports an option-dependency error.

#include <cstdint>
#include <string>
#include <vector>

#include "cli11_fwd.hpp"

namespace budget::cli {

/// A real number x, finite, with 0 < x <= max (denormals such as 5e-324 included).
CLI::Validator positive_real(double max);

/// A real number x, finite, with 0 <= x <= max ("nan", "inf" and "-0.5" refused).
CLI::Validator non_negative_real(double max);

/// An option-dependency error: an option given without one it needs or with one it excludes, or
/// a choice among options not made ("give exactly one of ..."). Exit 64 like CLI11's own
/// ->needs()/->excludes() errors (docs/cli.md, exit codes: a bad command line); the message is
/// "<option>: <message>". A requirement that depends on a file's contents is an input error (2).
[[noreturn]] void throw_option_dependency_error(const std::string& option, const std::string& message);
/// After parsing: when `option` was given on `command`, every option of `needed` must be too;
/// otherwise an option-dependency error (exit 64) at `option`: "--cluster needs --gpus (why)". Names must be options
/// `command` declares.
void check_option_needs(const CLI::App& command, const std::string& option, const std::vector<std::string>& needed,
                        const std::string& why);

/// An output file's path: refused when empty ("--out ''" names no file; without the check it read as
/// the option left out, and the command exited 0 writing nothing).
CLI::Validator output_path();

/// A decimal integer in [0, max]: digits only (no sign, no "0x", no spaces), converted exactly.
CLI::Validator unsigned_decimal(std::uint64_t max);

}  // namespace budget::cli
