#include "output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::cli {
namespace {

extern "C" void on_interrupt(int signal_number) {
  budget::remove_pending_temporaries();
  static const char message[] = "\nbudget-match: interrupted; no output written\n";
  const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
  ::_exit(128 + signal_number);
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

void write_output_file(const std::string& path, std::string_view contents) {
  budget::write_file_atomically(path, contents);
}

void check_stdout() {
  std::cout.flush();
  const bool stream_ok = static_cast<bool>(std::cout);
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (!stream_ok || !flushed || std::ferror(stdout) != 0) {
    const int code = errno;
    std::cout.clear();
    throw Error(code != 0 ? fmt::format("error while writing the output: {}", std::strerror(code))
                          : std::string("error while writing the output"),
                "<stdout>");
  }
}

}  // namespace budget::cli
