// Files of document lengths, binary little-endian uint32 / uint64 (the first byte chooses):
// LengthFileReader through a small buffer. Every length returned must lie in [1, 2^40] and equal
// the little-endian value at its offset.
#include <vector>

#include "budget/doc_lengths.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  if (size == 0) {
    return 0;
  }
  const bool wide = (data[0] & 1) != 0;
  const std::size_t element = wide ? 8 : 4;
  const std::string& path = fuzz::write_scratch_file(data + 1, size - 1, wide ? ".u64" : ".u32");
  fuzz::expect_value_or_error("fuzz_lengths_binary", [&] {
    LengthFileReader reader(path, wide ? LengthFileFormat::u64 : LengthFileFormat::u32, 3 * element);
    std::vector<std::uint64_t> lengths;
    std::uint64_t block[5];
    for (std::size_t n; (n = reader.read(block)) > 0;) {
      lengths.insert(lengths.end(), block, block + n);
    }
    fuzz::require(lengths.size() * element == size - 1, "fuzz_lengths_binary", "not every element was read");
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      std::uint64_t expected = 0;
      for (std::size_t b = 0; b < element; ++b) {
        expected |= std::uint64_t{data[1 + i * element + b]} << (8 * b);
      }
      fuzz::require(lengths[i] == expected && expected >= 1 && expected <= static_cast<std::uint64_t>(max_document_length),
                    "fuzz_lengths_binary", "length differs from the file or lies outside [1, 2^40]");
    }
  });
  return 0;
}
