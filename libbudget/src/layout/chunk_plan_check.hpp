// Whether a layout's model chunks fit a config (the chunk plan, and where a loop may sit): a part of
// ParallelLayout::validation_error(), memoised per thread because a layout search asks it for every
// combination that shares one pipeline (budget/parallel_layout.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"

namespace budget {

/// Empty when the chunks of `l` (plan_chunks(): the layout string, first/last counts or the even
/// split) fit `config` and its loop sits as l.loop_placement allows (in_chunk: inside one chunk;
/// wrap: each layer on one rank; replicated: anywhere); else the reason. Depends on the config only
/// through its layer count, loop and MTP layers, and on the layout only through PP, V, the placement,
/// the layout string, the first/last counts and the in-split flags: the key of a per-thread memo.
std::string chunk_plan_error(const ParallelLayout& l, const ArchConfig& config);

/// What the model chunks of a layout depend on (above): the layer count, MTP layers, loop first,
/// last and repeats, PP, V, the placement, the layout string, first/last counts and in-split flags.
using ChunkPlanKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                std::int64_t, int, PipelineSplit, bool, bool>;
ChunkPlanKey chunk_plan_key(const ParallelLayout& l, const ArchConfig& config);
/// chunk_plan_key(l, config) == key, compared without building a key (no allocation).
bool same_chunk_plan_key(const ChunkPlanKey& key, const ParallelLayout& l, const ArchConfig& config);

}  // namespace budget
