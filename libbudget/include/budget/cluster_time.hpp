#pragma once
/// \file
/// Step time of a training step on N GPUs under a parallel layout (docs/cluster.md, "Step time"):
/// per pipeline stage, the compute of one micro-batch from the calibrated time model at the
/// stage's shards (TP splits heads, projection and FFN widths and the vocabulary; EP gives each
/// rank E/EP experts whose groups hold the rows it receives, ETP splits their width and gathers
/// their rows; full recompute adds the recomputed layers' forward), times the micro-batches, plus
/// the stage's exposed communication (communication.hpp), plus the 1F1B bubble: (PP − 1)/V
/// micro-batch times of the slowest stage. The step's time is the slowest stage's.
///
///   seconds_per_step = max_s (m·t_s + exposed_s + late_dp_s) + (PP − 1)/V · max_s t_s
///
/// with t_s one micro-batch's forward and backward on stage s, exposed_s its exposed collectives,
/// late_dp_s the part of its overlapped DP collectives longer than its backward compute
/// (2/3 of m·t_s).
///
/// Thread safety: reentrant; the TimeModel is shared read-only.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/communication.hpp"
#include "budget/config.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "budget/workload.hpp"

namespace budget {

struct ClusterTimeOptions {
  CommOptions communication;
  /// Attention's mean attended keys per query: 0 = a causal window of the layout's seq_len
  /// ((s + 1)/2); else this value (document masks, e.g. 400 for the SMELT paper's workload).
  double attended_keys = 0.0;
};

/// One named part of the step's time, seconds per step on the slowest stage.
struct TimeComponent {
  std::string name;  ///< compute, bubble, dp_grad, ep, tp, ... (the communication term names)
  double seconds = 0.0;
  bool overlapped = false;  ///< a collective hidden behind compute (not in seconds_per_step)
};

struct StageTime {
  std::int64_t pipeline_rank = 0;
  double micro_batch_compute_seconds = 0.0;  ///< t_s
  double compute_seconds = 0.0;              ///< m·t_s
  double exposed_communication_seconds = 0.0;
  double overlapped_communication_seconds = 0.0;
  double late_overlap_seconds = 0.0;  ///< overlapped DP time beyond the backward compute
  /// An overlapped EP all-to-all (docs/cluster.md, "MoE dispatch"): the part its windows of the
  /// combined 1F1B do not hide, and the compute its kernels slow (their SMs taken from the compute).
  double overlap_exposed_seconds = 0.0;
  double overlap_slowdown_seconds = 0.0;
  /// The optimizer step after the micro-batches (docs/cluster.md, "Optimizer step").
  double optimizer_seconds = 0.0;
  double seconds = 0.0;  ///< compute + exposed + late + the EP overlap's exposed and slowdown + optimizer
};

/// An inclusive range of one layout size over a group of runs ({16, 16}: every run had 16).
struct SizeRange {
  std::int64_t min = 1, max = 1;
  bool contains(std::int64_t v) const { return v >= min && v <= max; }
};

/// What a priced step's layout is compared on with the runs that validated its cost lines: the GPU
/// count, the parallel sizes, the NVLink domains one EP group spans and the MoE dispatcher
/// ("alltoall", "allgather", "flex-deepep", "flex-hybridep"; empty for a dense model).
struct StepShape {
  std::int64_t gpus = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  std::int64_t ep_domains = 1;  ///< NVLink domains one EP group spans (group_placement(EP, ETP, domain).nodes)
  std::string dispatcher;
};
/// The step shape of `layout` on a cluster of `nvlink_domain` GPUs an NVLink domain (`moe`: the
/// config has routed experts).
StepShape step_shape_of(const ParallelLayout& layout, bool moe, std::int64_t nvlink_domain);

struct ClusterStepTime {
  double seconds_per_step = 0.0;
  std::int64_t tokens_per_step = 0;  ///< b·s·m·DP (global batch in tokens)
  double tokens_per_second_per_gpu = 0.0;
  /// Model FLOPs utilisation: 3 × forward FLOPs per token (LM head included, loops unrolled,
  /// recompute not counted) × tokens per step / (seconds per step × N × the denominator).
  double mfu = 0.0;
  double mfu_peak_flops_per_s = 0.0;
  std::string mfu_denominator;  ///< what the peak is (the profile's measured 8192³ bf16 GEMM)
  std::int64_t slowest_stage = 0;
  double bubble_seconds = 0.0;
  std::vector<TimeComponent> by_component;  ///< of the slowest stage: compute, each collective, bubble
  std::vector<StageTime> stages;
  std::vector<StageCommunication> communication;
  bool out_of_range = false;  ///< a time-model shape outside the profile's measured range
  /// Which GPU the compute is timed on (docs/cluster.md, "Which GPU the compute is timed on"): the
  /// calibration profile's op times are used as measured on the profile's GPU, never rescaled to
  /// the cluster's. When the two differ (the cluster's GPU name does not begin with the profile's
  /// device name) a note says so, with the memory-bound share below: the part that would follow
  /// the ratio of the two GPUs' memory bandwidths rather than their tensor-core rates.
  std::string profile_gpu;   ///< the profile's device name
  bool profile_gpu_is_cluster_gpu = true;
  /// Of the slowest stage's forward and backward compute (recompute excluded), the share of the
  /// memory-bound ops (time classes indexed, elementwise, glue: norms, activations, dispatch and
  /// combine, the embedding lookup, residual adds and layout copies).
  double memory_bound_share = 0.0;
  /// Of the slowest stage's forward and backward compute (recompute excluded), the share of each
  /// provenance (TimeProvenance order: measured, published, interpolated, carried, extrapolated,
  /// assumed); sums to 1 (docs/calibration.md, "Provenance"). Zero on the layout search's indexed path.
  std::array<double, time_provenance_count> provenance_share{};
  std::string stack;       ///< the kernel stack timed ("pytorch-eager", "megatron-core-te")
  Fp8Recipe fp8_recipe = Fp8Recipe::none;  ///< the FP8 recipe of the GEMMs (none: bf16)
  /// The run fit applied (nullopt: none): its precision; its constant per step is overhead_seconds.
  std::optional<Precision> run_fit_precision;
  double overhead_seconds = 0.0;
  std::vector<std::string> notes;
  bool moe = false;  ///< the config has routed experts (the model kind its cost lines are validated against)
  StepShape shape;   ///< the layout's sizes and dispatcher, as the cost lines' validation compares them
};

/// Measured runs that validated cost lines of the step time (docs/calibration.md, "Which runs validated
/// each cost line"): one group of runs of one GPU, training precision and model kind, fitted with
/// `calibrate --from-runs` on `runs_file`, and the cost lines their steps exercise.
struct ValidationRecord {
  std::string gpu;         ///< the profile device name the runs were priced on begins with this, "NVIDIA H100"
  std::string precision;   ///< the run fit's precision: "bf16", "fp8-tensorwise", "fp8-delayed", "mxfp8"
  std::string model_kind;  ///< "MoE" or "dense"
  std::string models;      ///< which models and layouts, "Qwen3-30B-A3B, 16 GPUs, EP 16, HybridEP"
  std::string runs_file;   ///< "data/runs/moe_runs.jsonl"
  int fitted = 0;          ///< runs fitted (the newest release of each configuration)
  /// Leave-one-run-out |error| over the fitted runs, median and worst; one run: the model alone (signed
  /// in `signed_error`, measured as predicted / measured − 1).
  double median_error = 0, worst_error = 0;
  double signed_error = 0;
  /// Cost lines their steps exercise: "gemm", "attention", "expert_gemms", "ep", "dp", "expert_dp", "tp",
  /// "pp", "cp", "optimizer".
  std::vector<std::string> lines;
  /// The fitted runs' layouts: GPU count, TP, PP, CP and EP ranges and the dispatchers they ran
  /// (empty: dense). Checked against the runs' own layouts by tests/unit/runs/test_cost_validation.cpp.
  SizeRange gpus, tp, pp, cp, ep;
  SizeRange ep_domains;  ///< NVLink domains one EP group of the runs spanned
  std::vector<std::string> dispatchers;
};
/// The records, with the figures measured on 2026-12-07 (docs/calibration.md); each checked against a
/// fit of its runs by tests/unit/runs/test_cost_validation.cpp.
const std::vector<ValidationRecord>& validation_records();

/// One cost line of a priced step and the nearest record that validated it.
struct CostLineValidation {
  /// "GEMMs (bf16)", "attention", "expert GEMMs (mxfp8)", "ep", "dp", "expert_dp", "tp", "pp", "cp",
  /// "optimizer", or the name of a component no record speaks of.
  std::string line;
  const ValidationRecord* nearest = nullptr;  ///< null: no run exercised this line
  /// How the priced step lies from `nearest`: "GPU (validated on NVIDIA H100, priced on NVIDIA B200)",
  /// "precision (...)", "model kind (...)"; for a collective line also "GPU count (validated 16, priced
  /// 256)", and its own size ("EP size (validated 16, priced 32)", TP, PP, CP); for the EP line the
  /// NVLink domains its group spans and the dispatcher ("dispatcher (validated flex-hybridep, priced
  /// alltoall)"). Empty: inside the validated box.
  std::vector<std::string> differences;
};
/// Every cost line of `time` (its compute classes and the components with time) with its validation.
std::vector<CostLineValidation> cost_line_validation(const ClusterStepTime& time);

/// The step time of `memory`'s layout (from training_memory(), resolved and validated) for
/// `config` on `cluster`, its compute from `model`. budget::Error for options out of range.
ClusterStepTime cluster_step_time(const TimeModel& model, const ArchConfig& config, const TrainingMemory& memory,
                                  const ClusterSpec& cluster, const ClusterTimeOptions& options = {});

/// A run of `tokens` training tokens at this step time: wall-clock seconds and GPU-hours.
struct RunCost {
  double steps = 0.0;
  double wall_clock_seconds = 0.0;
  double gpu_hours = 0.0;
};
RunCost run_cost(const ClusterStepTime& time, std::int64_t gpus, double tokens);

}  // namespace budget
