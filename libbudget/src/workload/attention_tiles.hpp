#pragma once
// Private: O(1) tile counts per context and per piece, shared by the simulator and the
// expectation. Notation: tile Br × Bc, window length S, sliding window w (w = S: none), query
// block q covers rows [q·Br, (q+1)·Br), key block k covers columns [k·Bc, (k+1)·Bc). A pair
// (row i, column j) of one context is unmasked iff i − w < j ≤ i. All positions are < 2^21.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "budget/attention_cost.hpp"

namespace budget::detail {

/// floor(x/d) for 0 ≤ x ≤ 2^21 and 1 ≤ d ≤ 2^21 by one multiplication and a shift, without a
/// hardware division. With m = ⌈2^42/d⌉ = (2^42 + e)/d, 0 ≤ e < d: x·m/2^42 = x/d + x·e/(d·2^42),
/// and x·e < 2^42 keeps the error below 1/d, so the floor is exact; x·m ≤ 2^63 fits in 64 bits.
class SmallDivider {
 public:
  explicit SmallDivider(std::uint64_t divisor)
      : divisor_(divisor), multiplier_(((std::uint64_t{1} << 42) + divisor - 1) / divisor) {}
  std::uint64_t floor(std::uint64_t x) const { return (x * multiplier_) >> 42; }
  /// ⌈x/d⌉ for x + d ≤ 2^21.
  std::uint64_t ceil(std::uint64_t x) const { return floor(x + divisor_ - 1); }
  std::uint64_t divisor() const { return divisor_; }

 private:
  std::uint64_t divisor_;
  std::uint64_t multiplier_;
};

/// Tile counts of one tile shape in windows of S tokens with sliding window w.
class TileCounter {
 public:
  TileCounter(AttentionTile tile, std::int64_t seq_len, std::int64_t effective_window);

  /// Tiles one causal launch over a context of x tokens executes (0 ≤ x ≤ S). Query block q has
  /// rows r0 = q·Br .. r_last = min(x, r0 + Br) − 1 and reaches key blocks
  /// kmin(q) = ⌊max(0, r0 − w + 1)/Bc⌋ .. ⌊r_last/Bc⌋. Full blocks come from a prefix table,
  /// the partial last block (x mod Br rows) is added on its own.
  std::uint64_t context_tiles(std::uint64_t x) const {
    const std::uint64_t full_blocks = rows_.floor(x);
    std::uint64_t tiles = context_prefix_[full_blocks];
    if (x != full_blocks * rows_.divisor()) tiles += cols_.floor(x - 1) - first_key_block_[full_blocks] + 1;
    return tiles;
  }

  /// Tiles strictly below the diagonal (all columns < all rows: (k+1)·Bc ≤ q·Br) that a dense,
  /// window-aligned launch with document masks executes because of the piece [a, b) of its
  /// window, 0 ≤ a < b ≤ S.
  ///
  /// Such a tile holds an unmasked pair iff its closest pair (r0 = q·Br, c = (k+1)·Bc − 1) is:
  /// same piece (the piece holding r0 starts at s ≤ c) and inside the window (r0 − c < w). So
  /// query block q, whose first row r0 lies in the piece [a, b) (s = a), executes
  /// ⌊r0/Bc⌋ − ⌊max(a, r0 − w + 1)/Bc⌋ below-diagonal tiles: the k with
  /// max(a, r0 − w + 1) < (k+1)·Bc ≤ r0. Summed over q with a ≤ q·Br < b, i.e. q in
  /// [⌈a/Br⌉, ⌈b/Br⌉), with prefix tables: blocks q < q_split = ⌊(a + w − 1)/Br⌋ + 1 have
  /// r0 − w + 1 ≤ a and subtract ⌊a/Bc⌋, the others subtract kmin(q).
  std::uint64_t dense_below_tiles(std::uint64_t a, std::uint64_t b) const {
    const std::uint64_t q_lo = rows_.ceil(a);
    const std::uint64_t q_hi = rows_.ceil(b);
    if (q_hi <= q_lo) return 0;
    std::uint64_t q_split = q_hi;
    std::uint64_t subtracted = 0;
    if (windowed_) {
      q_split = std::clamp(rows_.floor(a + window_ - 1) + 1, q_lo, q_hi);
      subtracted = first_key_prefix_[q_hi] - first_key_prefix_[q_split];
    }
    subtracted += (q_split - q_lo) * cols_.floor(a);
    return key_block_prefix_[q_hi] - key_block_prefix_[q_lo] - subtracted;
  }

  /// Tiles that meet the diagonal of a window holding m tokens (0 ≤ m ≤ S): query block q
  /// reaches key blocks ⌊r0/Bc⌋ .. ⌊(min(m, r0 + Br) − 1)/Bc⌋. Each holds a pair (i, i), which no
  /// mask removes, so a dense launch always executes them. O(m/Br).
  std::uint64_t diagonal_tiles(std::uint64_t m) const;

  /// kmin(q) = ⌊max(0, q·Br − w + 1)/Bc⌋, the first key block query block q reaches.
  std::uint64_t first_key_block(std::uint64_t q) const { return first_key_block_[q]; }
  std::uint64_t query_blocks() const { return query_blocks_; }
  std::uint64_t rows() const { return rows_.divisor(); }
  std::uint64_t cols() const { return cols_.divisor(); }

 private:
  SmallDivider rows_;
  SmallDivider cols_;
  std::uint64_t window_;
  bool windowed_;
  std::uint64_t query_blocks_;                   // ⌈S/Br⌉
  std::vector<std::uint64_t> first_key_block_;   // kmin(q), q = 0..⌈S/Br⌉
  std::vector<std::uint64_t> context_prefix_;    // Σ_{i<q} (⌊((i+1)·Br − 1)/Bc⌋ − kmin(i) + 1)
  std::vector<std::uint64_t> key_block_prefix_;  // Σ_{i<q} ⌊i·Br/Bc⌋
  std::vector<std::uint64_t> first_key_prefix_;  // Σ_{i<q} kmin(i)
};

/// K_w(x) = Σ_{i=1..x} min(i, w) = x(x+1)/2 for x ≤ w, else w(w+1)/2 + (x − w)·w.
inline std::uint64_t context_keys(std::uint64_t x, std::uint64_t w) {
  return x <= w ? x * (x + 1) / 2 : w * (w + 1) / 2 + (x - w) * w;
}

}  // namespace budget::detail
