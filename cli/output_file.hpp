#pragma once
// Checked output for every command. Files go through the library's one atomic writer
// (budget/file_write.hpp: a temporary beside the target, flushed, size-checked, renamed; symbolic
// links kept and their target written; several files all or none with budget::OutputFiles), so a
// failed or interrupted write never leaves a truncated file and is never reported as written;
// standard output is flushed and checked before the tool exits 0.

#include <string>
#include <string_view>

#include "budget/file_write.hpp"

namespace budget::cli {

/// Writes `contents` to `path` atomically (budget::write_file_atomically). budget::Error naming
/// `path` when it cannot: an empty name, a target that exists and is not a regular file
/// (/dev/full, a directory, a FIFO), a directory that cannot be written, a full disk.
/// On SIGINT while writing, the temporary file is removed (install_interrupt_handler()).
void write_output_file(const std::string& path, std::string_view contents);

/// A temporary file next to a target for a writer that needs a path (gnuplot).
using TemporaryOutput = budget::AtomicFile;

/// Flushes standard output; budget::Error("<stdout>") if any write to it failed (a closed pipe,
/// a full disk, /dev/full).
void check_stdout();

/// SIGINT (Ctrl-C) and SIGTERM: print "budget-match: interrupted" on stderr, remove the temporary
/// output files being written, and exit with 130 (SIGINT) or 143 (SIGTERM) at once. No output is
/// written after the work it interrupts: outputs are printed or renamed into place only at the end.
void install_interrupt_handler();

/// Whether stderr is a terminal (progress lines overwrite themselves there; elsewhere each is a line).
bool stderr_is_terminal();

}  // namespace budget::cli
