#pragma once
// Private: what a loop re-runs in a hybrid stack (loop_kinds.cpp), for the matcher's notes.

#include <string>

#include "budget/config.hpp"
#include "budget/match.hpp"

namespace budget::match_detail {

/// One line for MatchSummary::notes: the loop `loop` (its period filled in, LoopSpec::for_baseline())
/// resolves to in `baseline`'s stack, the pattern's period it spans, and the layer kinds it re-runs
/// (the ones whose executions, FLOPs, KV cache or recurrent state the loop changes). Empty without
/// a loop.
std::string loop_kinds_note(const ArchConfig& baseline, const LoopSpec& loop);

}  // namespace budget::match_detail
