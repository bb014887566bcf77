// Attention geometry, per-context counts and the tile tables (attention_tiles.hpp).

#include "budget/attention_cost.hpp"

#include <fmt/format.h>

#include <charconv>

#include "workload/attention_tiles.hpp"
#include "workload/workload_names.hpp"
#include "budget/error.hpp"

namespace budget {

std::string to_string(AttentionTile tile) { return fmt::format("{}x{}", tile.rows, tile.cols); }

AttentionTile parse_attention_tile(std::string_view text, const std::string& source) {
  const auto fail = [&]() {
    throw Error(
        fmt::format("tile \"{}\" is not allowed; expected ROWSxCOLS with sides in [1, 65536], e.g. 128x128", text),
        source);
  };
  const std::size_t x = text.find_first_of("xX");
  if (x == std::string_view::npos) fail();
  AttentionTile tile{0, 0};
  const auto parse_side = [&](std::string_view side, std::int64_t& out) {
    const auto [ptr, ec] = std::from_chars(side.data(), side.data() + side.size(), out);
    if (side.empty() || ec != std::errc() || ptr != side.data() + side.size() || out < 1 || out > max_tile_side) {
      fail();
    }
  };
  parse_side(text.substr(0, x), tile.rows);
  parse_side(text.substr(x + 1), tile.cols);
  return tile;
}

std::string_view to_string(AttentionLaunch launch) { return detail::name_of(detail::attention_launch_names, launch); }

std::string_view to_string(PackingOrder order) { return detail::name_of(detail::packing_order_names, order); }

namespace {
void validate_tile(AttentionTile tile, const std::string& source, const char* path) {
  if (tile.rows < 1 || tile.rows > max_tile_side || tile.cols < 1 || tile.cols > max_tile_side) {
    throw Error(fmt::format("tile {}x{} is out of range; allowed: sides in [1, 65536]", tile.rows, tile.cols), source,
                path);
  }
}
}  // namespace

void validate(const AttentionGeometry& g, const std::string& source) {
  if (g.seq_len < 1 || g.seq_len > max_attention_seq_len) {
    throw Error(
        fmt::format("value {} is out of range; allowed: an integer in [1, 2^20] for the attention model", g.seq_len),
        source, "/seq_len");
  }
  if (g.sliding_window < 0 || g.sliding_window > (std::int64_t{1} << 40)) {
    throw Error(
        fmt::format("value {} is out of range; allowed: 0 (none) or a window width in [1, 2^40]", g.sliding_window),
        source, "/sliding_window");
  }
  validate_tile(g.forward_tile, source, "/forward_tile");
  validate_tile(g.backward_tile, source, "/backward_tile");
}

std::int64_t causal_context_keys(std::int64_t context, std::int64_t window) {
  if (context < 0 || context > (std::int64_t{1} << 31)) {
    throw Error(fmt::format("context length {} is out of range; allowed: [0, 2^31]", context));
  }
  if (window < 0) throw Error(fmt::format("window {} is out of range; allowed: 0 (none) or ≥ 1", window));
  const auto x = static_cast<std::uint64_t>(context);
  const auto w = window == 0 || window > context ? x : static_cast<std::uint64_t>(window);
  return static_cast<std::int64_t>(detail::context_keys(x, w));
}

std::int64_t causal_context_tiles(std::int64_t context, AttentionTile tile, std::int64_t window) {
  if (context < 0 || context > max_document_length) {
    throw Error(fmt::format("context length {} is out of range; allowed: [0, 2^40]", context));
  }
  if (window < 0) throw Error(fmt::format("window {} is out of range; allowed: 0 (none) or ≥ 1", window));
  validate_tile(tile, {}, "");
  const std::int64_t w = window == 0 ? context : window;
  std::int64_t tiles = 0;
  for (std::int64_t r0 = 0; r0 < context; r0 += tile.rows) {
    const std::int64_t last_row = std::min(context, r0 + tile.rows) - 1;
    const std::int64_t first_key = r0 - w + 1 > 0 ? (r0 - w + 1) / tile.cols : 0;
    tiles += last_row / tile.cols - first_key + 1;
  }
  return tiles;
}

double pass_weighted_keys(const KernelKeys& keys, std::int64_t training_passes) {
  if (training_passes < 1) {
    throw Error(fmt::format("training passes {} is out of range; allowed: ≥ 1", training_passes));
  }
  const auto backward_weight = static_cast<double>(std::min<std::int64_t>(2, training_passes - 1));
  const double forward_weight = static_cast<double>(training_passes) - backward_weight;
  return (forward_weight * keys.forward + backward_weight * keys.backward) / static_cast<double>(training_passes);
}

KernelKeys MaskCost::executed(AttentionLaunch launch) const {
  switch (launch) {
    case AttentionLaunch::varlen: return varlen;
    case AttentionLaunch::dense_masked: return dense_masked;
    case AttentionLaunch::none: break;
  }
  return KernelKeys{exact_keys, exact_keys};
}

namespace detail {

TileCounter::TileCounter(AttentionTile tile, std::int64_t seq_len, std::int64_t effective_window)
    : rows_(static_cast<std::uint64_t>(tile.rows)),
      cols_(static_cast<std::uint64_t>(tile.cols)),
      window_(static_cast<std::uint64_t>(effective_window)),
      windowed_(effective_window < seq_len),
      query_blocks_(static_cast<std::uint64_t>((seq_len + tile.rows - 1) / tile.rows)) {
  const auto br = static_cast<std::uint64_t>(tile.rows);
  const auto bc = static_cast<std::uint64_t>(tile.cols);
  first_key_block_.resize(query_blocks_ + 1);
  context_prefix_.assign(query_blocks_ + 1, 0);
  key_block_prefix_.assign(query_blocks_ + 1, 0);
  first_key_prefix_.assign(query_blocks_ + 1, 0);
  for (std::uint64_t q = 0; q <= query_blocks_; ++q) {
    const std::uint64_t r0 = q * br;
    first_key_block_[q] = r0 + 1 > window_ ? (r0 + 1 - window_) / bc : 0;
  }
  for (std::uint64_t q = 0; q < query_blocks_; ++q) {
    const std::uint64_t r0 = q * br;
    context_prefix_[q + 1] = context_prefix_[q] + (r0 + br - 1) / bc - first_key_block_[q] + 1;
    key_block_prefix_[q + 1] = key_block_prefix_[q] + r0 / bc;
    first_key_prefix_[q + 1] = first_key_prefix_[q] + first_key_block_[q];
  }
}

std::uint64_t TileCounter::diagonal_tiles(std::uint64_t m) const {
  const std::uint64_t br = rows_.divisor();
  const std::uint64_t bc = cols_.divisor();
  std::uint64_t tiles = 0;
  for (std::uint64_t r0 = 0; r0 < m; r0 += br) tiles += (std::min(m, r0 + br) - 1) / bc - r0 / bc + 1;
  return tiles;
}

}  // namespace detail
}  // namespace budget
