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

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "budget/calibration.hpp"
#include "budget/config.hpp"
#include "budget/kernel_stack.hpp"
#include "budget/ops.hpp"
#include "budget/training_recipe.hpp"
#include "budget/workload.hpp"

namespace budget {

/// Which kernels a training step runs (docs/calibration.md, "Kernel stacks"): as the profile says
/// (source.stack), PyTorch eager (the op list's kernels and an eager layer's glue), or Megatron-Core
/// with Transformer Engine (fused norm, RoPE, SwiGLU, router, permute and cross-entropy kernels,
/// grouped GEMMs, no eager glue).
enum class KernelStack { profile, pytorch_eager, megatron_core_te };
std::string_view to_string(KernelStack stack);

/// CPU time of one kernel launch outside CUDA graphs on the Megatron-Core + Transformer Engine stack
/// (PyTorch's and TE's Python and C++ dispatch per kernel), seconds. The GPU waits where an op's
/// kernels are shorter than their launches: max(0, launches · this − the op's time), an op at a time
/// (time/step_stack.cpp), and after the dropless dispatcher's host synchronisation
/// (step_time/cluster_time_moe.cpp); kernels under CUDA graphs launch nothing (CudaGraphModules).
/// Fitted (docs/calibration.md, "Host time per launch"), 5 µs before (an estimate): it decides one
/// fitted run of data/runs/moe_runs.jsonl, Qwen3-30B-A3B FP8 current scaling on 16 H100 without CUDA
/// graphs (−20.8% at 5 µs, 0 at 29 µs, +2.0% at 30 µs), and its older releases validate it (26.04.01,
/// 26.04, and 25.09 at another layout: −17.3% → +4.3%); over the 20 fitted runs on the five published
/// profiles the root-mean-square log error before any run fit is flat from 28 to 45 µs (15.6 to 15.5%,
/// 17.3% at 5 µs), so those runs do not pin it further.
inline constexpr double megatron_host_launch_seconds = 30e-6;

/// Megatron-Core's per-layer CUDA graph modules (--cuda-graph-modules; CudaGraphModule,
/// megatron/core/transformer/enums.py:61-73 at d98e8a64) when graphs cover some modules only: their
/// kernels replay from a graph and cost the CPU no launches; the rest is launched eagerly. What
/// each covers (transformer_layer.py at d98e8a64): attn the attention sublayer (input norm, the
/// projections, core attention, its residual add; :1565-1610); moe_router the pre-MLP norm and the
/// router (_forward_mlp_router, :2117-2146); moe_preprocess the dispatcher's preprocessing inside
/// the router's graph (no op of its own here); mlp a dense layer's MLP with its norm and residual
/// add (dense layers only); moe a whole MoE layer (drop-and-pad only); mamba a Mamba mixer. The experts between the
/// router's graph and the MLP's residual add always run eagerly under partial graphs (:2148-2160).
struct CudaGraphModules {
  bool attn = false, mlp = false, moe = false, moe_router = false, moe_preprocess = false, mamba = false;
  bool any() const { return attn || mlp || moe || moe_router || moe_preprocess || mamba; }
  friend bool operator==(const CudaGraphModules& a, const CudaGraphModules& b) {
    return a.attn == b.attn && a.mlp == b.mlp && a.moe == b.moe && a.moe_router == b.moe_router &&
           a.moe_preprocess == b.moe_preprocess && a.mamba == b.mamba;
  }
};
/// Sets the module Megatron-LM names `name` ("attn", "mlp", "moe", "moe_router", "moe_preprocess",
/// "mamba"); false (nothing set) for any other name.
bool add_cuda_graph_module(CudaGraphModules& modules, std::string_view name);

struct TimeModelOptions {
  /// Attention backend of the trainer: "auto" (the profile's "default" rows — the framework's own
  /// choice — when it has them, else the fastest backend that accepts the shape), or "cudnn",
  /// "flash", "default", "fallback-<name>": that backend where it accepts the shape, else the
  /// fastest one that does (noted).
  std::string attention_backend = "auto";
  /// Nearest measured shapes whose residuals correct the fit (0: the fit alone).
  int neighbours = 6;
  /// The kernel stack timed (profile: the profile's source.stack, pytorch-eager when it names none).
  KernelStack stack = KernelStack::profile;
  /// The training recipe timed (budget/training_recipe.hpp): its FP8 recipe (FP8 GEMMs and their
  /// quantize kernels; none: bf16) and its main-gradient bytes (main_grad_bytes(recipe): 4 for fp32,
  /// 2 for bf16 main gradients), which a grouped expert GEMM's weight-gradient pass reads and writes
  /// (2 × that per weight, Megatron-Core stack with --gradient-accumulation-fusion). The model uses
  /// nothing else of it; a layout's memory and its time are priced with the same recipe.
  TrainingRecipe recipe{};
  /// CUDA graphs (Megatron --cuda-graph-impl / --enable-cuda-graph): no CPU launch gaps.
  bool cuda_graphs = false;
  /// Without cuda_graphs: the modules graphs cover all the same (--cuda-graph-modules), whose
  /// kernels cost the CPU no launches.
  CudaGraphModules cuda_graph_modules{};
  /// CPU time of one kernel launch outside CUDA graphs on the Megatron-Core stack, seconds
  /// (megatron_host_launch_seconds: fitted on the measured MoE runs; in [0, 1 ms]).
  double host_launch_seconds = megatron_host_launch_seconds;
  /// The kernels the team trains on (budget/kernel_stack.hpp; issue 43): attention is timed at
  /// the head dims its kernel executes (a padded head dim at its padded size:
  /// executed_attention_head_dims()) and each expert's grouped GEMM at its token count padded to
  /// the precision's alignment (padded_expert_rows()). nullopt: the config's own head dims, and
  /// each expert's rows padded to the alignment of `fp8`'s recipe (BF16: none; docs/kernels.md).
  std::optional<KernelTarget> kernels = std::nullopt;
};

/// The (qk, v) head dims the attention kernel computes for a config's (qk, v) under `kernels`:
/// attention_fit()'s executed dims when it runs them padded, else (qk, v) (native, refused or no
/// target: a refused shape is timed as given, and the search never offers one).
std::pair<std::int64_t, std::int64_t> executed_attention_head_dims(const std::optional<KernelTarget>& kernels,
                                                                   std::int64_t qk, std::int64_t v);
/// The rows an expert's grouped GEMM computes when `rows` tokens reach it on average:
/// padded_expert_tokens(rows, precision) under `kernels` (each expert at the mean count, its
/// count rounded up to the alignment: TE quantization.py:262-278), `rows` without a target.
std::int64_t padded_expert_rows(const std::optional<KernelTarget>& kernels, std::int64_t rows);

/// Where a predicted time comes from (docs/calibration.md, "Provenance"), most trusted first:
/// a row of a profile measured by its maker at this shape; a published table's row at this shape;
/// interpolated between rows (inside their box); rows carried from another GPU or precision by the
/// ratio of datasheet peaks (a roofline); extrapolated past the rows' box; assumed: no rows at all,
/// the op's FLOPs or bytes at the profile's peaks (or a fused kernel's bytes at its bandwidth).
enum class TimeProvenance { measured, published, interpolated, carried, extrapolated, assumed };
inline constexpr std::size_t time_provenance_count = 6;
std::string_view to_string(TimeProvenance provenance);

/// One predicted time.
struct TimePrediction {
  double ms = 0;              ///< predicted median milliseconds of one launch of the pass
  bool out_of_range = false;  ///< the shape lies outside the measured shapes of its class
  bool no_rows = false;       ///< nothing measured for this op/pass: derived from other passes or peaks
  bool from_peaks = false;    ///< nothing measured for the op in any pass: its FLOPs or bytes at the peaks
  std::string backend;        ///< attention: the backend whose time this is
  std::string note;           ///< what was assumed, when anything was
  TimeProvenance provenance = TimeProvenance::measured;
};

/// A time query with typed fields: the same op, pass, shape and matrix a CalibrationRow query
/// carries, without strings or maps, for the indexed fast path (TimeModel::predict_ms()).
/// `dims` holds the op's required shape fields in calibration_shape_fields() order (gemm: M, K, N;
/// expert_gemms: E, tokens_per_expert, H, expert_dim, top_k, tokens; attention: docs, doc_len,
/// tokens, num_heads, num_kv_heads, head_dim; rms_norm: tokens, H; swiglu: rows, expert_dim;
/// router_softmax_topk: tokens, E, top_k; dispatch_gather and combine_scatter_add: rows, H), the
/// rest 0. Routing is balanced; attention uses the options' backend.
struct TimeQuery {
  using Op = ProfileOp;
  enum class Pass : std::uint8_t { forward, input_grad, weight_grad, backward, forward_backward };
  enum class Matrix : std::uint8_t { none, up, up_gate, down };
  /// The kernel's input precision (CalibrationRow::dtype: "", "fp8", "fp8_block", "mxfp8").
  enum class Dtype : std::uint8_t { bf16, fp8, fp8_block, mxfp8 };
  static constexpr std::size_t op_count = profile_op_count, pass_count = 5, max_dims = 6, dtype_count = 4;
  Op op = Op::gemm;
  Pass pass = Pass::forward;
  Matrix matrix = Matrix::none;
  Dtype dtype = Dtype::bf16;
  std::array<std::int64_t, max_dims> dims{};
  std::int64_t v_head_dim = 0;  ///< attention's optional field (0: absent); the model does not use it
};
std::string_view to_string(TimeQuery::Pass pass);  ///< "forward" … "forward+backward"
/// The CalibrationRow query of a typed query (predict(to_row(q)).ms == predict_ms(q)).
CalibrationRow to_row(const TimeQuery& query);

/// The op classes of the layer correction (docs/calibration.md, "Layer correction"): the cuBLAS
/// GEMMs (projections, router, dense and shared FFNs, LM head), the fused attention kernel with a
/// head_dim that is a multiple of 8 and with one that is not (the backends the layer rows show
/// differ: cuDNN, flash), the grouped expert GEMMs, the indexed memory ops with profile rows
/// (dispatch gather, combine scatter-add, the embedding lookup), the elementwise ones with rows
/// (norms, activations) and the glue: the memory-bound ops timed from bytes at the copy bandwidth
/// (the layer glue of is_layer_glue(), and any memory-bound op the profile has no rows for, e.g.
/// the router top-k on the H200 file).
enum class TimeClass {
  gemm,
  attention_aligned,
  attention_unaligned,
  expert_gemms,
  indexed,
  elementwise,
  glue,
};
inline constexpr std::size_t time_class_count = 7;
std::string_view to_string(TimeClass cls);
/// The class of an op kind as the op list names it (attention_scores: attention_aligned; the step
/// puts an attention of head_dim not a multiple of 8, and a memory-bound op timed without rows, in
/// their classes).
TimeClass time_class_of(OpKind kind);
/// Whether the layer correction fits the class's factor. The GEMMs, the expert GEMMs and the
/// elementwise ops keep factor 1: the per-op rows time the same kernels on contiguous inputs of the
/// layer's shapes. Fitted: attention (the per-op rows' kernels on their own q/k/v, the layer's on
/// views of the fused QKV, the backend the layer chose), the indexed ops (the per-op rows' random
/// indices against the layer's balanced dispatch) and the glue (no rows at all).
bool layer_fitted(TimeClass cls);

/// The correction fitted on a profile's layer rows (docs/calibration.md, "Layer correction"):
///
///   layer time = Σ_c factor_c · Σ_{op of class c} t_op  +  launch_ms · launches
///
/// factor_c = 1 for the classes layer_fitted() does not fit.
/// t_op the per-op prediction (the per-op rows' fit), launches the kernel launches of the ops (one
/// a profile query, two for a forward+backward query; the glue ops' own counts). A non-negative
/// least-squares fit in relative error over the layer rows; without layer rows every factor is 1
/// and launch_ms 0 (the per-op sum, as before).
struct LayerCorrection {
  bool fitted = false;
  std::array<double, time_class_count> factor{{1, 1, 1, 1, 1, 1, 1}};
  double launch_ms = 0;               ///< per kernel launch
  std::size_t layer_rows = 0;         ///< rows fitted
  double median_relative_error = 0;   ///< in-sample |fit/measured − 1| over the rows
  double max_relative_error = 0;
  /// head_dim class ("aligned, 65–128" …) → the attention backend the layer rows show the framework
  /// ran for it (the forced backend whose attention block time is nearest the default one's).
  std::map<std::string, std::string> backend_by_head_dim_class;
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
  /// predict(to_row(query)).ms, bit for bit, through the index built when the model was fitted:
  /// families and alignment classes by integer keys, the attention backend decided per head_dim
  /// class once, the nearest measured shapes found in a sorted array (no string lookup, no scan of
  /// all the class's shapes). No notes or flags: for ranking many configs.
  double predict_ms(const TimeQuery& query) const;
  /// True when the profile has a (not refused) row of `op` in some pass; false when predict()
  /// times every query of it at the profile's peaks (TimePrediction::from_peaks).
  bool measured(TimeQuery::Op op) const;
  /// True when the profile has a (not refused) row of `op` at precision `dtype` (carried rows count).
  bool has_rows(TimeQuery::Op op, TimeQuery::Dtype dtype) const;

  const CalibrationProfile& profile() const;
  const TimeModelOptions& options() const;
  /// The layer correction (identity without layer rows), its class factors multiplied by the run
  /// fit's (run_fit()) where the profile has one for the options' precision.
  const LayerCorrection& layer_correction() const;
  /// The profile's factors fitted to measured runs for the options' precision (precision_name() of
  /// options().recipe.fp8); nullptr when it has none (docs/calibration.md, "Calibrating from runs").
  const CalibrationRunFit* run_fit() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

/// Time of one op of the op list over a training step.
struct OpStepTime {
  OpKind kind{};
  double seconds_per_step = 0;
  double flops_per_step = 0;  ///< training FLOPs as budgeted: passes × forward FLOPs × executed layers × tokens
  double launches_per_step = 0;  ///< kernel launches (their cost is in seconds_per_step)
  bool out_of_range = false;
  bool no_rows = false;
  std::string note;
  /// Of seconds_per_step, by provenance (TimeProvenance order; the launch cost is "assumed").
  std::array<double, time_provenance_count> provenance_seconds{};
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
  double mfu_peak_tflops = 0;     ///< MFU's denominator: the profile's measured bf16 GEMM peak
  /// The same FLOPs against the profile's datasheet peak (peaks.datasheet_peak_tflops); 0 when the
  /// profile carries none.
  double mfu_datasheet = 0;
  std::string attention_backend;  ///< the backend the attention time is for
  std::string attention_backend_reason;  ///< why that backend (e.g. "from the layer rows: head_dim …")
  double launch_seconds_per_step = 0;    ///< the launch cost part of seconds_per_step
  /// seconds_per_step by where each op's time comes from (TimeProvenance order); sums to it.
  std::array<double, time_provenance_count> provenance_seconds{};
  std::string stack;  ///< the kernel stack timed ("pytorch-eager", "megatron-core-te")
  Fp8Recipe fp8_recipe = Fp8Recipe::none;  ///< the FP8 recipe of the GEMMs (none: bf16)
  bool layer_corrected = false;          ///< the profile's layer correction was applied
  bool out_of_range = false;      ///< any op's shape outside the measured range
  std::vector<OpStepTime> by_op;  ///< in op-list order, only ops that take time
};

/// Seconds per step of `config` under `workload` (tokens_per_step, training_passes, attended
/// keys): every op's passes at its step shape, times its executed layers (loops included).
/// Preconditions: config and workload valid.
StepTime predict_step_time(const TimeModel& model, const ArchConfig& config, const Workload& workload);

/// predict_step_time(model, config, workload).seconds_per_step, bit for bit, through
/// TimeModel::predict_ms() and without the per-op breakdown and notes: the per-candidate time of
/// time ranking.
double predict_step_seconds(const TimeModel& model, const ArchConfig& config, const Workload& workload);

/// One layer's predicted training time (forward + backward) over `tokens` tokens in causal
/// documents of `doc_len` tokens: the layer ops of the op list (not the embedding, LM head or final
/// norm), corrected. Precondition: all layers of `config` alike (CalibrationLayerRow's rule).
struct LayerTime {
  double ms = 0;
  double uncorrected_ms = 0;  ///< the per-op sum alone
  std::array<double, time_class_count> class_ms{};  ///< uncorrected, per class
  double launches = 0;
  std::string attention_backend;
};
LayerTime predict_layer_time(const TimeModel& model, const ArchConfig& config, std::int64_t tokens,
                             std::int64_t doc_len);

/// Leave-one-cell-out validation on a profile's layer rows (docs/calibration.md): for each cell,
/// the model is fitted on the profile with that cell's layer rows removed and predicts them.
struct LayerValidationEntry {
  std::string cell, tag, name;
  std::int64_t run = 0;
  std::int64_t executed_layers = 0;
  double measured_ms = 0, predicted_ms = 0;
  /// Time per token / the cell's baseline's (same run): (layer ms × executed layers) ratios;
  /// 0 when the cell has no baseline in that run.
  double measured_ratio = 0, predicted_ratio = 0;
  std::string attention_backend;
};
struct LayerValidation {
  std::vector<LayerValidationEntry> entries;  ///< in the profile's layer order
  std::size_t cells = 0;
  double median_layer_error = 0, max_layer_error = 0;  ///< |predicted/measured − 1|
  double median_ratio_error = 0, max_ratio_error = 0;  ///< |predicted − measured ratio|, non-baselines
  double max_baseline_error = 0;  ///< largest signed predicted/measured − 1 of the baselines (> 0: over-predicted)
};
LayerValidation validate_layers_leave_one_cell_out(const CalibrationProfile& profile, TimeModelOptions options = {});

/// Held-out accuracy of the model on a profile's own rows.
struct TimeValidation {
  std::optional<ProfileOp> op;  ///< the rows of one op; nothing: all rows
  std::size_t fit_rows = 0;  ///< rows fitted
  std::size_t test_rows = 0; ///< rows predicted (refused rows excluded)
  double median_relative_error = 0;  ///< median of |predicted/measured − 1|
  double p90_relative_error = 0;     ///< 90th percentile of the same
  double max_relative_error = 0;

  /// The word the printers write for `op`: its name in profile files (to_string(ProfileOp)), or
  /// "all" for all rows.
  std::string_view op_name() const { return op ? to_string(*op) : std::string_view("all"); }
};

/// Splits the profile's measured shapes (a shape with all its passes and backends goes to one
/// side) at random with `seed` into halves, fits on one half and predicts the other; one entry per
/// op present, in calibration_ops() order, then all rows (op nothing). Deterministic for a seed on every platform.
std::vector<TimeValidation> validate_time_model(const CalibrationProfile& profile, std::uint64_t seed = 1,
                                                TimeModelOptions options = {});

/// What a predicted time is worth, from the model's own validation on the profile
/// (docs/time-model.md, "Intervals"):
///  - with layer rows that have baselines: the whole-layer leave-one-cell-out validation
///    (validate_layers_leave_one_cell_out()): a time ratio is ± its worst time-ratio error (an
///    absolute interval on the ratio), a step time ± its worst layer-time error (relative);
///  - else the per-op held-out validation (validate_time_model(), seed 1): a step time is ± e, the
///    90th-percentile relative error of all ops (a sum of ops errs no more than its worst-erring
///    op in relative terms, when their errors share a sign), and a ratio r = a/b of two step times
///    each within ± e lies in [r(1 − e)/(1 + e), r(1 + e)/(1 − e)]: ± r·2e/(1 − e), the wider side.
struct TimeAccuracy {
  bool from_layers = false;        ///< the leave-one-cell-out layer validation, else the per-op one
  double ratio_error = 0;          ///< from_layers: the worst |predicted − measured| time ratio
  double step_relative_error = 0;  ///< ± on a step time, relative
  std::size_t validated = 0;       ///< cells (layers) or held-out rows (per op) behind the figure
  std::string source;              ///< in words, e.g. "leave-one-cell-out layer validation, 8 cells: worst time-ratio error"

  /// The ± of a time ratio `ratio` (absolute).
  double ratio_half_width(double ratio) const {
    if (from_layers) return ratio_error;
    return step_relative_error < 1 ? ratio * 2 * step_relative_error / (1 - step_relative_error) : ratio;
  }
};
/// The accuracy of `profile`'s model (the validations refit the model: about a fit per cell).
TimeAccuracy time_accuracy(const CalibrationProfile& profile, TimeModelOptions options = {});

}  // namespace budget
