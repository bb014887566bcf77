// The flex dispatcher's backends by name (flex_backend_names.hpp).
#include "communication/flex_backend_names.hpp"

namespace budget {

std::string_view to_string(FlexBackend backend) { return detail::name_of(detail::flex_backend_names, backend); }

}  // namespace budget
