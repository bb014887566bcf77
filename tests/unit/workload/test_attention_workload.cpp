// Workloads with "doc_lengths", "sliding_window" and kernel tiles (issue 4): attended_keys and
// kernel_attended_keys become derived; every earlier behaviour stays.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "budget/attention_cost.hpp"
#include "budget/error.hpp"
#include "budget/workload.hpp"

using budget::AttentionGeometry;
using budget::Workload;

namespace {

std::string source_path(const std::string& relative) { return std::string(BUDGET_SOURCE_DIR) + "/" + relative; }

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("budget_attention_workload_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream((path / name).string(), std::ios::binary) << text;
    return (path / name).string();
  }
};

void check_workload_error(const std::string& json, const std::string& path, const std::vector<std::string>& words) {
  try {
    (void)budget::parse_workload(json, "w.json");
    FAIL_CHECK("no error thrown");
  } catch (const budget::Error& e) {
    INFO("what(): " << e.what());
    CHECK(e.source() == "w.json");
    CHECK(e.path() == path);
    for (const auto& w : words) CHECK_THAT(e.message(), Catch::Contains(w));
  }
}

}  // namespace

TEST_CASE("attention: the exp-600 example workload derives attended_keys like the model", "[attention]") {
  const Workload w = budget::load_workload(source_path("examples/workloads/exp-600-doc.json"));
  const budget::AttentionCost cost =
      budget::expected_attention_cost(budget::parse_length_distribution("exp:mean=600"), AttentionGeometry{});
  CHECK(w.attended_keys == cost.document.exact_keys);
  CHECK(w.attention_kernel == budget::AttentionLaunch::varlen);
  CHECK(w.kernel_forward_attended_keys == cost.document.varlen.forward);
  CHECK(w.kernel_backward_attended_keys == cost.document.varlen.backward);
  CHECK(w.kernel_attended_keys == Approx((cost.document.varlen.forward + 2 * cost.document.varlen.backward) / 3));
  CHECK(w.executed_attended_keys() == w.kernel_attended_keys);
  REQUIRE(w.doc_lengths.has_value());
  CHECK(w.doc_lengths->describe() == "exp:mean=600");
  CHECK_THAT(w.description, Catch::Contains("exp:mean=600") && Catch::Contains("expectation"));
  // Exponential documents are shorter than the window on average, so fewer keys than one causal
  // window, more than half the mean length (one whole causal document has (n+1)/2).
  CHECK(w.attended_keys > 300.0);
  CHECK(w.attended_keys < 2048.5);
}

TEST_CASE("attention: relative paths in doc_lengths resolve against the workload file's directory", "[attention]") {
  const std::string example = source_path("examples/workloads/histogram-sliding-1024.json");
  struct WorkingDirectory {  // elsewhere while loading; restored even if loading throws
    std::filesystem::path saved = std::filesystem::current_path();
    WorkingDirectory() { std::filesystem::current_path(std::filesystem::temp_directory_path()); }
    ~WorkingDirectory() { std::filesystem::current_path(saved); }
  };
  const Workload w = [&] {
    const WorkingDirectory elsewhere;
    return budget::load_workload(example);
  }();
  REQUIRE(w.doc_lengths.has_value());
  CHECK(w.doc_lengths->kind == budget::LengthSourceKind::histogram);
  const auto histogram =
      budget::read_histogram_file(source_path("examples/doc_lengths/illustrative-web-histogram.csv"));
  const AttentionGeometry g{8192, 1024, {128, 128}, {64, 128}};
  const auto cost = budget::expected_attention_cost(histogram, g, 1);
  CHECK(w.attended_keys == cost.document.exact_keys);
  CHECK(w.attended_keys <= 1024.0);
  CHECK(w.kernel_forward_attended_keys == cost.document.dense_masked.forward);
  // parse_workload takes the base directory explicitly.
  const std::string text = R"({"doc_lengths": {"histogram": "illustrative-web-histogram.csv"}})";
  const Workload v = budget::parse_workload(text, "inline", source_path("examples/doc_lengths"));
  CHECK(v.attended_keys == budget::expected_attention_cost(histogram, AttentionGeometry{}).document.exact_keys);
}

TEST_CASE("attention: doc_lengths from a lengths file, an inline histogram and a simulated distribution",
          "[attention]") {
  TempDir dir;
  dir.write("docs.txt", "600\n1\n4096\n5000\n37\n12000\n2\n128\n129\n3000\n");
  const std::string path = dir.write("w.json", R"({"seq_len": 1024, "doc_lengths": {"lengths": "docs.txt",
      "tokens_per_doc": 2}, "attention_kernel": "dense_masked", "training_passes": 4})");
  const Workload w = budget::load_workload(path);
  const AttentionGeometry g{1024, 0, {128, 128}, {64, 128}};
  const auto sim = budget::simulate_length_file((dir.path / "docs.txt").string(), budget::LengthFileFormat::text,
                                                budget::PackingOrder::given, 0, g, 2);
  CHECK(w.doc_lengths->method == budget::CostMethod::simulation);
  CHECK(w.attended_keys == sim.cost().document.exact_keys);
  // Four passes: forward counted twice (with recompute), backward twice.
  const auto dense = sim.cost().document.dense_masked;
  CHECK(w.kernel_attended_keys == Approx((2 * dense.forward + 2 * dense.backward) / 4));
  // The same lengths as an inline histogram, by expectation and by simulation.
  const std::string inline_json = R"({"doc_lengths": {"histogram": {"600": 1, "1": 1, "4096": 1}}})";
  const Workload h = budget::parse_workload(inline_json, "inline");
  const auto hist = budget::parse_histogram_json(R"([[600, 1], [1, 1], [4096, 1]])", "x");
  CHECK(h.attended_keys == budget::expected_attention_cost(hist, AttentionGeometry{}).document.exact_keys);
  const Workload s = budget::parse_workload(
      R"({"doc_lengths": {"distribution": "exp:mean=300", "method": "simulation", "samples": 20000, "seed": 7}})", "x");
  CHECK(s.attended_keys ==
        budget::simulate_distribution(budget::parse_length_distribution("exp:mean=300"), 20000, 7, AttentionGeometry{})
            .cost()
            .document.exact_keys);
  // "attention_mask": "causal" with doc_lengths: one causal window, (4096 + 1)/2 in the endless stream.
  const Workload c =
      budget::parse_workload(R"({"attention_mask": "causal", "doc_lengths": {"distribution": "exp:600"}})", "x");
  CHECK(c.attended_keys == Approx(2048.5).epsilon(1e-14));
  // "attention_kernel": "none" leaves the kernel count unknown.
  const Workload n =
      budget::parse_workload(R"({"attention_kernel": "none", "doc_lengths": {"distribution": "fixed:512"}})", "x");
  CHECK(n.attended_keys == Approx(256.5).epsilon(1e-14));
  CHECK(n.kernel_attended_keys == 0.0);
  CHECK(n.executed_attended_keys() == n.attended_keys);
}

// Causal window S = 4096 with sliding window w = 1024: K_w(S) = 1024·1025/2 + 3072·1024 = 3,670,528
// pairs, 896.125 per query. Without a window, 128×128 tiles: 528·16384/4096 = 2112 executed keys;
// 64×128: 1056·8192/4096 = 2112 too (half-height tiles change nothing on a causal diagonal).
TEST_CASE("attention: causal workloads: sliding window and kernel keys from the tile model", "[attention]") {
  const Workload w = budget::parse_workload(R"({"attention_mask": "causal", "sliding_window": 1024})", "x");
  CHECK(w.attended_keys == 896.125);
  CHECK(w.kernel_attended_keys == 0.0);
  const Workload k = budget::parse_workload(R"({"attention_mask": "causal", "attention_kernel": "varlen"})", "x");
  CHECK(k.attended_keys == 2048.5);
  CHECK(k.kernel_forward_attended_keys == 2112.0);
  CHECK(k.kernel_backward_attended_keys == 2112.0);
  CHECK(k.kernel_attended_keys == 2112.0);
  const Workload s = budget::parse_workload(
      R"({"attention_mask": "causal", "attention_kernel": "dense_masked", "sliding_window": 1000, "seq_len": 3000,
          "forward_tile": "128x64"})",
      "x");
  const double forward = static_cast<double>(budget::causal_context_tiles(3000, {128, 64}, 1000)) * 128 * 64 / 3000;
  const double backward = static_cast<double>(budget::causal_context_tiles(3000, {64, 128}, 1000)) * 64 * 128 / 3000;
  CHECK(s.kernel_forward_attended_keys == forward);
  CHECK(s.kernel_attended_keys == Approx((forward + 2 * backward) / 3));
  CHECK(s.attended_keys == Approx(static_cast<double>(budget::causal_context_keys(3000, 1000)) / 3000));
}

TEST_CASE("attention: earlier workload behaviour is unchanged", "[attention]") {
  const Workload paper = budget::load_workload(source_path("examples/workloads/paper-4096.json"));
  CHECK(paper.attended_keys == 400.0);
  CHECK(paper.kernel_attended_keys == 0.0);
  CHECK(paper.attention_kernel == budget::AttentionLaunch::none);
  CHECK_FALSE(paper.doc_lengths.has_value());
  CHECK(budget::parse_workload(R"({"attention_mask": "causal", "seq_len": 64})", "x").attended_keys == 32.5);
  CHECK(budget::parse_workload(R"({"attended_keys": 300, "kernel_attended_keys": 320})", "x").kernel_attended_keys ==
        320.0);
  // A document-mask attended_keys within a sliding window is taken as given.
  CHECK(budget::parse_workload(R"({"attended_keys": 300, "sliding_window": 512})", "x").attended_keys == 300.0);
}

TEST_CASE("attention: bad doc_lengths and attention keys in workloads", "[attention]") {
  check_workload_error(R"({"attended_keys": 300, "doc_lengths": {"distribution": "exp:600"}})", "/attended_keys",
                       {"cannot be given with \"doc_lengths\"", "derived"});
  check_workload_error(R"({"kernel_attended_keys": 300, "doc_lengths": {"distribution": "exp:600"}})",
                       "/kernel_attended_keys", {"cannot be given", "\"attention_kernel\": \"varlen\""});
  check_workload_error(R"({"doc_lengths": {"distribution": "exp:600", "histogram": {"5": 1}}})", "/doc_lengths",
                       {"exactly one of", "found 2"});
  check_workload_error(R"({"doc_lengths": {}})", "/doc_lengths", {"exactly one of", "found 0"});
  check_workload_error(R"({"doc_lengths": {"distribution": "exp:600", "tokens_per_document": 1}})",
                       "/doc_lengths/tokens_per_document", {"unknown key", "did you mean \"tokens_per_doc\""});
  check_workload_error(R"({"doc_lengths": {"distribution": "exp:mean=zero"}})", "/doc_lengths/distribution",
                       {"mean \"zero\" is not a number"});
  check_workload_error(R"({"doc_lengths": {"distribution": "exp:600", "order": "shuffled"}})", "/doc_lengths/order",
                       {"applies to \"lengths\" files only"});
  check_workload_error(R"({"doc_lengths": {"lengths": "x.u32", "samples": 5}})", "/doc_lengths/samples",
                       {"applies to distributions and histograms"});
  check_workload_error(R"({"doc_lengths": {"distribution": "exp:600", "tokens_per_doc": -1}})",
                       "/doc_lengths/tokens_per_doc", {"-1", "out of range"});
  check_workload_error(R"({"doc_lengths": {"distribution": "exp:600", "method": "exact"}})", "/doc_lengths/method",
                       {"\"exact\" is not allowed", "expectation"});
  check_workload_error(R"({"doc_lengths": {"histogram": [[0, 1]]}})", "/doc_lengths/histogram/0/0",
                       {"document length 0"});
  check_workload_error(R"({"seq_len": 2000000, "doc_lengths": {"distribution": "exp:600"}})", "/seq_len",
                       {"2000000", "[1, 2^20]"});
  check_workload_error(R"({"attention_kernel": "varlen"})", "/attention_kernel",
                       {"needs \"doc_lengths\"", "kernel_attended_keys"});
  check_workload_error(R"({"attention_kernel": "flash"})", "/attention_kernel", {"\"flash\" is not allowed"});
  check_workload_error(R"({"forward_tile": "128by128", "doc_lengths": {"distribution": "exp:600"}})", "/forward_tile",
                       {"ROWSxCOLS"});
  check_workload_error(R"({"sliding_window": -4})", "/sliding_window", {"-4", "out of range"});
  check_workload_error(R"({"sliding_window": 256})", "/attended_keys", {"400", "sliding_window = 256"});
  // A missing lengths file names the file (resolved against the workload's directory).
  try {
    (void)budget::parse_workload(R"({"doc_lengths": {"lengths": "missing.u32"}})", "w.json", "/nowhere");
    FAIL_CHECK("no error thrown");
  } catch (const budget::Error& e) {
    CHECK(e.source() == "/nowhere/missing.u32");
    CHECK_THAT(e.message(), Catch::Contains("cannot open"));
  }
  // A bad lengths file is reported with its own name and location.
  TempDir dir;
  dir.write("bad.txt", "5\n-3\n");
  const std::string path = dir.write("w.json", R"({"doc_lengths": {"lengths": "bad.txt"}})");
  CHECK_THROWS_WITH(budget::load_workload(path), Catch::Contains("bad.txt: line 2: negative document length"));
}
