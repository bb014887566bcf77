// Scaling-law coefficients files (`frontier`, `ce-gain`): parse_coefficients_json(). Accepted
// coefficients must validate and survive a round trip through coefficients_to_json().
#include "budget/scaling_law.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_coefficients", [&] {
    const CoefficientsFile file = parse_coefficients_json(std::string(fuzz::as_text(data, size)), "<fuzz>");
    fuzz::must_succeed("fuzz_coefficients", "validation and round trip", [&] {
      validate_coefficients(file.coefficients, "<fuzz>");
      const std::string json = coefficients_to_json(file);
      fuzz::require(coefficients_to_json(parse_coefficients_json(json, "<round trip>")) == json, "fuzz_coefficients",
                    "JSON round trip changed the file");
    });
  });
  return 0;
}
