#pragma once
// Private: the flex dispatcher's backends' names (base/enum_names.hpp), written once: to_string()
// prints from the table (flex_backend_names.cpp) and the run reader parses with it.

#include "budget/communication.hpp"
#include "base/enum_names.hpp"

namespace budget::detail {

/// The flex dispatcher's backends, as Megatron's --moe-flex-dispatcher-backend names them.
inline constexpr auto flex_backend_names =
    enum_names<FlexBackend::hybridep>({{FlexBackend::deepep, "deepep"}, {FlexBackend::hybridep, "hybridep"}});

}  // namespace budget::detail
