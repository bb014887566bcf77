#pragma once
// Forward declarations of the CLI11 types that shared CLI headers name, so that they need not
// include CLI11 itself (header-only and slow to parse; cli/CMakeLists.txt precompiles it for the
// files that do use it).

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI
