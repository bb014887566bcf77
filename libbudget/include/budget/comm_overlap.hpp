#pragma once
/// \file
/// The one text form of the overlap flags (CommOverlap, budget/communication.hpp): "none", or a
/// comma-separated list of tp, ep, cp, pp, dp (the collectives that overlap compute). The command
/// line's --overlap and a measured run's "overlap" read it.
///
/// Thread safety: a pure function.

#include <optional>
#include <string>
#include <string_view>

#include "budget/communication.hpp"

namespace budget {

/// The flags `text` names ("none": nothing overlapped; else each listed item overlapped, the rest
/// not). Nothing, with `unknown` set to the first item that is not tp, ep, cp, pp or dp (an empty
/// item included), otherwise.
std::optional<CommOverlap> parse_comm_overlap(std::string_view text, std::string& unknown);

}  // namespace budget
