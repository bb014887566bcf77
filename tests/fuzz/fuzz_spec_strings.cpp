// Option strings: length distribution specs (--dist, "exp:mean=600", "mix:0.7*exp:mean=300+..."),
// attention tiles ("128x128") and length file formats. An accepted distribution must discretise
// to a finite pmf summing to 1 and sample lengths in [1, 2^40].
#include "budget/attention_cost.hpp"
#include "budget/doc_lengths.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::expect_value_or_error("fuzz_spec_strings", [&] {
    const LengthDistribution distribution = parse_length_distribution(text, "--dist");
    fuzz::check_distribution("fuzz_spec_strings", distribution);
  });
  fuzz::expect_value_or_error("fuzz_spec_strings", [&] {
    const AttentionTile tile = parse_attention_tile(text, "--tile");
    fuzz::require(parse_attention_tile(to_string(tile)) == tile, "fuzz_spec_strings", "tile round trip");
  });
  fuzz::expect_value_or_error("fuzz_spec_strings", [&] { (void)parse_length_file_format(text, "--format"); });
  return 0;
}
