#pragma once
// Checked output for every command: files are written whole to a temporary name in the same
// directory, flushed, closed and renamed over the target, so a failed or interrupted write never
// leaves a truncated file and is never reported as written; standard output is flushed and
// checked before the tool exits 0.

#include <string>
#include <string_view>

namespace budget::cli {

/// Writes `contents` to `path` atomically (temporary "<dir>/.<name>.XXXXXX", then rename()).
/// budget::Error naming `path` when it cannot: an empty name, a target that exists and is not a
/// regular file (/dev/full, a directory, a FIFO), a directory that cannot be written, a full disk.
/// On SIGINT while writing, the temporary file is removed (install_interrupt_handler()).
void write_output_file(const std::string& path, std::string_view contents);

/// A temporary file next to `target` for a writer that needs a path (gnuplot): commit() renames
/// it over the target; the destructor removes it if not committed. Same checks and errors as
/// write_output_file().
class TemporaryOutput {
 public:
  explicit TemporaryOutput(std::string target);
  ~TemporaryOutput();
  TemporaryOutput(const TemporaryOutput&) = delete;
  TemporaryOutput& operator=(const TemporaryOutput&) = delete;

  const std::string& path() const { return temp_; }
  int fd() const { return fd_; }
  /// Closes the descriptor (checked) and renames the file over the target.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, int code);
  std::string target_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Flushes standard output; budget::Error("<stdout>") if any write to it failed (a closed pipe,
/// a full disk, /dev/full).
void check_stdout();

/// SIGINT (Ctrl-C) and SIGTERM: print "budget-match: interrupted" on stderr, remove a temporary
/// output file being written, and exit with 130 (SIGINT) or 143 (SIGTERM) at once. No output is
/// written after the work it interrupts: outputs are printed or renamed into place only at the end.
void install_interrupt_handler();

/// Whether stderr is a terminal (progress lines are shown only then).
bool stderr_is_terminal();

}  // namespace budget::cli
