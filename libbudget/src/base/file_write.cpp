#include "base/file_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::detail {

void write_file_atomically(const std::string& path, std::string_view contents) {
  namespace fs = std::filesystem;
  if (path.empty()) throw Error("the output file name is empty", "\"\"");
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    throw Error("cannot write it: it exists and is not a regular file (a directory, device or FIFO); give a file path",
                path);
  }
  const fs::path target(path);
  const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string temp = (directory / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    throw Error(fmt::format("cannot write a file in {}: {}; nothing was written", directory.string(), std::strerror(errno)),
                path);
  }
  const auto fail = [&](const char* what, int code, bool close_fd) {
    if (close_fd) ::close(fd);
    ::unlink(temp.c_str());
    throw Error(fmt::format("{}: {}; nothing was written", what, std::strerror(code)), path);
  };
  // Permissions as a plain create would give them (mkstemp makes 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail("cannot set the file's permissions", errno, true);
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("error while writing the file", errno, true);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) fail("error while writing the file", errno, true);
  if (::close(fd) != 0) fail("error while writing the file", errno, false);
  if (::rename(temp.c_str(), path.c_str()) != 0) fail("cannot move the written file into place", errno, false);
}

}  // namespace budget::detail
