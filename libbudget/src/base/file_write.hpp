#pragma once
// Writing a whole file so that readers never see a partial one: the library's own writers
// (calibration profiles) go through here. The CLI has its own writer with signal cleanup
// (cli/output_file.hpp); this one has no process-wide state.

#include <string>
#include <string_view>

namespace budget::detail {

/// Writes `contents` to a temporary "<dir>/.<name>.XXXXXX" beside `path`, flushes it to disk and
/// renames it over `path`. On any failure the temporary file is removed, `path` is left as it was,
/// and budget::Error names `path` with the system's reason ("... ; nothing was written").
/// A `path` that exists and is not a regular file (a directory, /dev/full) is refused.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace budget::detail
