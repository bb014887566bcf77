#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <utility>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::cli {
namespace {

// The temporary file being written, for the signal handler (async-signal-safe access only).
char g_temp_path[4096];
volatile std::sig_atomic_t g_temp_active = 0;

extern "C" void on_interrupt(int signal_number) {
  if (g_temp_active != 0) ::unlink(g_temp_path);
  static const char message[] = "\nbudget-match: interrupted; no output written\n";
  const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  ::_exit(128 + signal_number);
}

std::string errno_text(int code) { return std::strerror(code); }

}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

TemporaryOutput::TemporaryOutput(std::string target) : target_(std::move(target)) {
  if (target_.empty()) throw Error("the output file name is empty", "\"\"");
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(target_, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    throw Error("cannot write it: it exists and is not a regular file (a directory, device or FIFO); give a file path",
                target_);
  }
  const fs::path path(target_);
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  temp_ = (directory / ("." + path.filename().string() + ".XXXXXX")).string();
  if (temp_.size() >= sizeof g_temp_path) throw Error("the output path is too long", target_);
  fd_ = ::mkstemp(temp_.data());
  if (fd_ < 0) throw Error(fmt::format("cannot write a file in {}: {}", directory.string(), errno_text(errno)), target_);
  std::memcpy(g_temp_path, temp_.c_str(), temp_.size() + 1);
  g_temp_active = 1;
  // Permissions as a plain create would give them (mkstemp makes 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd_, 0666 & ~mask) != 0) fail("cannot set the file's permissions", errno);
}

TemporaryOutput::~TemporaryOutput() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(temp_.c_str());
  g_temp_active = 0;
}

void TemporaryOutput::fail(const std::string& what, int code) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
  g_temp_active = 0;
  committed_ = true;  // nothing left to clean up
  throw Error(fmt::format("{}: {}; nothing was written", what, errno_text(code)), target_);
}

void TemporaryOutput::commit() {
  if (::fsync(fd_) != 0 && errno != EINVAL) fail("error while writing the file", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("error while writing the file", errno);
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot move the written file into place", errno);
  committed_ = true;
  g_temp_active = 0;
}

void write_output_file(const std::string& path, std::string_view contents) {
  TemporaryOutput out(path);
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(out.fd(), contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("error while writing the file: {}; nothing was written", errno_text(errno)), path);
    }
    done += static_cast<std::size_t>(n);
  }
  out.commit();
}

void check_stdout() {
  std::cout.flush();
  const bool stream_ok = static_cast<bool>(std::cout);
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (!stream_ok || !flushed || std::ferror(stdout) != 0) {
    const int code = errno;
    std::cout.clear();
    throw Error(code != 0 ? fmt::format("error while writing the output: {}", errno_text(code))
                          : std::string("error while writing the output"),
                "<stdout>");
  }
}

}  // namespace budget::cli
