#pragma once
// Private: the layout search's option checks and its "does it fit" rule (layout_search_options.cpp),
// shared by the search's two paths (layout_search.cpp).

#include "budget/cluster.hpp"
#include "budget/layout_search.hpp"
#include "budget/training_memory.hpp"

namespace budget::detail {

/// budget::Error naming the option when `o` is out of range for `cluster`: GPUs in [1, the
/// cluster's], seq_len in [1, 2^32], the global batch in [seq_len, 2^50], keep ≥ 1, the run's
/// tokens and the headroom asked for finite and ≥ 0.
void check_layout_search_options(const LayoutSearchOptions& o, const ClusterSpec& cluster);

/// A layout fits the search when its headroom is at least the margin asked for
/// (o.min_headroom_bytes; 0: any layout that fits the usable memory).
inline bool fits_search(const TrainingMemory& memory, const LayoutSearchOptions& o) {
  return memory.fits && memory.headroom_bytes >= o.min_headroom_bytes;
}

}  // namespace budget::detail
