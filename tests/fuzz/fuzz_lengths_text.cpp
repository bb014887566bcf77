// Files of document lengths, text form (one decimal integer per line): LengthFileReader, read
// through a small buffer so that lines cross block boundaries. Every length returned must lie in
// [1, 2^40]; read_all_lengths must agree with the block reader.
#include <vector>

#include "budget/doc_lengths.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  const std::string& path = fuzz::write_scratch_file(data, size, ".txt");
  fuzz::expect_value_or_error("fuzz_lengths_text", [&] {
    LengthFileReader reader(path, LengthFileFormat::text, 16);
    std::vector<std::uint64_t> lengths;
    std::uint64_t block[5];
    for (std::size_t n; (n = reader.read(block)) > 0;) {
      lengths.insert(lengths.end(), block, block + n);
    }
    for (const std::uint64_t n : lengths) {
      fuzz::require(n >= 1 && n <= static_cast<std::uint64_t>(max_document_length), "fuzz_lengths_text",
                    "length outside [1, 2^40]");
    }
    fuzz::require(reader.lengths_read() == lengths.size(), "fuzz_lengths_text", "lengths_read() disagrees");
    fuzz::must_succeed("fuzz_lengths_text", "read_all_lengths", [&] {
      fuzz::require(read_all_lengths(path, LengthFileFormat::text) == lengths, "fuzz_lengths_text",
                    "read_all_lengths disagrees with the block reader");
    });
  });
  return 0;
}
