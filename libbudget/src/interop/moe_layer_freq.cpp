// --moe-layer-freq as Megatron-LM reads it (megatron_reader.hpp), at d98e8a64:
//   - moe_freq_type (megatron/training/arguments.py:327-350): a text with '[' is _eval_pattern'd
//     (:245-253: only the characters ,0-9[]()+* allowed, then Python's eval), any other text is int();
//   - gpt_layer_specs.py:647-657: an int N makes layer i MoE when i % N == 0; a list must have one
//     entry per layer (1 = MoE, 0 = dense).
// The list expressions read here: sum = term ('+' term)*, term = atom ('*' N)*, atom = '[' N (',' N)*
// [','] ']' | '[' ']' | '(' sum ')', N a Python integer literal. Python also evaluates forms such as
// N*[...] or [1+0], which are refused as not understood.
//
// Bounded before anything is built: brackets and parentheses nest at most 200 deep (CPython's
// tokenizer refuses deeper nesting: MAXLEVEL 200, "too many nested parentheses"), and the pattern's
// length is computed from the expression first (saturating above the layers): a pattern of another
// length than the config's layers is refused without being built (Megatron asserts the length), and
// only parts repeated at least once are expanded, so nothing larger than the final pattern is held.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/text_escape.hpp"
#include "interop/megatron_reader.hpp"

namespace budget::interop_detail {
namespace {

constexpr int max_nesting = 200;  // CPython Parser/tokenizer.h MAXLEVEL

/// One atom with its repetition: a list literal, or a parenthesized sum of terms.
struct MoeFreqTerm {
  std::vector<std::uint8_t> items;  ///< a list literal's entries (0, 1, or 2 for any other integer)
  std::vector<MoeFreqTerm> sum;     ///< a parenthesized sum's terms
  bool is_list = false;
  std::int64_t repeat = 1;  ///< the product of its '*N' factors, saturated at the cap
  std::int64_t length = 0;  ///< entries once expanded, saturated at the cap
};

/// Reads the expression into terms and their lengths; every count saturates at `cap` (the layers
/// plus one), so no arithmetic can overflow and a length at the cap means "more than the layers".
class MoeFreqReader {
 public:
  MoeFreqReader(std::string_view text, std::int64_t cap) : text_(text), cap_(cap) {}

  /// The terms of the whole text, or an empty `error()`-carrying result.
  std::vector<MoeFreqTerm> read() {
    std::vector<MoeFreqTerm> terms = sum(0);
    if (error_.empty() && at_ != text_.size()) fail("an unexpected character");
    return terms;
  }
  const std::string& error() const { return error_; }
  std::size_t error_at() const { return at_; }

 private:
  std::vector<MoeFreqTerm> sum(int depth) {
    std::vector<MoeFreqTerm> terms;
    terms.push_back(term(depth));
    while (error_.empty() && peek('+')) {
      ++at_;
      terms.push_back(term(depth));
    }
    return terms;
  }

  MoeFreqTerm term(int depth) {
    MoeFreqTerm t = atom(depth);
    while (error_.empty() && peek('*')) {
      ++at_;
      t.repeat = saturating_product(t.repeat, literal());
    }
    t.length = saturating_product(t.repeat, t.is_list ? static_cast<std::int64_t>(t.items.size()) : sum_length(t.sum));
    return t;
  }

  MoeFreqTerm atom(int depth) {
    MoeFreqTerm t;
    if (depth >= max_nesting) {
      fail(fmt::format("brackets and parentheses nested deeper than {} (Python's own limit)", max_nesting));
      return t;
    }
    if (peek('(')) {
      ++at_;
      t.sum = sum(depth + 1);
      expect(')');
    } else if (peek('[')) {
      ++at_;
      t.is_list = true;
      while (error_.empty() && !peek(']')) {
        t.items.push_back(static_cast<std::uint8_t>(std::min<std::int64_t>(literal(), 2)));
        if (static_cast<std::int64_t>(t.items.size()) >= cap_) fail("a list longer than the config's layers");
        if (error_.empty() && !peek(']')) expect(',');
      }
      expect(']');
    } else {
      fail("expected '[' or '('");
    }
    return t;
  }

  /// A Python integer literal (no leading zeros unless all zeros; at most 4300 digits), saturated.
  std::int64_t literal() {
    const std::size_t start = at_;
    std::int64_t value = 0;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
      const int digit = text_[at_++] - '0';
      value = value > (cap_ - digit) / 10 ? cap_ : value * 10 + digit;
    }
    if (at_ == start) {
      fail("expected an integer");
    } else if (at_ - start > python_int_max_digits) {
      fail(fmt::format("an integer of more than {} digits (Python refuses it)", python_int_max_digits));
    } else if (text_[start] == '0' && value != 0) {
      fail("an integer with a leading zero (Python refuses it)");
    }
    return value;
  }

  std::int64_t sum_length(const std::vector<MoeFreqTerm>& terms) const {
    std::int64_t total = 0;
    for (const MoeFreqTerm& t : terms) total = std::min(cap_, total + t.length);
    return total;
  }
  std::int64_t saturating_product(std::int64_t a, std::int64_t b) const {
    std::int64_t product = 0;
    if (a == 0 || b == 0) return 0;
    return __builtin_mul_overflow(a, b, &product) ? cap_ : std::min(cap_, product);
  }
  bool peek(char c) const { return at_ < text_.size() && text_[at_] == c; }
  void expect(char c) {
    if (!error_.empty()) return;
    if (!peek(c)) return fail(fmt::format("expected '{}'", c));
    ++at_;
  }
  void fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
  }

  std::string_view text_;
  std::int64_t cap_;
  std::size_t at_ = 0;
  std::string error_;
};

/// Appends the expansion of `t` (length at most the final pattern's: only terms repeated at least
/// once are expanded, so each is part of the final pattern). Recursion depth: the nesting, <= 200.
void expand(const MoeFreqTerm& t, std::vector<std::uint8_t>& out) {
  if (t.length == 0) return;
  const std::size_t start = out.size();
  if (t.is_list) {
    out.insert(out.end(), t.items.begin(), t.items.end());
  } else {
    for (const MoeFreqTerm& s : t.sum) expand(s, out);
  }
  const std::size_t once = out.size() - start;
  out.reserve(start + once * static_cast<std::size_t>(t.repeat));
  for (std::int64_t k = 1; k < t.repeat; ++k) {
    for (std::size_t i = 0; i < once; ++i) out.push_back(out[start + i]);
  }
}

}  // namespace

std::vector<std::uint8_t> megatron_moe_layer_pattern(const ParsedMegatronArgs& p, const std::string& text,
                                                     std::int64_t layers) {
  const std::string shown = printable_text(text, 80);
  if (layers < 1 || layers > 1'000'000) p.fail("num_layers", fmt::format("{} layers is outside [1, 10^6]", layers));
  if (text.find('[') == std::string::npos) {
    const PythonInt n = read_python_int(text);
    if (n.status != PythonNumberStatus::value) {
      p.fail("moe_layer_freq", fmt::format("\"{}\" is neither an integer within 64 bits nor a list expression", shown));
    }
    if (n.value < 1) p.fail("moe_layer_freq", fmt::format("{} is below 1", n.value));
    std::vector<std::uint8_t> v;
    for (std::int64_t i = 0; i < layers; ++i) v.push_back(i % n.value == 0 ? 1 : 0);
    return v;
  }
  const std::size_t bad = text.find_first_not_of(",0123456789[]()+*");
  if (bad != std::string::npos) {
    p.fail("moe_layer_freq", fmt::format("\"{}\": Megatron-LM's _eval_pattern allows only the characters ,0-9[]()+* "
                                         "(character {})",
                                         shown, bad + 1));
  }
  MoeFreqReader reader(text, layers + 1);
  const std::vector<MoeFreqTerm> terms = reader.read();
  if (!reader.error().empty()) {
    p.fail("moe_layer_freq", fmt::format("\"{}\" is not a list expression read here ([a, b], L*N, L+L, (L)): {} at "
                                         "character {}",
                                         shown, reader.error(), reader.error_at() + 1));
  }
  std::int64_t length = 0;
  for (const MoeFreqTerm& t : terms) length = std::min(layers + 1, length + t.length);
  if (length != layers) {
    p.fail("moe_layer_freq", fmt::format("\"{}\" has {} entries; the config has {} layers (Megatron-LM asserts one "
                                         "entry per layer, gpt_layer_specs.py:652)",
                                         shown, length > layers ? fmt::format("more than {}", layers) : std::to_string(length),
                                         layers));
  }
  std::vector<std::uint8_t> pattern;
  pattern.reserve(static_cast<std::size_t>(layers));
  for (const MoeFreqTerm& t : terms) expand(t, pattern);
  return pattern;
}

}  // namespace budget::interop_detail
