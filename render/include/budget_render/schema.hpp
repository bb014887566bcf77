#pragma once
// The version of the JSON outputs (docs/cli.md, "Output schema"): every JSON document budget-match
// writes, and every dict the Python module returns, carries it as "schema_version".

namespace budget::render {

/// Bumped when a key of a JSON output changes meaning or disappears (docs/cli.md).
inline constexpr int output_schema_version = 1;

}  // namespace budget::render
