#pragma once
/// \file
/// Writing files so that readers never see a partial one and a command never leaves half of its
/// outputs: the one writer of the library and of budget-match (docs/reliability.md).
///
/// - Each file is written to a temporary beside its target ("<dir>/.<name>.XXXXXX", the name cut
///   so the temporary fits NAME_MAX: every valid name of up to 255 bytes works), flushed to disk,
///   its final size checked against what was written, and renamed over the target.
/// - A target that is a symbolic link is resolved: the link's final target is written (in its own
///   directory) and the link is kept. A dangling link writes the file it names.
/// - A target that exists and is not a regular file (a directory, /dev/full, a FIFO) is refused.
/// - OutputFiles stages several files and renames them only once every one is complete, so a
///   command that writes several files writes all of them or none.
/// - Temporaries still pending are removed by remove_pending_temporaries(), which is
///   async-signal-safe (the CLI calls it from its SIGINT/SIGTERM handler).
///
/// Thread safety: one writer per target; the registry of pending temporaries holds up to 64
/// entries and is safe to use from several threads.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace budget {

/// One file being written: a temporary beside the (resolved) target, renamed over it by commit();
/// removed by the destructor if not committed. Every failure is budget::Error naming the target
/// with the system's reason and "nothing was written".
class AtomicFile {
 public:
  explicit AtomicFile(std::string target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// The temporary file's path (for an external writer such as gnuplot).
  const std::string& path() const { return temp_; }
  /// The target as given.
  const std::string& target() const { return target_; }
  int fd() const { return fd_; }

  /// Appends `contents` (all of it, or budget::Error).
  void write(std::string_view contents);
  /// Flushes to disk and closes the file, then checks its size on disk: the bytes write() was
  /// given, or, when an external program wrote it (nothing passed to write()), more than zero.
  void finish();
  /// finish() (if not yet done) and rename over the target.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, int code);
  void release();
  std::string target_;
  std::string resolved_;
  std::string temp_;
  int fd_ = -1;
  int slot_ = -1;
  unsigned long long written_ = 0;
  bool wrote_ = false;
  bool finished_ = false;
  bool committed_ = false;
};

/// True when `a` and `b` name one file: the same path once ".", ".." and symbolic links are
/// resolved (std::filesystem::weakly_canonical; a file that does not exist yet is compared by its
/// resolved directory and name). For commands with several outputs to refuse a clash when they
/// read their options, before any work (check_distinct_outputs()).
bool same_output_file(const std::string& a, const std::string& b);

/// budget::Error naming both options when two of `outputs` (option name, path; empty paths
/// skipped) name one file (same_output_file()).
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

/// Writes `contents` to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::string_view contents);

/// Several output files, all or none: add() writes each to its temporary at once (so a full disk
/// or a bad directory fails before any target is touched), commit() renames them all. Dropped
/// without commit(), every temporary is removed and no target changes. Two outputs with the same
/// target are refused.
class OutputFiles {
 public:
  /// Writes `contents` to a temporary for `path` (finished and size-checked).
  void add(const std::string& path, std::string_view contents);
  /// A temporary for `path` that another program fills; finish() is called by commit().
  AtomicFile& add_external(const std::string& path);
  /// Renames every staged file over its target, in the order added.
  void commit();
  bool empty() const { return files_.empty(); }

 private:
  void check_new_target(const std::string& path) const;
  std::vector<std::unique_ptr<AtomicFile>> files_;
};

/// Removes every temporary file still being written (async-signal-safe: unlink only).
void remove_pending_temporaries() noexcept;

}  // namespace budget
