#pragma once
// Private: the collectives' names (base/enum_names.hpp), written once: to_string() prints from the
// table (collectives.cpp) and the measurement reader parses with it (link_fit.cpp).

#include "budget/cluster.hpp"
#include "base/enum_names.hpp"

namespace budget::detail {

inline constexpr auto collective_kind_names = enum_names<CollectiveKind::send_recv>({
    {CollectiveKind::all_reduce, "all_reduce"}, {CollectiveKind::all_gather, "all_gather"},
    {CollectiveKind::reduce_scatter, "reduce_scatter"}, {CollectiveKind::all_to_all, "all_to_all"},
    {CollectiveKind::send_recv, "send_recv"}});

}  // namespace budget::detail
