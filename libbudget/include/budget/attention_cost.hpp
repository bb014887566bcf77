#pragma once
/// \file
/// Attention cost of packed training windows from document lengths: the exact number of keys a
/// query attends to (for budget matching) and the work tiled kernels execute (for time
/// prediction), by exact simulation over given documents or by expectation for i.i.d. lengths.
/// The model, the derivations and the input formats: docs/attention.md.
///
/// Model (positions are 0-based inside a context):
///  - Packing: documents (each of L + tokens_per_doc tokens) are concatenated in order and cut
///    into windows of seq_len tokens. A *piece* is the part of one document inside one window; a
///    document crossing a window boundary, or longer than seq_len, becomes several pieces.
///  - Masks. Document masks: every piece is its own causal context. Causal mask: the whole window
///    is one causal context. A sliding window of width w restricts the query at position i to the
///    keys max(start, i − w + 1)..i of its context. A context of x tokens has
///    K_w(x) = Σ_{i=1..x} min(i, w) unmasked (query, key) pairs (x(x+1)/2 without a window).
///  - Exact mean keys per query = Σ over contexts K_w(x) / Σ tokens.
///  - The final, partial window of a finite stream holds only its real tokens: its queries count,
///    nothing is padded.
///  - Tiled kernels (FlashAttention style) cut the score matrix of a launch into tiles of
///    Br query rows × Bc key columns, aligned to the launch's first token, and compute every
///    tile that holds at least one unmasked pair in full (a partial tile at the end of a context
///    costs a full Br·Bc). Executed keys per query = executed tiles · Br · Bc / Σ tokens.
///    (a) varlen: one causal launch per context (cu_seqlens style): per piece with document
///        masks, per window with the causal mask. (b) dense_masked: one launch per window with
///        the document mask, skipping only tiles that are fully masked.
///    The causal mask has one context per window, so (a) and (b) coincide for it.
///
/// Thread safety: the free functions (simulate_*, expected_attention_cost, evaluate_doc_lengths,
/// parse_attention_tile, ...) are reentrant and safe to call concurrently; a PackingSimulator is
/// used by one thread at a time (distinct simulators are independent).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "budget/doc_lengths.hpp"

namespace budget {

/// Longest window the attention model accepts: 2^20 tokens.
inline constexpr std::int64_t max_attention_seq_len = std::int64_t{1} << 20;
/// Largest tile side accepted: 2^16.
inline constexpr std::int64_t max_tile_side = std::int64_t{1} << 16;

/// A kernel tile: `rows` queries (Br) × `cols` keys (Bc).
struct AttentionTile {
  std::int64_t rows = 128;
  std::int64_t cols = 128;
  std::int64_t area() const { return rows * cols; }
  friend bool operator==(const AttentionTile& a, const AttentionTile& b) { return a.rows == b.rows && a.cols == b.cols; }
  friend bool operator!=(const AttentionTile& a, const AttentionTile& b) { return !(a == b); }
};

/// FlashAttention-2's default forward and backward tiles (kBlockM × kBlockN).
inline constexpr AttentionTile default_forward_tile{128, 128};
inline constexpr AttentionTile default_backward_tile{64, 128};

/// "128x128".
std::string to_string(AttentionTile tile);
/// Parses "ROWSxCOLS" (sides in [1, 2^16]); budget::Error naming `source` otherwise.
AttentionTile parse_attention_tile(std::string_view text, const std::string& source = {});

/// Which launch the kernel-executed work of a workload models.
enum class AttentionLaunch {
  none,          ///< not modelled: time prediction uses the exact count
  varlen,        ///< (a) one causal launch per context
  dense_masked,  ///< (b) one launch per window with the document mask
};
std::string_view to_string(AttentionLaunch launch);

/// The shape of the attention computation, independent of where lengths come from.
struct AttentionGeometry {
  std::int64_t seq_len = 4096;      ///< window length, in [1, 2^20]
  std::int64_t sliding_window = 0;  ///< w ≥ 1, or 0 for none
  AttentionTile forward_tile = default_forward_tile;
  AttentionTile backward_tile = default_backward_tile;

  /// w, with "none" (0) and every w ≥ seq_len (no effect inside a window) mapped to seq_len.
  std::int64_t effective_window() const {
    return sliding_window > 0 && sliding_window < seq_len ? sliding_window : seq_len;
  }
};

/// Throws budget::Error naming `source` and the field ("/seq_len", "/sliding_window", ...).
void validate(const AttentionGeometry& geometry, const std::string& source = {});

/// K_w(x) = Σ_{i=1..x} min(i, w): unmasked pairs of one causal context of x tokens with a
/// sliding window w (w = 0: none, giving x(x+1)/2).
std::int64_t causal_context_keys(std::int64_t context, std::int64_t window);

/// Tiles a causal launch over one context of x tokens executes: for query block q (rows
/// [q·Br, min(x, (q+1)·Br))) the key blocks from ⌊max(0, q·Br − w + 1)/Bc⌋ to
/// ⌊(last row)/Bc⌋. A single 4096-token context with 128×128 tiles: 32·33/2 = 528.
std::int64_t causal_context_tiles(std::int64_t context, AttentionTile tile, std::int64_t window);

/// Executed keys per query of one launch kind, for the forward and the backward tile.
struct KernelKeys {
  double forward = 0.0;
  double backward = 0.0;
};

/// The single kernel key count a workload uses for every pass: training FLOPs are P forward
/// equivalents, of which the backward pass is 2 (P ≥ 3), so forward keys weigh P − 2 and backward
/// keys 2: (max(P − 2, 1)·forward + min(2, P − 1)·backward) / P. P = 1 (forward only) gives the
/// forward count, P = 3 (forward + backward) (forward + 2·backward)/3, P = 4 (with recompute)
/// (2·forward + 2·backward)/4.
double pass_weighted_keys(const KernelKeys& keys, std::int64_t training_passes);

/// Attention work per query token under one mask.
struct MaskCost {
  double exact_keys = 0.0;  ///< mean unmasked keys per query
  KernelKeys varlen;        ///< (a) executed keys per query
  KernelKeys dense_masked;  ///< (b) executed keys per query
  /// varlen or dense_masked (none: the exact count for both passes).
  KernelKeys executed(AttentionLaunch launch) const;
};

/// Attention cost per query token for both masks, with packing statistics.
struct AttentionCost {
  double mean_document_length = 0.0;  ///< tokens per document, tokens_per_doc included
  double mean_piece_length = 0.0;     ///< tokens per piece (document masks)
  double documents_per_window = 0.0;  ///< seq_len / mean_document_length
  MaskCost document;                  ///< per-document (segment) masks
  MaskCost causal;                    ///< one causal mask per window
};

/// Pieces with lengths in [min_length, max_length] (a power-of-two bin [2^k, 2^(k+1)) cut at
/// seq_len) and the tokens they hold.
struct PieceLengthBin {
  std::int64_t min_length = 0;
  std::int64_t max_length = 0;
  std::uint64_t pieces = 0;
  std::uint64_t tokens = 0;
};

/// Executed tiles of one tile shape with document masks.
struct TileTotals {
  std::uint64_t varlen = 0;
  std::uint64_t dense_masked = 0;
};

/// Exact integer totals of a simulation (all counts over the whole stream).
struct SimulationTotals {
  std::uint64_t documents = 0;
  std::uint64_t tokens = 0;   ///< Σ (L + tokens_per_doc)
  std::uint64_t windows = 0;  ///< including a final partial window
  std::uint64_t full_windows = 0;
  std::uint64_t pieces = 0;         ///< document pieces
  std::uint64_t document_keys = 0;  ///< Σ_pieces K_w(x): unmasked pairs with document masks
  std::uint64_t causal_keys = 0;    ///< Σ_windows K_w(tokens in window)
  TileTotals document_forward;      ///< executed forward tiles, document masks
  TileTotals document_backward;
  std::uint64_t causal_forward_tiles = 0;  ///< executed tiles, causal mask (varlen = dense)
  std::uint64_t causal_backward_tiles = 0;
  std::vector<PieceLengthBin> piece_histogram;  ///< non-empty bins, ascending
};

struct SimulationResult {
  AttentionGeometry geometry;
  std::int64_t tokens_per_doc = 0;
  SimulationTotals totals;
  /// The totals as means per query token.
  AttentionCost cost() const;
};

/// Packs documents one at a time into windows and counts everything exactly, in O(1) memory per
/// document (tables of O(seq_len / tile rows) entries are built once). Totals are 64-bit
/// integers: a stream is rejected (budget::Error) once tokens · seq_len would exceed 2^63.
class PackingSimulator {
 public:
  /// tokens_per_doc ∈ [0, 2^20] is added to every document (BOS/EOS).
  PackingSimulator(const AttentionGeometry& geometry, std::int64_t tokens_per_doc = 0);
  ~PackingSimulator();
  PackingSimulator(PackingSimulator&&) noexcept;
  PackingSimulator& operator=(PackingSimulator&&) noexcept;

  /// Appends one document of `length` ∈ [1, 2^40] tokens (budget::Error otherwise).
  void add(std::uint64_t length);
  /// Appends documents lengths[0, count) in order.
  void add(const std::uint64_t* lengths, std::size_t count);
  /// Appends documents in order.
  void add(const std::vector<std::uint64_t>& lengths) { add(lengths.data(), lengths.size()); }
#if BUDGET_HAS_STD_SPAN
  void add(std::span<const std::uint64_t> lengths) { add(lengths.data(), lengths.size()); }
#endif
  /// The totals so far, the partial last window included; the simulator can continue.
  SimulationResult result() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Simulates `lengths` in the given order.
SimulationResult simulate_lengths(const std::uint64_t* lengths, std::size_t count, const AttentionGeometry& geometry,
                                  std::int64_t tokens_per_doc = 0);
inline SimulationResult simulate_lengths(const std::vector<std::uint64_t>& lengths, const AttentionGeometry& geometry,
                                         std::int64_t tokens_per_doc = 0) {
  return simulate_lengths(lengths.data(), lengths.size(), geometry, tokens_per_doc);
}
#if BUDGET_HAS_STD_SPAN
inline SimulationResult simulate_lengths(std::span<const std::uint64_t> lengths, const AttentionGeometry& geometry,
                                         std::int64_t tokens_per_doc = 0) {
  return simulate_lengths(lengths.data(), lengths.size(), geometry, tokens_per_doc);
}
#endif

/// Simulates `documents` i.i.d. lengths drawn from `distribution` with `seed` (streamed).
SimulationResult simulate_distribution(const LengthDistribution& distribution, std::int64_t documents,
                                       std::uint64_t seed, const AttentionGeometry& geometry,
                                       std::int64_t tokens_per_doc = 0);

enum class PackingOrder {
  given,     ///< documents in file order, streamed in constant memory
  shuffled,  ///< a seeded permutation: all lengths are held in memory (8 bytes per document)
};
std::string_view to_string(PackingOrder order);

/// Simulates the documents of a file of lengths.
SimulationResult simulate_length_file(const std::string& path, LengthFileFormat format, PackingOrder order,
                                      std::uint64_t seed, const AttentionGeometry& geometry,
                                      std::int64_t tokens_per_doc = 0);

/// The expectation for i.i.d. lengths in an endless packed stream (docs/attention.md, "Expectation"):
/// numerically exact, O(seq_len) work after discretisation, no sampling. It agrees with
/// simulate_distribution() up to sampling noise.
AttentionCost expected_attention_cost(const LengthDistribution& distribution, const AttentionGeometry& geometry,
                                      std::int64_t tokens_per_doc = 0);

/// The empirical distribution of a file's lengths (for the expectation of a file shuffled i.i.d.);
/// memory grows with the number of distinct lengths only.
LengthDistribution length_file_histogram(const std::string& path, LengthFileFormat format);

// ---------------------------------------------------------------------------------------------
// A document-length source with its packing options: the "doc_lengths" object of a workload and
// the inputs of `budget-match attention`.

enum class LengthSourceKind { distribution, histogram, lengths_file };
enum class CostMethod {
  expectation,  ///< expected_attention_cost() (a lengths file: of its empirical distribution)
  simulation,   ///< simulate_*(): documents in order (a file) or `samples` draws (a distribution)
};
std::string_view to_string(LengthSourceKind kind);
std::string_view to_string(CostMethod method);

struct DocLengthsSpec {
  LengthSourceKind kind = LengthSourceKind::distribution;
  std::optional<LengthDistribution> distribution;  ///< for distribution and histogram
  std::string path;                                ///< the lengths file, or the histogram file if any
  LengthFileFormat file_format = LengthFileFormat::automatic;
  std::int64_t tokens_per_doc = 0;           ///< added to every document (BOS/EOS), [0, 2^20]
  PackingOrder order = PackingOrder::given;  ///< lengths files only
  std::uint64_t seed = 0;                    ///< shuffling and sampling
  std::int64_t samples = 1'000'000;          ///< documents drawn to simulate a distribution
  CostMethod method = CostMethod::expectation;

  /// "exp:mean=600", "histogram hist.csv (37 lengths)", "lengths docs.u32 (shuffled, seed 3)",
  /// with "+2 tokens/doc" when tokens_per_doc > 0.
  std::string describe() const;
};

/// Checks the combination (a distribution for distribution/histogram, a path for files, order
/// shuffled only for files, samples in [1, 2^40]); budget::Error naming `source`.
void validate(const DocLengthsSpec& spec, const std::string& source = {});

struct DocLengthsCost {
  CostMethod method = CostMethod::expectation;
  AttentionCost cost;
  std::optional<SimulationResult> simulation;  ///< when method is simulation
};

/// Evaluates `spec` by its method.
DocLengthsCost evaluate_doc_lengths(const DocLengthsSpec& spec, const AttentionGeometry& geometry);

}  // namespace budget
