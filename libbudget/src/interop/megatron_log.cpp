// A Megatron-LM training log read as a measured run (budget/megatron_log.hpp, MegatronLog;
// docs/calibration.md, "Megatron-LM logs"). The formats are Megatron-LM's at d98e8a64:
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
#include "budget/megatron_log.hpp"
#include "budget/text_escape.hpp"
#include "base/json_reader.hpp"
#include "interop/megatron_reader.hpp"

namespace budget {

namespace {

constexpr std::string_view arguments_begin = "------------------------ arguments ------------------------";
constexpr std::string_view arguments_end = "-------------------- end of arguments ---------------------";
// Megatron-Bridge prints its config at start instead (NVIDIA-NeMo/Megatron-Bridge, from 045d1274 to
// 8544020e: src/megatron/bridge/training/setup.py:498-500, "------- Task Configuration -------",
// ConfigContainer.print_yaml(), then 34 dashes), read as --bridge-config reads the YAML.
constexpr std::string_view task_begin = "------- Task Configuration -------";
constexpr std::string_view task_end = "----------------------------------";

std::string trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

/// One printed argument of the block, kept until the block ends (the feature-off rules read the others).
struct PrintedLine {
  const MegatronArgument* argument = nullptr;
  std::string dest, value;
  std::size_t number = 0;
};

/// The name and value of "  dest ..... value", or of "  dest  value": _print_args pads with
/// 48 − len(dest) dots, none for a destination of 48 characters or more.
std::pair<std::string, std::string> split_argument_line(std::string_view line, std::size_t number,
                                                        const std::string& source) {
  const std::string text = trimmed(line);
  const std::size_t space = text.find(' ');
  if (text.empty() || space == std::string::npos) {
    throw Error(fmt::format("line {}: expected \"name ..... value\" in the arguments block", number), source);
  }
  const std::string dest = text.substr(0, space);
  std::size_t rest = text.find_first_not_of(' ', space);
  if (rest != std::string::npos && text[rest] != '.' && dest.size() >= 48) return {dest, trimmed(std::string_view(text).substr(rest))};
  if (rest == std::string::npos || text[rest] != '.') {
    throw Error(fmt::format("line {}: expected the dots after \"{}\"", number, printable_text(dest)), source);
  }
  rest = text.find_first_not_of('.', rest);
  return {dest, rest == std::string::npos ? std::string() : trimmed(std::string_view(text).substr(rest))};
}

void read_argument_line(std::string_view line, std::size_t number, const std::string& source, MegatronLog& log,
                        std::vector<PrintedLine>& printed) {
  const auto [dest, value] = split_argument_line(line, number, source);
  const MegatronArgument* found = interop_detail::megatron_argument_by_dest(dest);
  if (found == nullptr) {
    log.derived.push_back(dest);
    return;
  }
  const MegatronArgument& a = *found;
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
  printed.push_back({&a, dest, interop_detail::printed_parser_value(a, value), number});
}

/// The block's words, once every line is read: an argument of a feature the block prints off is left
/// out (interop_detail::printed_feature_off_reason()) and listed in log.left_out.
void arguments_to_words(const std::vector<PrintedLine>& printed, const std::string& source, MegatronLog& log) {
  std::map<std::string, std::string> values;
  for (const PrintedLine& p : printed) values[p.dest] = p.value;
  for (const PrintedLine& p : printed) {
    if (const auto reason = interop_detail::printed_feature_off_reason(p.dest, values)) {
      if (p.value != "None") log.left_out.push_back(fmt::format("{} {} ({})", p.dest, p.value, *reason));
      continue;
    }
    for (std::string& w : interop_detail::printed_argument_words(*p.argument, p.value, source)) log.arguments.push_back(std::move(w));
  }
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
  // Megatron-LM prints the time with {:.1f} (training.py training_log), so 0.1 ms is the least it can
  // print above 0; anything smaller (0.0, or a denormal such as 5e-324 that becomes 0 s) is no step.
  if (!(it.elapsed_ms >= 0.1)) {
    throw Error(fmt::format("line {}: an elapsed time of {} ms; Megatron-LM prints at least 0.1 ms for a step",
                            number, it.elapsed_ms),
                source);
  }
  it.tflops_per_gpu = field_after(line, "throughput per GPU (TFLOP/s/GPU):", number, source).value_or(-1.0);
  it.global_batch_size = static_cast<std::int64_t>(field_after(line, "global batch size:", number, source).value_or(-1.0));
  log.iterations.push_back(it);
}

/// The Task Configuration's YAML (from line `first`) as the run's Megatron-LM arguments.
void read_task_configuration(const std::string& yaml, std::size_t first, const std::string& source, MegatronLog& log) {
  const BridgeConfigArgs args = bridge_config_args(yaml, fmt::format("{} (the Task Configuration from line {})", source, first));
  log.arguments = args.words;
  log.bridge = args.bridge;
  log.left_out.insert(log.left_out.end(), args.left_out.begin(), args.left_out.end());
  if (args.bridge.parameter_transpose_cache_disabled) {
    log.notes.push_back("model.disable_parameter_transpose_cache true: read, not modelled");
  }
  if (!args.bridge.tp_comm_overlap_cfg.empty()) log.notes.push_back("comm_overlap.tp_comm_overlap_cfg: read, not modelled");
  for (const auto& [name, value] : args.bridge.env_vars) {
    log.notes.push_back(fmt::format("env_vars.{} = {}: read, not modelled", name, value));
  }
}

}  // namespace

MegatronLog parse_megatron_log(std::string_view text, const std::string& source) {
  MegatronLog log;
  bool in_arguments = false, seen_arguments = false, in_task = false;
  std::size_t number = 0, start = 0, task_first = 0;
  std::vector<PrintedLine> printed;
  std::string task_yaml;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    const std::string t = trimmed(line);
    if (in_task) {
      if (t == task_end) {
        in_task = false;
        read_task_configuration(task_yaml, task_first, source, log);
      } else {
        task_yaml.append(line).append("\n");
      }
    } else if (t == arguments_begin || t == task_begin) {
      if (seen_arguments) throw Error(fmt::format("line {}: a second arguments block or Task Configuration", number), source);
      seen_arguments = true;
      in_arguments = t == arguments_begin;
      in_task = !in_arguments;
      task_first = number + 1;
    } else if (t == arguments_end) {
      if (!in_arguments) throw Error(fmt::format("line {}: the end of an arguments block that did not begin", number), source);
      in_arguments = false;
      arguments_to_words(printed, source, log);
    } else if (in_arguments) {
      read_argument_line(line, number, source, log, printed);
    } else if (line.find("elapsed time per iteration (ms):") != std::string_view::npos) {
      read_iteration_line(line, number, source, log);
    } else if (line.find("memory (MB)") != std::string_view::npos) {
      if (const auto mib = field_after(line, "| max allocated:", number, source)) {
        log.max_allocated_mib = std::max(log.max_allocated_mib, *mib);
      }
    }
  }
  if (in_arguments) throw Error("the arguments block has no end line", source);
  if (in_task) throw Error("the Task Configuration has no end line (34 dashes)", source);
  if (!seen_arguments) {
    throw Error("no arguments block (Megatron-LM prints one at start; arguments.py _print_args) and no Task "
                "Configuration (Megatron-Bridge prints one at start)",
                source);
  }
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
