// Hostile Megatron-LM arguments (issue 44 §1, §4; docs/reliability.md): numbers read as Python's
// int() and float() read them, without std::regex (a 50,000-digit number overflowed the stack),
// sizes whose products pass 64 bits (a wrapped product used as a divisor was a SIGFPE),
// --moe-layer-freq nested or repeated past what the config can use, and the stage-layer counts
// Megatron refuses.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/megatron_args.hpp"
#include "interop/megatron_reader.hpp"
#include "interop/megatron_test_models.hpp"

using namespace budget;
using namespace budget::interop_detail;

namespace {

ArchConfig hostile_llama() { return test::megatron_small_llama(); }

/// 4 layers: the first dense, three MoE.
ArchConfig hostile_moe() {
  ArchConfig c = test::megatron_moe_model("moe-small", 512, 4, {8, 64, 4}, 8, 256);
  c.ffn.first_dense_layers = 1;
  c.ffn.dense_dim = 1024;
  return c;
}

MegatronRun read_words(const std::vector<std::string>& words, const ArchConfig& c = hostile_llama(),
                       std::int64_t gpus = 8) {
  return read_megatron_args(words, c, gpus, "args");
}

std::string repeated(const std::string& part, std::size_t times) {
  std::string out;
  for (std::size_t i = 0; i < times; ++i) out += part;
  return out;
}

}  // namespace

// Expected values: python3.11's int() and float() of the same texts (run by hand, 2026-12-07).
TEST_CASE("interop: Python's int() of a text, any length, no std::regex", "[interop]") {
  using S = PythonNumberStatus;
  const struct {
    const char* text;
    S status;
    std::int64_t value;
  } cases[] = {{"8", S::value, 8},
               {" 8 ", S::value, 8},
               {"\t8\n", S::value, 8},
               {"1_000", S::value, 1000},
               {"+5", S::value, 5},
               {"-0", S::value, 0},
               {"007", S::value, 7},
               {"0_0", S::value, 0},
               {"9223372036854775807", S::value, INT64_MAX},
               {"-9223372036854775808", S::value, INT64_MIN},
               {"9223372036854775808", S::out_of_range, 0},    // Python: 2^63, past int64
               {"12345678901234567890", S::out_of_range, 0},   // Python reads 20 digits
               {"1__0", S::not_a_number, 0},
               {"_1", S::not_a_number, 0},
               {"1_", S::not_a_number, 0},
               {"", S::not_a_number, 0},
               {" ", S::not_a_number, 0},
               {"0x10", S::not_a_number, 0},
               {"1.0", S::not_a_number, 0},
               {"+-1", S::not_a_number, 0},
               {"- 1", S::not_a_number, 0},
               {"8\x1c", S::not_a_number, 0}};
  for (const auto& c : cases) {
    INFO("int(\"" << c.text << "\")");
    const PythonInt n = read_python_int(c.text);
    CHECK(n.status == c.status);
    if (c.status == S::value) CHECK(n.value == c.value);
  }
  // Python >= 3.11 reads at most 4300 digits (ValueError "Exceeds the limit (4300 digits)").
  CHECK(read_python_int(std::string(4300, '1')).status == S::out_of_range);
  CHECK(read_python_int(std::string(4301, '1')).status == S::too_many_digits);
  CHECK(read_python_int(std::string(50000, '9')).status == S::too_many_digits);
  CHECK(read_python_int("-" + std::string(50000, '9')).status == S::too_many_digits);
}

TEST_CASE("interop: Python's float() of a text, any length, no std::regex", "[interop]") {
  using S = PythonNumberStatus;
  const struct {
    const char* text;
    S status;
    double value;
  } cases[] = {{"0.1", S::value, 0.1},       {" 1_000.5 ", S::value, 1000.5},  {"1.", S::value, 1.0},
               {".5", S::value, 0.5},        {"1e5", S::value, 1e5},           {"1E+5", S::value, 1e5},
               {"-1e-3", S::value, -1e-3},   {"1e-400", S::value, 0.0},        {"4.9e-324", S::value, 4.9e-324},
               {"1_000e1_0", S::value, 1e13}, {"1e400", S::out_of_range, 0},   {"-1e400", S::out_of_range, 0},
               {"inf", S::non_finite, 0},    {"-Infinity", S::non_finite, 0}, {"nan", S::non_finite, 0},
               {"+NaN", S::non_finite, 0},   {"", S::not_a_number, 0},        {".", S::not_a_number, 0},
               {"e5", S::not_a_number, 0},   {"1e", S::not_a_number, 0},      {"1_e5", S::not_a_number, 0},
               {"1._5", S::not_a_number, 0}, {"--1", S::not_a_number, 0},     {"1e5.0", S::not_a_number, 0},
               {"0x1p3", S::not_a_number, 0}, {"1,5", S::not_a_number, 0},    {"1e+-5", S::not_a_number, 0}};
  for (const auto& c : cases) {
    INFO("float(\"" << c.text << "\")");
    const PythonFloat x = read_python_float(c.text);
    CHECK(x.status == c.status);
    if (c.status == S::value) CHECK(x.value == c.value);
  }
  // 50,000 digits: inf in Python (refused by name here), or the value when it fits.
  CHECK(read_python_float(std::string(50000, '1')).status == S::out_of_range);
  CHECK(read_python_float("-" + std::string(50000, '1')).status == S::out_of_range);
  const PythonFloat small = read_python_float("0." + std::string(50000, '0') + "1");
  CHECK((small.status == S::value && small.value == 0.0));
  // 300 ones: 1.11...·10^299 (the digits, hand-summed: 10^299 · 10/9 · (1 − 10^−300)).
  const PythonFloat ones = read_python_float(std::string(300, '1'));
  REQUIRE(ones.status == S::value);
  CHECK(ones.value / 1e299 == Approx(10.0 / 9.0).epsilon(1e-14));
  // 50,000 ones · 10^−50000 = Σ 10^−k for k = 1..50000 = (1 − 10^−50000) / 9.
  CHECK(read_python_float(std::string(50000, '1') + "e-50000").value == Approx(1.0 / 9.0).epsilon(1e-14));
}

TEST_CASE("interop: Megatron integers and floats as argparse reads them, refused by name", "[interop]") {
  const auto seq = [](const std::string& value) { return read_words({"--seq-length", value}).layout.seq_len; };
  CHECK(seq(" 4096") == 4096);
  CHECK(seq("4_096 ") == 4096);
  CHECK(seq("+4096") == 4096);
  // Integers Python reads past 64 bits: a flag not modelled keeps them (listed as not modelled) ...
  const MegatronRun seed = read_words({"--seq-length", "4096", "--seed", "12345678901234567890"});
  CHECK(seed.not_modelled == std::vector<std::string>{"--seed"});
  // ... a modelled one refuses them by name, as it does digits Python itself refuses.
  CHECK_THROWS_WITH(seq("12345678901234567890"),
                    Catch::Contains("--seq-length: \"12345678901234567890\" is outside the 64-bit integer range"));
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--seed", std::string(50000, '7')}),
                    Catch::Contains("--seed: \"77777") && Catch::Contains("more than 4300 digits"));
  CHECK_THROWS_WITH(seq("4096.0"), Catch::Contains("--seq-length: \"4096.0\" is not an integer"));
  // Doubles out of range: refused by name (was "internal error: stod" / Python IndexError).
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--hidden-dropout", "1e400"}),
                    Catch::Contains("--hidden-dropout: \"1e400\" is outside the range of a double"));
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--hidden-dropout", "nan"}),
                    Catch::Contains("--hidden-dropout: \"nan\" is not finite"));
  CHECK(read_words({"--seq-length", "4096", "--hidden-dropout", "1e-400", "--attention-dropout", "0"}).layout.dropout ==
        false);  // 1e-400 is 0.0 in Python
  // A value word starting with '-' (argparse takes it as a negative number): 50,000 digits.
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--hidden-dropout", "-" + std::string(50000, '1')}),
                    Catch::Contains("--hidden-dropout: \"-1111") && Catch::Contains("outside the range of a double"));
  CHECK_THROWS_WITH(read_words({"--seq-length", "-" + std::string(50000, '1')}),
                    Catch::Contains("--seq-length") && Catch::Contains("more than 4300 digits"));
}

TEST_CASE("interop: Megatron sizes multiplying past 64 bits are refused by name, never SIGFPE", "[interop]") {
  const std::string two_to_32 = "4294967296";
  // TP·CP = 2^64 wrapped to 0, then N % 0.
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--tensor-model-parallel-size", two_to_32,
                                "--context-parallel-size", two_to_32}),
                    Catch::Contains("args: TP x CP = 4294967296 * 4294967296 is outside the 64-bit integer range"));
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--tensor-model-parallel-size", two_to_32,
                                "--context-parallel-size", "2", "--pipeline-model-parallel-size", "2147483648"}),
                    Catch::Contains("TP x CP x PP = 8589934592 * 2147483648"));
  // PP · layers per virtual stage = 2^64.
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--pipeline-model-parallel-size", two_to_32,
                                "--num-layers-per-virtual-pipeline-stage", two_to_32}),
                    Catch::Contains("PP x --num-layers-per-virtual-pipeline-stage = 4294967296 * 4294967296"));
  // MBS · DP = 2^61 · 8 = 2^64.
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--micro-batch-size", "2305843009213693952"}),
                    Catch::Contains("--micro-batch-size x DP = 2305843009213693952 * 8"));
  // The same sizes reached through a run file's words (read_run_megatron_words) and Python go
  // through read_megatron_args; within 64 bits the product is still checked against the GPUs.
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--tensor-model-parallel-size", "3037000499",
                                "--context-parallel-size", "3037000499"}),
                    Catch::Contains("do not divide by TP·CP·PP"));
}

TEST_CASE("interop: --decoder-first/last-pipeline-num-layers below 1 refused as Megatron refuses them", "[interop]") {
  // transformer_config.py:2303/:2319 at d98e8a64: "must be larger than 0" (was: -1 read as "not given").
  for (const char* value : {"-1", "0"}) {
    CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--pipeline-model-parallel-size", "2",
                                  "--decoder-first-pipeline-num-layers", value}),
                      Catch::Contains(std::string("--decoder-first-pipeline-num-layers: ") + value + " is not above 0"));
    CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--pipeline-model-parallel-size", "2",
                                  "--decoder-last-pipeline-num-layers", value}),
                      Catch::Contains(std::string("--decoder-last-pipeline-num-layers: ") + value + " is not above 0"));
  }
  const MegatronRun run = read_words({"--seq-length", "4096", "--pipeline-model-parallel-size", "2",
                                      "--decoder-first-pipeline-num-layers", "3"});
  CHECK(run.layout.split.kind == PipelineSplit::Kind::first_last);
  CHECK(run.layout.split.first_stage_layers == 3);
  CHECK(!run.layout.split.last_stage_layers);
  // One split or the other: a layout string beside a first/last count is refused where it is read.
  CHECK_THROWS_WITH(read_words({"--seq-length", "4096", "--pipeline-model-parallel-size", "2",
                                "--decoder-first-pipeline-num-layers", "3", "--pipeline-model-parallel-layout",
                                "Et|tL"}),
                    Catch::Contains("a pipeline layout string excludes first/last-stage layer counts"));
  const MegatronRun strung = read_words({"--seq-length", "4096", "--pipeline-model-parallel-size", "2",
                                         "--pipeline-model-parallel-layout", "Et*2|t*2L"},
                                        hostile_moe());  // 4 layers
  CHECK(strung.layout.split.kind == PipelineSplit::Kind::per_stage);
  CHECK(strung.layout.split.stages == std::vector<std::string>{"Ett", "ttL"});
}

TEST_CASE("interop: --moe-layer-freq evaluated as Megatron does, bounded before it is built", "[interop]") {
  const ArchConfig moe = hostile_moe();
  const auto freq = [&](const std::string& text) {
    return read_words({"--seq-length", "4096", "--moe-layer-freq", text, "--num-layers", "4"}, moe).checked;
  };
  for (const char* ok : {"[0]+[1]*3", "([0]+[1]*3)", "[0,1,1,1]", "[0,1,1,1,]", "[0]+[1]*1*3",
                         "[0]+[1]*3+[1]*100000000000000000000000*0", "[0]+([1])*3+[]"}) {
    INFO(ok);
    CHECK(freq(ok).size() == 2);  // --num-layers and --moe-layer-freq checked
  }
  CHECK_THROWS_WITH(freq("1"), Catch::Contains("disagrees with the config (1 leading dense layers of 4)"));
  CHECK_THROWS_WITH(freq("[1]*4"), Catch::Contains("disagrees with the config"));
  CHECK_THROWS_WITH(freq("[0]+[1]*2"), Catch::Contains("has 3 entries; the config has 4 layers"));
  // 199 parentheses around a list nest 200 deep: Python's limit (eval of 200 raises "too many nested
  // parentheses"); 100,000 overflowed the stack of the recursive reader.
  CHECK(freq(repeated("(", 199) + "[0]+[1]*3" + repeated(")", 199)).size() == 2);
  CHECK_THROWS_WITH(freq(repeated("(", 200) + "[0]+[1]*3" + repeated(")", 200)),
                    Catch::Contains("nested deeper than 200"));
  CHECK_THROWS_WITH(freq(repeated("(", 100000) + "[0]" + repeated(")", 100000)), Catch::Contains("nested deeper than 200"));
  // 850 terms of 2^20 entries (12 KB; about 8 GB built as lists): refused from the lengths alone.
  std::string huge = "[1]*1048576";
  for (int i = 0; i < 850; ++i) huge += "+[1]*1048576";
  CHECK_THROWS_WITH(freq(huge), Catch::Contains("has more than 4 entries; the config has 4 layers"));
  CHECK_THROWS_WITH(freq("[0]+[1]*" + std::string(5000, '9')), Catch::Contains("more than 4300 digits"));
  CHECK_THROWS_WITH(freq("[0]+[1]*03"), Catch::Contains("leading zero"));
  CHECK_THROWS_WITH(freq("[0]+[1]*3 "), Catch::Contains("only the characters ,0-9[]()+*"));
  CHECK_THROWS_WITH(freq("[0]+3*[1]"), Catch::Contains("is not a list expression read here"));
  CHECK_THROWS_WITH(freq("[0]+[1]*"), Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(freq("[0,,1]"), Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(freq(std::string(30, '9')), Catch::Contains("neither an integer within 64 bits nor a list"));
  CHECK_THROWS_WITH(freq("0"), Catch::Contains("--moe-layer-freq: 0 is below 1"));
}
