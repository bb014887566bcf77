#include "budget/file_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/text_escape.hpp"

namespace budget {
namespace {

// Pending temporaries, for remove_pending_temporaries() from a signal handler: a slot is claimed
// by a compare-exchange 0 -> 1 (writing), published as 2 once its path is stored, freed to 0.
constexpr int slot_count = 64;
constexpr std::size_t slot_path_bytes = 4096;
char g_slot_paths[slot_count][slot_path_bytes];
std::atomic<int> g_slot_state[slot_count];

int claim_slot(const std::string& path) {
  if (path.size() >= slot_path_bytes) return -1;
  for (int i = 0; i < slot_count; ++i) {
    int expected = 0;
    if (g_slot_state[i].compare_exchange_strong(expected, 1)) {
      std::memcpy(g_slot_paths[i], path.c_str(), path.size() + 1);
      g_slot_state[i].store(2);
      return i;
    }
  }
  return -1;
}

void free_slot(int slot) {
  if (slot >= 0) g_slot_state[slot].store(0);
}

/// The file a write to `target` must replace: `target` itself, or the final target of a chain of
/// symbolic links (relative links resolved against the link's directory), so the link is kept.
std::string resolve_symlinks(const std::string& target) {
  namespace fs = std::filesystem;
  fs::path path(target);
  for (int depth = 0; depth < 40; ++depth) {
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(path, ec);
    if (ec || !fs::is_symlink(status)) return path.string();
    const fs::path link = fs::read_symlink(path, ec);
    if (ec) throw Error(fmt::format("cannot read the symbolic link: {}; nothing was written", ec.message()), target);
    path = link.is_absolute() ? link : path.parent_path() / link;
  }
  throw Error("too many levels of symbolic links; nothing was written", target);
}

std::string errno_text(int code) { return std::strerror(code); }

}  // namespace

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  namespace fs = std::filesystem;
  if (target_.empty()) throw Error("the output file name is empty", "\"\"");
  if (target_.find('\0') != std::string::npos) throw Error("the output file name holds a NUL byte", printable_text(target_));
  resolved_ = resolve_symlinks(target_);
  std::error_code ec;
  const fs::file_status status = fs::status(resolved_, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    throw Error("cannot write it: it exists and is not a regular file (a directory, device or FIFO); give a file path",
                target_);
  }
  const fs::path path(resolved_);
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") throw Error("the output path names a directory, not a file", target_);
  // "." + name + ".XXXXXX" must fit NAME_MAX (255 on Linux): a long name is cut for the temporary only.
  constexpr std::size_t suffix_bytes = 8;
  if (name.size() + suffix_bytes > NAME_MAX) name.resize(NAME_MAX - suffix_bytes);
  temp_ = (directory / ("." + name + ".XXXXXX")).string();
  fd_ = ::mkstemp(temp_.data());
  if (fd_ < 0) {
    throw Error(fmt::format("cannot write a file in {}: {}; nothing was written", directory.string(), errno_text(errno)),
                target_);
  }
  slot_ = claim_slot(temp_);
  // Permissions as a plain create would give them (mkstemp makes 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd_, 0666 & ~mask) != 0) fail("cannot set the file's permissions", errno);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  release();
}

void AtomicFile::release() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
  free_slot(slot_);
  slot_ = -1;
  committed_ = true;  // nothing left to clean up
}

void AtomicFile::fail(const std::string& what, int code) {
  release();
  throw Error(fmt::format("{}: {}; nothing was written", what, errno_text(code)), target_);
}

void AtomicFile::write(std::string_view contents) {
  if (finished_ || fd_ < 0) throw Error("internal: write after the file was finished", target_);
  wrote_ = true;
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd_, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("error while writing the file", errno);
    }
    if (n == 0) fail("error while writing the file", EIO);
    done += static_cast<std::size_t>(n);
  }
  written_ += contents.size();
}

void AtomicFile::finish() {
  if (finished_) return;
  if (fd_ < 0) throw Error("internal: finish after the file was released", target_);
  if (::fsync(fd_) != 0 && errno != EINVAL) fail("error while writing the file", errno);
  struct stat info {};
  if (::fstat(fd_, &info) != 0) fail("cannot check the written file", errno);
  const auto size = static_cast<unsigned long long>(info.st_size);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("error while writing the file", errno);
  if (wrote_ ? size != written_ : size == 0) {
    release();
    throw Error(wrote_ ? fmt::format("the file has {} bytes on disk, {} were written (a full or failing disk?); "
                                     "nothing was written",
                                     size, written_)
                       : std::string("the writer produced an empty file; nothing was written"),
                target_);
  }
  finished_ = true;
}

void AtomicFile::commit() {
  finish();
  if (::rename(temp_.c_str(), resolved_.c_str()) != 0) fail("cannot move the written file into place", errno);
  committed_ = true;
  free_slot(slot_);
  slot_ = -1;
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile file(path);
  file.write(contents);
  file.commit();
}

bool same_output_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  // Each as its write resolves it (the final target of a chain of links, dangling ones included),
  // then "." and ".." and the directories' own links.
  const auto resolved = [](const std::string& path) -> std::optional<std::filesystem::path> {
    try {
      std::error_code ec;
      std::filesystem::path p = std::filesystem::weakly_canonical(resolve_symlinks(path), ec);
      if (ec) return std::nullopt;
      return p;
    } catch (const Error&) {
      return std::nullopt;  // a loop of links: the write refuses it by name
    }
  };
  const auto ra = resolved(a), rb = resolved(b);
  return ra && rb && *ra == *rb;
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (outputs[i].second.empty() || outputs[j].second.empty()) continue;
      if (same_output_file(outputs[i].second, outputs[j].second)) {
        throw Error(fmt::format("{} and {} name one file ({}); give each output its own file",
                                outputs[i].first, outputs[j].first, printable_text(outputs[j].second, 200)),
                    outputs[j].first);
      }
    }
  }
}

void OutputFiles::check_new_target(const std::string& path) const {
  for (const auto& file : files_) {
    if (same_output_file(file->target(), path)) {
      throw Error("two outputs of the command would be written to this one file", path);
    }
  }
}

void OutputFiles::add(const std::string& path, std::string_view contents) {
  check_new_target(path);
  auto file = std::make_unique<AtomicFile>(path);
  file->write(contents);
  file->finish();
  files_.push_back(std::move(file));
}

AtomicFile& OutputFiles::add_external(const std::string& path) {
  check_new_target(path);
  files_.push_back(std::make_unique<AtomicFile>(path));
  return *files_.back();
}

void OutputFiles::commit() {
  for (auto& file : files_) file->finish();
  for (auto& file : files_) file->commit();
  files_.clear();
}

void remove_pending_temporaries() noexcept {
  for (int i = 0; i < slot_count; ++i) {
    if (g_slot_state[i].load() == 2) ::unlink(g_slot_paths[i]);
  }
}

}  // namespace budget
