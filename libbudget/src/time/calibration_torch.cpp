// PyTorch-eager measurement lines (.jsonl) → CalibrationProfile (docs/calibration.md,
// "Measurements from PyTorch (.jsonl)"). Each line is one JSON object. Lines of the row ops have
// the profile row's keys and go through the same row reader; attention lines carry several
// backends' times (ms_default, ms_by_backend) and become one row per backend; the `op: device`
// line gives the device, the peaks and the method.

#include <cmath>
#include <functional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/calibration.hpp"
#include "budget/error.hpp"
#include "time/calibration_rows.hpp"
#include "base/json_reader.hpp"

namespace budget {

namespace {

using detail::ObjectReader;

/// cuDNN reports its version as one integer: major·10000 + minor·100 + patch for cuDNN ≥ 9
/// (91900 → "9.19.0"); earlier versions used major·1000 + minor·100 + patch (8902 → "8.9.2").
std::string cudnn_version_string(std::int64_t v) {
  if (v >= 90000) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

/// Attention FLOPs of a pass from the forward FLOPs: backward = 2.5 × forward (FlashAttention's
/// convention: dQ, dK, dV and the recomputed scores, 5 matmuls against the forward's 2).
double attention_pass_factor(const std::string& pass) {
  if (pass == "forward") return 1.0;
  if (pass == "backward") return 2.5;
  return 3.5;
}

void read_device_line(const ObjectReader& r, CalibrationProfile& profile) {
  r.reject_unknown_keys({"op", "name", "torch", "cuda", "cudnn", "gemm_8192_bf16_tflops", "copy_tb_per_s", "iters",
                         "warmup"});
  profile.device.name = detail::read_device_name(r, "name");
  profile.device.cuda_runtime = r.string_or("cuda", "");
  if (r.has("cudnn")) {
    profile.device.cudnn = r.raw("cudnn").is_string() ? r.string("cudnn")
                                                      : cudnn_version_string(r.integer("cudnn", 1, 10000000));
  }
  profile.peaks.bf16_gemm_tflops = r.number("gemm_8192_bf16_tflops", detail::min_gemm_tflops, detail::max_gemm_tflops);
  const double copy_tb_per_s =
      r.number("copy_tb_per_s", detail::min_copy_gbytes_per_s / 1000.0, detail::max_copy_gbytes_per_s / 1000.0);
  profile.peaks.copy_gbytes_per_s = copy_tb_per_s * 1000.0;
  const std::string torch = r.string_or("torch", "");
  profile.source.tool = torch.empty() ? "pytorch-eager" : fmt::format("pytorch-eager (torch {})", torch);
  if (r.has("iters")) {
    const auto iters = r.integer("iters", 1, 1000000);
    const auto warmup = r.integer_or("warmup", 0, 0, 1000000);
    profile.source.method = fmt::format("CUDA events, median of {} after {} warm-ups", iters, warmup);
  }
}

void read_attention_line(const ObjectReader& r, CalibrationProfile& profile) {
  r.reject_unknown_keys({"op", "pass", "docs", "doc_len", "tokens", "num_heads", "num_kv_heads", "head_dim",
                         "v_head_dim", "mean_attended_keys", "flops_forward", "ms_default", "ms_by_backend"});
  if (!r.has("ms_default") && !r.has("ms_by_backend")) {
    r.fail_here("an attention line needs \"ms_default\" or \"ms_by_backend\"");
  }
  nlohmann::json base = r.json();
  base.erase("mean_attended_keys");
  base.erase("flops_forward");
  base.erase("ms_default");
  base.erase("ms_by_backend");
  if (r.has("mean_attended_keys")) (void)r.number("mean_attended_keys", 0, 1e12);
  const double flops_forward = r.number_or("flops_forward", 0, 0, 1e30);
  // Read through the reader so that a "pass" that is not a string is a budget::Error naming it
  // (the row reader checks its value against the allowed passes below).
  const std::string pass = r.string_or("pass", "");
  base["flops"] = flops_forward * attention_pass_factor(pass);

  const auto add = [&](const std::string& backend, const nlohmann::json& ms_value, const std::string& key_path) {
    nlohmann::json row = base;
    row["backend"] = backend;
    if (ms_value.is_string() && ms_value.get<std::string>() == "refused") {
      row["refused"] = true;
    } else {
      if (!ms_value.is_number() || !std::isfinite(ms_value.get<double>()) || ms_value.get<double>() <= 0) {
        throw Error(fmt::format("value {} is not allowed; allowed: milliseconds > 0 or \"refused\"",
                                detail::describe_value(ms_value)),
                    r.source(), key_path);
      }
      row["ms"] = ms_value;
    }
    profile.rows.push_back(detail::read_calibration_row(ObjectReader(row, r.source(), r.pointer())));
  };
  if (r.has("ms_default")) add("default", r.raw("ms_default"), r.pointer_to("ms_default"));
  if (r.has("ms_by_backend")) {
    const ObjectReader backends = r.object("ms_by_backend");
    for (const auto& [name, value] : backends.json().items()) add(name, value, backends.pointer_to(name));
  }
}

}  // namespace

namespace detail {

void for_each_jsonl_line(std::string_view jsonl, const std::string& source,
                         const std::function<void(const ObjectReader&)>& on_line) {
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start <= jsonl.size()) {
    std::size_t end = jsonl.find('\n', start);
    if (end == std::string_view::npos) end = jsonl.size();
    const std::string_view line = jsonl.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("line {}", line_number);
    nlohmann::json object;
    try {
      object = parse_json_text(line, source);
    } catch (const Error& e) {
      throw Error(e.message(), source, where);
    }
    on_line(ObjectReader(object, source, where));
  }
}

}  // namespace detail

CalibrationProfile parse_torch_measurements(std::string_view jsonl, const std::string& source) {
  CalibrationProfile profile;
  bool have_device = false;
  detail::for_each_jsonl_line(jsonl, source, [&](const ObjectReader& r) {
    const std::string op = r.string("op");
    if (op == "device") {
      if (have_device) r.fail("op", "a second \"op\": \"device\" line; allowed: one");
      read_device_line(r, profile);
      have_device = true;
    } else if (profile_op_named(op) == ProfileOp::attention) {
      read_attention_line(r, profile);
    } else {
      profile.rows.push_back(detail::read_calibration_row(r));
    }
  });
  if (!have_device) {
    throw Error("no \"op\": \"device\" line; it gives the device name and the measured peaks "
                "(gemm_8192_bf16_tflops, copy_tb_per_s)",
                source);
  }
  if (profile.rows.empty()) throw Error("no measurement lines; allowed: at least one row besides the device", source);
  profile.source.notes = "converted from PyTorch-eager measurement lines (docs/calibration.md)";
  validate(profile, source);
  return profile;
}

}  // namespace budget
