#include "command_registry.hpp"

#include <algorithm>

namespace budget::cli {
namespace {
std::vector<RegisteredCommand>& registry() {
  static std::vector<RegisteredCommand> commands;
  return commands;
}
}  // namespace

CommandRegistration::CommandRegistration(std::string name, int order, AddFunction add) {
  registry().push_back({std::move(name), order, add});
}

std::vector<RegisteredCommand> registered_commands() {
  auto commands = registry();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return commands;
}

}  // namespace budget::cli
