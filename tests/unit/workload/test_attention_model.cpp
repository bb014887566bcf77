// The attention model (issue 4): per-context counts, tiles, and the packing simulator, checked by
// hand-derived cases and against explicit mask matrices (test_attention_brute_force.hpp).

#include <catch2/catch.hpp>
#include <random>

#include "workload/attention_tiles.hpp"
#include "budget/attention_cost.hpp"
#include "budget/error.hpp"
#include "support/test_attention_brute_force.hpp"

using budget::AttentionGeometry;
using budget::AttentionTile;
using budget::PackingSimulator;
using budget::SimulationResult;

namespace {

AttentionGeometry geometry(std::int64_t seq_len, AttentionTile fwd = {128, 128}, AttentionTile bwd = {64, 128},
                           std::int64_t window = 0) {
  return AttentionGeometry{seq_len, window, fwd, bwd};
}

void check_equal(const SimulationResult& r, const budget::test::BruteCounts& b) {
  const auto& t = r.totals;
  CHECK(t.tokens == static_cast<std::uint64_t>(b.tokens));
  CHECK(t.windows == static_cast<std::uint64_t>(b.windows));
  CHECK(t.full_windows == static_cast<std::uint64_t>(b.full_windows));
  CHECK(t.pieces == static_cast<std::uint64_t>(b.pieces));
  CHECK(t.document_keys == static_cast<std::uint64_t>(b.document_keys));
  CHECK(t.causal_keys == static_cast<std::uint64_t>(b.causal_keys));
  CHECK(t.document_forward.varlen == static_cast<std::uint64_t>(b.document_varlen_tiles[0]));
  CHECK(t.document_backward.varlen == static_cast<std::uint64_t>(b.document_varlen_tiles[1]));
  CHECK(t.document_forward.dense_masked == static_cast<std::uint64_t>(b.document_dense_tiles[0]));
  CHECK(t.document_backward.dense_masked == static_cast<std::uint64_t>(b.document_dense_tiles[1]));
  CHECK(t.causal_forward_tiles == static_cast<std::uint64_t>(b.causal_tiles[0]));
  CHECK(t.causal_backward_tiles == static_cast<std::uint64_t>(b.causal_tiles[1]));
  std::uint64_t histogram_pieces = 0;
  std::uint64_t histogram_tokens = 0;
  for (const auto& bin : t.piece_histogram) {
    histogram_pieces += bin.pieces;
    histogram_tokens += bin.tokens;
    CHECK(bin.min_length <= bin.max_length);
  }
  CHECK(histogram_pieces == t.pieces);
  CHECK(histogram_tokens == t.tokens);
}

}  // namespace

// One causal context of n tokens: Σ_{i=1..n} i = n(n+1)/2 pairs, so (n+1)/2 keys per query.
TEST_CASE("attention: a single document of n tokens attends (n+1)/2 keys per query", "[attention]") {
  for (std::int64_t n : {1, 2, 3, 17, 600, 4095, 4096}) {
    INFO("n = " << n);
    const SimulationResult r =
        budget::simulate_lengths(std::vector<std::uint64_t>{static_cast<std::uint64_t>(n)}, geometry(4096));
    CHECK(r.totals.document_keys == static_cast<std::uint64_t>(n * (n + 1) / 2));
    CHECK(r.cost().document.exact_keys == Approx((static_cast<double>(n) + 1.0) / 2.0).epsilon(1e-15));
    CHECK(r.cost().causal.exact_keys == Approx((static_cast<double>(n) + 1.0) / 2.0).epsilon(1e-15));
  }
}

// 32 query blocks of 128 rows; block q reaches key blocks 0..q: Σ_{q=0..31} (q+1) = 528 of 32² = 1024
// tiles. Executed/exact = 528·128² / (4096·4097/2) = 8,650,752 / 8,390,656 = 1.0310.
TEST_CASE("attention: a 4096 document with 128x128 tiles executes 528 of 1024 tiles, 1.031x the exact work",
          "[attention]") {
  CHECK(budget::causal_context_tiles(4096, {128, 128}, 0) == 528);
  const SimulationResult r = budget::simulate_lengths(std::vector<std::uint64_t>{4096}, geometry(4096));
  CHECK(r.totals.document_forward.varlen == 528);
  CHECK(r.totals.document_forward.dense_masked == 528);
  CHECK(r.totals.causal_forward_tiles == 528);
  const auto cost = r.cost();
  CHECK(cost.document.varlen.forward / cost.document.exact_keys == Approx(8'650'752.0 / 8'390'656.0));
  CHECK(cost.document.varlen.forward / cost.document.exact_keys == Approx(1.031).margin(0.0005));
  // Backward 64×128: 64 query blocks, block q reaches key blocks 0..⌊(64q + 63)/128⌋ = ⌊q/2⌋:
  // Σ_{q=0..63} (⌊q/2⌋ + 1) = 2·Σ_{j=0..31} (j + 1) = 1056 tiles of 64·128.
  CHECK(r.totals.document_backward.varlen == 1056);
}

// K_w(x) = Σ min(i, w): x = 10, w = 4 → 1+2+3+4·7 = 34.
TEST_CASE("attention: causal_context_keys with and without a sliding window", "[attention]") {
  CHECK(budget::causal_context_keys(10, 0) == 55);
  CHECK(budget::causal_context_keys(10, 4) == 34);
  CHECK(budget::causal_context_keys(10, 10) == 55);
  CHECK(budget::causal_context_keys(10, 1) == 10);
  CHECK(budget::causal_context_keys(0, 0) == 0);
  CHECK_THROWS_AS(budget::causal_context_keys(-1, 0), budget::Error);
}

// The O(1) table lookups (TileCounter) agree with the direct per-block loop, and a dense launch
// over a window holding one piece executes the same tiles as the causal launch over it:
// diagonal(m) + below(0, m) = context_tiles(m).
TEST_CASE("attention: tile tables agree with the per-block loop", "[attention]") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t s = std::uniform_int_distribution<std::int64_t>(1, 300)(rng);
    const AttentionTile tile{std::uniform_int_distribution<std::int64_t>(1, 70)(rng),
                             std::uniform_int_distribution<std::int64_t>(1, 70)(rng)};
    const std::int64_t w = trial % 3 == 0 ? s : std::uniform_int_distribution<std::int64_t>(1, s)(rng);
    const budget::detail::TileCounter counter(tile, s, w);
    for (std::int64_t x = 0; x <= s; ++x) {
      INFO("S=" << s << " tile " << tile.rows << "x" << tile.cols << " w=" << w << " x=" << x);
      const auto expected = static_cast<std::uint64_t>(budget::causal_context_tiles(x, tile, w));
      REQUIRE(counter.context_tiles(static_cast<std::uint64_t>(x)) == expected);
      REQUIRE(counter.diagonal_tiles(static_cast<std::uint64_t>(x)) +
                  counter.dense_below_tiles(0, static_cast<std::uint64_t>(x)) ==
              expected);
    }
  }
}

// The divider is exact over its whole stated domain edges (x ≤ 2^21, d ≤ 2^21).
TEST_CASE("attention: SmallDivider floors exactly", "[attention]") {
  std::mt19937_64 rng(11);
  for (const std::uint64_t d : std::vector<std::uint64_t>{1, 2, 3, 7, 64, 100, 127, 128, 65535, 65536, 2097151}) {
    const budget::detail::SmallDivider div(d);
    for (const std::uint64_t x : std::vector<std::uint64_t>{0, 1, d - 1, d, d + 1, 2097151, 2097152}) {
      REQUIRE(div.floor(x) == x / d);
    }
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t x = rng() % 2097153ULL;
      REQUIRE(div.floor(x) == x / d);
    }
  }
}

// The acceptance test: random small streams, random windows, tiles and sliding windows; every
// integer the simulator reports equals the count over explicit mask matrices.
TEST_CASE("attention: simulation equals brute-force mask counting on random small cases", "[attention]") {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 250; ++trial) {
    const std::int64_t s = std::uniform_int_distribution<std::int64_t>(1, 40)(rng);
    const AttentionTile fwd{std::uniform_int_distribution<std::int64_t>(1, 9)(rng),
                            std::uniform_int_distribution<std::int64_t>(1, 9)(rng)};
    const AttentionTile bwd{std::uniform_int_distribution<std::int64_t>(1, 9)(rng),
                            std::uniform_int_distribution<std::int64_t>(1, 9)(rng)};
    const std::int64_t window = trial % 2 == 0 ? 0 : std::uniform_int_distribution<std::int64_t>(1, s + 3)(rng);
    const std::int64_t extra = trial % 4 == 1 ? std::uniform_int_distribution<std::int64_t>(1, 3)(rng) : 0;
    const int documents = std::uniform_int_distribution<int>(1, 25)(rng);
    std::vector<std::int64_t> lengths;
    std::vector<std::uint64_t> lengths_u;
    for (int d = 0; d < documents; ++d) {
      // Mostly short documents, some longer than the window.
      const std::int64_t max_length = trial % 5 == 0 ? 3 * s : std::max<std::int64_t>(1, s / 2);
      lengths.push_back(std::uniform_int_distribution<std::int64_t>(1, max_length)(rng));
      lengths_u.push_back(static_cast<std::uint64_t>(lengths.back()));
    }
    INFO("trial " << trial << ": S=" << s << " fwd " << fwd.rows << "x" << fwd.cols << " bwd " << bwd.rows << "x"
                  << bwd.cols << " window=" << window << " +" << extra << " tokens/doc, " << documents << " docs");
    const budget::test::BruteTile tiles[2] = {{fwd.rows, fwd.cols}, {bwd.rows, bwd.cols}};
    const auto brute = budget::test::count_stream(lengths, extra, s, window, tiles);
    const SimulationResult r = budget::simulate_lengths(lengths_u, geometry(s, fwd, bwd, window), extra);
    CHECK(r.totals.documents == lengths.size());
    check_equal(r, brute);
  }
}

// Documents far longer than the window take the bulk path (k full windows at once).
TEST_CASE("attention: long documents: bulk full windows equal the token-level count", "[attention]") {
  const std::vector<std::int64_t> lengths = {5, 97, 3, 250, 31, 64, 1, 129};
  std::vector<std::uint64_t> lengths_u(lengths.begin(), lengths.end());
  for (std::int64_t window : {0, 5}) {
    const budget::test::BruteTile tiles[2] = {{4, 8}, {2, 8}};
    const auto brute = budget::test::count_stream(lengths, 1, 32, window, tiles);
    check_equal(budget::simulate_lengths(lengths_u, geometry(32, {4, 8}, {2, 8}, window), 1), brute);
  }
}

// Worked example: S = 8, documents 3 and 7 → window 1 = [3][5], window 2 = [2] (partial).
// Document keys: 6 + 15 + 3 = 24 over 10 tokens; causal: window 1 K(8) = 36, window 2 K(2) = 3.
TEST_CASE("attention: pieces restart their causal context, the partial last window holds real tokens only",
          "[attention]") {
  const SimulationResult r = budget::simulate_lengths(std::vector<std::uint64_t>{3, 7}, geometry(8, {2, 2}, {2, 2}));
  CHECK(r.totals.pieces == 3);
  CHECK(r.totals.windows == 2);
  CHECK(r.totals.full_windows == 1);
  CHECK(r.totals.document_keys == 24);
  CHECK(r.totals.causal_keys == 39);
  CHECK(r.cost().document.exact_keys == Approx(2.4));
  CHECK(r.cost().mean_piece_length == Approx(10.0 / 3.0));
}

TEST_CASE("attention: the piece-length histogram uses power-of-two bins cut at seq_len", "[attention]") {
  // S = 100, documents 1, 2, 3, 94, 250: window 1 holds pieces 1, 2, 3, 94; the 250-token document
  // fills windows 2 and 3 (pieces 100, 100) and leaves 50 in window 4.
  const SimulationResult r = budget::simulate_lengths(std::vector<std::uint64_t>{1, 2, 3, 94, 250}, geometry(100));
  const auto& h = r.totals.piece_histogram;
  REQUIRE(h.size() == 4);
  CHECK((h[0].min_length == 1 && h[0].max_length == 1 && h[0].pieces == 1 && h[0].tokens == 1));
  CHECK((h[1].min_length == 2 && h[1].max_length == 3 && h[1].pieces == 2 && h[1].tokens == 5));
  CHECK((h[2].min_length == 32 && h[2].max_length == 63 && h[2].pieces == 1 && h[2].tokens == 50));
  CHECK((h[3].min_length == 64 && h[3].max_length == 100 && h[3].pieces == 3 && h[3].tokens == 294));
}

TEST_CASE("attention: bad geometry and lengths are rejected with the field named", "[attention]") {
  CHECK_THROWS_WITH(PackingSimulator(geometry(0)), Catch::Contains("/seq_len") && Catch::Contains("[1, 2^20]"));
  CHECK_THROWS_WITH(PackingSimulator(geometry((1 << 20) + 1)), Catch::Contains("/seq_len"));
  CHECK_THROWS_WITH(PackingSimulator(geometry(64, {0, 128})), Catch::Contains("/forward_tile"));
  CHECK_THROWS_WITH(PackingSimulator(geometry(64, {128, 128}, {64, 70000})), Catch::Contains("/backward_tile"));
  CHECK_THROWS_WITH(PackingSimulator(geometry(64, {128, 128}, {64, 128}, -1)), Catch::Contains("/sliding_window"));
  CHECK_THROWS_WITH(PackingSimulator(geometry(64), -1), Catch::Contains("tokens added per document"));
  PackingSimulator sim(geometry(64));
  CHECK_THROWS_WITH(sim.add(0), Catch::Contains("document 1 has length 0"));
  CHECK_THROWS_WITH(sim.add((std::uint64_t{1} << 40) + 1), Catch::Contains("2^40"));
  CHECK_THROWS_WITH(budget::parse_attention_tile("128"), Catch::Contains("ROWSxCOLS"));
  CHECK_THROWS_WITH(budget::parse_attention_tile("128x0"), Catch::Contains("[1, 65536]"));
  CHECK_THROWS_WITH(budget::parse_attention_tile("12ax4", "--tile"), Catch::StartsWith("--tile: "));
  CHECK(budget::parse_attention_tile("64X128") == AttentionTile{64, 128});
  CHECK(budget::to_string(AttentionTile{64, 128}) == "64x128");
}

// 2^63 / 4096 = 2^51 tokens is the cap at S = 4096: 2^11 documents of 2^40 tokens fill it exactly
// (their keys, 2^51·(4097/2), still fit), the next one is rejected.
TEST_CASE("attention: 64-bit totals: an overflowing stream is an error, not a wrong number", "[attention]") {
  PackingSimulator sim(geometry(4096));
  const std::uint64_t huge = std::uint64_t{1} << 40;
  for (int i = 0; i < 2048; ++i) sim.add(huge);
  CHECK(sim.result().totals.tokens == std::uint64_t{1} << 51);
  CHECK(sim.result().totals.document_keys == (std::uint64_t{1} << 50) * 4097);
  CHECK_THROWS_WITH(sim.add(huge), Catch::Contains("overflow"));
}

// Training-pass weighting of kernel keys (the backward pass is two forward equivalents).
TEST_CASE("attention: pass_weighted_keys: forward once, backward twice", "[attention]") {
  const budget::KernelKeys k{100.0, 130.0};
  CHECK(budget::pass_weighted_keys(k, 1) == 100.0);
  CHECK(budget::pass_weighted_keys(k, 3) == Approx((100.0 + 2 * 130.0) / 3));
  CHECK(budget::pass_weighted_keys(k, 4) == Approx((2 * 100.0 + 2 * 130.0) / 4));
  CHECK(budget::pass_weighted_keys(k, 2) == Approx(115.0));
}
