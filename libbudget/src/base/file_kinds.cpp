#include "base/file_kinds.hpp"

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::detail {

namespace {

struct FileKind {
  std::string_view schema;
  std::string_view what;   ///< "a cluster file"
  std::string_view doc;    ///< where it is described
  std::string_view where;  ///< the options (CLI and Python) that take it
};

/// The file kinds this project writes with a "schema" key, and where each is read.
constexpr FileKind file_kinds[] = {
    {"budget.cluster", "a cluster file", "docs/cluster.md", "pass it with --cluster (Python: cluster=)"},
    {"budget.calibration", "a calibration profile", "docs/calibration.md",
     "pass it with --calibration, or --profile for layout and calibrate (Python: calibration=)"},
    {"budget.collectives", "a file of measured collectives", "docs/cluster.md, \"Measuring your links\"",
     "read it with load_collective_measurements() (budget/link_fit.hpp), which fits a cluster file's links"},
};

}  // namespace

void refuse_other_file_kind(const nlohmann::json& root, std::string_view expected_schema, std::string_view expected_what,
                            const std::string& source) {
  if (!root.is_object()) return;
  const auto it = root.find("schema");
  if (it == root.end() || !it->is_string()) return;
  const std::string schema = it->get<std::string>();
  if (schema == expected_schema) return;
  for (const FileKind& kind : file_kinds) {
    if (schema != kind.schema) continue;
    throw Error(fmt::format("this is {} (schema \"{}\", {}), not {}: {}", kind.what, kind.schema, kind.doc, expected_what,
                            kind.where),
                source, "/schema");
  }
}

}  // namespace budget::detail
