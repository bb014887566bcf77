// Expectation for i.i.d. lengths (issue 4): checked against (1) an independent exact enumeration of
// stationary window contents with explicit masks, (2) exact simulation over one full period of
// fixed-length streams, (3) Monte Carlo simulation (acceptance: 0.5% for 10^6 exponential lengths).

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "budget/attention_cost.hpp"
#include "budget/doc_lengths.hpp"
#include "support/test_attention_brute_force.hpp"

using budget::AttentionCost;
using budget::AttentionGeometry;
using budget::AttentionTile;
using budget::LengthDistribution;

namespace {

double relative_difference(double a, double b) { return std::abs(a - b) / std::abs(b); }

void check_close(const AttentionCost& got, const AttentionCost& want, double tolerance) {
  const auto near = [&](double a, double b, const char* what) {
    INFO(what << ": got " << a << ", want " << b);
    CHECK(relative_difference(a, b) <= tolerance);
  };
  near(got.mean_document_length, want.mean_document_length, "mean document length");
  near(got.mean_piece_length, want.mean_piece_length, "mean piece length");
  near(got.document.exact_keys, want.document.exact_keys, "document keys");
  near(got.document.varlen.forward, want.document.varlen.forward, "varlen forward");
  near(got.document.varlen.backward, want.document.varlen.backward, "varlen backward");
  near(got.document.dense_masked.forward, want.document.dense_masked.forward, "dense forward");
  near(got.document.dense_masked.backward, want.document.dense_masked.backward, "dense backward");
  near(got.causal.exact_keys, want.causal.exact_keys, "causal keys");
  near(got.causal.varlen.forward, want.causal.varlen.forward, "causal forward");
}

LengthDistribution histogram(const std::vector<std::pair<std::int64_t, double>>& weights) {
  return LengthDistribution(budget::LengthComponent{budget::EmpiricalLength{weights}});
}

// The stationary expectation by brute force, derived differently from the library: the token at a
// window's start lies in a document of n tokens with `a` tokens left (itself included), where a
// runs over the multiples of g = gcd(S, support) and P(a) = g·P(n ≥ a)/E[n] (a size-biased
// document entered at a uniform grid point). The first piece is min(a, S); fresh i.i.d. documents
// follow until the window is full. Every window content is enumerated with its probability and
// counted with explicit mask matrices.
AttentionCost enumerate_stationary_window(const std::vector<std::pair<std::int64_t, double>>& pmf, std::int64_t seq_len,
                                          std::int64_t window, AttentionTile fwd, AttentionTile bwd) {
  double mean = 0.0;
  std::int64_t g = seq_len;
  std::int64_t longest = 0;
  for (const auto& [n, p] : pmf) {
    mean += static_cast<double>(n) * p;
    g = std::gcd(g, n);
    longest = std::max(longest, n);
  }
  const budget::test::BruteTile tiles[2] = {{fwd.rows, fwd.cols}, {bwd.rows, bwd.cols}};
  double keys = 0, pieces = 0, varlen[2] = {0, 0}, dense[2] = {0, 0};
  std::vector<std::int64_t> owner;
  std::function<void(std::int64_t, double)> fill = [&](std::int64_t next_id, double probability) {
    const auto position = static_cast<std::int64_t>(owner.size());
    if (position == seq_len) {
      const auto c = budget::test::count_window(owner, seq_len, window, tiles);
      keys += probability * static_cast<double>(c.document_keys);
      pieces += probability * static_cast<double>(c.pieces);
      for (int k = 0; k < 2; ++k) {
        varlen[k] += probability * static_cast<double>(c.document_varlen_tiles[k]);
        dense[k] += probability * static_cast<double>(c.document_dense_tiles[k]);
      }
      return;
    }
    for (const auto& [n, p] : pmf) {
      const std::int64_t piece = std::min(n, seq_len - position);
      owner.insert(owner.end(), static_cast<std::size_t>(piece), next_id);
      fill(next_id + 1, probability * p);
      owner.resize(static_cast<std::size_t>(position));
    }
  };
  for (std::int64_t a = g; a <= longest; a += g) {
    double at_least = 0.0;
    for (const auto& [n, p] : pmf) at_least += n >= a ? p : 0.0;
    const double probability = static_cast<double>(g) * at_least / mean;
    if (probability == 0.0) continue;
    owner.assign(static_cast<std::size_t>(std::min(a, seq_len)), 0);
    fill(1, probability);
  }
  const auto s = static_cast<double>(seq_len);
  AttentionCost c;
  c.mean_document_length = mean;
  c.mean_piece_length = s / pieces;
  c.document.exact_keys = keys / s;
  c.document.varlen = {static_cast<double>(fwd.area()) * varlen[0] / s,
                       static_cast<double>(bwd.area()) * varlen[1] / s};
  c.document.dense_masked = {static_cast<double>(fwd.area()) * dense[0] / s,
                             static_cast<double>(bwd.area()) * dense[1] / s};
  // One causal context per window: counted the same way.
  const auto causal = budget::test::count_window(std::vector<std::int64_t>(static_cast<std::size_t>(seq_len), 0),
                                                 seq_len, window, tiles);
  c.causal.exact_keys = static_cast<double>(causal.causal_keys) / s;
  c.causal.varlen = {static_cast<double>(fwd.area() * causal.causal_tiles[0]) / s,
                     static_cast<double>(bwd.area() * causal.causal_tiles[1]) / s};
  c.causal.dense_masked = c.causal.varlen;
  return c;
}

}  // namespace

TEST_CASE("attention: expectation equals exact enumeration of stationary windows (random small cases)", "[attention]") {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 120; ++trial) {
    const std::int64_t s = std::uniform_int_distribution<std::int64_t>(2, 8)(rng);
    const int support = std::uniform_int_distribution<int>(1, 3)(rng);
    std::vector<std::pair<std::int64_t, double>> weights;
    for (int k = 0; k < support; ++k) {
      const std::int64_t length = std::uniform_int_distribution<std::int64_t>(1, 2 * s + 1)(rng);
      if (std::any_of(weights.begin(), weights.end(), [&](const auto& w) { return w.first == length; })) continue;
      weights.emplace_back(length, std::uniform_real_distribution<double>(0.1, 1.0)(rng));
    }
    std::sort(weights.begin(), weights.end());
    const std::int64_t extra = trial % 4 == 3 ? 1 : 0;
    const std::int64_t window = trial % 3 == 0 ? 0 : std::uniform_int_distribution<std::int64_t>(1, s)(rng);
    const AttentionTile fwd{std::uniform_int_distribution<std::int64_t>(1, 4)(rng),
                            std::uniform_int_distribution<std::int64_t>(1, 4)(rng)};
    const AttentionTile bwd{std::uniform_int_distribution<std::int64_t>(1, 4)(rng),
                            std::uniform_int_distribution<std::int64_t>(1, 4)(rng)};
    double total = 0.0;
    for (const auto& w : weights) total += w.second;
    std::vector<std::pair<std::int64_t, double>> pmf;  // of n = L + extra
    for (const auto& [length, w] : weights) pmf.emplace_back(length + extra, w / total);
    INFO("trial " << trial << ": S=" << s << " window=" << window << " +" << extra << " fwd " << fwd.rows << "x"
                  << fwd.cols << " bwd " << bwd.rows << "x" << bwd.cols << " support " << weights.size());
    const AttentionCost want = enumerate_stationary_window(pmf, s, window, fwd, bwd);
    const AttentionCost got =
        budget::expected_attention_cost(histogram(weights), AttentionGeometry{s, window, fwd, bwd}, extra);
    check_close(got, want, 1e-12);
  }
}

// A stream of fixed-length documents is periodic: after S/g documents (g = gcd(S, n)) the offsets
// repeat and the stream has filled exactly n/g windows, so a simulation of one period is the
// long-run average itself. Covers g > 1 and residue classes P = g/gcd(g, Bc) > 1 (n = 1536,
// S = 4096: g = 512, P = 4 for Bc = 128).
TEST_CASE("attention: expectation equals simulation over one period of fixed-length streams", "[attention]") {
  struct Case {
    std::int64_t seq_len, length, extra, window;
    AttentionTile fwd, bwd;
  };
  std::vector<Case> cases = {
      {4096, 512, 0, 0, {128, 128}, {64, 128}},    {4096, 600, 0, 0, {128, 128}, {64, 128}},
      {4096, 1536, 0, 0, {128, 128}, {64, 128}},   {4096, 1534, 2, 1000, {128, 128}, {64, 128}},
      {4096, 6000, 0, 0, {128, 128}, {64, 128}},   {4096, 4096, 0, 0, {128, 128}, {64, 128}},
      {4096, 12288, 0, 300, {128, 64}, {64, 128}}, {1000, 77, 3, 0, {96, 80}, {48, 112}},
      {512, 384, 0, 100, {64, 192}, {32, 48}},
  };
  std::mt19937_64 rng(5);
  for (int k = 0; k < 40; ++k) {  // random small ones
    const std::int64_t s = std::uniform_int_distribution<std::int64_t>(1, 60)(rng);
    cases.push_back({s,
                     std::uniform_int_distribution<std::int64_t>(1, 3 * s)(rng),
                     std::uniform_int_distribution<std::int64_t>(0, 2)(rng),
                     k % 2 ? 0 : std::uniform_int_distribution<std::int64_t>(1, s)(rng),
                     {std::uniform_int_distribution<std::int64_t>(1, 12)(rng),
                      std::uniform_int_distribution<std::int64_t>(1, 12)(rng)},
                     {std::uniform_int_distribution<std::int64_t>(1, 12)(rng),
                      std::uniform_int_distribution<std::int64_t>(1, 12)(rng)}});
  }
  for (const auto& c : cases) {
    const std::int64_t n = c.length + c.extra;
    const std::int64_t period = c.seq_len / std::gcd(c.seq_len, n);
    INFO("S=" << c.seq_len << " n=" << n << " window=" << c.window << " period " << period << " documents");
    const AttentionGeometry geometry{c.seq_len, c.window, c.fwd, c.bwd};
    const LengthDistribution fixed(budget::LengthComponent{budget::FixedLength{c.length}});
    const auto simulated = budget::simulate_distribution(fixed, period, 0, geometry, c.extra);
    REQUIRE(simulated.totals.full_windows == simulated.totals.windows);  // whole windows only
    check_close(budget::expected_attention_cost(fixed, geometry, c.extra), simulated.cost(), 1e-12);
  }
}

// Hand-derived: 512-token documents tile a 4096 window exactly, each its own causal context:
// (512 + 1)/2 = 256.5 keys. 8192-token documents are two whole windows: (4096 + 1)/2.
TEST_CASE("attention: fixed lengths that divide the window give closed forms", "[attention]") {
  const AttentionGeometry g{4096, 0, {128, 128}, {64, 128}};
  const auto cost = [&](std::int64_t n) {
    return budget::expected_attention_cost(LengthDistribution(budget::LengthComponent{budget::FixedLength{n}}), g);
  };
  CHECK(cost(512).document.exact_keys == Approx(256.5).epsilon(1e-14));
  CHECK(cost(8192).document.exact_keys == Approx(2048.5).epsilon(1e-14));
  CHECK(cost(512).documents_per_window == Approx(8.0));
  // A 512 piece: 4 query blocks reaching 1..4 key blocks = 10 tiles of 128² per 512 tokens.
  CHECK(cost(512).document.varlen.forward == Approx(10.0 * 16384.0 / 512.0));
  // Dense launch: the 8 pieces are diagonal blocks of the window; only tiles that meet them run.
  CHECK(cost(512).document.dense_masked.forward == Approx(cost(512).document.varlen.forward));
}

// The acceptance criterion: 10^6 exponential lengths (mean 600) in 4096 windows; all quantities
// within 0.5% (typically ~0.05%), with and without a sliding window and added tokens.
TEST_CASE("attention: simulation and expectation agree within 0.5% for 10^6 exponential lengths", "[attention]") {
  const LengthDistribution exp600 = budget::parse_length_distribution("exp:mean=600");
  for (const auto& [window, extra] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {512, 2}}) {
    INFO("window " << window << ", +" << extra << " tokens/doc");
    const AttentionGeometry g{4096, window, {128, 128}, {64, 128}};
    const AttentionCost expected = budget::expected_attention_cost(exp600, g, extra);
    const auto simulated = budget::simulate_distribution(exp600, 1'000'000, 1, g, extra);
    check_close(simulated.cost(), expected, 0.005);
  }
}

TEST_CASE("attention: simulation and expectation agree for log-normal, mixtures and histograms", "[attention]") {
  const AttentionGeometry g{4096, 0, {128, 128}, {64, 128}};
  for (const char* spec : {"lognormal:mean=600,sigma=1.2", "mix:0.7*exp:mean=300+0.3*fixed:4096",
                           "mix:0.5*fixed:100+0.5*lognormal:mean=2000,sigma=0.5"}) {
    INFO(spec);
    const LengthDistribution d = budget::parse_length_distribution(spec);
    check_close(budget::simulate_distribution(d, 1'000'000, 3, g).cost(), budget::expected_attention_cost(d, g), 0.01);
  }
  // A lattice histogram (all lengths multiples of 256: g = 256) sampled i.i.d.
  const LengthDistribution h = histogram({{256, 5}, {768, 3}, {2048, 1}, {5120, 1}});
  check_close(budget::simulate_distribution(h, 400'000, 4, g).cost(), budget::expected_attention_cost(h, g), 0.01);
}

TEST_CASE("attention: discretize: probabilities sum to 1 and moments follow the rounding rule", "[attention]") {
  // The explicit pmf plus the tail carry all the mass; rounding moves the exponential's mean by
  // O(1/mean) only (X < 0.5 becomes 1, the rest rounds symmetrically to first order).
  for (const char* spec : {"exp:mean=600", "lognormal:mean=600,sigma=1.2", "lognormal:mean=50,sigma=3",
                           "mix:0.7*exp:mean=300+0.3*fixed:4096"}) {
    INFO(spec);
    const LengthDistribution d = budget::parse_length_distribution(spec);
    for (std::int64_t explicit_max : {16, 4096}) {
      const budget::DiscreteLengths pmf = budget::discretize(d, 0, explicit_max);
      double mass = pmf.tail_mass;
      for (double p : pmf.pmf) mass += p;
      CHECK(mass == Approx(1.0).margin(1e-12));
      CHECK(pmf.lattice_step == 1);
    }
  }
  const auto exp600 = budget::discretize(budget::parse_length_distribution("exp:mean=600"), 0, 4096);
  CHECK(exp600.mean() == Approx(600.0).margin(0.01));
  const auto fixed = budget::discretize(budget::parse_length_distribution("fixed:512"), 2, 4096);
  CHECK(fixed.pmf[514] == 1.0);
  CHECK(fixed.lattice_step == 514);
  const auto big = budget::discretize(budget::parse_length_distribution("fixed:10000"), 0, 4096);
  CHECK(big.tail_mass == 1.0);
  CHECK(big.tail_moment == 10000.0);
  const auto hist = budget::discretize(histogram({{512, 3}, {1024, 1}}), 0, 4096);
  CHECK(hist.pmf[512] == 0.75);
  CHECK(hist.lattice_step == 512);
}

TEST_CASE("attention: the sampler draws from the discretised distribution", "[attention]") {
  for (const char* spec : {"exp:mean=600", "lognormal:mean=600,sigma=1.2", "mix:0.25*fixed:7+0.75*exp:mean=40"}) {
    INFO(spec);
    const LengthDistribution d = budget::parse_length_distribution(spec);
    budget::LengthSampler sampler(d, 17);
    double sum = 0.0;
    std::uint64_t ones = 0;
    const int draws = 400'000;
    for (int i = 0; i < draws; ++i) {
      const std::uint64_t x = sampler.next();
      REQUIRE(x >= 1);
      sum += static_cast<double>(x);
      ones += x == 1 ? 1 : 0;
    }
    const auto pmf = budget::discretize(d, 0, 8);
    CHECK(relative_difference(sum / draws, pmf.mean()) < 0.01);
    CHECK(static_cast<double>(ones) / draws == Approx(pmf.pmf[1]).margin(0.003));
  }
  // Same seed, same lengths.
  budget::LengthSampler a(budget::parse_length_distribution("exp:mean=600"), 5);
  budget::LengthSampler b(budget::parse_length_distribution("exp:mean=600"), 5);
  for (int i = 0; i < 100; ++i) REQUIRE(a.next() == b.next());
}
