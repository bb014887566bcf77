#pragma once
// The text of the budget::Error a call throws, for tests that check what a message says.

#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "budget/error.hpp"

namespace budget::test {

/// Error::text() of the budget::Error `f` throws (the whole line, NUL bytes kept); the test fails
/// where `f` throws none.
inline std::string error_text_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.text();
  }
  FAIL("no budget::Error thrown");
  return {};
}

}  // namespace budget::test
