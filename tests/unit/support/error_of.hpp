#pragma once
// The budget::Error a call throws, for tests that check its source, path and text.

#include <catch2/catch.hpp>

#include "budget/error.hpp"

namespace budget::test {

/// The budget::Error `f` throws; the test fails where it throws none.
template <typename F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  FAIL("no budget::Error thrown");
  return Error("");
}

}  // namespace budget::test
