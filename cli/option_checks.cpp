#include "option_checks.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "budget/text_escape.hpp"

namespace budget::cli {

CLI::Validator positive_real(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        const std::string shown = budget::printable_text(text, 60);
        if (text.empty()) return "an empty value; allowed: a number in (0, " + fmt::format("{:g}", max) + "]";
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);  // ERANGE for denormals: the value is still exact
        if (end != text.c_str() + text.size()) return fmt::format("value \"{}\" is not a number", shown);
        if (!std::isfinite(value) || !(value > 0) || value > max) {
          return fmt::format("value \"{}\" is not allowed; allowed: a finite number in (0, {:g}]", shown, max);
        }
        return {};
      },
      fmt::format("POSITIVE <= {:g}", max));
}

void throw_option_dependency_error(const std::string& option, const std::string& message) {
  throw CLI::RequiresError(option + ": " + message, CLI::ExitCodes::RequiresError);
}

CLI::Validator unsigned_decimal(std::uint64_t max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        const std::string shown = budget::printable_text(text, 60);
        std::uint64_t value = 0;
        const char* first = text.data();
        const char* last = text.data() + text.size();
        const auto [end, error] = std::from_chars(first, last, value);
        if (text.empty() || text[0] < '0' || text[0] > '9' || end != last) {
          return fmt::format("value \"{}\" is not a non-negative decimal integer", shown);
        }
        if (error == std::errc::result_out_of_range || value > max) {
          return fmt::format("value \"{}\" is out of range; allowed: 0 to {}", shown, max);
        }
        return {};
      },
      fmt::format("UINT <= {}", max));
}

}  // namespace budget::cli
