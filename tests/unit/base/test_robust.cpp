// Regression tests of the audit of issue 12 (docs/reliability.md): strict JSON, bounded matcher
// work, degenerate fit data, extremes (10 trillion parameters, a million experts, 1M-token
// sequences) computed exactly or refused.

#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "budget/accounting.hpp"
#include "budget/config_io.hpp"
#include "budget/edit_distance.hpp"
#include "budget/error.hpp"
#include "budget/match.hpp"
#include "budget/scaling_data.hpp"
#include "budget/scaling_fit.hpp"
#include "budget/text_escape.hpp"
#include "budget/workload.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/error_of.hpp"
#include "base/json_reader.hpp"

using namespace budget;

namespace {

const char* const base_json = R"({
  "name": "x", "hidden_size": 1280, "num_layers": 12,
  "attention": {"num_heads": 10, "head_dim": 128, "num_kv_heads": 2},
  "ffn": {"num_experts": 192, "top_k": 8, "expert_dim": 432}
})";

using test::error_of;

/// Non-embedding parameters by hand (docs/accounting.md): per layer attention H·(q + 2·kv) + q·H,
/// router H·E, E gated experts 3·H·W, norms 2H; plus the final norm H. Every term is exact in
/// 64-bit integers for the sizes used here.
std::int64_t hand_params(std::int64_t H, std::int64_t L, std::int64_t heads, std::int64_t hd, std::int64_t kvh,
                         std::int64_t E, std::int64_t W) {
  const std::int64_t q = heads * hd, kv = kvh * hd;
  const std::int64_t per_layer = H * (q + 2 * kv) + q * H + H * E + E * 3 * H * W + 2 * H;
  return L * per_layer + H;
}

}  // namespace

TEST_CASE("strict JSON: a duplicate key is an error naming its path", "[robust][json]") {
  std::string text = base_json;
  text.insert(text.find("\"num_layers\""), "\"hidden_size\": 64, ");
  const Error e = error_of([&] { (void)parse_arch_config(text, "cfg.json"); });
  CHECK(e.source() == "cfg.json");
  CHECK(e.path() == "/hidden_size");
  CHECK_THAT(e.message(), Catch::Contains("duplicate key \"hidden_size\""));

  std::string nested = base_json;
  nested.insert(nested.find("\"num_kv_heads\""), "\"head_dim\": 64, ");
  CHECK(error_of([&] { (void)parse_arch_config(nested, "cfg.json"); }).path() == "/attention/head_dim");
  // The same key in two objects is not a duplicate.
  CHECK_NOTHROW(detail::parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})", "t"));
}

TEST_CASE("strict JSON: a number beyond the double range is an input error with its path and line",
          "[robust][json]") {
  std::string text = base_json;
  text.replace(text.find("1280"), 4, "1e400");
  const Error e = error_of([&] { (void)parse_arch_config(text, "cfg.json"); });
  CHECK(e.source() == "cfg.json");
  CHECK(e.path() == "/hidden_size");
  CHECK_THAT(e.message(), Catch::Contains("number 1e400 at line 2") && Catch::Contains("outside the range of a double"));

  const Error in_array = error_of([] { (void)detail::parse_json_text("{\"a\": [1, 2, -1e999]}", "t.json"); });
  CHECK(in_array.path() == "/a/2");
  // Large but finite numbers are fine (and then range-checked by the readers).
  CHECK_NOTHROW(detail::parse_json_text("{\"a\": 1e308, \"b\": 18446744073709551615}", "t"));
}

TEST_CASE("strict JSON: messages show control and non-UTF-8 bytes escaped, long text cut", "[robust][json]") {
  CHECK(printable_text(std::string("a\0b", 3), 40) == "a\\x00b");
  CHECK(printable_text("\xff\xfe" "ok", 40) == "\\xff\\xfeok");
  CHECK(printable_text("é", 40) == "é");
  CHECK(printable_text(std::string(100000, 'k'), 10) == "kkkkkkkkkk... (100000 bytes in all)");
  // An unknown key of a megabyte is echoed once, cut.
  std::string text = base_json;
  text.insert(1, "\"" + std::string(1 << 20, 'z') + "\": 1, ");
  const Error e = error_of([&] { (void)parse_arch_config(text, "cfg.json"); });
  CHECK(std::string(e.what()).size() < 2000);
}

TEST_CASE("input files: only regular files are read", "[robust][files]") {
  CHECK_THAT(error_of([] { (void)load_arch_config("/dev/zero"); }).message(), Catch::Contains("not a regular file"));
  CHECK_THAT(error_of([] { (void)load_arch_config(""); }).message(), Catch::Contains("file name is empty"));
  CHECK_THAT(error_of([] { (void)load_arch_config(BUDGET_TEST_DATA_DIR); }).message(), Catch::Contains("directory"));
}

TEST_CASE("matcher: a huge head_dim is refused by the work limit before any work", "[robust][match]") {
  ArchConfig b = test::paper_200m_baseline();
  b.hidden_size = 64;
  b.attention = {1, 2147483647, 1};  // `report` accepts it: ~4e11 parameters
  b.num_layers = 1;
  validate(b);
  // The free lattice's head-dim range [hd/4, 2·hd] holds ~6·10^8 multiples of 4: more
  // combinations than max_structures / 10.
  const Error e = error_of(
      [&] { (void)match(b, LoopSpec{0.0, 0, 0, 1}, paper_workload(), default_constraints(b, ShapeSpace::free), 5); });
  CHECK(e.source() == "search space");
  CHECK_THAT(e.message(), Catch::Contains("more than the limit") && Catch::Contains("--max-structures"));
  // The trainable defaults hold head dims at the fused kernels' 256 at most: one value here.
  const MatchConstraints trainable = default_constraints(b);
  CHECK(trainable.head_dim.min == 256);
  CHECK(trainable.head_dim.max == 256);
}

TEST_CASE("matcher: constraints with ranges up to 2^31 are refused or searched in bounded work",
          "[robust][match]") {
  const ArchConfig b = test::paper_200m_baseline();
  MatchConstraints c = default_constraints(b);
  SECTION("top_k over 2^31 values") {
    c.top_k = {1, 2147483647, 1};
    CHECK(error_of([&] { (void)match(b, LoopSpec::smelt(), paper_workload(), c, 5); }).source() == "search space");
  }
  SECTION("num_layers over a million values") {
    c.num_layers = {2, 1'000'000, 1};
    CHECK(error_of([&] { (void)match(b, LoopSpec::smelt(), paper_workload(), c, 5); }).source() == "search space");
  }
  SECTION("hidden sizes up to 2^31 - 1: more structures than the limit") {
    c.hidden_size = {8, 2147483647, 1};
    c.head_dim = {4, 512, 1};
    CHECK(error_of([&] { (void)match(b, LoopSpec::smelt(), paper_workload(), c, 5); }).source() == "search space");
  }
  SECTION("a work limit stops a long search with a clear error") {
    c.max_work = 100;
    const Error e = error_of([&] { (void)match(b, LoopSpec::smelt(), paper_workload(), c, 5); });
    CHECK(e.source() == "search space");
    CHECK_THAT(e.message(), Catch::Contains("--max-work"));
  }
  SECTION("hidden sizes up to 2^31 - 1 with a fixed head dim: 12.8 million structures, refused") {
    c.hidden_size = {8, 2147483647, 8};
    c.head_dim = VariableRange::fixed(84);
    CHECK(error_of([&] { (void)match(b, LoopSpec::smelt(), paper_workload(), c, 5); }).source() == "search space");
  }
  SECTION("hidden sizes up to 65536 with a fixed head dim: searched, the KV-bound optimum") {
    c.hidden_size = {8, 65536, 8};
    c.head_dim = VariableRange::fixed(84);
    const MatchResult r = match(b, LoopSpec::smelt(), paper_workload(), c, 3);
    REQUIRE(r.summary.feasible);
    // 2·18 executed layers·2 KV heads·84 = 6048 against 6144: −1.5625%, and F, N matched closer.
    CHECK(r.candidates.front().objective == Approx(0.015625));
    CHECK(r.candidates.front().deviation.kv == Approx(-0.015625));
  }
}

TEST_CASE("matcher: a 1000-layer baseline looped x1024 ends quickly with a bounded answer", "[robust][match]") {
  ArchConfig b = test::paper_200m_baseline();
  b.num_layers = 1000;
  const LoopSpec loop{0.5, 0, 0, 1024};
  const MatchResult r = match(b, loop, paper_workload(), default_constraints(b), 5);
  // The loop multiplies the KV cache ~500-fold: matched as well as possible, honestly reported
  // (half the KV heads, the trainable defaults' smallest, give half of it back).
  REQUIRE(r.summary.feasible);
  CHECK(r.candidates.size() <= 5);
  CHECK(std::isfinite(r.summary.best_objective));
  for (const auto& cand : r.candidates) CHECK(cand.deviation.kv > 50.0);
}

TEST_CASE("fit: degenerate data get a diagnosis, not coefficients", "[robust][scaling]") {
  const auto points = [](std::initializer_list<double> losses) {
    std::vector<LossPoint> out;
    const double F[] = {1e9, 2e9, 4e9, 8e9, 1e9, 2e9, 4e9, 8e9};
    const double D[] = {1e10, 1e10, 2e10, 4e10, 4e10, 8e10, 1e10, 2e10};
    std::size_t i = 0;
    for (double loss : losses) {
      LossPoint p;
      p.arch = "x";
      p.cell = std::to_string(i);
      p.F = F[i];
      p.D = D[i];
      p.loss = loss;
      out.push_back(p);
      ++i;
    }
    return out;
  };
  CHECK_THAT(error_of([&] { (void)fit_scaling_law(points({2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5})); }).message(),
             Catch::Contains("all losses equal"));
  // Losses that grow with compute F·D.
  CHECK_THAT(error_of([&] { (void)fit_scaling_law(points({2.0, 2.2, 2.5, 2.9, 2.6, 3.0, 2.1, 2.6})); }).message(),
             Catch::Contains("does not decrease with compute"));
  // Loss values beyond the documented range are refused when read.
  CHECK_THROWS_AS(parse_loss_csv("arch,cell,F,D,loss\nx,a,1e9,1e10,1e-300\n", "t.csv"), Error);
  CHECK_THROWS_AS(parse_loss_csv("arch,cell,F,D,loss\nx,a,1e31,1e10,2.0\n", "t.csv"), Error);
}

TEST_CASE("extremes: 10 trillion parameters and a million experts are counted exactly", "[robust][extremes]") {
  SECTION("about 10^13 parameters") {
    ArchConfig c;
    c.hidden_size = 16384;
    c.num_layers = 120;
    c.attention = {128, 128, 8};
    c.ffn.num_experts = 1024;
    c.ffn.top_k = 8;
    c.ffn.expert_dim = 2048;
    c.ffn.gated = true;
    const Budgets b = account(c, paper_workload());
    const std::int64_t expected = hand_params(16384, 120, 128, 128, 8, 1024, 2048);
    CHECK(expected > 10'000'000'000'000);
    CHECK(b.non_embedding_params_total == expected);
    CHECK(b.kv_elements_per_token == 2 * 120 * 8 * 128);
  }
  SECTION("a million experts") {
    ArchConfig c;
    c.hidden_size = 2048;
    c.num_layers = 16;
    c.attention = {16, 128, 4};
    c.ffn.num_experts = 1'048'576;
    c.ffn.top_k = 16;
    c.ffn.expert_dim = 16;
    c.ffn.gated = true;
    const Budgets b = account(c, paper_workload());
    CHECK(b.non_embedding_params_total == hand_params(2048, 16, 16, 128, 4, 1'048'576, 16));
    // Router FLOPs 2·H·E per layer are counted too: F is finite and above the expert term.
    CHECK(std::isfinite(b.training_flops_per_token));
    CHECK(b.training_flops_per_token > 3.0 * 16 * 2.0 * 2048.0 * 1'048'576.0);
  }
  SECTION("beyond 64-bit counts: refused, never overflowed") {
    ArchConfig c = test::paper_200m_baseline();
    c.ffn.num_experts = 2147483647;
    c.ffn.expert_dim = 2147483647;
    CHECK_THAT(error_of([&] { validate(c); }).message(), Catch::Contains("too large"));
  }
}

TEST_CASE("extremes: 1M-token sequences", "[robust][extremes]") {
  const Workload causal = parse_workload(R"({"seq_len": 1048576, "attention_mask": "causal"})", "w.json");
  CHECK(causal.attended_keys == 524288.5);  // (S + 1)/2
  const Workload windowed =
      parse_workload(R"({"seq_len": 1048576, "attention_mask": "causal", "sliding_window": 1})", "w.json");
  CHECK(windowed.attended_keys == 1.0);
  // A window of 1 with document lengths: derived keys are exactly 1 (rounding never blames
  // /attended_keys, which the user did not write).
  const Workload doc_window = parse_workload(
      R"({"seq_len": 4096, "sliding_window": 1, "doc_lengths": {"distribution": "exp:mean=600"}})", "w.json");
  CHECK(doc_window.attended_keys == 1.0);
  const Budgets b = account(test::paper_200m_baseline(), causal);
  CHECK(std::isfinite(b.training_flops_per_token));
  // Attention scores 4·q·A per layer: q = 1280, 12 layers, 3 passes.
  const Budgets b400 = account(test::paper_200m_baseline(), paper_workload());
  CHECK(b.training_flops_per_token - b400.training_flops_per_token ==
        Approx(3.0 * 12 * 4.0 * 1280 * (524288.5 - 400.0)).epsilon(1e-12));
}

TEST_CASE("edit distance: Levenshtein's by hand", "[base]") {
  // kitten -> sitten (k/s) -> sittin (e/i) -> sitting (+g): 3; flaw -> law (-f) -> lawn (+n): 2.
  CHECK(budget::edit_distance("kitten", "sitting") == 3);
  CHECK(budget::edit_distance("flaw", "lawn") == 2);
  CHECK(budget::edit_distance("", "abc") == 3);
  CHECK(budget::edit_distance("abc", "") == 3);
  CHECK(budget::edit_distance("--micro-batch", "--micro-batch") == 0);
}
