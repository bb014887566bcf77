// Config and workload reading (issue 2): loop forms, centred_loop, the JSON round trip, and a
// table of malformed inputs, each with its specific message (source, JSON path, key words).

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/accounting_fixtures.hpp"
#include "budget/accounting.hpp"
#include "budget/config.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/workload.hpp"

using budget::ArchConfig;
using budget::LoopConfig;
using namespace budget::test;

namespace {

bool same_config(const ArchConfig& a, const ArchConfig& b) {
  const auto& x = a.attention;
  const auto& y = b.attention;
  const auto& f = a.ffn;
  const auto& g = b.ffn;
  const bool same_loop = a.loop.has_value() == b.loop.has_value() &&
                         (!a.loop || (a.loop->first == b.loop->first && a.loop->last == b.loop->last &&
                                      a.loop->repeats == b.loop->repeats));
  return a.name == b.name && a.hidden_size == b.hidden_size && a.num_layers == b.num_layers &&
         a.vocab_size == b.vocab_size && a.tie_embeddings == b.tie_embeddings && x.num_heads == y.num_heads &&
         x.head_dim == y.head_dim && x.num_kv_heads == y.num_kv_heads && f.num_experts == g.num_experts &&
         f.top_k == g.top_k && f.expert_dim == g.expert_dim && f.gated == g.gated &&
         f.num_shared_experts == g.num_shared_experts && f.shared_expert_dim == g.shared_expert_dim &&
         f.first_dense_layers == g.first_dense_layers && f.dense_dim == g.dense_dim && same_loop;
}

std::string data_path(const std::string& name) { return std::string(BUDGET_TEST_DATA_DIR) + "/bad/" + name; }

}  // namespace

// SMELT's centred loop: span = round(0.5·L), first = floor((L − span)/2) + 1.
//   L = 10: span 5, first (10 − 5)/2 + 1 = 3 → 3–7
//   L = 12: span 6, first 4 → 4–9
//   L = 20: span 10, first 6 → 6–15
//   L = 30: span 15, first (30 − 15)/2 + 1 = 8 → 8–22
TEST_CASE("config: centred_loop gives the paper's middle-half loops", "[config]") {
  struct Case {
    std::int64_t layers, first, last;
  };
  for (const Case c : {Case{10, 3, 7}, Case{12, 4, 9}, Case{20, 6, 15}, Case{30, 8, 22}}) {
    const LoopConfig l = budget::centred_loop(c.layers, 0.5, 2);
    INFO("L = " << c.layers);
    CHECK(l.first == c.first);
    CHECK(l.last == c.last);
    CHECK(l.repeats == 2);
  }
  // Whole stack: 1–12. Odd span: L = 11 at 0.5 → round(5.5) = 6 (half away from zero),
  // first (11 − 6)/2 + 1 = 3 → 3–8. L = 12 at 1/3 → span 4, first 5 → 5–8.
  CHECK(budget::centred_loop(12, 1.0, 3).first == 1);
  CHECK(budget::centred_loop(12, 1.0, 3).last == 12);
  CHECK(budget::centred_loop(11, 0.5, 2).first == 3);
  CHECK(budget::centred_loop(11, 0.5, 2).last == 8);
  CHECK(budget::centred_loop(12, 1.0 / 3.0, 2).first == 5);
  CHECK(budget::centred_loop(12, 1.0 / 3.0, 2).last == 8);
  // Out of range: fraction 0, > 1, NaN, a span rounding to 0 (0.04·12 = 0.48 → 0), repeats 0.
  CHECK_THROWS_WITH(budget::centred_loop(12, 0.0, 2), Catch::Contains("(0, 1]"));
  CHECK_THROWS_WITH(budget::centred_loop(12, 1.5, 2), Catch::Contains("(0, 1]"));
  CHECK_THROWS_AS(budget::centred_loop(12, std::numeric_limits<double>::quiet_NaN(), 2), budget::Error);
  CHECK_THROWS_WITH(budget::centred_loop(12, 0.04, 2), Catch::Contains("empty loop"));
  CHECK_THROWS_WITH(budget::centred_loop(12, 0.5, 0), Catch::Contains("repeats 0"));
}

TEST_CASE("config: loop forms in JSON: first/last, span_fraction, default repeats", "[config]") {
  const std::string head = R"({"hidden_size": 1280, "num_layers": 12,
    "attention": {"num_heads": 10, "head_dim": 128, "num_kv_heads": 2},
    "ffn": {"num_experts": 192, "top_k": 8, "expert_dim": 432},)";
  const ArchConfig explicit_loop = budget::parse_arch_config(head + R"("loop": {"first": 4, "last": 9, "repeats": 2}})", "t");
  REQUIRE(explicit_loop.loop);
  CHECK(explicit_loop.loop->first == 4);
  CHECK(explicit_loop.loop->last == 9);
  CHECK(explicit_loop.executed_layers() == 18);
  const ArchConfig fraction = budget::parse_arch_config(head + R"("loop": {"span_fraction": 0.5}})", "t");
  REQUIRE(fraction.loop);
  CHECK(fraction.loop->first == 4);
  CHECK(fraction.loop->last == 9);
  CHECK(fraction.loop->repeats == 2);  // default
  const ArchConfig thrice = budget::parse_arch_config(head + R"("loop": {"span_fraction": 0.5, "repeats": 3}})", "t");
  CHECK(thrice.executed_layers() == 24);
  const ArchConfig none = budget::parse_arch_config(head.substr(0, head.size() - 1) + "}", "t");
  CHECK_FALSE(none.loop);
  // Defaults: no vocab, untied, gated, MHA when num_kv_heads is absent.
  const ArchConfig mha = budget::parse_arch_config(R"({"hidden_size": 64, "num_layers": 2,
    "attention": {"num_heads": 4, "head_dim": 16}, "ffn": {"dense_dim": 256}})", "t");
  CHECK(mha.attention.num_kv_heads == 4);
  CHECK(mha.vocab_size == 0);
  CHECK_FALSE(mha.tie_embeddings);
  CHECK(mha.ffn.gated);
  CHECK_FALSE(mha.ffn.is_moe());
}

TEST_CASE("config: the example configs parse and match the configs built in code", "[config]") {
  const std::string dir = std::string(BUDGET_SOURCE_DIR) + "/examples/configs/";
  CHECK(same_config(budget::load_arch_config(dir + "paper-200M-S95-baseline.json"), paper_200m_baseline()));
  CHECK(same_config(budget::load_arch_config(dir + "paper-200M-S95-smelt.json"), paper_200m_smelt()));
  const budget::Workload w = budget::load_workload(std::string(BUDGET_SOURCE_DIR) + "/examples/workloads/paper-4096.json");
  CHECK(w.seq_len == 4096);
  CHECK(w.attended_keys == 400.0);
  CHECK(w.training_passes == 3);
  CHECK(w.attention_mask == budget::AttentionMask::document);
}

TEST_CASE("config: JSON round trip: arch_config_to_json then parse_arch_config gives the original", "[config]") {
  ArchConfig shared = toy_moe();
  shared.ffn.num_shared_experts = 2;
  shared.ffn.shared_expert_dim = 48;
  shared.ffn.first_dense_layers = 2;
  shared.ffn.dense_dim = 128;
  shared.ffn.gated = false;
  shared.loop = LoopConfig{2, 3, 4};
  shared.vocab_size = 50'257;
  shared.tie_embeddings = true;
  ArchConfig dense = toy_dense();
  dense.name = "a name with \"quotes\" and ünïcode";
  for (const ArchConfig& original : {paper_200m_baseline(), paper_200m_smelt(), toy_moe(), dense, shared}) {
    INFO(original.name);
    const std::string text = budget::arch_config_to_json(original);
    const ArchConfig parsed = budget::parse_arch_config(text, "round-trip");
    CHECK(same_config(parsed, original));
    CHECK(budget::arch_config_to_json(parsed, 0) == budget::arch_config_to_json(original, 0));
  }
}

// ---------------------------------------------------------------------------------------------
// Malformed configs: each gives its own message naming the source, the JSON path and the fault.

namespace {

struct BadInput {
  const char* what;
  std::string json;
  const char* path;                 // expected Error::path()
  std::vector<const char*> words;   // each must appear in Error::message()
};

// A valid config with one field replaced: `attention`/`ffn` bodies and extra top-level keys.
std::string config_with(const std::string& top, const std::string& attention = R"("num_heads": 10, "head_dim": 128, "num_kv_heads": 2)",
                        const std::string& ffn = R"("num_experts": 192, "top_k": 8, "expert_dim": 432)") {
  return "{" + top + R"(, "attention": {)" + attention + R"(}, "ffn": {)" + ffn + "}}";
}
const std::string hl = R"("hidden_size": 1280, "num_layers": 12)";

}  // namespace

TEST_CASE("config: malformed configs each get their specific message", "[config]") {
  const std::vector<BadInput> cases = {
      {"wrong type (string for an integer)", config_with(R"("hidden_size": "1280", "num_layers": 12)"),
       "/hidden_size", {"expected an integer", "a string", "\"1280\""}},
      {"negative", config_with(R"("hidden_size": 1280, "num_layers": -12)"), "/num_layers",
       {"-12", "out of range", "[1, 1000000]"}},
      {"zero heads", config_with(hl, R"("num_heads": 0, "head_dim": 128, "num_kv_heads": 2)"),
       "/attention/num_heads", {"0", "out of range", "[1, 2147483647]"}},
      {"missing key (attention)", R"({"hidden_size": 1280, "num_layers": 12, "ffn": {"num_experts": 8, "top_k": 8, "expert_dim": 4}})",
       "/attention", {"required key is missing"}},
      {"missing key (head_dim)", config_with(hl, R"("num_heads": 10, "num_kv_heads": 2)"), "/attention/head_dim",
       {"required key is missing", "integer"}},
      {"missing key (top_k of an MoE)", config_with(hl, R"("num_heads": 10, "head_dim": 128)", R"("num_experts": 8, "expert_dim": 4)"),
       "/ffn/top_k", {"required key is missing"}},
      {"unknown key with did-you-mean", config_with(R"("hiden_size": 1280, "num_layers": 12)"), "/hiden_size",
       {"unknown key", "did you mean \"hidden_size\""}},
      {"unknown key nested", config_with(hl, R"("num_heads": 10, "head_dim": 128, "num_kv_head": 2)"),
       "/attention/num_kv_head", {"unknown key", "did you mean \"num_kv_heads\""}},
      {"unknown key, nothing close", config_with(hl + R"(, "colour": "blue")"), "/colour",
       {"unknown key", "allowed keys here", "hidden_size"}},
      {"KV heads not dividing heads", config_with(hl, R"("num_heads": 10, "head_dim": 128, "num_kv_heads": 3)"),
       "/attention/num_kv_heads", {"num_kv_heads 3 does not divide num_heads 10"}},
      {"loop outside the stack", config_with(hl + R"(, "loop": {"first": 10, "last": 13, "repeats": 2})"),
       "/loop/last", {"13", "out of range", "[1, 12]"}},
      {"loop first 0", config_with(hl + R"(, "loop": {"first": 0, "last": 4})"), "/loop/first",
       {"0", "out of range", "[1, 12]"}},
      {"loop reversed", config_with(hl + R"(, "loop": {"first": 9, "last": 4})"), "/loop/last",
       {"last layer 4", "first = 9"}},
      {"loop repeats 0", config_with(hl + R"(, "loop": {"first": 4, "last": 9, "repeats": 0})"), "/loop/repeats",
       {"0", "out of range", "[1, 1024]"}},
      {"span_fraction and first both given", config_with(hl + R"(, "loop": {"span_fraction": 0.5, "first": 4})"),
       "/loop/span_fraction", {"either span_fraction or first/last, not both"}},
      {"span_fraction 0", config_with(hl + R"(, "loop": {"span_fraction": 0})"), "/loop/span_fraction",
       {"span_fraction 0", "(0, 1]"}},
      {"span_fraction rounding to no layer", config_with(hl + R"(, "loop": {"span_fraction": 0.02})"),
       "/loop/span_fraction", {"empty loop"}},
      {"span_fraction a string", config_with(hl + R"(, "loop": {"span_fraction": "half"})"), "/loop/span_fraction",
       {"expected a number", "a string"}},
      {"top_k > experts", config_with(hl, R"("num_heads": 10, "head_dim": 128)", R"("num_experts": 8, "top_k": 9, "expert_dim": 432)"),
       "/ffn/top_k", {"top_k 9", "num_experts = 8"}},
      {"32-bit overflow of a size", config_with(hl, R"("num_heads": 10, "head_dim": 128)", R"("num_experts": 8, "top_k": 8, "expert_dim": 4294967296)"),
       "/ffn/expert_dim", {"4294967296", "out of range", "[1, 2147483647]"}},
      {"beyond 64 bits", config_with(R"("hidden_size": 18446744073709551616, "num_layers": 12)"), "/hidden_size",
       {"out of range"}},
      {"64-bit total overflow (experts)",
       config_with(R"("hidden_size": 2147483647, "num_layers": 1000)", R"("num_heads": 1, "head_dim": 1)",
                   R"("num_experts": 2147483647, "top_k": 1, "expert_dim": 2147483647)"),
       "/", {"too large", "64-bit"}},
      {"64-bit total overflow (attention widths)",
       config_with(R"("hidden_size": 2147483647, "num_layers": 1)",
                   R"("num_heads": 2147483647, "head_dim": 2147483647, "num_kv_heads": 2147483647)",
                   R"("dense_dim": 1)"),
       "/", {"too large", "64-bit"}},
      {"float for an integer", config_with(R"("hidden_size": 1280, "num_layers": 12.5)"), "/num_layers",
       {"12.5", "not an integer"}},
      {"boolean of the wrong type", config_with(hl, R"("num_heads": 10, "head_dim": 128)", R"("num_experts": 8, "top_k": 8, "expert_dim": 4, "gated": "yes")"),
       "/ffn/gated", {"expected true or false", "a string"}},
      {"not an object", "[1, 2, 3]", "/", {"expected a JSON object", "an array"}},
      {"attention not an object", R"({"hidden_size": 1280, "num_layers": 12, "attention": 5, "ffn": {"dense_dim": 64}})", "/attention",
       {"expected a JSON object", "an integer"}},
      {"dense model without dense_dim", config_with(hl, R"("num_heads": 10, "head_dim": 128)", R"("gated": true)"),
       "/ffn/dense_dim", {"dense_dim 0", "dense model"}},
      {"shared experts without width", config_with(hl, R"("num_heads": 10, "head_dim": 128)", R"("num_experts": 8, "top_k": 2, "expert_dim": 64, "num_shared_experts": 1)"),
       "/ffn/shared_expert_dim", {"shared_expert_dim 0", "num_shared_experts = 1"}},
      {"first dense layers beyond the stack", config_with(hl, R"("num_heads": 10, "head_dim": 128)", R"("num_experts": 8, "top_k": 2, "expert_dim": 64, "first_dense_layers": 13, "dense_dim": 64)"),
       "/ffn/first_dense_layers", {"13", "out of range", "[0, 12]"}},
  };
  REQUIRE(cases.size() >= 15);
  for (const auto& c : cases) {
    INFO(c.what << "\n" << c.json);
    try {
      (void)budget::parse_arch_config(c.json, "inline.json");
      FAIL_CHECK("no error thrown");
    } catch (const budget::Error& e) {
      INFO("what(): " << e.what());
      CHECK(e.source() == "inline.json");
      CHECK(e.path() == c.path);
      for (const char* word : c.words) CHECK_THAT(e.message(), Catch::Contains(word));
      // One line: "<source>: <path>: <message>".
      CHECK(std::string(e.what()) == "inline.json: " + std::string(c.path) + ": " + e.message());
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("config: malformed workloads each get their specific message", "[config]") {
  const std::vector<BadInput> cases = {
      {"causal mask with attended_keys", R"({"attention_mask": "causal", "attended_keys": 300})", "/attended_keys",
       {"cannot be given", "causal", "(seq_len + 1)/2"}},
      {"unknown mask with did-you-mean", R"({"attention_mask": "documnet"})", "/attention_mask",
       {"\"documnet\" is not allowed", "did you mean \"document\""}},
      {"unknown key with did-you-mean", R"({"atended_keys": 300})", "/atended_keys",
       {"unknown key", "did you mean \"attended_keys\""}},
      {"zero seq_len", R"({"seq_len": 0})", "/seq_len", {"0", "out of range"}},
      {"attended keys beyond the window", R"({"seq_len": 256, "attended_keys": 400})", "/attended_keys",
       {"400", "out of range", "256"}},
      {"negative attended keys", R"({"attended_keys": -1})", "/attended_keys", {"-1", "out of range"}},
      {"wrong type", R"({"training_passes": "three"})", "/training_passes", {"expected an integer", "a string"}},
      {"float for an integer", R"({"kv_bytes": 1.5})", "/kv_bytes", {"1.5", "not an integer"}},
      {"zero kv bytes", R"({"kv_bytes": 0})", "/kv_bytes", {"0", "out of range", "[1, 16]"}},
      {"not an object", R"("4096")", "/", {"expected a JSON object", "a string"}},
  };
  for (const auto& c : cases) {
    INFO(c.what << "\n" << c.json);
    try {
      (void)budget::parse_workload(c.json, "w.json");
      FAIL_CHECK("no error thrown");
    } catch (const budget::Error& e) {
      INFO("what(): " << e.what());
      CHECK(e.source() == "w.json");
      CHECK(e.path() == c.path);
      for (const char* word : c.words) CHECK_THAT(e.message(), Catch::Contains(word));
    }
  }
}

TEST_CASE("config: file-level failures: non-JSON, empty, missing, a directory", "[config]") {
  struct FileCase {
    std::string path;
    std::vector<const char*> words;
  };
  const std::vector<FileCase> cases = {
      {data_path("not_json.json"), {"not valid JSON", "line 1"}},
      {data_path("empty.json"), {"empty"}},
      {data_path("does_not_exist.json"), {"cannot open file for reading", "no such file"}},
      {std::string(BUDGET_TEST_DATA_DIR) + "/bad", {"cannot open file for reading", "it is a directory"}},
  };
  for (const auto& c : cases) {
    INFO(c.path);
    for (int kind = 0; kind < 2; ++kind) {
      try {
        if (kind == 0) {
          (void)budget::load_arch_config(c.path);
        } else {
          (void)budget::load_workload(c.path);
        }
        FAIL_CHECK("no error thrown");
      } catch (const budget::Error& e) {
        INFO("what(): " << e.what());
        CHECK(e.source() == c.path);
        CHECK(e.path().empty());
        for (const char* word : c.words) CHECK_THAT(e.message(), Catch::Contains(word));
      }
    }
  }
  // Text parsers name the source they are given; empty text is "empty", not a syntax error.
  CHECK_THROWS_WITH(budget::parse_arch_config("  \n", "<stdin>"), "<stdin>: the file is empty; expected a JSON object");
  CHECK_THROWS_WITH(budget::parse_arch_config("{\"hidden_size\": 12,", "x"), Catch::StartsWith("x: not valid JSON"));
}

// Every fixture under tests/data/bad/ fails with a budget::Error (the CLI tests check the
// messages and exit codes of the same files).
TEST_CASE("config: every malformed fixture file is rejected", "[config]") {
  for (const char* name : {"wrong_type.json", "negative_layers.json", "zero_heads.json", "missing_attention.json",
                           "unknown_key.json", "kv_heads_not_dividing.json", "loop_outside_stack.json",
                           "top_k_over_experts.json", "overflow_32bit.json", "overflow_64bit_total.json",
                           "float_for_integer.json", "span_fraction_and_first.json", "not_an_object.json"}) {
    INFO(name);
    CHECK_THROWS_AS(budget::load_arch_config(data_path(name)), budget::Error);
  }
  for (const char* name : {"workload_causal_with_keys.json", "workload_unknown_key.json", "workload_keys_over_seq_len.json"}) {
    INFO(name);
    CHECK_THROWS_AS(budget::load_workload(data_path(name)), budget::Error);
  }
}

TEST_CASE("config: validate() of configs built in code names the field", "[config]") {
  ArchConfig c = toy_moe();
  c.hidden_size = -1;
  CHECK_THROWS_WITH(budget::validate(c, "code"), Catch::StartsWith("code: /hidden_size: value -1 is out of range"));
  c = toy_moe();
  c.loop = LoopConfig{3, 5, 2};  // last 5 > 4 layers
  CHECK_THROWS_WITH(budget::validate(c, "code"), Catch::StartsWith("code: /loop/last:"));
  c = toy_moe();
  c.ffn.top_k = 0;
  CHECK_THROWS_WITH(budget::validate(c), Catch::StartsWith("/ffn/top_k: top_k 0 is out of range"));
  // KV cache bytes of one window beyond 64 bits: 2·4·32 elements · 16 B · 2^40 tokens = 4.5e15 B is
  // fine; a 100,000-layer stack with 2^20-wide KV heads is not (2·1e5·2^20·16·2^40 ≈ 3.7e24 B).
  ArchConfig wide = toy_moe();
  wide.num_layers = 100'000;
  wide.attention = {1, 1 << 20, 1};
  budget::Workload w = toy_workload();
  w.seq_len = std::int64_t{1} << 40;
  w.attended_keys = 10;
  w.kv_bytes = 16;
  CHECK_THROWS_WITH(budget::account(wide, w), Catch::Contains("KV cache"));
}

TEST_CASE("config: validation_error says what validate() throws, and nothing for a valid config", "[config]") {
  using namespace budget;
  const ArchConfig valid = load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/examples/configs/paper-200M-S95-baseline.json");
  CHECK(validation_error(valid).empty());
  CHECK_NOTHROW(validate(valid));
  // One broken constraint of each check group, in validate()'s order: the first one wins.
  const auto broken = [&](auto&& change) {
    ArchConfig c = valid;
    change(c);
    return c;
  };
  const std::vector<std::pair<ArchConfig, std::string>> cases{
      {broken([](ArchConfig& c) { c.attention.num_kv_heads = 3; }), "/attention/num_kv_heads: num_kv_heads 3 does not divide"},
      {broken([](ArchConfig& c) { c.attention.sliding_window = 64; }), "/attention/sliding_window: sliding_window 64 given"},
      {broken([](ArchConfig& c) { c.ffn.top_k = c.ffn.num_experts + 1; }), "/ffn/top_k: top_k"},
      {broken([](ArchConfig& c) { c.loop = LoopConfig{2, 1, 2}; }), "/loop/last: loop last layer 1 is outside"},
      {broken([](ArchConfig& c) { c.hidden_size = 2'000'000'000; c.ffn.expert_dim = 2'000'000'000; }),
       "/: the config is too large"},
      {broken([](ArchConfig& c) { c.num_layers = 0; c.ffn.top_k = 0; }), "/num_layers: value 0 is out of range"},
  };
  for (const auto& [config, expected] : cases) {
    INFO(expected);
    const std::string message = validation_error(config);
    CHECK_THAT(message, Catch::StartsWith(expected));
    try {
      validate(config, "file.json");
      FAIL("validate() did not throw");
    } catch (const Error& e) {
      CHECK(std::string(e.what()) == "file.json: " + message);
    }
  }
}
