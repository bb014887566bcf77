#pragma once
// Private: the uncorrected per-op terms of a step (time_step.cpp), shared by predict_step_time(),
// predict_layer_time() and the layer correction's fit (layer_fit.cpp).

#include <string>
#include <vector>

#include "budget/time_model.hpp"

namespace budget::detail {

/// One op of the op list over a step, before the layer correction.
struct OpTerm {
  OpStepTime time;                     ///< seconds_per_step: the per-op predictions × executed layers
  TimeClass cls = TimeClass::gemm;
  double seconds_per_execution = 0;    ///< one execution (one layer) of the op
  double launches_per_execution = 0;
  bool layer_op = true;                ///< false for the model-level ops (embedding, LM head, final norm)
};

struct StepTerms {
  std::vector<OpTerm> ops;  ///< in op-list order, every op that is timed (zero times included)
  std::string attention_backend;
  std::string attention_backend_reason;
  double forward_flops_per_token = 0;
  std::string stack;  ///< "pytorch-eager" or "megatron-core-te"
};

/// The op list of `config` under `workload` timed by `model`'s per-op fit alone.
/// How the per-op times are predicted: `rows` through TimeModel::predict() with its notes and flags
/// (the attention backend recorded), `indexed` through TimeModel::predict_ms() (the same times, no
/// notes, flags or backend).
/// `timed`, when set, keeps only the ops whose kind it accepts (the others are left out of `ops` and
/// of forward_flops_per_token): each op's term depends on that op alone, so the kept terms are those
/// of the whole list, bit for bit (the cluster's part times, cluster_time.cpp).
enum class StepTermsPath { rows, indexed };
StepTerms step_terms(const TimeModel& model, const ArchConfig& config, const Workload& workload,
                     StepTermsPath path = StepTermsPath::rows, bool (*timed)(OpKind, const void*) = nullptr,
                     const void* timed_context = nullptr);

/// The workload of a layer row: `tokens` tokens in causal documents of `doc_len` tokens
/// ((doc_len + 1)/2 mean attended keys), forward + backward (3 passes).
Workload layer_workload(std::int64_t tokens, std::int64_t doc_len);

/// One bf16 tensor quantized by Transformer Engine for an FP8 GEMM (rowwise and columnwise usage), per
/// element, and its kernels (fp8_quantize.cpp, each recipe's source lines there).
struct Fp8QuantizeCost {
  double bytes_per_element = 0;  ///< bytes read + written an element
  double kernels = 0;            ///< kernels a tensor (a grouped linear: a group)
  bool multi_tensor = false;     ///< a grouped linear's groups in one kernel (delayed, TN-only GPUs)
};
/// The cost under `recipe` on a GPU of `compute_capability` ("9.0"; TN-only FP8 GEMMs below 10.0 and on 12.x).
Fp8QuantizeCost te_quantize_cost(Fp8Recipe recipe, const std::string& compute_capability);

/// The kernel stack of a step (step_stack.cpp, docs/calibration.md "Kernel stacks").
struct StackPlan {
  bool megatron = false;  ///< Megatron-Core with Transformer Engine, else PyTorch eager
  Fp8Recipe recipe = Fp8Recipe::none;
  TimeQuery::Dtype gemm_dtype = TimeQuery::Dtype::bf16;  ///< of the TE linear layers' GEMMs
  Fp8QuantizeCost quantize;  ///< TE's quantize of each FP8 GEMM's input and output gradient
  /// The profile's FP8 GEMM rows are published tables whose times include a per-token activation
  /// quantize (aiconfigurator's collector): 3 bytes an element of each pass's rows × K, not added again.
  bool quantize_in_rows = false;
  double rows_quantize_bytes_per_element = 0;
  double launch_seconds = 0;              ///< CPU cost of one launch (0 with CUDA graphs or eager's fitted ℓ)
  CudaGraphModules graphed{};             ///< modules under partial CUDA graphs: their launches cost nothing
  double main_grad_bytes = 4;             ///< bytes of one main-gradient element (main_grad_bytes(TimeModelOptions::recipe))
};
StackPlan stack_plan(const TimeModel& model);
/// The op is not run by the stack (Megatron-Core with TE: the ops the op traits mark megatron_skips,
/// budget/op_traits.hpp).
bool stack_drops(const StackPlan& plan, OpKind kind);
/// Kernels the stack adds to an op (fused RoPE to attention, fused cross-entropy to the LM head):
/// bytes per step at the copy bandwidth, and their launches.
struct StackExtra {
  double bytes = 0;
  double launches = 0;
  std::string note;
};
StackExtra stack_extra(const StackPlan& plan, const Op& op, const ArchConfig& config, const Workload& workload);
/// FP8 quantize bytes of one GEMM (rows × K input, rows × N output gradient) over a step's passes, beyond
/// what the profile's FP8 rows already time (fp8_quantize.cpp).
double quantize_bytes(const StackPlan& plan, std::int64_t rows, std::int64_t k, std::int64_t n, std::int64_t passes);
/// The quantize kernels of one FP8 GEMM of `groups` groups over a step's passes.
double quantize_launches(const StackPlan& plan, std::int64_t groups, std::int64_t passes);
/// Memory traffic an op's kernels move beyond its profile queries, per execution, at the copy
/// bandwidth (step_stack.cpp): FP8 quantize kernels; a grouped GEMM's further groups' weights and
/// its weight gradients accumulated into the main gradients (time_step.cpp, query_expert_gemms()).
struct StackBytes {
  double quantize = 0;
  double quantize_launches = 0;  ///< the quantize kernels (not bytes: launches)
  double grouped_weights = 0;
  double grad_accumulate = 0;
};
/// The CPU launch time the GPU waits for: max(0, launch_seconds · launches − op seconds).
double exposed_launch_seconds(const StackPlan& plan, double launches, double op_seconds);
/// The share of an op's launches that partial CUDA graphs (StackPlan::graphed) replay, in [0, 1].
double graphed_launch_share(const CudaGraphModules& graphed, OpKind kind);

/// Adds to one execution of `op` (t, launches) what the stack runs beside its kernels: the FP8
/// quantize traffic of its GEMMs, the stack's extra kernels (stack_extra()), at the copy bandwidth,
/// and the CPU launch time the GPU waits for (exposed_launch_seconds()); noted on the rows path.
void add_stack_time(const StackPlan& plan, const Op& op, const ArchConfig& config, const Workload& workload,
                    double copy_bytes_per_s, const StackBytes& bytes, StepTermsPath path, OpStepTime& t,
                    double& launches);

/// The layer glue's time (no profile rows): forward bytes × T × (1 + backward ratio + extra
/// forwards) at the copy bandwidth, and its launches (step_stack.cpp, glue_cost()).
void time_layer_glue(const Op& op, const Workload& w, double copy_bytes_per_s, StepTermsPath path, OpStepTime& t,
                     double& launches);

/// The layer correction fitted on `layers` with `model`'s per-op fit (layer_fit.cpp); the backend
/// map is the caller's.
LayerCorrection fit_layer_correction(const TimeModel& model, const std::vector<CalibrationLayerRow>& layers);

}  // namespace budget::detail
