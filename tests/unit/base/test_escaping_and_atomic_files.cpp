// Regression tests of the third audit (issue 23, docs/reliability.md) in the base domain: one
// escaping function for text from data (terminal lines, gnuplot literals, path components), the
// one atomic writer (NAME_MAX, symbolic links, final size, several files all or none), checked
// integer arithmetic and the JSON nesting limit.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "base/checked_math.hpp"
#include "base/json_reader.hpp"
#include "budget/error.hpp"
#include "budget/file_write.hpp"
#include "budget/text_escape.hpp"
#include "support/error_text.hpp"

using namespace budget;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::function<void()>& f) { return test::error_text_of(f); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh empty directory under the system's temporary directory.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("budget-escaping-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("printable_text escapes control bytes, C1 controls and invalid UTF-8, keeps NUL visible") {
  CHECK(printable_text("plain ascii") == "plain ascii");
  CHECK(printable_text("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(printable_text(std::string("nul\0here", 8)) == "nul\\x00here");
  CHECK(printable_text("\x1b[31mred") == "\\x1b[31mred");
  CHECK(printable_text("del\x7f") == "del\\x7f");
  CHECK(printable_text("\xc2\x9b" "2J") == "\\u009b2J");        // C1 CSI in UTF-8
  CHECK(printable_text("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");  // é €
  CHECK(printable_text("\xff\xfe") == "\\xff\\xfe");
  CHECK(printable_text("\xc0\xaf") == "\\xc0\\xaf");             // overlong '/'
  CHECK(printable_text("\xed\xa0\x80") == "\\xed\\xa0\\x80");    // surrogate
  CHECK(printable_text("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  CHECK(printable_text("\xe2\x82") == "\\xe2\\x82");             // truncated
  CHECK(printable_text(std::string(100, 'x'), 10) == std::string(10, 'x') + "... (100 bytes in all)");
}

TEST_CASE("gnuplot_string_literal is one single-quoted line with no way out of the string") {
  CHECK(gnuplot_string_literal("baseline") == "'baseline'");
  CHECK(gnuplot_string_literal("it's") == "'it''s'");
  CHECK(gnuplot_string_literal("`touch pwned`") == "'`touch pwned`'");
  const std::string hostile = "\"\nsystem('touch pwned')\nprint \"";
  const std::string literal = gnuplot_string_literal(hostile);
  CHECK(literal == "'\"\\nsystem(''touch pwned'')\\nprint \"'");
  CHECK(literal.find('\n') == std::string::npos);
  // Inside the quotes every single quote is doubled: the literal closes only at its last byte.
  for (std::size_t i = 1; i + 1 < literal.size(); ++i) {
    if (literal[i] == '\'') {
      REQUIRE(literal[i + 1] == '\'');
      ++i;
    }
  }
}

TEST_CASE("require_path_component accepts one file name and refuses separators, dots, NUL and control bytes") {
  CHECK(require_path_component("looped-2x", "{arch}", "--out") == "looped-2x");
  CHECK(require_path_component("a..b", "{arch}", "--out") == "a..b");
  CHECK_THAT(error_of([] { require_path_component("../../escaped", "{arch}", "--out"); }),
             Catch::Contains("--out: the value \"../../escaped\" put in place of {arch} contains '/'"));
  CHECK_THAT(error_of([] { require_path_component("..", "{arch}", "--out"); }), Catch::Contains("directory reference"));
  CHECK_THAT(error_of([] { require_path_component("", "{arch}", "--out"); }), Catch::Contains("is empty"));
  CHECK_THAT(error_of([] { require_path_component(std::string("a\0b", 3), "{arch}", "--out"); }),
             Catch::Contains("a\\x00b") && Catch::Contains("control character"));
  CHECK_THAT(error_of([] { require_path_component("a\nb", "{arch}", "--out"); }), Catch::Contains("control character"));
}

TEST_CASE("Error::text keeps a NUL byte that what() would cut") {
  const Error e(std::string("bad value \"a\0b\"", 15), "file.csv", "line 3");
  CHECK(std::string(e.what()) == "file.csv: line 3: bad value \"a");
  CHECK(e.text() == std::string("file.csv: line 3: bad value \"a\0b\"", 33));
  CHECK(printable_text(e.text()) == "file.csv: line 3: bad value \"a\\x00b\"");
}

TEST_CASE("write_file_atomically writes names of 248 to 255 bytes (the temporary fits NAME_MAX)") {
  const fs::path dir = scratch("names");
  for (std::size_t length : {247u, 248u, 250u, 255u}) {
    const fs::path target = dir / std::string(length, 'n');
    write_file_atomically(target.string(), "x");
    CHECK(slurp(target) == "x");
  }
  CHECK(entries(dir) == 4);  // no temporary left
  CHECK_THAT(error_of([&] { write_file_atomically((dir / std::string(256, 'n')).string(), "x"); }),
             Catch::Contains("nothing was written"));
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomically onto a symbolic link writes the link's target and keeps the link") {
  const fs::path dir = scratch("symlink");
  fs::create_directories(dir / "real");
  std::ofstream(dir / "real" / "out.json") << "old";
  fs::create_symlink("real/out.json", dir / "link.json");
  write_file_atomically((dir / "link.json").string(), "new");
  CHECK(fs::is_symlink(fs::symlink_status(dir / "link.json")));
  CHECK(slurp(dir / "real" / "out.json") == "new");
  // A dangling link writes the file it names.
  fs::create_symlink("real/created.json", dir / "dangling.json");
  write_file_atomically((dir / "dangling.json").string(), "made");
  CHECK(fs::is_symlink(fs::symlink_status(dir / "dangling.json")));
  CHECK(slurp(dir / "real" / "created.json") == "made");
  // A loop of links is refused.
  fs::create_symlink("loop-b", dir / "loop-a");
  fs::create_symlink("loop-a", dir / "loop-b");
  CHECK_THAT(error_of([&] { write_file_atomically((dir / "loop-a").string(), "x"); }),
             Catch::Contains("too many levels of symbolic links"));
  fs::remove_all(dir);
}

TEST_CASE("OutputFiles writes every file or none") {
  const fs::path dir = scratch("set");
  {
    OutputFiles outputs;
    outputs.add((dir / "a.json").string(), "A");
    CHECK_THAT(error_of([&] { outputs.add((dir / "missing" / "b.json").string(), "B"); }),
               Catch::Contains("nothing was written"));
  }  // dropped without commit: a.json's temporary removed, a.json never created
  CHECK(entries(dir) == 0);
  {
    OutputFiles outputs;
    outputs.add((dir / "a.json").string(), "A");
    CHECK_THAT(error_of([&] { outputs.add((dir / "a.json").string(), "again"); }),
               Catch::Contains("two outputs of the command"));
    outputs.add((dir / "b.json").string(), "B");
    CHECK(entries(dir) == 2);  // two temporaries, no target yet
    CHECK_FALSE(fs::exists(dir / "a.json"));
    outputs.commit();
  }
  CHECK(slurp(dir / "a.json") == "A");
  CHECK(slurp(dir / "b.json") == "B");
  CHECK(entries(dir) == 2);
  fs::remove_all(dir);
}

TEST_CASE("AtomicFile checks the final size: an external writer that wrote nothing is refused") {
  const fs::path dir = scratch("size");
  {
    AtomicFile file((dir / "plot.svg").string());
    CHECK_THAT(error_of([&] { file.commit(); }), Catch::Contains("empty file; nothing was written"));
  }
  CHECK(entries(dir) == 0);
  {
    AtomicFile file((dir / "plot.svg").string());
    file.write("abc");
    // Another writer truncates the file behind our back: the size no longer matches.
    REQUIRE(::truncate(file.path().c_str(), 1) == 0);
    CHECK_THAT(error_of([&] { file.commit(); }), Catch::Contains("1 bytes on disk, 3 were written"));
  }
  CHECK(entries(dir) == 0);
  fs::remove_all(dir);
}

TEST_CASE("checked integer helpers return exact results or name the quantity") {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  CHECK(detail::checked_mul(std::int64_t{1} << 40, 1 << 22, "tokens") == std::int64_t{1} << 62);
  CHECK(detail::checked_add(max - 1, 1, "tokens") == max);
  CHECK(detail::checked_sub(-max, 1, "tokens") == std::numeric_limits<std::int64_t>::min());
  CHECK_THAT(error_of([] { detail::checked_mul(std::int64_t{1} << 40, std::int64_t{1} << 23, "routed tokens"); }),
             Catch::Contains("routed tokens = 1099511627776 * 8388608 is outside the 64-bit integer range"));
  CHECK_THAT(error_of([&] { detail::checked_add(max, 1, "steps"); }), Catch::Contains("steps = "));
  CHECK_THAT(error_of([&] { detail::checked_sub(std::numeric_limits<std::int64_t>::min(), 1, "x"); }),
             Catch::Contains("outside the 64-bit"));
}

TEST_CASE("the strict JSON reader refuses nesting deeper than max_json_depth, quickly") {
  const auto nested = [](std::size_t depth, char open, char close) {
    return std::string(depth, open) + std::string(depth, close);
  };
  CHECK_NOTHROW(detail::parse_json_text(nested(detail::max_json_depth, '[', ']'), "t.json"));
  CHECK_THAT(error_of([&] { detail::parse_json_text(nested(detail::max_json_depth + 1, '[', ']'), "t.json"); }),
             Catch::Contains("t.json: /0/0/0/0/0/0/0/0/...: objects and arrays are nested more than 64 levels deep"));
  std::string deep_objects;
  for (int i = 0; i < 100000; ++i) deep_objects += "{\"k\":";
  deep_objects += "1";
  deep_objects += std::string(100000, '}');
  CHECK_THAT(error_of([&] { detail::parse_ordered_json_text(deep_objects, "template.json"); }),
             Catch::Contains("nested more than 64 levels"));
}
