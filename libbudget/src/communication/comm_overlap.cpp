// The text form of the overlap flags (budget/comm_overlap.hpp).
#include "budget/comm_overlap.hpp"

#include <algorithm>

namespace budget {

std::optional<CommOverlap> parse_comm_overlap(std::string_view text, std::string& unknown) {
  CommOverlap o{false, false, false, false, false};
  if (text == "none") return o;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    bool* flag = item == "tp" ? &o.tp : item == "ep" ? &o.ep : item == "cp" ? &o.cp : item == "pp" ? &o.pp
               : item == "dp" ? &o.dp : nullptr;
    if (flag == nullptr) {
      unknown = std::string(item);
      return std::nullopt;
    }
    *flag = true;
    start = end + 1;
  }
  return o;
}

}  // namespace budget
