// Calibration profile JSON: strict reader, validation and writer (format: docs/calibration.md).
// One set of checks: validate() renders the profile to a JSON value and reads it back with the
// reader, so profiles built in code and profiles read from files meet the same rules.

#include "budget/calibration.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "time/calibration_rows.hpp"
#include "time/profile_ops.hpp"
#include "budget/file_write.hpp"
#include "budget/text_escape.hpp"
#include "base/file_kinds.hpp"
#include "base/json_reader.hpp"
#include "base/first_error.hpp"

namespace budget {

namespace {

using detail::ObjectReader;
using ordered_json = nlohmann::ordered_json;

constexpr std::string_view schema_name = "budget.calibration";

std::string join_quoted(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
  return list;
}

CalibrationDevice read_device(const ObjectReader& r) {
  r.reject_unknown_keys({"name", "compute_capability", "sm_count", "memory_gib", "driver", "cuda_runtime",
                         "cublas", "cudnn", "sm_clock_mhz", "memory_clock_mhz"});
  CalibrationDevice d;
  d.name = detail::read_device_name(r, "name");
  d.compute_capability = r.string_or("compute_capability", "");
  d.driver = r.string_or("driver", "");
  d.cuda_runtime = r.string_or("cuda_runtime", "");
  d.cublas = r.string_or("cublas", "");
  d.cudnn = r.string_or("cudnn", "");
  d.sm_count = r.integer_or("sm_count", 0, 0, 100000);
  d.memory_gib = r.number_or("memory_gib", 0, 0, 1e6);
  d.sm_clock_mhz = r.number_or("sm_clock_mhz", 0, 0, 1e5);
  d.memory_clock_mhz = r.number_or("memory_clock_mhz", 0, 0, 1e5);
  return d;
}

CalibrationPeaks read_peaks(const ObjectReader& r) {
  r.reject_unknown_keys(
      {"bf16_gemm_tflops", "copy_gbytes_per_s", "datasheet_peak_tflops", "datasheet_peak_source", "datasheet_fp8_tflops"});
  CalibrationPeaks p;
  // Bounds a real device can have (calibration_rows.hpp, docs/calibration.md).
  p.bf16_gemm_tflops = r.number("bf16_gemm_tflops", detail::min_gemm_tflops, detail::max_gemm_tflops);
  p.copy_gbytes_per_s = r.number("copy_gbytes_per_s", detail::min_copy_gbytes_per_s, detail::max_copy_gbytes_per_s);
  // A datasheet peak is at least what was measured (a measured GEMM cannot beat the hardware).
  p.datasheet_peak_tflops = r.number_or("datasheet_peak_tflops", 0, p.bf16_gemm_tflops, detail::max_gemm_tflops);
  p.datasheet_peak_source = r.string_or("datasheet_peak_source", "");
  p.datasheet_fp8_tflops = r.number_or("datasheet_fp8_tflops", 0, 0, detail::max_gemm_tflops);
  return p;
}

CalibrationSource read_source(const ObjectReader& r) {
  r.reject_unknown_keys({"tool", "method", "created", "notes", "stack", "kind", "references"});
  CalibrationSource s;
  s.tool = r.string("tool");
  if (s.tool.empty()) r.fail("tool", "the measuring tool is empty; allowed: a non-empty string");
  s.method = r.string_or("method", "");
  s.created = r.string_or("created", "");
  s.notes = r.string_or("notes", "");
  detail::read_source_extras(r, s);
  return s;
}

template <class Json>
Json row_to_json(const CalibrationRow& row) {
  Json j;
  j["op"] = std::string(to_string(row.op));
  j["pass"] = row.pass;
  const auto fields = calibration_shape_fields(row.op);
  std::vector<std::string> order = fields.required;
  order.insert(order.end(), fields.optional.begin(), fields.optional.end());
  for (const auto& f : order) {
    if (auto it = row.shape.find(f); it != row.shape.end()) j[f] = it->second;
  }
  // Fields an op does not know are written too, so validate() reports them instead of losing them.
  for (const auto& [name, value] : row.shape) {
    if (std::find(order.begin(), order.end(), name) == order.end()) j[name] = value;
  }
  if (!row.matrix.empty()) j["matrix"] = row.matrix;
  if (!row.routing.empty()) j["routing"] = row.routing;
  if (!row.backend.empty()) j["backend"] = row.backend;
  if (!row.dtype.empty()) j["dtype"] = row.dtype;
  if (!row.carried_from.empty()) j["carried_from"] = row.carried_from;
  if (row.refused) {
    j["refused"] = true;
  } else {
    j["ms"] = row.ms;
  }
  j["flops"] = row.flops;
  j["bytes"] = row.bytes;
  return j;
}

/// The "layers" array (only when there are layer rows: per-op profiles are written as before).
template <class Json>
void add_layers_json(Json& j, const std::vector<CalibrationLayerRow>& layers) {
  if (layers.empty()) return;
  j["layers"] = Json::array();
  for (const auto& layer : layers) j["layers"].push_back(Json::parse(detail::calibration_layer_row_to_json(layer).dump()));
}

/// The optional "layers" array of a profile.
std::vector<CalibrationLayerRow> read_layers(const ObjectReader& r) {
  std::vector<CalibrationLayerRow> layers;
  if (!r.has("layers")) return layers;
  const auto& array = r.raw("layers");
  if (!array.is_array()) r.fail("layers", fmt::format("expected an array of layer rows, found {}", detail::describe_value(array)));
  for (std::size_t i = 0; i < array.size(); ++i) {
    layers.push_back(detail::read_calibration_layer_row(ObjectReader(array[i], r.source(), fmt::format("/layers/{}", i))));
  }
  return layers;
}

template <class Json>
Json profile_to_json_value(const CalibrationProfile& p) {
  Json j;
  j["schema"] = std::string(schema_name);
  j["schema_version"] = p.schema_version;
  const auto& d = p.device;
  j["device"] = {{"name", d.name},
                 {"compute_capability", d.compute_capability},
                 {"sm_count", d.sm_count},
                 {"memory_gib", d.memory_gib},
                 {"driver", d.driver},
                 {"cuda_runtime", d.cuda_runtime},
                 {"cublas", d.cublas},
                 {"cudnn", d.cudnn},
                 {"sm_clock_mhz", d.sm_clock_mhz},
                 {"memory_clock_mhz", d.memory_clock_mhz}};
  j["peaks"] = {{"bf16_gemm_tflops", p.peaks.bf16_gemm_tflops},
                {"copy_gbytes_per_s", p.peaks.copy_gbytes_per_s}};
  if (p.peaks.datasheet_peak_tflops > 0) {
    j["peaks"]["datasheet_peak_tflops"] = p.peaks.datasheet_peak_tflops;
    j["peaks"]["datasheet_peak_source"] = p.peaks.datasheet_peak_source;
  }
  if (p.peaks.datasheet_fp8_tflops > 0) j["peaks"]["datasheet_fp8_tflops"] = p.peaks.datasheet_fp8_tflops;
  j["source"] = {{"tool", p.source.tool},
                 {"method", p.source.method},
                 {"created", p.source.created},
                 {"notes", p.source.notes}};
  // The keys of issue 32, written only when set: older profiles are written as before.
  if (!p.source.stack.empty()) j["source"]["stack"] = p.source.stack;
  if (!p.source.kind.empty()) j["source"]["kind"] = p.source.kind;
  if (!p.source.references.empty()) j["source"]["references"] = p.source.references;
  if (!p.run_fits.empty()) j["run_fits"] = Json::parse(detail::run_fits_to_json(p.run_fits).dump());
  j["rows"] = Json::array();
  for (const auto& row : p.rows) j["rows"].push_back(row_to_json<Json>(row));
  add_layers_json(j, p.layers);
  return j;
}

CalibrationProfile read_profile(const nlohmann::json& root, const std::string& source) {
  detail::refuse_other_file_kind(root, schema_name, "a calibration profile", source);
  const ObjectReader r(root, source, "");
  r.reject_unknown_keys({"schema", "schema_version", "device", "peaks", "source", "run_fits", "rows", "layers"});
  const std::string schema = r.string("schema");
  if (schema != schema_name) {
    r.fail("schema", fmt::format("value \"{}\" is not a calibration profile; allowed: \"{}\"", schema, schema_name));
  }
  CalibrationProfile p;
  const auto version = r.integer("schema_version", 0, 1000000);
  if (version != calibration_schema_version) {
    r.fail("schema_version", fmt::format("version {} is not supported; this build reads version {}", version,
                                         calibration_schema_version));
  }
  p.schema_version = static_cast<int>(version);
  p.device = read_device(r.object("device"));
  p.peaks = read_peaks(r.object("peaks"));
  p.source = read_source(r.object("source"));
  const auto& rows = r.raw("rows");
  if (!rows.is_array()) {
    r.fail("rows", fmt::format("expected an array of rows, found {}", detail::describe_value(rows)));
  }
  if (rows.empty()) r.fail("rows", "the profile has no rows; allowed: at least one measured row");
  p.rows.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    p.rows.push_back(detail::read_calibration_row(ObjectReader(rows[i], source, fmt::format("/rows/{}", i))));
  }
  p.layers = read_layers(r);
  p.run_fits = detail::read_run_fits(r);
  return p;
}

}  // namespace

namespace detail {

std::string read_device_name(const ObjectReader& r, std::string_view key) {
  const std::string name = r.string(key);
  if (name.empty()) r.fail(key, "the device name is empty; allowed: a non-empty string");
  if (printable_text(name) != name) {
    r.fail(key, fmt::format("the device name \"{}\" holds control characters or bytes that are not UTF-8; "
                            "allowed: printable text",
                            printable_text(name, 200)));
  }
  return name;
}

namespace {

// The readers of one calibration row, in the order read_calibration_row() calls them (that order
// decides which error a row with several faults reports).

/// "op": one of calibration_ops() (an unknown op names the closest known one).
ProfileOp read_row_op(const ObjectReader& r) {
  const std::string name = r.string("op");
  const std::optional<ProfileOp> op = profile_op_named(name);
  if (!op) {
    const auto& ops = calibration_ops();
    std::string message = fmt::format("unknown op \"{}\"; allowed: {}", name, join_quoted(ops));
    const std::string suggestion = closest_match(name, ops);
    if (!suggestion.empty()) message += fmt::format(" (did you mean \"{}\"?)", suggestion);
    r.fail("op", message);
  }
  return *op;
}

/// Refuses a key that `op` does not have: the common keys, its shape fields, "matrix" and
/// "routing" (expert_gemms), "refused" (attention). The error names the closest allowed key, or
/// else lists them all.
void reject_unknown_row_keys(const ObjectReader& r, ProfileOp op, const CalibrationShapeFields& fields) {
  std::vector<std::string> allowed = {"op", "pass", "backend", "ms", "flops", "bytes"};
  allowed.insert(allowed.end(), fields.required.begin(), fields.required.end());
  allowed.insert(allowed.end(), fields.optional.begin(), fields.optional.end());
  if (op == ProfileOp::expert_gemms) {
    allowed.emplace_back("matrix");
    allowed.emplace_back("routing");
  }
  if (op == ProfileOp::attention) allowed.emplace_back("refused");
  if (op == ProfileOp::gemm || op == ProfileOp::expert_gemms || op == ProfileOp::attention) {
    allowed.emplace_back("dtype");
  }
  allowed.emplace_back("carried_from");
  for (const auto& item : r.json().items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) != allowed.end()) continue;
    std::string message = fmt::format("unknown key \"{}\" for op \"{}\"", item.key(), to_string(op));
    const std::string suggestion = closest_match(item.key(), allowed);
    if (!suggestion.empty()) {
      message += fmt::format(" (did you mean \"{}\"?)", suggestion);
    } else {
      message += "; allowed keys: " + join_quoted(allowed);
    }
    r.fail(item.key(), message);
  }
}

/// "pass" (required): a GEMM op's forward / input_grad / weight_grad, any other op's forward /
/// backward / forward+backward.
std::string read_row_pass(const ObjectReader& r, ProfileOp op) {
  const bool is_gemm = op == ProfileOp::gemm || op == ProfileOp::expert_gemms;
  std::string pass = is_gemm ? r.choice_or("pass", "", {"forward", "input_grad", "weight_grad"})
                             : r.choice_or("pass", "", {"forward", "backward", "forward+backward"});
  if (pass.empty()) r.fail("pass", "required key is missing");
  return pass;
}

/// The op's shape fields, required then optional, each an integer in [1, max_calibration_dim].
void read_row_shape(const ObjectReader& r, const CalibrationShapeFields& fields,
                    std::map<std::string, std::int64_t>& shape) {
  for (const auto& f : fields.required) shape[f] = r.integer(f, 1, max_calibration_dim);
  for (const auto& f : fields.optional) {
    if (r.has(f)) shape[f] = r.integer(f, 1, max_calibration_dim);
  }
}

/// expert_gemms: "matrix" (required: up_gate / up / down) and "routing" (optional: balanced / skewed).
void read_expert_gemms_fields(const ObjectReader& r, CalibrationRow& row) {
  row.matrix = r.choice_or("matrix", "", {"up_gate", "up", "down"});
  if (row.matrix.empty()) r.fail("matrix", "required key is missing (\"up_gate\", \"up\" or \"down\")");
  row.routing = r.choice_or("routing", "", {"balanced", "skewed"});
}

/// attention: num_kv_heads divides num_heads (grouped-query attention).
void check_attention_heads(const ObjectReader& r, const std::map<std::string, std::int64_t>& h) {
  if (h.at("num_heads") % h.at("num_kv_heads") != 0) {
    r.fail("num_kv_heads",
           fmt::format("num_kv_heads {} does not divide num_heads {}", h.at("num_kv_heads"), h.at("num_heads")));
  }
}

/// "backend": required for attention (cudnn / flash / default / fallback-<name>), optional
/// otherwise ("" when absent); any given value is non-empty letters, digits, '-', '_', '.'.
std::string read_row_backend(const ObjectReader& r, bool is_attention) {
  if (!r.has("backend")) {
    if (is_attention) {
      r.fail("backend", "required key is missing (\"cudnn\", \"flash\", \"default\" or \"fallback-<name>\")");
    }
    return "";
  }
  std::string backend = r.string("backend");
  if (is_attention) {
    const bool ok = backend == "cudnn" || backend == "flash" || backend == "default" ||
                    (backend.rfind("fallback-", 0) == 0 && backend.size() > 9);
    if (!ok) {
      r.fail("backend", fmt::format("value \"{}\" is not allowed; allowed: \"cudnn\", \"flash\", \"default\" or "
                                    "\"fallback-<name>\"",
                                    backend));
    }
  }
  const bool chars_ok = !backend.empty() && std::all_of(backend.begin(), backend.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!chars_ok) {
    r.fail("backend", fmt::format("value \"{}\" is not allowed; allowed: letters, digits, '-', '_', '.'", backend));
  }
  return backend;
}

/// A measured row's FLOP and byte rates (flops / time, bytes / time) stay below what any device
/// does (max_row_flops_per_s, max_row_bytes_per_s); a faster row most likely has its time in the
/// wrong unit.
void check_row_rates(const ObjectReader& r, const CalibrationRow& row) {
  const double seconds = row.ms * 1e-3;
  if (row.flops / seconds > max_row_flops_per_s) {
    r.fail("ms", fmt::format("{:g} FLOPs in {:g} ms is {:.3g} FLOP/s, more than any device does (at most {:g}); "
                             "check the time's unit (milliseconds)",
                             row.flops, row.ms, row.flops / seconds, max_row_flops_per_s));
  }
  if (row.bytes / seconds > max_row_bytes_per_s) {
    r.fail("ms", fmt::format("{:g} bytes in {:g} ms is {:.3g} B/s, more than any device moves (at most {:g}); "
                             "check the time's unit (milliseconds)",
                             row.bytes, row.ms, row.bytes / seconds, max_row_bytes_per_s));
  }
}

/// "refused" (attention only, default false), then "ms" (required in [min_row_ms, max_row_ms]
/// unless refused, absent if refused), "flops" and "bytes" (optional, in [0, 1e30]), then the
/// rates of a measured row (check_row_rates()).
void read_row_timing(const ObjectReader& r, bool is_attention, CalibrationRow& row) {
  row.refused = is_attention && r.boolean_or("refused", false);
  if (row.refused) {
    if (r.has("ms")) r.fail("ms", "a refused row has no time; remove \"ms\" or \"refused\"");
  } else {
    row.ms = r.number("ms", min_row_ms, max_row_ms);
  }
  row.flops = r.number_or("flops", 0, 0, 1e30);
  row.bytes = r.number_or("bytes", 0, 0, 1e30);
  if (!row.refused) check_row_rates(r, row);
}

}  // namespace

CalibrationRow read_calibration_row(const ObjectReader& r) {
  CalibrationRow row;
  row.op = read_row_op(r);
  const bool is_attention = row.op == ProfileOp::attention;
  const auto fields = calibration_shape_fields(row.op);
  reject_unknown_row_keys(r, row.op, fields);
  row.pass = read_row_pass(r, row.op);
  read_row_shape(r, fields, row.shape);
  if (row.op == ProfileOp::expert_gemms) read_expert_gemms_fields(r, row);
  if (is_attention) check_attention_heads(r, row.shape);
  row.backend = read_row_backend(r, is_attention);
  read_row_provenance(r, row);
  read_row_timing(r, is_attention, row);
  return row;
}

}  // namespace detail

const std::vector<std::string>& calibration_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> names;
    for (const auto& row : detail::profile_op_names) names.emplace_back(row.name);
    return names;
  }();
  return ops;
}

std::string_view to_string(ProfileOp op) { return detail::name_of(detail::profile_op_names, op); }

std::optional<ProfileOp> profile_op_named(std::string_view name) {
  return detail::enum_named(detail::profile_op_names, name);
}

CalibrationShapeFields calibration_shape_fields(std::string_view name) {
  const std::optional<ProfileOp> op = profile_op_named(name);
  return op ? calibration_shape_fields(*op) : CalibrationShapeFields{};
}

CalibrationShapeFields calibration_shape_fields(ProfileOp op) {
  switch (op) {
    case ProfileOp::gemm: return {{"M", "K", "N"}, {}};
    case ProfileOp::expert_gemms: return {{"E", "tokens_per_expert", "H", "expert_dim", "top_k", "tokens"}, {}};
    case ProfileOp::attention:
      return {{"docs", "doc_len", "tokens", "num_heads", "num_kv_heads", "head_dim"}, {"v_head_dim"}};
    case ProfileOp::rms_norm: return {{"tokens", "H"}, {}};
    case ProfileOp::swiglu: return {{"rows", "expert_dim"}, {}};
    case ProfileOp::router_softmax_topk: return {{"tokens", "E", "top_k"}, {}};
    case ProfileOp::dispatch_gather:
    case ProfileOp::combine_scatter_add: return {{"rows", "H"}, {}};
  }
  return {};
}

CalibrationProfile parse_calibration_profile(std::string_view json, const std::string& source) {
  return read_profile(detail::parse_json_text(json, source), source);
}

CalibrationProfile load_calibration_profile(const std::string& path) {
  const std::string text = detail::read_text_file(path);
  const bool jsonl = path.size() >= 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0;
  return jsonl ? parse_torch_measurements(text, path) : parse_calibration_profile(text, path);
}

CalibrationProfile load_torch_measurements(const std::string& path) {
  return parse_torch_measurements(detail::read_text_file(path), path);
}

namespace {
/// The first problem of `profile`, as the error validate() throws; nullopt when valid. The checks
/// are the reader's (one set of rules for files and code), so its error is captured, not rebuilt.
/// Through a JSON value, not text, so a NaN stays a NaN and is reported as one.
std::optional<Error> profile_error(const CalibrationProfile& profile, const std::string& source) {
  try {
    read_profile(profile_to_json_value<nlohmann::json>(profile), source);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}
}  // namespace

std::string validation_error(const CalibrationProfile& profile, const std::string& source) {
  return detail::message_of(profile_error(profile, source));
}

void validate(const CalibrationProfile& profile, const std::string& source) {
  detail::throw_if_error(profile_error(profile, source));
}

namespace {
/// The "layers" array, one row a line, after "rows".
void append_layer_lines(std::string& out, const ordered_json& j) {
  if (!j.contains("layers")) return;
  out += ",\n  \"layers\": [\n";
  const auto& layers = j["layers"];
  for (std::size_t i = 0; i < layers.size(); ++i) {
    out += "    " + layers[i].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + (i + 1 < layers.size() ? ",\n" : "\n");
  }
  out += "  ]";
}
}  // namespace

std::string calibration_profile_to_json(const CalibrationProfile& profile) {
  validate(profile);
  const ordered_json j = profile_to_json_value<ordered_json>(profile);
  // The header pretty-printed, each row on one line: a profile of thousands of rows stays readable
  // and diffs line by line.
  std::string out = "{\n";
  for (const auto& [key, value] : j.items()) {
    if (key == "rows" || key == "layers") continue;
    std::string rendered = value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    // Indent nested objects by two more spaces.
    std::string indented;
    for (char c : rendered) {
      indented += c;
      if (c == '\n') indented += "  ";
    }
    out += fmt::format("  \"{}\": {},\n", key, indented);
  }
  out += "  \"rows\": [\n";
  const auto& rows = j["rows"];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += "    " + rows[i].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + (i + 1 < rows.size() ? ",\n" : "\n");
  }
  out += "  ]";
  append_layer_lines(out, j);
  out += "\n}\n";
  return out;
}

void write_calibration_profile(const CalibrationProfile& profile, const std::string& path) {
  write_file_atomically(path, calibration_profile_to_json(profile));
}

}  // namespace budget
