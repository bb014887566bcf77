// A Megatron-LM training log read as a measured run (run_fit.hpp, MegatronLog; docs/calibration.md,
// "Megatron-LM logs"). The formats are Megatron-LM's at d98e8a64:
//   - the arguments block, megatron/training/arguments.py:1990-2001 (_print_args): a line
//     "------------------------ arguments ------------------------", then one line per argument,
//     sorted case-insensitively, "  {dest} {dots} {value}" with 48 − len(dest) dots and the value as
//     Python's str() prints it (True/False, None, numbers, lists "['a', 'b']", strings unquoted),
//     then "-------------------- end of arguments ---------------------";
//   - the iteration line, megatron/training/training.py:3567-3598: " [date time] iteration
//     {:8d}/{:8d} | consumed samples: … | elapsed time per iteration (ms): {:.1f} | [throughput per
//     GPU (TFLOP/s/GPU): {:.1f} |] … | global batch size: {:5d} | …";
//   - the memory report, megatron/training/utils/common_utils.py:313-334 (report_memory): "[Rank r]
//     (after N iterations) memory (MB) | allocated: … | max allocated: … | reserved: … | max reserved: …".
// The arguments become command-line words by the flag table's destinations: an argument whose
// value is None, or a flag at its default, or a string this tool does not model printed empty, is
// left out (an empty value elsewhere is refused); a flag that is True is given by its own
// name, one that is False by its --no-… name; a list gives its items; destinations the parser does
// not have (values Megatron derives after parsing: world_size, padded_vocab_size, params_dtype, …)
// are skipped.
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "budget/run_fit.hpp"
#include "budget/text_escape.hpp"
#include "base/json_reader.hpp"
#include "interop/megatron_reader.hpp"

namespace budget {

namespace {

constexpr std::string_view arguments_begin = "------------------------ arguments ------------------------";
constexpr std::string_view arguments_end = "-------------------- end of arguments ---------------------";

std::string trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

/// Python's str() of a list, "['a', 'b']" or "[1, 2]", as its items ("" items dropped).
std::vector<std::string> python_list_items(const std::string& value) {
  std::vector<std::string> items;
  std::string inner = value.substr(1, value.size() - 2);
  std::size_t start = 0;
  while (start <= inner.size()) {
    const std::size_t end = std::min(inner.find(',', start), inner.size());
    std::string item = trimmed(std::string_view(inner).substr(start, end - start));
    if (item.size() >= 2 && (item.front() == '\'' || item.front() == '"') && item.back() == item.front()) {
      item = item.substr(1, item.size() - 2);
    }
    if (!item.empty()) items.push_back(item);
    start = end + 1;
  }
  return items;
}

/// The command-line words of one printed argument (the rules above); nothing when it is left out.
std::vector<std::string> argument_words(const MegatronArgument& a, const std::string& value) {
  const auto named = [&a](bool negative) -> const std::string* {
    for (const std::string& n : a.names) {
      const bool is_negative = n.rfind("--no-", 0) == 0 || n.rfind("--disable-", 0) == 0;
      if (is_negative == negative) return &n;
    }
    return nullptr;
  };
  if (value == "None") return {};
  if (a.arity == "0") {
    const std::string* name = value == "True" ? named(false) : value == "False" ? named(true) : nullptr;
    // A store_false flag printed True (or a store_true printed False) is at its default.
    if (name == nullptr) return {};
    return {*name};
  }
  const std::string& flag = a.names.front();
  if (a.arity != "+" && a.arity != "*" && !value.empty() && value.front() == '[') {
    // A list Megatron evaluated from its argument (--moe-layer-freq): given back without the spaces
    // Python's str() puts after the commas.
    std::string compact;
    for (const char c : value) {
      if (c != ' ') compact += c;
    }
    return {flag, compact};
  }
  if (a.arity == "+" || a.arity == "*") {
    if (value.size() < 2 || value.front() != '[' || value.back() != ']') return {flag, value};
    std::vector<std::string> items = python_list_items(value);
    if (items.empty()) return {};
    items.insert(items.begin(), flag);
    return items;
  }
  return {flag, value};
}

/// Megatron's arguments by destination (the first of a destination's rows).
const std::map<std::string, const MegatronArgument*>& arguments_by_dest() {
  static const std::map<std::string, const MegatronArgument*> table = [] {
    std::map<std::string, const MegatronArgument*> t;
    for (const MegatronArgument& a : megatron_arguments()) t.emplace(a.dest, &a);
    return t;
  }();
  return table;
}

/// One line of the arguments block: "  dest ..... value".
void read_argument_line(std::string_view line, std::size_t number, const std::string& source, MegatronLog& log) {
  const std::string text = trimmed(line);
  const std::size_t space = text.find(' ');
  if (text.empty() || space == std::string::npos) {
    throw Error(fmt::format("line {}: expected \"name ..... value\" in the arguments block", number), source);
  }
  const std::string dest = text.substr(0, space);
  std::size_t rest = text.find_first_not_of(' ', space);
  if (rest == std::string::npos || text[rest] != '.') {
    throw Error(fmt::format("line {}: expected the dots after \"{}\"", number, printable_text(dest)), source);
  }
  rest = text.find_first_not_of('.', rest);
  const std::string value = rest == std::string::npos ? std::string() : trimmed(std::string_view(text).substr(rest));
  const auto it = arguments_by_dest().find(dest);
  if (it == arguments_by_dest().end()) {
    log.derived.push_back(dest);
    return;
  }
  const MegatronArgument& a = *it->second;
  if (value.empty()) {
    // Python prints the empty string as nothing: only a string argument can print no value.
    // Arguments this tool does not model (--wandb-project's default '', ...) are left out; one it
    // reads, or a number or flag with no value, is a log it does not understand.
    if (a.type == "str" && a.use == MegatronUse::not_modelled) return;
    const std::string kind = a.type.empty() ? std::string("a flag") : "type " + a.type;
    throw Error(fmt::format("line {}: argument \"{}\" ({}) prints no value; expected one after the dots", number, dest,
                            kind),
                source);
  }
  for (std::string& w : argument_words(a, value)) log.arguments.push_back(std::move(w));
}

/// The number after `label` in `line` (up to the next '|'), or nullopt when the label is absent.
std::optional<double> field_after(std::string_view line, std::string_view label, std::size_t number,
                                  const std::string& source) {
  const std::size_t at = line.find(label);
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t from = at + label.size();
  const std::size_t to = std::min(line.find('|', from), line.size());
  const std::string text = trimmed(line.substr(from, to - from));
  const std::optional<double> v = interop_detail::python_float(text);
  if (!v || !(*v >= 0.0) || *v > 1e15) {
    throw Error(fmt::format("line {}: {} \"{}\" is not a non-negative number", number, trimmed(label),
                            printable_text(text)),
                source);
  }
  return v;
}

void read_iteration_line(std::string_view line, std::size_t number, const std::string& source, MegatronLog& log) {
  MegatronLog::Iteration it;
  const std::size_t at = line.find(" iteration ");
  const std::size_t slash = at == std::string_view::npos ? at : line.find('/', at);
  const std::optional<std::int64_t> index =
      slash == std::string_view::npos ? std::nullopt
                                      : interop_detail::python_int(trimmed(line.substr(at + 11, slash - at - 11)));
  if (!index || *index < 0) throw Error(fmt::format("line {}: no iteration number before \"/\"", number), source);
  it.iteration = *index;
  it.elapsed_ms = *field_after(line, "elapsed time per iteration (ms):", number, source);
  if (!(it.elapsed_ms > 0.0)) throw Error(fmt::format("line {}: an elapsed time of 0 ms", number), source);
  it.tflops_per_gpu = field_after(line, "throughput per GPU (TFLOP/s/GPU):", number, source).value_or(-1.0);
  it.global_batch_size = static_cast<std::int64_t>(field_after(line, "global batch size:", number, source).value_or(-1.0));
  log.iterations.push_back(it);
}

}  // namespace

MegatronLog parse_megatron_log(std::string_view text, const std::string& source) {
  MegatronLog log;
  bool in_arguments = false, seen_arguments = false;
  std::size_t number = 0, start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    const std::string t = trimmed(line);
    if (t == arguments_begin) {
      if (seen_arguments) throw Error(fmt::format("line {}: a second arguments block", number), source);
      in_arguments = seen_arguments = true;
    } else if (t == arguments_end) {
      if (!in_arguments) throw Error(fmt::format("line {}: the end of an arguments block that did not begin", number), source);
      in_arguments = false;
    } else if (in_arguments) {
      read_argument_line(line, number, source, log);
    } else if (line.find("elapsed time per iteration (ms):") != std::string_view::npos) {
      read_iteration_line(line, number, source, log);
    } else if (line.find("memory (MB)") != std::string_view::npos) {
      if (const auto mib = field_after(line, "| max allocated:", number, source)) {
        log.max_allocated_mib = std::max(log.max_allocated_mib, *mib);
      }
    }
  }
  if (in_arguments) throw Error("the arguments block has no end line", source);
  if (!seen_arguments) throw Error("no arguments block (Megatron-LM prints one at start; arguments.py _print_args)", source);
  if (log.iterations.empty()) throw Error("no \"elapsed time per iteration (ms)\" line", source);
  return log;
}

MegatronLog load_megatron_log(const std::string& path) { return parse_megatron_log(detail::read_text_file(path), path); }

double MegatronLog::step_time_s() const {
  // The first logged line includes start-up (compilation, allocator growth, NCCL set-up): the median
  // of the others'.
  if (iterations.size() < 2) return -1.0;
  std::vector<double> ms;
  for (std::size_t i = 1; i < iterations.size(); ++i) ms.push_back(iterations[i].elapsed_ms);
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  return 1e-3 * (n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]));
}

}  // namespace budget
