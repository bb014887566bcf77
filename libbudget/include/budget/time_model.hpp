#pragma once
/// \file
/// The time model: per-op time for any shape from a calibration profile's rows, and a config's
/// training step time from its op list (layer_ops()). The model, its math and its validation on
/// measured data are in docs/calibration.md ("The time model"); in short, per op family (op, pass,
/// matrix, backend) and alignment class of the dims:
///
///   t(shape) = [β₀ + β₁·work(shape) + β₂·traffic(shape) (+ β₃·launch term)] · exp(ρ(shape))
///
/// a non-negative least-squares fit of the class's rows in relative error (weights 1/t²), times an
/// inverse-distance-weighted mean ρ of the log residuals of the k nearest measured shapes in
/// log-shape space (so a measured shape is reproduced, and the fit carries between them). A shape
/// outside the box of its class's measured shapes is flagged out of range.
///
/// Thread safety: a TimeModel is immutable after construction (its fit is shared, read-only), so
/// predict() and predict_step_time() may be called concurrently on one model; validate_time_model()
/// is reentrant.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "budget/calibration.hpp"
#include "budget/config.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"

namespace budget {

struct TimeModelOptions {
  /// Attention backend of the trainer: "auto" (the profile's "default" rows — the framework's own
  /// choice — when it has them, else the fastest backend that accepts the shape), or "cudnn",
  /// "flash", "default", "fallback-<name>": that backend where it accepts the shape, else the
  /// fastest one that does (noted).
  std::string attention_backend = "auto";
  /// Nearest measured shapes whose residuals correct the fit (0: the fit alone).
  int neighbours = 6;
};

/// One predicted time.
struct TimePrediction {
  double ms = 0;              ///< predicted median milliseconds of one launch of the pass
  bool out_of_range = false;  ///< the shape lies outside the measured shapes of its class
  bool no_rows = false;       ///< nothing measured for this op/pass: derived from other passes or peaks
  std::string backend;        ///< attention: the backend whose time this is
  std::string note;           ///< what was assumed, when anything was
};

/// A fitted time model. Cheap to copy (shares its fit).
class TimeModel {
 public:
  /// Fits the profile's rows (validated first; budget::Error for an invalid profile).
  explicit TimeModel(const CalibrationProfile& profile, TimeModelOptions options = {});

  /// Time of one op launch: `query` gives op, pass, shape (the op's required fields), matrix
  /// (expert_gemms) and, for attention, the backend ("" = the options' choice). ms/flops/bytes of
  /// the query are ignored. budget::Error for a query that is not a valid row shape.
  TimePrediction predict(const CalibrationRow& query) const;

  const CalibrationProfile& profile() const;
  const TimeModelOptions& options() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

/// Time of one op of the op list over a training step.
struct OpStepTime {
  OpKind kind{};
  double seconds_per_step = 0;
  double flops_per_step = 0;  ///< training FLOPs as budgeted: passes × forward FLOPs × executed layers × tokens
  bool out_of_range = false;
  bool no_rows = false;
  std::string note;
};

/// A training step's predicted time (docs/calibration.md, "Step time").
struct StepTime {
  std::int64_t tokens_per_step = 0;
  double seconds_per_step = 0;
  double seconds_per_token = 0;
  double tokens_per_second = 0;
  /// Model FLOPs utilisation: min(training_passes, 3) × forward FLOPs (LM head included) × tokens /
  /// (time × the profile's measured bf16 GEMM peak). Recompute (4 passes) does not raise it; a
  /// forward-only workload (1 pass) counts one forward.
  double mfu = 0;
  std::string attention_backend;  ///< the backend the attention time is for
  bool out_of_range = false;      ///< any op's shape outside the measured range
  std::vector<OpStepTime> by_op;  ///< in op-list order, only ops that take time
};

/// Seconds per step of `config` under `workload` (tokens_per_step, training_passes, attended
/// keys): every op's passes at its step shape, times its executed layers (loops included).
/// Preconditions: config and workload valid.
StepTime predict_step_time(const TimeModel& model, const ArchConfig& config, const Workload& workload);

/// Held-out accuracy of the model on a profile's own rows.
struct TimeValidation {
  std::string op;            ///< a row op, or "all"
  std::size_t fit_rows = 0;  ///< rows fitted
  std::size_t test_rows = 0; ///< rows predicted (refused rows excluded)
  double median_relative_error = 0;  ///< median of |predicted/measured − 1|
  double p90_relative_error = 0;     ///< 90th percentile of the same
  double max_relative_error = 0;
};

/// Splits the profile's measured shapes (a shape with all its passes and backends goes to one
/// side) at random with `seed` into halves, fits on one half and predicts the other; one entry per
/// op present, in calibration_ops() order, then "all". Deterministic for a seed on every platform.
std::vector<TimeValidation> validate_time_model(const CalibrationProfile& profile, std::uint64_t seed = 1,
                                                TimeModelOptions options = {});

}  // namespace budget
