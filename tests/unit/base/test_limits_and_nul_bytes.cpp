// Regression tests of the fourth audit (issue 33, docs/reliability.md) in the base domain: the
// parallel loop when a thread cannot be started, checked products of sizes, the time limit's check
// for nested work, the JSON reader and a NUL byte, a NUL byte in a file name, the one printable
// form of names for terminals and for generated files' comments, outputs that name one file.

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <system_error>
#include <thread>

#include <catch2/catch.hpp>

#include "base/checked_math.hpp"
#include "base/json_reader.hpp"
#include "base/parallel_for.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/file_write.hpp"
#include "budget/progress.hpp"
#include "budget/text_escape.hpp"
#include "support/error_text.hpp"

using namespace budget;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::function<void()>& f) { return test::error_text_of(f); }

/// Starts `allowed` threads, then fails as std::thread does under `ulimit -u` (EAGAIN).
detail::StartThread failing_after(unsigned allowed, std::atomic<unsigned>& started) {
  return [allowed, &started](std::function<void()> body) {
    if (started.load() >= allowed) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "Resource temporarily unavailable");
    }
    ++started;
    return std::thread(std::move(body));
  };
}

}  // namespace

TEST_CASE("parallel for: a worker thread that cannot be started is budget::Error, the started ones joined",
          "[base][parallel]") {
  // Before: the std::system_error left the loop with joinable threads in the pool: std::terminate.
  for (const unsigned allowed : {0u, 1u, 3u}) {
    std::atomic<unsigned> started{0};
    std::atomic<int> ran{0};
    const std::string message = error_of([&] {
      detail::parallel_for_with(1000, 4, "cluster ranking", [&](std::size_t) { ++ran; }, {},
                                failing_after(allowed, started));
    });
    INFO(allowed << " threads started");
    CHECK_THAT(message, Catch::StartsWith("cluster ranking: cannot start worker thread " + std::to_string(allowed + 1) +
                                          " of 4 (Resource temporarily unavailable") &&
                            Catch::Contains("ulimit -u") && Catch::Contains("one thread runs on the calling thread"));
    CHECK(started == allowed);
    CHECK(ran <= 1000);  // the started threads may have run some tasks before the hand-out stopped
  }
}

TEST_CASE("parallel for: one thread runs on the calling thread and starts none", "[base][parallel]") {
  std::atomic<unsigned> started{0};
  std::vector<std::thread::id> ids(50);
  detail::parallel_for_with(ids.size(), 1, "test", [&](std::size_t i) { ids[i] = std::this_thread::get_id(); }, {},
                            failing_after(0, started));
  CHECK(started == 0);
  for (const std::thread::id& id : ids) CHECK(id == std::this_thread::get_id());
}

TEST_CASE("product_within never wraps", "[base]") {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  CHECK(detail::product_within({4, 4096, 256}, std::int64_t{1} << 50) == std::optional<std::int64_t>(4194304));
  // 4 · 2^50 · 2^12 = 2^64 wraps to 0 in int64 arithmetic (the layout search's SIGFPE).
  CHECK_FALSE(detail::product_within({4, std::int64_t{1} << 50, std::int64_t{1} << 12}, max));
  CHECK_FALSE(detail::product_within({3, 5}, 14));
  CHECK(detail::product_within({3, 5}, 15) == std::optional<std::int64_t>(15));
  CHECK(detail::product_within({}, 1) == std::optional<std::int64_t>(1));
  CHECK_FALSE(detail::product_within({-1, 5}, max));
  CHECK(detail::product_within({0, max, max}, 0) == std::optional<std::int64_t>(0));
}

TEST_CASE("check_work_time_limit stops nested work without reporting", "[base]") {
  int calls = 0;
  set_progress_callback([&](std::string_view, std::uint64_t, std::uint64_t) { ++calls; });
  set_work_time_limit(1e-9, "raise it with --max-seconds");
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::string message = error_of([] { check_work_time_limit("layout search", 3, 0); });
  set_work_time_limit(0);
  set_progress_callback({});
  CHECK_THAT(message, Catch::StartsWith("layout search: time limit: stopped after") &&
                          Catch::Contains("at 3; raise it with --max-seconds"));
  CHECK(calls == 0);
  check_work_time_limit("no limit", 1, 2);  // no limit set: returns
}

TEST_CASE("the JSON reader refuses a NUL byte, so no byte after the document is ignored",
          "[base][json]") {
  // Before: nlohmann's lexer took the NUL for the end of the input; "{...}\0garbage" read as {...}.
  const std::string text = std::string("{\"a\": 1}\0garbage{{{", 19);
  CHECK_THAT(error_of([&] { detail::parse_json_text(text, "t.json"); }),
             Catch::Equals("t.json: not valid JSON: a NUL byte at line 1, column 9 (JSON text holds none; inside a "
                           "string write \\u0000)"));
  CHECK_THAT(error_of([] { detail::parse_json_text(std::string("{\"a\": \"x\0y\"}", 12), "t.json"); }),
             Catch::Contains("a NUL byte at line 1, column 9"));
  // Bytes after the document without a NUL were refused already (strict parse).
  CHECK_THAT(error_of([] { detail::parse_json_text("{\"a\": 1} x", "t.json"); }), Catch::Contains("not valid JSON"));
}

TEST_CASE("a file name holding a NUL byte is refused, not cut", "[base]") {
  const std::string path = std::string(BUDGET_SOURCE_DIR) + "/examples/configs/paper-200M-S95-baseline.json";
  REQUIRE(fs::exists(path));
  // Before: the system call took the name up to the NUL and read the file.
  const std::string cut = path + std::string("\0.evil", 6);
  CHECK_THAT(printable_text(error_of([&] { load_arch_config(cut); })),
             Catch::Contains("the file name holds a NUL byte") && Catch::Contains("json\\x00.evil"));
}

TEST_CASE("terminal_text keeps lines and escapes what a terminal would run", "[base]") {
  CHECK(terminal_text("a\nb\n") == "a\nb\n");
  CHECK(terminal_text("name \x1b[2Jclear\n") == "name \\x1b[2Jclear\n");
  CHECK(terminal_text("\x1b]0;owned\x07 H200") == "\\x1b]0;owned\\x07 H200");
  CHECK(terminal_text("cr\rline") == "cr\\rline");
  CHECK(terminal_text(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(terminal_text("\xc2\x9b" "2J") == "\\u009b2J");
  CHECK(terminal_text("caf\xc3\xa9 \xe2\x86\x92 ok") == "caf\xc3\xa9 \xe2\x86\x92 ok");
  CHECK(terminal_text("") == "");
}

TEST_CASE("comment_text is one line: no newline, CR, NUL or invalid UTF-8 can end a comment",
          "[base]") {
  const std::string safe = comment_text("evil\ntouch /tmp/pwned\r\n#\x0c");
  CHECK(safe.find_first_of("\n\r\x0c") == std::string::npos);
  CHECK(safe == "evil\\ntouch /tmp/pwned\\r\\n#\\x0c");
  CHECK(comment_text(std::string("a\0b\xff", 4)) == "a\\x00b\\xff");
  CHECK(comment_text("Qwen3-30B-A3B \xe2\x80\x94 looped") == "Qwen3-30B-A3B \xe2\x80\x94 looped");
}

TEST_CASE("two outputs that name one file are refused before any work", "[base]") {
  const fs::path dir = fs::temp_directory_path() / ("budget-nul-bytes-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  const std::string a = (dir / "m.json").string();
  CHECK(same_output_file(a, a));
  CHECK(same_output_file(a, (dir / "sub" / ".." / "m.json").string()));
  CHECK(same_output_file(a, (dir / "." / "m.json").string()));
  CHECK_FALSE(same_output_file(a, (dir / "c.json").string()));
  fs::create_symlink(dir / "m.json", dir / "link.json");
  CHECK(same_output_file(a, (dir / "link.json").string()));
  CHECK_THAT(error_of([&] { check_distinct_outputs({{"--out", a}, {"--cluster-out", (dir / "./m.json").string()}}); }),
             Catch::StartsWith("--cluster-out: --out and --cluster-out name one file"));
  check_distinct_outputs({{"--out", a}, {"--cluster-out", ""}});  // an output not asked for
  OutputFiles files;
  files.add(a, "x");
  CHECK_THAT(error_of([&] { files.add((dir / "sub/../m.json").string(), "y"); }),
             Catch::Contains("two outputs of the command would be written to this one file"));
  fs::remove_all(dir);
}
