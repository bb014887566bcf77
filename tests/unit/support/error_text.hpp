#pragma once
// The text of the budget::Error a call throws, for tests that check what a message says.

#include <functional>
#include <string>

#include "support/error_of.hpp"

namespace budget::test {

/// Error::text() of the budget::Error `f` throws (the whole line, NUL bytes kept); the test fails
/// where `f` throws none.
inline std::string error_text_of(const std::function<void()>& f) { return error_of(f).text(); }

}  // namespace budget::test
