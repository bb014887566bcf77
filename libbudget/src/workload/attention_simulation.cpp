// Exact simulation of packed windows: PackingSimulator and the simulate_* entry points.

#include <fmt/format.h>

#include <array>
#include <bit>
#include <span>

#include "workload/attention_tiles.hpp"
#include "budget/progress.hpp"
#include "budget/attention_cost.hpp"
#include "budget/error.hpp"

namespace budget {
// Named, not anonymous: PackingSimulator::Impl holds these (an anonymous type in a member is a
// -Wsubobject-linkage warning when the file is compiled inside a unity build).
namespace packing_counts {

constexpr std::size_t histogram_bins = 64;  // bin k holds piece lengths [2^k, 2^(k+1))

// Work accumulated inside the current window (document masks). Bounded by S² per window.
struct WindowCounts {
  std::uint64_t keys = 0;
  std::uint64_t pieces = 0;
  std::uint64_t varlen_forward = 0;
  std::uint64_t varlen_backward = 0;
  std::uint64_t below_forward = 0;  // dense launch: executed tiles strictly below the diagonal
  std::uint64_t below_backward = 0;
};

// Counters of the whole stream; copyable so that result() can close a partial window on a copy.
struct StreamCounts {
  std::uint64_t position = 0;  // tokens in the current window
  WindowCounts window;
  SimulationTotals totals;
  std::array<std::uint64_t, histogram_bins> bin_pieces{};
  std::array<std::uint64_t, histogram_bins> bin_tokens{};
};

// What a window of S tokens holding one whole piece contributes (a document spanning it).
struct FullWindowConstants {
  std::uint64_t keys = 0;           // K_w(S)
  std::uint64_t forward_tiles = 0;  // T(S): one causal context = varlen = dense
  std::uint64_t backward_tiles = 0;
  std::uint64_t diagonal_forward = 0;  // D(S): tiles on the diagonal of a full window
  std::uint64_t diagonal_backward = 0;
};

}  // namespace packing_counts

struct PackingSimulator::Impl {
  AttentionGeometry geometry;
  std::int64_t tokens_per_doc;
  std::uint64_t seq_len;
  std::uint64_t window;
  detail::TileCounter forward;
  detail::TileCounter backward;
  packing_counts::FullWindowConstants full;
  std::uint64_t token_limit;  // keys ≤ tokens·S must stay below 2^63
  packing_counts::StreamCounts counts;

  Impl(const AttentionGeometry& g, std::int64_t t)
      : geometry(g),
        tokens_per_doc(t),
        seq_len(static_cast<std::uint64_t>(g.seq_len)),
        window(static_cast<std::uint64_t>(g.effective_window())),
        forward(g.forward_tile, g.seq_len, g.effective_window()),
        backward(g.backward_tile, g.seq_len, g.effective_window()),
        token_limit((std::uint64_t{1} << 63) / static_cast<std::uint64_t>(g.seq_len)) {
    full.keys = detail::context_keys(seq_len, window);
    full.forward_tiles = forward.context_tiles(seq_len);
    full.backward_tiles = backward.context_tiles(seq_len);
    full.diagonal_forward = forward.diagonal_tiles(seq_len);
    full.diagonal_backward = backward.diagonal_tiles(seq_len);
  }

  // One piece [a, b) of the current window.
  void add_piece(packing_counts::StreamCounts& c, std::uint64_t a, std::uint64_t b) const {
    const std::uint64_t x = b - a;
    packing_counts::WindowCounts& w = c.window;
    w.keys += detail::context_keys(x, window);
    w.pieces += 1;
    w.varlen_forward += forward.context_tiles(x);
    w.varlen_backward += backward.context_tiles(x);
    w.below_forward += forward.dense_below_tiles(a, b);
    w.below_backward += backward.dense_below_tiles(a, b);
    const auto bin = static_cast<std::size_t>(std::bit_width(x) - 1);
    c.bin_pieces[bin] += 1;
    c.bin_tokens[bin] += x;
  }

  // Throws once the stream would exceed token_limit tokens (c.totals.tokens ≤ token_limit holds).
  void check_capacity(const packing_counts::StreamCounts& c, std::uint64_t more_tokens) const {
    if (more_tokens > token_limit - c.totals.tokens) {
      throw Error(
          fmt::format("the stream exceeds {} tokens; its key totals would overflow 64-bit counters at "
                      "seq_len {} (simulate fewer documents)",
                      token_limit, seq_len));
    }
  }

  // Closes the current window of m = position tokens: document-mask counts from its pieces,
  // causal-mask counts from one context of m tokens, dense = diagonal + below-diagonal tiles.
  void close_window(packing_counts::StreamCounts& c) const {
    const std::uint64_t m = c.position;
    check_capacity(c, m);
    SimulationTotals& t = c.totals;
    const bool is_full = m == seq_len;
    t.tokens += m;
    t.windows += 1;
    t.full_windows += is_full ? 1 : 0;
    t.pieces += c.window.pieces;
    t.document_keys += c.window.keys;
    t.document_forward.varlen += c.window.varlen_forward;
    t.document_backward.varlen += c.window.varlen_backward;
    t.document_forward.dense_masked +=
        (is_full ? full.diagonal_forward : forward.diagonal_tiles(m)) + c.window.below_forward;
    t.document_backward.dense_masked +=
        (is_full ? full.diagonal_backward : backward.diagonal_tiles(m)) + c.window.below_backward;
    t.causal_keys += is_full ? full.keys : detail::context_keys(m, window);
    t.causal_forward_tiles += is_full ? full.forward_tiles : forward.context_tiles(m);
    t.causal_backward_tiles += is_full ? full.backward_tiles : backward.context_tiles(m);
    c.window = packing_counts::WindowCounts{};
    c.position = 0;
  }

  // k windows each filled by one piece of a single long document.
  void add_full_windows(packing_counts::StreamCounts& c, std::uint64_t k) const {
    check_capacity(c, k > token_limit / seq_len ? token_limit + 1 : k * seq_len);
    SimulationTotals& t = c.totals;
    t.tokens += k * seq_len;
    t.windows += k;
    t.full_windows += k;
    t.pieces += k;
    t.document_keys += k * full.keys;
    t.document_forward.varlen += k * full.forward_tiles;
    t.document_backward.varlen += k * full.backward_tiles;
    t.document_forward.dense_masked += k * full.forward_tiles;  // one context: dense = varlen
    t.document_backward.dense_masked += k * full.backward_tiles;
    t.causal_keys += k * full.keys;
    t.causal_forward_tiles += k * full.forward_tiles;
    t.causal_backward_tiles += k * full.backward_tiles;
    const auto bin = static_cast<std::size_t>(std::bit_width(seq_len) - 1);
    c.bin_pieces[bin] += k;
    c.bin_tokens[bin] += k * seq_len;
  }

  void add(std::uint64_t length) {
    if (length - 1 >= static_cast<std::uint64_t>(max_document_length)) {
      throw Error(fmt::format("document {} has length {}; allowed: an integer in [1, 2^40]",
                              counts.totals.documents + 1, length));
    }
    packing_counts::StreamCounts& c = counts;
    c.totals.documents += 1;
    std::uint64_t n = length + static_cast<std::uint64_t>(tokens_per_doc);
    if (n < seq_len - c.position) {  // the common case: the document ends inside this window
      add_piece(c, c.position, c.position + n);
      c.position += n;
      return;
    }
    while (n > 0) {
      if (c.position == 0 && n >= seq_len) {
        const std::uint64_t k = n / seq_len;
        add_full_windows(c, k);
        n -= k * seq_len;
        continue;
      }
      const std::uint64_t x = std::min(n, seq_len - c.position);
      add_piece(c, c.position, c.position + x);
      c.position += x;
      n -= x;
      if (c.position == seq_len) close_window(c);
    }
  }

  SimulationResult result() const {
    packing_counts::StreamCounts c = counts;
    if (c.position > 0) close_window(c);
    SimulationResult r{geometry, tokens_per_doc, c.totals};
    for (std::size_t k = 0; k < packing_counts::histogram_bins; ++k) {
      if (c.bin_pieces[k] == 0) continue;
      const auto low = std::int64_t{1} << k;
      const std::int64_t high = std::min<std::int64_t>((low << 1) - 1, geometry.seq_len);
      r.totals.piece_histogram.push_back({low, high, c.bin_pieces[k], c.bin_tokens[k]});
    }
    return r;
  }
};

PackingSimulator::PackingSimulator(const AttentionGeometry& geometry, std::int64_t tokens_per_doc) {
  validate(geometry);
  if (tokens_per_doc < 0 || tokens_per_doc > (std::int64_t{1} << 20)) {
    throw Error(
        fmt::format("tokens added per document {} is out of range; allowed: an integer in [0, 2^20]", tokens_per_doc),
        {}, "/tokens_per_doc");
  }
  impl_ = std::make_unique<Impl>(geometry, tokens_per_doc);
}

PackingSimulator::~PackingSimulator() = default;
PackingSimulator::PackingSimulator(PackingSimulator&&) noexcept = default;
PackingSimulator& PackingSimulator::operator=(PackingSimulator&&) noexcept = default;

void PackingSimulator::add(std::uint64_t length) { impl_->add(length); }

void PackingSimulator::add(const std::uint64_t* lengths, std::size_t count) {
  Impl& s = *impl_;
  for (const std::uint64_t length : std::span<const std::uint64_t>(lengths, count)) s.add(length);
}

SimulationResult PackingSimulator::result() const { return impl_->result(); }

AttentionCost SimulationResult::cost() const {
  const SimulationTotals& t = totals;
  AttentionCost c;
  if (t.tokens == 0) return c;
  const auto tokens = static_cast<double>(t.tokens);
  const auto per_token = [&](std::uint64_t total) { return static_cast<double>(total) / tokens; };
  const auto fwd_area = static_cast<double>(geometry.forward_tile.area());
  const auto bwd_area = static_cast<double>(geometry.backward_tile.area());
  c.mean_document_length = tokens / static_cast<double>(t.documents);
  c.mean_piece_length = tokens / static_cast<double>(t.pieces);
  c.documents_per_window = static_cast<double>(geometry.seq_len) / c.mean_document_length;
  c.document.exact_keys = per_token(t.document_keys);
  c.document.varlen = {fwd_area * per_token(t.document_forward.varlen),
                       bwd_area * per_token(t.document_backward.varlen)};
  c.document.dense_masked = {fwd_area * per_token(t.document_forward.dense_masked),
                             bwd_area * per_token(t.document_backward.dense_masked)};
  c.causal.exact_keys = per_token(t.causal_keys);
  c.causal.varlen = {fwd_area * per_token(t.causal_forward_tiles), bwd_area * per_token(t.causal_backward_tiles)};
  c.causal.dense_masked = c.causal.varlen;
  return c;
}

SimulationResult simulate_lengths(const std::uint64_t* lengths, std::size_t count, const AttentionGeometry& geometry,
                                  std::int64_t tokens_per_doc) {
  PackingSimulator simulator(geometry, tokens_per_doc);
  simulator.add(lengths, count);
  return simulator.result();
}

SimulationResult simulate_distribution(const LengthDistribution& distribution, std::int64_t documents,
                                       std::uint64_t seed, const AttentionGeometry& geometry,
                                       std::int64_t tokens_per_doc) {
  if (documents < 1 || documents > max_simulated_documents) {
    throw Error(
        fmt::format("number of sampled documents {} is out of range; allowed: an integer in [1, 2^32 = {}] "
                    "(docs/reliability.md)",
                    documents, max_simulated_documents),
        {}, "/samples");
  }
  PackingSimulator simulator(geometry, tokens_per_doc);
  LengthSampler sampler(distribution, seed);
  std::vector<std::uint64_t> block(std::size_t{1} << 14);
  auto remaining = static_cast<std::uint64_t>(documents);
  try {
  while (remaining > 0) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, block.size()));
    const std::span<std::uint64_t> part(block.data(), n);
    sampler.fill(part);
    simulator.add(std::span<const std::uint64_t>(part));
    remaining -= n;
    report_progress("simulated documents", static_cast<std::uint64_t>(documents) - remaining,
                    static_cast<std::uint64_t>(documents));
  }
  } catch (const Error& e) {
    // The token capacity of the counters: name the setting that scales the stream.
    if (!e.path().empty()) throw;
    throw Error(fmt::format("{} documents drawn from this distribution are too many: {}; lower the number of sampled "
                            "documents (samples, or \"samples\" in a workload's doc_lengths)",
                            documents, e.message()),
                {}, "/samples");
  }
  return simulator.result();
}

SimulationResult simulate_length_file(const std::string& path, LengthFileFormat format, PackingOrder order,
                                      std::uint64_t seed, const AttentionGeometry& geometry,
                                      std::int64_t tokens_per_doc) {
  PackingSimulator simulator(geometry, tokens_per_doc);
  if (order == PackingOrder::shuffled) {
    std::vector<std::uint64_t> lengths = read_all_lengths(path, format);
    shuffle_lengths(lengths, seed);
    simulator.add(std::span<const std::uint64_t>(lengths));
    return simulator.result();
  }
  LengthFileReader reader(path, format);
  std::vector<std::uint64_t> block(std::size_t{1} << 16);
  while (const std::size_t n = reader.read(block)) {
    simulator.add(std::span<const std::uint64_t>(block.data(), n));
    report_progress("documents read", reader.lengths_read(), 0);
  }
  return simulator.result();
}

}  // namespace budget
