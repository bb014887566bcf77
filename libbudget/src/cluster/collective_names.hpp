#pragma once
// Private: the collectives' names (base/enum_names.hpp), written once: to_string() prints from the
// table (communication.cpp) and the measurement reader parses with it (link_fit.cpp); the flex
// dispatcher's backends (the run reader parses them).

#include "budget/communication.hpp"
#include "base/enum_names.hpp"

namespace budget::detail {

inline constexpr auto collective_kind_names = enum_names<CollectiveKind::send_recv>({
    {CollectiveKind::all_reduce, "all_reduce"}, {CollectiveKind::all_gather, "all_gather"},
    {CollectiveKind::reduce_scatter, "reduce_scatter"}, {CollectiveKind::all_to_all, "all_to_all"},
    {CollectiveKind::send_recv, "send_recv"}});

/// The flex dispatcher's backends, as Megatron's --moe-flex-dispatcher-backend names them.
inline constexpr auto flex_backend_names =
    enum_names<FlexBackend::hybridep>({{FlexBackend::deepep, "deepep"}, {FlexBackend::hybridep, "hybridep"}});

}  // namespace budget::detail
