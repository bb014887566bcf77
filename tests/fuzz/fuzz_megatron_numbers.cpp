// Megatron-LM numbers and --moe-layer-freq (issue 44, docs/reliability.md): the first byte chooses
// where the rest of the input goes, as one argument value of read_megatron_args() (no shell
// splitting, so any byte reaches the number readers) or one field of a Megatron-LM log:
//  - 0: --seq-length TEXT (Python's int()). Differential check against a plain reference for
//    texts of at most 18 digits: an accepted value equals the reference's, and a reference value
//    in [1, 2^40] is accepted.
//  - 1: --moe-expert-capacity-factor TEXT (Python's float()): an accepted factor is finite and > 0.
//  - 2: --hidden-dropout -TEXT (a value word starting with '-', taken as a negative number).
//  - 3: --moe-layer-freq TEXT against an 8-layer MoE whose first layer is dense: accepted only as a
//    pattern of 8 entries (the read must also not allocate past the layers: -rss_limit_mb).
//  - 4: a log whose second iteration's elapsed time is TEXT: an accepted step time is finite, > 0.
// Seeds: corpus/fuzz_megatron_numbers (the audit's inputs: 50,000 digits, '-' words, 65,000
// nested parentheses, a 12 KB sum of 2^20-entry lists).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "budget/megatron_args.hpp"
#include "budget/megatron_log.hpp"
#include "fuzz_harness.hpp"
#include "interop/megatron_test_models.hpp"

namespace {

constexpr const char* target = "fuzz_megatron_numbers";

budget::ArchConfig numbers_moe() {
  budget::ArchConfig c = budget::test::megatron_moe_model("fuzz-moe", 512, 8, {8, 64, 4}, 16, 256);
  c.ffn.first_dense_layers = 1;
  c.ffn.dense_dim = 1024;
  return c;
}

/// Python's int() for texts of at most 18 digits, written independently of the library: ASCII
/// whitespace around, one sign, digits with single underscores between them. nullopt otherwise.
std::optional<std::int64_t> reference_int(std::string_view text) {
  const std::string_view space = " \t\n\v\f\r";
  const std::size_t begin = text.find_first_not_of(space);
  if (begin == std::string_view::npos) return std::nullopt;
  text = text.substr(begin, text.find_last_not_of(space) - begin + 1);
  bool negative = false;
  if (text.front() == '+' || text.front() == '-') {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  std::string digits;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool between = c == '_' && i > 0 && i + 1 < text.size() && text[i - 1] != '_' && text[i + 1] != '_';
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (!between) {
      return std::nullopt;
    }
  }
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  std::int64_t value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return negative ? -value : value;
}

budget::MegatronRun read_value(const char* flag, const std::string& value) {
  static const budget::ArchConfig config = numbers_moe();
  std::vector<std::string> words{"--seq-length", "4096", flag, value};
  if (std::string(flag) == "--seq-length") words = {flag, value};
  return budget::read_megatron_args(words, config, 8, "<fuzz>");
}

void check_int(const std::string& text) {
  const std::optional<std::int64_t> expected = reference_int(text);
  bool accepted = false;
  budget::fuzz::expect_value_or_error(target, [&] {
    const budget::MegatronRun run = read_value("--seq-length", text);
    accepted = true;
    budget::fuzz::require(!expected || run.layout.seq_len == *expected, target, "int() read differs from the reference");
  });
  if (expected && *expected >= 1 && *expected <= (std::int64_t{1} << 40)) {
    budget::fuzz::require(accepted, target, "a plain integer in [1, 2^40] was refused");
  }
}

void check_moe_freq(const std::string& text) {
  budget::fuzz::expect_value_or_error(target, [&] {
    const budget::MegatronRun run = read_value("--moe-layer-freq", text);
    bool checked = false;
    for (const std::string& name : run.checked) checked = checked || name == "--moe-layer-freq";
    budget::fuzz::require(checked, target, "an accepted --moe-layer-freq was not checked against the config");
  });
}

void check_log_elapsed(const std::string& text) {
  const std::string log = std::string("------------------------ arguments ------------------------\n") +
                          "  seq_length ...................................... 4096\n" +
                          "-------------------- end of arguments ---------------------\n" +
                          " [t] iteration        1/      10 | elapsed time per iteration (ms): 100.0 |\n" +
                          " [t] iteration        2/      10 | elapsed time per iteration (ms): " + text + " |\n";
  budget::fuzz::expect_value_or_error(target, [&] {
    const double step = budget::parse_megatron_log(log, "<fuzz>").step_time_s();
    budget::fuzz::require(std::isfinite(step) && step > 0, target, "an accepted log's step time is not finite and > 0");
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(budget::fuzz::as_text(data + 1, size - 1));
  switch (data[0] % 5) {
    case 0:
      check_int(text);
      break;
    case 1:
      budget::fuzz::expect_value_or_error(target, [&] {
        const double f = read_value("--moe-expert-capacity-factor", text).layout.capacity_factor;
        budget::fuzz::require(std::isfinite(f) && f > 0, target, "an accepted capacity factor is not finite and > 0");
      });
      break;
    case 2:
      budget::fuzz::expect_value_or_error(target, [&] { (void)read_value("--hidden-dropout", "-" + text); });
      break;
    case 3:
      check_moe_freq(text);
      break;
    default:
      check_log_elapsed(text);
      break;
  }
  return 0;
}
