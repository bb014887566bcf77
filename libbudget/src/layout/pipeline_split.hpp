// The pipeline splits the layout searches try (docs/cluster.md, "Layout search"): the even split,
// else Megatron's first/last-stage layer counts (PipelineSplit, budget/parallel_layout.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "budget/parallel_layout.hpp"

namespace budget {

/// The splits the searches try for `total` layers over PP ranks of V chunks each: the even split
/// alone where PP·V divides `total`; else, with PP > 1, the most balanced uneven split Megatron's
/// TransformerConfig accepts (transformer_config.py:2293-2368 at d98e8a64: first and last counts
/// ≥ 1, every rank's count a multiple of V, the middle ranks sharing the rest evenly with at least
/// one layer each): the smallest largest rank's count M (at least V·⌈total / (PP·V)⌉), then the
/// fullest middle ranks, then first and last as even as whole chunks allow: last = V·⌈r / (2V)⌉,
/// first = r − last for the rest r, and the two swapped when they differ (the first rank holds the
/// embedding and the most micro-batches in flight, the last the LM head and loss: which side takes
/// the lighter share is left to the search). None when no split is accepted (V does not divide the
/// layers, or fewer than 2V of them). Example: 61 layers, PP 8, V 1: (6, 7) and (7, 6), 8 on each
/// middle rank; 12 layers, PP 8: (3, 3) with 1 on each middle rank (2 would leave 0 for the ends).
std::vector<PipelineSplit> pipeline_splits(std::int64_t total, std::int64_t pp, std::int64_t virtual_stages);

}  // namespace budget
