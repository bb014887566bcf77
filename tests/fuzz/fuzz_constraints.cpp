// Matcher constraints files (`--constraints`): parse_constraints() over the defaults of the paper
// baseline. Only parsing is fuzzed here; the search's own bounds are the matcher's tests.
#include "budget/match.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  static const MatchConstraints defaults = default_constraints(fuzz::paper_baseline());
  fuzz::expect_value_or_error("fuzz_constraints", [&] {
    (void)parse_constraints(fuzz::as_text(data, size), "<fuzz>", defaults);
  });
  return 0;
}
