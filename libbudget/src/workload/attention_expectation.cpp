// Expected attention cost of i.i.d. document lengths in an endless packed stream.
//
// Notation: n = L + tokens_per_doc with pmf p(n) and mean μ, window S, g = gcd(S, support of n),
// m = S/g. Derivation (docs/attention.md, "Expectation"):
//
// 1. Offsets. Let o_j be the offset inside its window at which document j starts:
//    o_{j+1} = (o_j + n_j) mod S, a random walk on the multiples of g in [0, S) that starts at 0.
//    The uniform distribution on those m points is stationary (the walk is doubly stochastic) and,
//    the walk being irreducible there, the long-run fraction of documents starting at each offset
//    is 1/m. o_j is independent of n_j.
// 2. Per-piece costs. For any cost φ of a piece of x tokens with φ(0) = 0 (keys K_w(x), varlen
//    tiles T(x), the piece count 1) the long-run cost per token is E_o,n[g_φ(o, n)] / μ, where
//    g_φ(o, n) sums φ over the pieces of a document of n tokens starting at offset o. Averaging
//    over the m offsets, with Q(i) = Σ_{j=1..i} φ(j·g):
//      n ≤ S:  G(n) = [(m − n/g + 1)·φ(n) + 2·Q(n/g − 1)] / m
//              (m − n/g + 1 offsets keep the document whole; the other n/g − 1 split it into
//               pieces S − o and o + n − S, each running over g, 2g, ..., n − g once),
//      n ≥ S:  G(n) = [(n/g − m + 1)·φ(S) + 2·Q(m − 1)] / m   (linear in n),
//    so the tail beyond S enters through P(n > S) and E[n; n > S] alone.
// 3. Dense launches. A tile strictly below the diagonal with first row r0 and last column c is
//    executed iff no document starts at positions c+1..r0 of the window (and r0 − c < w). Starts
//    lie on multiples of g; in the stationary stream the chance that ℓ consecutive grid points hold
//    none is h(ℓ) = E[(n/g − ℓ)+] / E[n/g] (the grid point before them lies in a size-biased
//    document at a uniform place). Tiles meeting the diagonal are always executed.

#include <fmt/format.h>

#include <numeric>

#include "workload/attention_tiles.hpp"
#include "budget/attention_cost.hpp"
#include "budget/error.hpp"

namespace budget {
namespace {

struct Lattice {
  std::int64_t step = 1;    // g
  std::int64_t points = 1;  // m = S/g
};

// E[Σ_pieces φ(piece)] per document; phi[j] = φ(j·g) for j = 0..m.
double expected_piece_sum(const DiscreteLengths& d, const Lattice& lattice, const std::vector<double>& phi) {
  const std::int64_t g = lattice.step;
  const std::int64_t m = lattice.points;
  const auto md = static_cast<double>(m);
  std::vector<double> q(static_cast<std::size_t>(m) + 1, 0.0);  // Q(i) = Σ_{j=1..i} φ(j·g)
  for (std::size_t j = 1; j < q.size(); ++j) q[j] = q[j - 1] + phi[j];
  double sum = 0.0;
  for (std::int64_t n = g; n < static_cast<std::int64_t>(d.pmf.size()); n += g) {
    const double p = d.pmf[static_cast<std::size_t>(n)];
    if (p == 0.0) continue;
    const std::int64_t j = n / g;  // 1 ≤ j ≤ m: the explicit pmf ends at n = S
    sum +=
        p *
        (static_cast<double>(m - j + 1) * phi[static_cast<std::size_t>(j)] + 2.0 * q[static_cast<std::size_t>(j - 1)]) /
        md;
  }
  // Tail n > S: E[G(n); n > S] = [(E[n; n > S]/g − (m − 1)·P(n > S))·φ(S) + 2·Q(m − 1)·P(n > S)] / m.
  sum += ((d.tail_moment / static_cast<double>(g) - (md - 1.0) * d.tail_mass) * phi[static_cast<std::size_t>(m)] +
          2.0 * q[static_cast<std::size_t>(m - 1)] * d.tail_mass) /
         md;
  return sum;
}

// h(ℓ) for ℓ = 0..m: the probability that ℓ consecutive grid points of a window hold no document
// start. E[(N − ℓ)+] = Σ_{j>ℓ} P(N ≥ j) with N = n/g, accumulated from ℓ = m down so that no
// cancellation occurs; E[(N − m)+] = E[n; n > S]/g − m·P(n > S) (n ≤ S contributes nothing).
std::vector<double> no_start_probabilities(const DiscreteLengths& d, const Lattice& lattice, double mean_length) {
  const std::int64_t g = lattice.step;
  const std::int64_t m = lattice.points;
  const std::vector<double> cdf = d.cumulative();
  std::vector<double> h(static_cast<std::size_t>(m) + 1);
  double excess = std::max(0.0, d.tail_moment / static_cast<double>(g) - static_cast<double>(m) * d.tail_mass);
  const double mean_points = mean_length / static_cast<double>(g);
  h[static_cast<std::size_t>(m)] = excess / mean_points;
  for (std::int64_t l = m - 1; l >= 0; --l) {
    // P(N ≥ l + 1) = P(n ≥ (l + 1)·g) = 1 − P(n ≤ (l + 1)·g − 1).
    const double at_least = std::max(0.0, 1.0 - cdf[static_cast<std::size_t>((l + 1) * g - 1)]);
    excess += at_least;
    h[static_cast<std::size_t>(l)] = excess / mean_points;
  }
  return h;
}

// Expected executed tiles of one dense, window-aligned launch with document masks:
// D(S) + Σ over below-diagonal tiles of h(ℓ), ℓ = ⌊r0/g⌋ − ⌊c/g⌋ grid points in (c, r0],
// c = (k+1)·Bc − 1. For fixed q the key blocks k split into P = g/gcd(g, Bc) residue classes
// k = ρ + P·i on which ⌊c/g⌋ = A_ρ + i·σ, σ = Bc/gcd(g, Bc): sums of h along a stride σ, read
// from strided prefix sums, O(S/Br · min(P, S/Bc)) in all.
double expected_dense_tiles(const detail::TileCounter& tiles, const Lattice& lattice, std::int64_t seq_len,
                            std::int64_t window, const std::vector<double>& h) {
  const auto g = static_cast<std::int64_t>(lattice.step);
  const auto br = static_cast<std::int64_t>(tiles.rows());
  const auto bc = static_cast<std::int64_t>(tiles.cols());
  const std::int64_t common = std::gcd(g, bc);
  const std::int64_t residues = g / common;
  const std::int64_t stride = bc / common;
  std::vector<double> strided(h.size());  // strided[ℓ] = h(ℓ) + h(ℓ − σ) + h(ℓ − 2σ) + ...
  for (std::size_t l = 0; l < h.size(); ++l) {
    strided[l] = h[l] + (l >= static_cast<std::size_t>(stride) ? strided[l - static_cast<std::size_t>(stride)] : 0.0);
  }
  const auto strided_at = [&](std::int64_t l) { return l >= 0 ? strided[static_cast<std::size_t>(l)] : 0.0; };

  double total = static_cast<double>(tiles.diagonal_tiles(static_cast<std::uint64_t>(seq_len)));
  for (std::int64_t r0 = 0; r0 < seq_len; r0 += br) {
    const std::int64_t k_hi = r0 / bc - 1;  // (k+1)·Bc ≤ r0
    if (k_hi < 0) continue;
    // Inside the window: r0 − c < w ⇔ (k+1)·Bc ≥ r0 − w + 2.
    const std::int64_t k_lo = r0 + 2 > window ? std::max<std::int64_t>(0, (r0 + 2 - window + bc - 1) / bc - 1) : 0;
    if (k_lo > k_hi) continue;
    const std::int64_t rows_point = r0 / g;
    for (std::int64_t rho = 0; rho < residues && rho <= k_hi; ++rho) {
      const std::int64_t i_lo = k_lo > rho ? (k_lo - rho + residues - 1) / residues : 0;
      const std::int64_t i_hi = (k_hi - rho) / residues;
      if (i_lo > i_hi) continue;
      const std::int64_t top = rows_point - ((rho + 1) * bc - 1) / g;  // ℓ at i = 0
      total += strided_at(top - i_lo * stride) - strided_at(top - (i_hi + 1) * stride);
    }
  }
  return total;
}

std::vector<double> on_grid(const Lattice& lattice, const auto& cost) {
  std::vector<double> phi(static_cast<std::size_t>(lattice.points) + 1);
  for (std::size_t j = 0; j < phi.size(); ++j) {
    phi[j] = static_cast<double>(cost(static_cast<std::uint64_t>(j) * static_cast<std::uint64_t>(lattice.step)));
  }
  return phi;
}

}  // namespace

AttentionCost expected_attention_cost(const LengthDistribution& distribution, const AttentionGeometry& geometry,
                                      std::int64_t tokens_per_doc) {
  validate(geometry);
  const std::int64_t seq_len = geometry.seq_len;
  const std::int64_t window = geometry.effective_window();
  const DiscreteLengths d = discretize(distribution, tokens_per_doc, seq_len);
  Lattice lattice;
  lattice.step = std::gcd(seq_len, d.lattice_step);
  lattice.points = seq_len / lattice.step;
  const double mean_length = d.mean();

  const detail::TileCounter forward(geometry.forward_tile, seq_len, window);
  const detail::TileCounter backward(geometry.backward_tile, seq_len, window);
  const auto w = static_cast<std::uint64_t>(window);
  const auto piece_sum = [&](const auto& cost) { return expected_piece_sum(d, lattice, on_grid(lattice, cost)); };
  const double keys = piece_sum([&](std::uint64_t x) { return detail::context_keys(x, w); });
  const double pieces = piece_sum([](std::uint64_t x) { return x > 0 ? 1.0 : 0.0; });
  const double varlen_forward = piece_sum([&](std::uint64_t x) { return forward.context_tiles(x); });
  const double varlen_backward = piece_sum([&](std::uint64_t x) { return backward.context_tiles(x); });
  const std::vector<double> h = no_start_probabilities(d, lattice, mean_length);
  const double dense_forward = expected_dense_tiles(forward, lattice, seq_len, window, h);
  const double dense_backward = expected_dense_tiles(backward, lattice, seq_len, window, h);

  const auto s = static_cast<double>(seq_len);
  const auto s_u = static_cast<std::uint64_t>(seq_len);
  const auto fwd_area = static_cast<double>(geometry.forward_tile.area());
  const auto bwd_area = static_cast<double>(geometry.backward_tile.area());
  AttentionCost c;
  c.mean_document_length = mean_length;
  c.mean_piece_length = mean_length / pieces;
  c.documents_per_window = s / mean_length;
  c.document.exact_keys = keys / mean_length;
  c.document.varlen = {fwd_area * varlen_forward / mean_length, bwd_area * varlen_backward / mean_length};
  c.document.dense_masked = {fwd_area * dense_forward / s, bwd_area * dense_backward / s};
  c.causal.exact_keys = static_cast<double>(detail::context_keys(s_u, w)) / s;
  c.causal.varlen = {fwd_area * static_cast<double>(forward.context_tiles(s_u)) / s,
                     bwd_area * static_cast<double>(backward.context_tiles(s_u)) / s};
  c.causal.dense_masked = c.causal.varlen;
  return c;
}

}  // namespace budget
