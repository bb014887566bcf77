#pragma once
/// \file
/// Calibration profiles: per-operation times measured on one GPU, the input of the time model
/// (time_model.hpp). A profile is versioned JSON (docs/calibration.md, "Profile format v1"): a
/// header (device, library versions, clocks, measured peaks, who measured it and how) and one row
/// per measured shape and pass. Reading is strict: an unknown key, op, pass or shape field, a
/// missing shape field or a non-positive time is a budget::Error naming the file and the JSON
/// pointer ("/rows/12/ms"), the value and what is allowed.
///
/// Two sources are read: the profile JSON written by write_calibration_profile() (by `budget-match
/// calibrate` and by the project's CUDA profiler, `budget-profile`), and per-op measurement lines in
/// the form of PyTorch-eager measurements (one JSON object a line, ".jsonl"; docs/calibration.md,
/// "Measurements from PyTorch (.jsonl)"), so users can calibrate from their own framework.
///
/// Thread safety: the readers, the writer and the validators are reentrant: concurrent calls are
/// safe.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "budget/config.hpp"
#include "budget/kernel_stack.hpp"

namespace budget {

/// The GPU and software a profile was measured on. Empty strings and zeros mean "not recorded".
struct CalibrationDevice {
  std::string name;                ///< e.g. "NVIDIA H200"
  std::string compute_capability;  ///< e.g. "9.0"
  std::string driver;              ///< driver version
  std::string cuda_runtime;        ///< CUDA runtime version, e.g. "13.0"
  std::string cublas;              ///< cuBLAS version
  std::string cudnn;               ///< cuDNN version, e.g. "9.19.0"
  std::int64_t sm_count = 0;
  double memory_gib = 0;
  double sm_clock_mhz = 0;
  double memory_clock_mhz = 0;

  // Member-wise equality, written out: the public headers compile as C++17 (no defaulted ==).
  bool operator==(const CalibrationDevice& o) const {
    return std::tie(name, compute_capability, driver, cuda_runtime, cublas, cudnn, sm_count, memory_gib, sm_clock_mhz,
                    memory_clock_mhz) == std::tie(o.name, o.compute_capability, o.driver, o.cuda_runtime, o.cublas,
                                                  o.cudnn, o.sm_count, o.memory_gib, o.sm_clock_mhz, o.memory_clock_mhz);
  }
  bool operator!=(const CalibrationDevice& o) const { return !(*this == o); }
};

/// Peak rates measured in the same run as the rows (required, > 0).
struct CalibrationPeaks {
  double bf16_gemm_tflops = 0;   ///< an 8192³ bf16 GEMM, 2·8192³ FLOPs / time, in 10¹² FLOP/s
  double copy_gbytes_per_s = 0;  ///< device-to-device copy, bytes read + bytes written / time, 10⁹ B/s
  /// Optional: the vendor's dense bf16 tensor-core peak, 10¹² FLOP/s (0: not given; else ≥ the
  /// measured GEMM peak), and where that figure is from. A second MFU denominator, never the model's.
  double datasheet_peak_tflops = 0;
  std::string datasheet_peak_source = {};
  /// Optional: the vendor's dense FP8 tensor-core peak, 10¹² FLOP/s (0: not given, no FP8 on the
  /// GPU or not stated); the roofline of FP8 GEMMs a profile has no FP8 rows for.
  double datasheet_fp8_tflops = 0;

  bool operator==(const CalibrationPeaks& o) const {
    return bf16_gemm_tflops == o.bf16_gemm_tflops && copy_gbytes_per_s == o.copy_gbytes_per_s &&
           datasheet_peak_tflops == o.datasheet_peak_tflops && datasheet_peak_source == o.datasheet_peak_source &&
           datasheet_fp8_tflops == o.datasheet_fp8_tflops;
  }
  bool operator!=(const CalibrationPeaks& o) const { return !(*this == o); }
};

/// Who measured the profile and how.
struct CalibrationSource {
  std::string tool;     ///< required, e.g. "budget-profile 0.2.0" or "pytorch-eager (torch 2.11.0+cu130)"
  std::string method;   ///< e.g. "CUDA events, median of 9 after 3 warm-ups"
  std::string created;  ///< ISO 8601 UTC time of the measurement or conversion
  std::string notes;
  /// The kernel stack the rows time (docs/calibration.md, "Kernel stacks"): "" or "pytorch-eager"
  /// (PyTorch eager ops, the layer glue of an eager layer), or "megatron-core-te" (Megatron-Core with
  /// Transformer Engine: fused norms, RoPE, SwiGLU, router, permute, cross-entropy; grouped GEMMs).
  std::string stack;
  /// Where the rows come from: "" or "measured" (timed by whoever made the profile), or
  /// "published" (published, measured kernel tables; each source in `references`).
  std::string kind;
  /// The sources of the rows, one "owner/repo@commit:path" (or URL) each.
  std::vector<std::string> references;

  bool operator==(const CalibrationSource& o) const {
    return std::tie(tool, method, created, notes, stack, kind, references) ==
           std::tie(o.tool, o.method, o.created, o.notes, o.stack, o.kind, o.references);
  }
  bool operator!=(const CalibrationSource& o) const { return !(*this == o); }
};

/// The ops a profile's rows time (TimeQuery::Op is this enum). In profile files and torch
/// measurement lines each is written by its name (to_string(), calibration_ops()).
enum class ProfileOp : std::uint8_t {
  gemm,
  expert_gemms,
  attention,
  rms_norm,
  swiglu,
  router_softmax_topk,
  dispatch_gather,
  combine_scatter_add
};
inline constexpr std::size_t profile_op_count = 8;
/// The name of `op` in profile files ("gemm" … "combine_scatter_add"; "?" for a cast integer
/// outside the enum).
std::string_view to_string(ProfileOp op);
/// The op called `name` in profile files, or nothing for a name outside calibration_ops().
std::optional<ProfileOp> profile_op_named(std::string_view name);

/// One measured shape and pass.
///
/// `op` is written as one of calibration_ops(); `shape` holds exactly the integer fields that op requires
/// (plus its optional ones), see calibration_shape_fields(). `pass` is forward | input_grad |
/// weight_grad for "gemm" and "expert_gemms", forward | backward | forward+backward for the other
/// ops. `ms` is the median time in milliseconds (> 0) unless `refused` (an attention backend that
/// rejects the shape; no time). `flops` and `bytes` are what the measurer counted (≥ 0; 0 = not
/// given); the time model recomputes both from the shape and does not trust them.
struct CalibrationRow {
  ProfileOp op = ProfileOp::gemm;
  std::string pass;
  std::map<std::string, std::int64_t> shape;
  std::string matrix;   ///< expert_gemms only: "up_gate" | "up" | "down"
  std::string routing;  ///< expert_gemms only, optional: "balanced" | "skewed" ("" = not given: balanced)
  /// attention (required): "cudnn" | "flash" | "default" | "fallback-<name>"; other ops
  /// (optional): the library or kernel that ran, letters, digits, '-', '_', '.'.
  std::string backend;
  bool refused = false;
  double ms = 0, flops = 0, bytes = 0;
  /// gemm, expert_gemms, attention (optional): the input precision of the kernel, "" = bf16 (also
  /// written "bf16"), "fp8" (per-tensor or per-row scaled FP8, E4M3), "fp8_block" (1×128 / 128×128
  /// block-scaled FP8) or "mxfp8" (32-element blocks, Blackwell).
  std::string dtype;
  /// Optional: the GPU whose published row this is, carried to the profile's GPU by the ratio of
  /// the two GPUs' datasheet peaks (a roofline carry, not a measurement of this GPU).
  std::string carried_from;

  bool operator==(const CalibrationRow& o) const {
    return std::tie(op, pass, shape, matrix, routing, backend, dtype, carried_from, refused, ms, flops, bytes) ==
           std::tie(o.op, o.pass, o.shape, o.matrix, o.routing, o.backend, o.dtype, o.carried_from, o.refused, o.ms,
                    o.flops, o.bytes);
  }
  bool operator!=(const CalibrationRow& o) const { return !(*this == o); }
};

/// One measured whole layer (docs/calibration.md, "Layer rows"): the training step (forward +
/// backward) of one layer of `config` over `tokens` tokens packed as causal documents of
/// `doc_len` tokens, in the form of tests/data/time/h200_torch_layers.jsonl (one JSON object a line;
/// the same object in a profile's "layers" array). The time model fits its layer correction on
/// these rows and validates on them (time_model.hpp). Every layer of `config` must be alike (no
/// first dense layers, no sliding-window layers): the row is one of them.
struct CalibrationLayerRow {
  std::string cell;      ///< the group the row belongs to (e.g. a grid cell, "100M-E64"); validation leaves one out
  std::string tag;       ///< its role in the cell; "baseline" is the reference of the cell's time ratios
  std::int64_t run = 0;  ///< which measurement run (ratios are taken within a run); 0 = not given
  ArchConfig config;
  std::int64_t tokens = 0;   ///< tokens of the step
  std::int64_t doc_len = 0;  ///< causal document length: (doc_len + 1)/2 mean attended keys
  double layer_ms = 0;       ///< measured median ms of one layer's forward + backward (> 0)
  double attn_block_ms = 0;  ///< the attention block alone (0 = not given)
  double moe_block_ms = 0;   ///< the FFN block alone (0 = not given)
  double layer_spread_ms = 0;  ///< spread of the layer measurement (0 = not given)
  double pad_fraction = 0;     ///< padding fraction the measurer reported (0 = not given)
  /// The attention block with each backend forced: backend → ms, 0 = the backend refused the shape.
  std::map<std::string, double> attention_backend_ms;

  bool operator==(const CalibrationLayerRow& o) const;  ///< configs compared as their native JSON
  bool operator!=(const CalibrationLayerRow& o) const { return !(*this == o); }
};

/// Factors fitted to measured training runs (docs/calibration.md, "Calibrating from runs"), for one
/// training precision: the step time's compute classes, its exposed communication per link class
/// and a constant per step.
///
///   step = Σ_c f_c · compute_c + g_intra · comm_intra + g_inter · comm_inter + g_a2a · comm_a2a
///          + launch · launches + overhead
///
/// compute_c the slowest stage's compute of class c (bubble included, in proportion), comm the
/// exposed collectives by the link they cross (the EP all-to-all a class of its own: NCCL runs it
/// with another algorithm), launches the kernel launches of the step's compute (a CPU cost per
/// launch, not applied under CUDA graphs).
struct CalibrationRunFit {
  /// bf16 or an FP8 recipe the time model times (not nvfp4); JSON: Precision's names ("bf16",
  /// "fp8-tensorwise", "fp8-delayed", "fp8-blockwise", "mxfp8").
  Precision precision = Precision::bf16;
  double gemm = 1, attention = 1, expert_gemms = 1, memory_bound = 1;  ///< compute class factors
  double intra_node = 1, inter_node = 1, all_to_all = 1;              ///< link class factors
  double launch_us = 0;                                                ///< per kernel launch (no CUDA graphs)
  double overhead_s = 0;                                               ///< per step
  std::string runs;                        ///< the runs file fitted (its name as given)
  std::vector<std::string> fitted_on;      ///< run ids
  std::vector<std::string> validated_on;   ///< run ids kept out of the fit
  double loo_median_error = 0, loo_max_error = 0;  ///< leave-one-run-out |error| over fitted_on

  bool operator==(const CalibrationRunFit& o) const {
    return std::tie(precision, gemm, attention, expert_gemms, memory_bound, intra_node, inter_node, all_to_all,
                    launch_us, overhead_s, runs, fitted_on, validated_on, loo_median_error, loo_max_error) ==
           std::tie(o.precision, o.gemm, o.attention, o.expert_gemms, o.memory_bound, o.intra_node, o.inter_node,
                    o.all_to_all, o.launch_us, o.overhead_s, o.runs, o.fitted_on, o.validated_on, o.loo_median_error,
                    o.loo_max_error);
  }
  bool operator!=(const CalibrationRunFit& o) const { return !(*this == o); }
};

struct CalibrationProfile {
  int schema_version = 1;
  CalibrationDevice device;
  CalibrationPeaks peaks;
  CalibrationSource source;
  std::vector<CalibrationRow> rows;
  std::vector<CalibrationLayerRow> layers;  ///< measured whole layers (optional; JSON key "layers")
  std::vector<CalibrationRunFit> run_fits;  ///< fitted to measured runs (optional; JSON key "run_fits")

  bool operator==(const CalibrationProfile& o) const {
    return std::tie(schema_version, device, peaks, source, rows, layers, run_fits) ==
           std::tie(o.schema_version, o.device, o.peaks, o.source, o.rows, o.layers, o.run_fits);
  }
  bool operator!=(const CalibrationProfile& o) const { return !(*this == o); }
};

/// The current profile schema version (the "schema_version" written and the only one read).
inline constexpr int calibration_schema_version = 1;

/// The row ops a profile may hold, in a fixed order: gemm, expert_gemms, attention, rms_norm,
/// swiglu, router_softmax_topk, dispatch_gather, combine_scatter_add.
const std::vector<std::string>& calibration_ops();

/// The integer shape fields of `op`: required ones, then optional ones (empty for an unknown op).
struct CalibrationShapeFields {
  std::vector<std::string> required;
  std::vector<std::string> optional;
};
CalibrationShapeFields calibration_shape_fields(std::string_view op);
CalibrationShapeFields calibration_shape_fields(ProfileOp op);

/// Parses profile JSON read from `source` (a file name for messages). Throws budget::Error.
CalibrationProfile parse_calibration_profile(std::string_view json, const std::string& source);

/// Parses PyTorch-eager measurement lines (".jsonl", docs/calibration.md): one object a line, the
/// `op: device` line filling device, peaks and source; attention lines become one row per backend
/// ("default" from ms_default, then each of ms_by_backend, "refused" kept as a refused row).
/// Errors name `source` and "line <n>/<field>".
CalibrationProfile parse_torch_measurements(std::string_view jsonl, const std::string& source);

/// Reads PyTorch-eager measurement lines from a file (any name). Throws budget::Error naming it.
CalibrationProfile load_torch_measurements(const std::string& path);

/// Reads a profile file: a path ending in ".jsonl" is read as PyTorch-eager measurement lines,
/// anything else as profile JSON. Throws budget::Error naming the path.
CalibrationProfile load_calibration_profile(const std::string& path);

/// A profile of one GPU from published kernel tables in the form of kernels.json (data/kernels/,
/// docs/calibration.md "Profiles from published kernel tables"): `gpu_key` one of A100_SXM4_80GB,
/// H100_SXM, H200_SXM, B200, GB200, B300, GB300. Rows keep their precision (dtype) and, where carried
/// from another GPU (by a roofline or a measured ratio of one kernel on both), carried_from; source.kind "published", source.stack "megatron-core-te",
/// source.references the rows' sources. budget::Error for another key or a file not of that form.
CalibrationProfile profile_from_published_kernels(std::string_view json, const std::string& source,
                                                  const std::string& gpu_key);
CalibrationProfile load_published_kernels_profile(const std::string& path, const std::string& gpu_key);

/// Parses whole-layer measurement lines (the form of tests/data/time/h200_torch_layers.jsonl): one
/// CalibrationLayerRow object a line; an optional `op: device` line (keys "device", "torch",
/// "gemm_8192_tflops", "tokens", "doc_len") is checked for form and otherwise ignored. Errors name
/// `source` and "line <n>/<field>". At least one layer line.
std::vector<CalibrationLayerRow> parse_layer_measurements(std::string_view jsonl, const std::string& source);

/// Reads whole-layer measurement lines from a file. Throws budget::Error naming it.
std::vector<CalibrationLayerRow> load_layer_measurements(const std::string& path);

/// Why `profile` is invalid (what the reader checks, for profiles built in code), as one line
/// naming `source`, the JSON pointer the field would have, its value and what is allowed; empty
/// when it is valid.
std::string validation_error(const CalibrationProfile& profile, const std::string& source = "<profile>");
/// Throws budget::Error (naming `source` and the JSON pointer) with the problem
/// validation_error() reports.
void validate(const CalibrationProfile& profile, const std::string& source = "<profile>");

/// Profile JSON: pretty-printed header in a fixed key order, one row per line in a fixed key
/// order (op, pass, shape fields in calibration_shape_fields() order, matrix, routing, backend, refused, ms, flops,
/// bytes). parse_calibration_profile(calibration_profile_to_json(p)) == p. Validates first.
std::string calibration_profile_to_json(const CalibrationProfile& profile);

/// Writes calibration_profile_to_json(profile) to `path` through a temporary file renamed into
/// place, so `path` is either the old file or the whole new one; budget::Error naming `path` (and
/// the system's reason) if it cannot be written.
void write_calibration_profile(const CalibrationProfile& profile, const std::string& path);

}  // namespace budget
