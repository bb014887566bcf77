// Histogram files, JSON form: parse_histogram_json() (docs/attention.md). An accepted histogram
// must discretise to a finite pmf summing to 1 and sample lengths in [1, 2^40].
#include "budget/doc_lengths.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_histogram_json", [&] {
    const LengthDistribution distribution = parse_histogram_json(fuzz::as_text(data, size), "<fuzz>");
    fuzz::check_distribution("fuzz_histogram_json", distribution);
  });
  return 0;
}
