#pragma once
// Brute-force reference for the attention model: explicit boolean mask matrices, counted entry by
// entry and tile by tile. Independent of libbudget's formulas on purpose (no closed forms, no
// prefix tables): packing is done token by token, masks from their definitions.

#include <cstdint>
#include <vector>

namespace budget::test {

struct BruteTile {
  std::int64_t rows;
  std::int64_t cols;
};

/// Counts for one window (or summed over windows).
struct BruteCounts {
  std::int64_t tokens = 0;
  std::int64_t windows = 0;
  std::int64_t full_windows = 0;
  std::int64_t pieces = 0;
  std::int64_t document_keys = 0;
  std::int64_t causal_keys = 0;
  std::int64_t document_varlen_tiles[2] = {0, 0};  // [forward, backward]
  std::int64_t document_dense_tiles[2] = {0, 0};
  std::int64_t causal_tiles[2] = {0, 0};

  BruteCounts& operator+=(const BruteCounts& o) {
    tokens += o.tokens;
    windows += o.windows;
    full_windows += o.full_windows;
    pieces += o.pieces;
    document_keys += o.document_keys;
    causal_keys += o.causal_keys;
    for (int p = 0; p < 2; ++p) {
      document_varlen_tiles[p] += o.document_varlen_tiles[p];
      document_dense_tiles[p] += o.document_dense_tiles[p];
      causal_tiles[p] += o.causal_tiles[p];
    }
    return *this;
  }
};

/// A square boolean matrix, row = query, column = key.
using Mask = std::vector<std::vector<bool>>;

/// Tiles of `mask` (aligned to its (0, 0)) that hold at least one true entry.
inline std::int64_t count_nonempty_tiles(const Mask& mask, BruteTile tile) {
  const auto n = static_cast<std::int64_t>(mask.size());
  std::int64_t tiles = 0;
  for (std::int64_t r0 = 0; r0 < n; r0 += tile.rows) {
    for (std::int64_t c0 = 0; c0 < n; c0 += tile.cols) {
      bool any = false;
      for (std::int64_t i = r0; i < std::min(n, r0 + tile.rows) && !any; ++i) {
        for (std::int64_t j = c0; j < std::min(n, c0 + tile.cols) && !any; ++j) {
          any = mask[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
        }
      }
      tiles += any ? 1 : 0;
    }
  }
  return tiles;
}

inline std::int64_t count_true(const Mask& mask) {
  std::int64_t n = 0;
  for (const auto& row : mask) {
    for (bool b : row) n += b ? 1 : 0;
  }
  return n;
}

/// `owner[i]` is the context (piece) id of position i of one window; window = 0 means none.
/// Mask entry (i, j): same context, j ≤ i and i − j < window.
inline Mask context_mask(const std::vector<std::int64_t>& owner, std::int64_t window) {
  const std::size_t n = owner.size();
  Mask mask(n, std::vector<bool>(n, false));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      const bool in_window = window == 0 || static_cast<std::int64_t>(i - j) < window;
      mask[i][j] = owner[i] == owner[j] && in_window;
    }
  }
  return mask;
}

/// Counts one window whose positions belong to the pieces given by `owner` (consecutive equal
/// ids form one piece; ids of different pieces differ).
inline BruteCounts count_window(const std::vector<std::int64_t>& owner, std::int64_t seq_len, std::int64_t window,
                                const BruteTile tiles[2]) {
  BruteCounts c;
  c.tokens = static_cast<std::int64_t>(owner.size());
  c.windows = 1;
  c.full_windows = c.tokens == seq_len ? 1 : 0;
  const Mask document = context_mask(owner, window);
  const Mask causal = context_mask(std::vector<std::int64_t>(owner.size(), 0), window);
  c.document_keys = count_true(document);
  c.causal_keys = count_true(causal);
  // Pieces and their own (varlen) launches: each piece is a causal context from its first token.
  std::size_t start = 0;
  while (start < owner.size()) {
    std::size_t end = start;
    while (end < owner.size() && owner[end] == owner[start]) ++end;
    ++c.pieces;
    const Mask piece = context_mask(std::vector<std::int64_t>(end - start, 0), window);
    for (int p = 0; p < 2; ++p) c.document_varlen_tiles[p] += count_nonempty_tiles(piece, tiles[p]);
    start = end;
  }
  for (int p = 0; p < 2; ++p) {
    c.document_dense_tiles[p] = count_nonempty_tiles(document, tiles[p]);
    c.causal_tiles[p] = count_nonempty_tiles(causal, tiles[p]);
  }
  return c;
}

/// Packs documents (each of lengths[k] + tokens_per_doc tokens) token by token into windows of
/// seq_len and counts every window; the last window holds only its real tokens.
inline BruteCounts count_stream(const std::vector<std::int64_t>& lengths, std::int64_t tokens_per_doc,
                                std::int64_t seq_len, std::int64_t window, const BruteTile tiles[2]) {
  std::vector<std::int64_t> stream;  // document index of every token
  for (std::size_t d = 0; d < lengths.size(); ++d) {
    for (std::int64_t i = 0; i < lengths[d] + tokens_per_doc; ++i) stream.push_back(static_cast<std::int64_t>(d));
  }
  BruteCounts total;
  for (std::size_t w0 = 0; w0 < stream.size(); w0 += static_cast<std::size_t>(seq_len)) {
    const std::size_t w1 = std::min(stream.size(), w0 + static_cast<std::size_t>(seq_len));
    total += count_window(std::vector<std::int64_t>(stream.begin() + static_cast<std::ptrdiff_t>(w0),
                                                    stream.begin() + static_cast<std::ptrdiff_t>(w1)),
                          seq_len, window, tiles);
  }
  return total;
}

}  // namespace budget::test
