// Document-length inputs (issue 4): distribution specs, histograms (JSON, CSV), files of lengths
// (text, u32, u64) streamed in blocks, and their error messages.

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "budget/attention_cost.hpp"
#include "budget/doc_lengths.hpp"
#include "budget/error.hpp"

using budget::LengthDistribution;
using budget::LengthFileFormat;

namespace {

std::string data_path(const std::string& name) { return std::string(BUDGET_TEST_DATA_DIR) + "/" + name; }

// A temporary directory removed at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("budget_attention_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

template <class T>
void write_binary(const std::string& path, const std::vector<std::uint64_t>& values) {
  std::ofstream out(path, std::ios::binary);
  for (const std::uint64_t v : values) {
    const auto x = static_cast<T>(v);
    out.write(reinterpret_cast<const char*>(&x), sizeof x);
  }
}

void write_text(const std::string& path, const std::vector<std::uint64_t>& values) {
  std::ofstream out(path, std::ios::binary);
  for (const std::uint64_t v : values) out << v << '\n';
}

std::vector<std::uint64_t> read_with_buffer(const std::string& path, LengthFileFormat format, std::size_t buffer,
                                            std::size_t block) {
  budget::LengthFileReader reader(path, format, buffer);
  std::vector<std::uint64_t> out;
  std::vector<std::uint64_t> part(block);
  while (const std::size_t n = reader.read(part))
    out.insert(out.end(), part.begin(), part.begin() + static_cast<long>(n));
  CHECK(reader.lengths_read() == out.size());
  return out;
}

void check_same_totals(const budget::SimulationResult& a, const budget::SimulationResult& b) {
  CHECK(a.totals.documents == b.totals.documents);
  CHECK(a.totals.tokens == b.totals.tokens);
  CHECK(a.totals.pieces == b.totals.pieces);
  CHECK(a.totals.document_keys == b.totals.document_keys);
  CHECK(a.totals.causal_keys == b.totals.causal_keys);
  CHECK(a.totals.document_forward.varlen == b.totals.document_forward.varlen);
  CHECK(a.totals.document_backward.dense_masked == b.totals.document_backward.dense_masked);
}

// Every error: budget::Error whose what() contains all `words`.
void check_error(const std::function<void()>& f, const std::vector<std::string>& words) {
  try {
    f();
    FAIL_CHECK("no error thrown");
  } catch (const budget::Error& e) {
    INFO("what(): " << e.what());
    for (const auto& w : words) CHECK_THAT(std::string(e.what()), Catch::Contains(w));
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("attention: distribution specs parse and describe themselves", "[attention]") {
  CHECK(budget::parse_length_distribution("fixed:512").describe() == "fixed:512");
  CHECK(budget::parse_length_distribution("fixed:length=512").describe() == "fixed:512");
  CHECK(budget::parse_length_distribution("exp:mean=600").describe() == "exp:mean=600");
  CHECK(budget::parse_length_distribution("exp:600").describe() == "exp:mean=600");
  CHECK(budget::parse_length_distribution("exponential:mean=6e+2").describe() == "exp:mean=600");
  CHECK(budget::parse_length_distribution(" lognormal: mean=600 , sigma=1.2 ").describe() ==
        "lognormal:mean=600,sigma=1.2");
  const LengthDistribution mix = budget::parse_length_distribution("mix:0.7*exp:mean=300+0.3*fixed:4096");
  CHECK(mix.describe() == "mix:0.7*exp:mean=300+0.3*fixed:4096");
  REQUIRE(mix.parts().size() == 2);
  CHECK(mix.parts()[0].weight == Approx(0.7));
  CHECK(mix.has_continuous_part());
  CHECK_FALSE(budget::parse_length_distribution("fixed:3").has_continuous_part());
  // describe() round-trips.
  CHECK(budget::parse_length_distribution(mix.describe()).describe() == mix.describe());
}

TEST_CASE("attention: bad distribution specs name the problem and what is allowed", "[attention]") {
  struct Case {
    const char* spec;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {"", {"--dist: ", "empty distribution spec", "exp:mean=M"}},
      {"gauss:mean=3", {"unknown distribution \"gauss\"", "allowed"}},
      {"expo:mean=3", {"did you mean \"exp\""}},
      {"exp", {"expected NAME:PARAMETERS"}},
      {"exp:", {"missing parameters"}},
      {"exp:mean=abc", {"mean \"abc\" is not a number"}},
      {"exp:meen=600", {"unknown parameter \"meen\"", "did you mean \"mean\""}},
      {"exp:mean=0", {"exponential mean 0", "[1, 2^32]"}},
      {"exp:mean=-5", {"exponential mean -5", "out of range"}},
      {"lognormal:mean=600", {"missing parameter \"sigma\""}},
      {"lognormal:600,1.2", {"needs a name"}},
      {"lognormal:mean=600,sigma=0", {"sigma 0", "(0, 3]"}},
      {"lognormal:mean=600,sigma=1,sigma=2", {"\"sigma\" is given twice"}},
      {"fixed:12.5", {"length 12.5", "an integer"}},
      {"fixed:0", {"length 0"}},
      {"mix:0.7*exp:mean=300+0.2*fixed:4096", {"the weights sum to 0.9", "must sum to 1"}},
      {"mix:exp:mean=300", {"needs a weight"}},
      {"mix:1.5*fixed:3", {"weight 1.5", "(0, 1]"}},
      {"mix:0.5*fixed:3+0.5*mix:1*fixed:2", {"cannot be nested"}},
  };
  for (const auto& c : cases) {
    INFO("spec: " << c.spec);
    check_error([&] { (void)budget::parse_length_distribution(c.spec, "--dist"); }, c.words);
  }
}

TEST_CASE("attention: histograms: JSON object, JSON array and CSV give the same distribution", "[attention]") {
  const auto object = budget::read_histogram_file(data_path("doc_lengths_histogram.json"));
  const auto array = budget::parse_histogram_json("[[8192, 2], [128, 40], [600, 25], [2048, 10]]", "inline");
  const auto csv = budget::read_histogram_file(data_path("doc_lengths_histogram.csv"));
  const budget::AttentionGeometry g;
  const double keys = budget::expected_attention_cost(object, g).document.exact_keys;
  CHECK(budget::expected_attention_cost(array, g).document.exact_keys == keys);
  CHECK(budget::expected_attention_cost(csv, g).document.exact_keys == keys);
  const auto& weights = std::get<budget::EmpiricalLength>(csv.parts().front().component).weights;
  REQUIRE(weights.size() == 4);
  CHECK(weights.front() == std::pair<std::int64_t, double>{128, 40.0});
  CHECK(weights.back() == std::pair<std::int64_t, double>{8192, 2.0});
}

TEST_CASE("attention: bad histograms name the entry", "[attention]") {
  struct Case {
    const char* json;
    std::vector<std::string> words;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"abc": 1})", {"h.json: /abc: document length \"abc\" is not allowed"}},
           {R"({"0": 1})", {"/0: document length"}},
           {R"({"512": -1})", {"/512: count -1 is not allowed"}},
           {R"({"512": "many"})", {"/512: count \"many\""}},
           {R"([[512]])", {"/0: expected a [length, count] pair"}},
           {R"([[512, 1], [600, 1], [512, 2]])", {"/2: length 512 appears twice (also at /0)"}},
           {R"([[12.5, 1]])", {"/0/0: document length 12.5"}},
           {R"({})", {"the histogram has no lengths"}},
           {R"({"5": 0})", {"counts sum to 0"}},
           {R"(42)", {"expected a histogram"}},
       }) {
    INFO(c.json);
    check_error([&] { (void)budget::parse_histogram_json(c.json, "h.json"); }, c.words);
  }
  struct CsvCase {
    const char* csv;
    std::vector<std::string> words;
  };
  for (const CsvCase& c : std::vector<CsvCase>{
           {"512,3\n", {"h.csv: line 1: expected the header \"length,count\""}},
           {"length,count\n512,abc\n", {"line 2: count \"abc\""}},
           {"length,count\n512,-3\n", {"line 2: count \"-3\""}},
           {"length,count\n0,3\n", {"line 2: document length \"0\""}},
           {"length,count\n-4,3\n", {"line 2: document length \"-4\""}},
           {"length,count\n12.5,3\n", {"line 2: document length \"12.5\""}},
           {"length,count\n512,3\n\n512,1\n", {"line 4: length 512 appears twice (also at line 2)"}},
           {"length,count\n512\n", {"line 2: expected two comma-separated fields"}},
           {"", {"the file is empty"}},
           {"length,count\n", {"no rows"}},
       }) {
    INFO(c.csv);
    check_error([&] { (void)budget::parse_histogram_csv(c.csv, "h.csv"); }, c.words);
  }
  check_error([] { (void)budget::read_histogram_file(data_path("doc_lengths_histogram_bad.csv")); },
              {"doc_lengths_histogram_bad.csv: line 3: count \"many\""});
  check_error([] { (void)budget::read_histogram_file(data_path("doc_lengths_small.txt")); },
              {"doc_lengths_small.txt", "extension \".txt\"", ".json or .csv"});
  check_error([] { (void)budget::read_histogram_file(data_path("no_such_histogram.csv")); }, {"no_such_histogram.csv"});
}

TEST_CASE("attention: lengths files: text, u32 and u64 hold the same lengths", "[attention]") {
  const std::vector<std::uint64_t> expected = {600, 1, 4096, 5000, 37, 12000, 2, 128, 129, 3000};
  CHECK(budget::read_all_lengths(data_path("doc_lengths_small.txt")) == expected);
  CHECK(budget::read_all_lengths(data_path("doc_lengths_small.u32")) == expected);
  CHECK(budget::read_all_lengths(data_path("doc_lengths_small.u64")) == expected);
  // The format can be forced: the u64 file read as u32 is little-endian (value, 0) pairs.
  const auto as_u32 = budget::LengthFileReader(data_path("doc_lengths_small.u64"), LengthFileFormat::u32);
  CHECK(as_u32.format() == LengthFileFormat::u32);
  // Tiny buffers and blocks cross every boundary inside lines and elements.
  for (std::size_t buffer : {64, 67, 100}) {
    for (std::size_t block : {1, 3, 1000}) {
      CHECK(read_with_buffer(data_path("doc_lengths_small.txt"), LengthFileFormat::automatic, buffer, block) ==
            expected);
      CHECK(read_with_buffer(data_path("doc_lengths_small.u32"), LengthFileFormat::automatic, buffer, block) ==
            expected);
    }
  }
  CHECK(budget::resolve_length_file_format("a/b.U64", LengthFileFormat::automatic) == LengthFileFormat::u64);
  CHECK(budget::resolve_length_file_format("a/b.bin", LengthFileFormat::automatic) == LengthFileFormat::text);
  CHECK(budget::parse_length_file_format("u32") == LengthFileFormat::u32);
  check_error([] { (void)budget::parse_length_file_format("u16", "--lengths-format"); },
              {"--lengths-format: ", "\"u16\"", "auto, text, u32, u64"});
}

TEST_CASE("attention: bad lengths files: truncated, zero, negative, non-numeric, empty", "[attention]") {
  struct Case {
    std::string file;
    std::vector<std::string> words;
  };
  for (const Case& c : std::vector<Case>{
           {"doc_lengths_truncated.u32",
            {"doc_lengths_truncated.u32: ", "7 bytes", "not a multiple of 4", "truncated"}},
           {"doc_lengths_zero.u32", {"doc_lengths_zero.u32: byte offset 8: document length 0"}},
           {"doc_lengths_negative.txt", {"doc_lengths_negative.txt: line 3: negative document length \"-5\""}},
           {"doc_lengths_nonnumeric.txt", {"doc_lengths_nonnumeric.txt: line 2: \"abc\" is not a document length"}},
           {"doc_lengths_fraction.txt", {"line 2: \"12.5\" is not a document length"}},
           {"doc_lengths_zero.txt", {"line 3: document length 0"}},
           {"doc_lengths_blank_line.txt", {"line 2: empty line"}},
           {"doc_lengths_empty.txt", {"doc_lengths_empty.txt: the file is empty"}},
           {"no_such_lengths.u32", {"no_such_lengths.u32: cannot open"}},
       }) {
    INFO(c.file);
    check_error([&] { (void)budget::read_all_lengths(data_path(c.file)); }, c.words);
  }
  TempDir dir;
  write_binary<std::uint64_t>(dir.file("big.u64"), {5, (std::uint64_t{1} << 40) + 1});
  check_error([&] { (void)budget::read_all_lengths(dir.file("big.u64")); }, {"byte offset 8", "out of range", "2^40"});
  std::ofstream(dir.file("huge.txt")) << "1\n99999999999999999999999\n";
  check_error([&] { (void)budget::read_all_lengths(dir.file("huge.txt")); }, {"line 2", "out of range"});
  std::ofstream(dir.file("newline.txt")) << "\n";
  check_error([&] { (void)budget::read_all_lengths(dir.file("newline.txt")); }, {"line 1: empty line"});
  std::filesystem::create_directories(dir.file("sub.u32"));
  check_error([&] { (void)budget::read_all_lengths(dir.file("sub.u32")); }, {"is a directory"});
}

// 10^6 lengths generated at test time: streaming the file in every format gives exactly the
// in-memory simulation; shuffling equals shuffling in memory.
TEST_CASE("attention: streamed files of 10^6 lengths simulate exactly like the lengths in memory", "[attention]") {
  TempDir dir;
  std::vector<std::uint64_t> lengths(1'000'000);
  budget::LengthSampler(budget::parse_length_distribution("lognormal:mean=600,sigma=1.2"), 8).fill(lengths);
  write_binary<std::uint32_t>(dir.file("docs.u32"), lengths);
  write_binary<std::uint64_t>(dir.file("docs.u64"), lengths);
  write_text(dir.file("docs.txt"), lengths);
  const budget::AttentionGeometry g{4096, 0, {128, 128}, {64, 128}};
  const auto reference = budget::simulate_lengths(lengths, g, 1);
  for (const char* name : {"docs.u32", "docs.u64", "docs.txt"}) {
    INFO(name);
    check_same_totals(
        budget::simulate_length_file(dir.file(name), LengthFileFormat::automatic, budget::PackingOrder::given, 0, g, 1),
        reference);
  }
  std::vector<std::uint64_t> shuffled = lengths;
  budget::shuffle_lengths(shuffled, 42);
  CHECK(shuffled != lengths);
  std::vector<std::uint64_t> sorted_shuffled = shuffled;
  std::vector<std::uint64_t> sorted_lengths = lengths;
  std::sort(sorted_shuffled.begin(), sorted_shuffled.end());
  std::sort(sorted_lengths.begin(), sorted_lengths.end());
  CHECK(sorted_shuffled == sorted_lengths);  // a permutation
  check_same_totals(budget::simulate_length_file(dir.file("docs.u32"), LengthFileFormat::automatic,
                                                 budget::PackingOrder::shuffled, 42, g, 1),
                    budget::simulate_lengths(shuffled, g, 1));
  // The empirical distribution of the file: its mean length is the file's.
  const auto histogram = budget::length_file_histogram(dir.file("docs.u32"), LengthFileFormat::automatic);
  const double mean = static_cast<double>(reference.totals.tokens) / 1e6;  // + 1 token/doc included
  CHECK(budget::expected_attention_cost(histogram, g, 1).mean_document_length == Approx(mean).epsilon(1e-12));
}
