#include "option_checks.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/error.hpp"
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

CLI::Validator non_negative_real(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        const std::string shown = budget::printable_text(text, 60);
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return fmt::format("value \"{}\" is not a number", shown);
        if (!std::isfinite(value) || !(value >= 0) || value > max) {
          return fmt::format("value \"{}\" is not allowed; allowed: a finite number in [0, {:g}]", shown, max);
        }
        return {};
      },
      fmt::format("NUMBER in [0, {:g}]", max));
}

void throw_option_dependency_error(const std::string& option, const std::string& message) {
  throw CLI::RequiresError(option + ": " + message, CLI::ExitCodes::RequiresError);
}

CLI::Validator output_path() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "an empty path names no file; give a file name, or leave the option out" : std::string();
      },
      "PATH");
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

void check_option_needs(const CLI::App& command, const std::string& option, const std::vector<std::string>& needed,
                        const std::string& why) {
  if (command.count(option) == 0) return;
  std::vector<std::string> missing;
  for (const std::string& name : needed) {
    if (command.count(name) == 0) missing.push_back(name);
  }
  if (missing.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < missing.size(); ++i) list += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  throw_option_dependency_error(option, fmt::format("{} needs {}{}", option, list, why.empty() ? "" : " (" + why + ")"));
}

}  // namespace budget::cli
