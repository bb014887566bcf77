#pragma once
// Private: the Ceres-style pair each options type offers, built on one function per type that
// returns its first problem as a budget::Error (or nothing): validation_error() gives the message
// ("" when valid) and validate() throws the Error itself, so both report the same first problem.

#include <optional>
#include <string>

#include "budget/error.hpp"

namespace budget::detail {

/// The message of `first_error`, or "" when there is none.
inline std::string message_of(const std::optional<Error>& first_error) {
  return first_error ? std::string(first_error->what()) : std::string();
}

/// Throws `first_error` when there is one.
inline void throw_if_error(const std::optional<Error>& first_error) {
  if (first_error) throw *first_error;
}

}  // namespace budget::detail
