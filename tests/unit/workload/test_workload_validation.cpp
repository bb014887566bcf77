// validation_error(Workload) and validate(Workload): one set of checks, a message naming the
// field, its value and what is allowed.

#include <catch2/catch.hpp>

#include "budget/error.hpp"
#include "budget/workload.hpp"

using namespace budget;

TEST_CASE("validation_error(Workload) is empty when valid and names the field otherwise", "[workload]") {
  CHECK(validation_error(paper_workload()).empty());
  CHECK(validation_error(causal_workload(4096)).empty());
  Workload w = paper_workload();
  w.seq_len = 0;
  CHECK(validation_error(w, "w.json") == "w.json: /seq_len: value 0 is out of range; allowed: an integer in [1, 2^40]");
  w = paper_workload();
  w.training_passes = 17;
  const std::string message = validation_error(w);
  CHECK_THAT(message, Catch::StartsWith("/training_passes: value 17 is out of range; allowed: an integer in [1, 16]"));
  try {
    validate(w);
    FAIL("validate() did not throw");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == message);
    CHECK(e.path() == "/training_passes");
  }
  w = paper_workload();
  w.forward_tile = {0, 128};
  CHECK_THAT(validation_error(w), Catch::StartsWith("/forward_tile: tile "));
}
