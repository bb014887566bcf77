// What an FP8 linear layer runs beyond its GEMMs under each Transformer Engine recipe (docs/calibration.md,
// "FP8"), from TransformerEngine c188b533c (v2.11), the version Megatron-LM d98e8a64's recipes ran:
//
// Each FP8 GEMM quantizes its bf16 input X (rows × K) once per forward, and its output gradient dY
// (rows × N) once per backward (module/linear.py:192-203 the input with rowwise usage for the forward
// GEMM and columnwise usage for the weight gradient; module/base.py:1099-1194 grad_output_preprocess()
// the output gradient, rowwise for the data gradient and columnwise for the weight gradient; a grouped
// linear quantizes every group's split, module/grouped_linear.py:146 and 346-356 tex.split_quantize).
// Per element of such a tensor (a bf16 element read is 2 bytes, an FP8 one written 1 byte):
//
//   delayed     one cast kernel that also writes the tensor's amax (common/cast/dispatch/quantize.cuh:60-75):
//               read 2 + write 1, and on a GPU whose FP8 GEMMs are TN-only (compute capability < 10, or
//               12.x: utils.py:491-495 is_non_tn_fp8_gemm_supported()) a transposed copy for the
//               columnwise usage written by the same kernel (cast_transpose, quantize.cuh:64-68;
//               csrc/quantizer.cpp:137): + 1. Hopper 4 bytes, Blackwell 3; 1 kernel. A grouped linear's
//               groups in one multi-tensor kernel where the transposed copy is written (csrc/extensions/
//               cast.cpp:119-143 nvte_multi_cast_transpose), else one kernel a group (cast.cpp:147).
//   tensorwise  current scaling (csrc/quantizer.cpp:497-536): the amax kernel reads the tensor (2,
//               nvte_compute_amax_with_config, :518), the scale kernel reads one float (:531), then the
//               cast as delayed's (:535). Hopper 6 bytes, Blackwell 5; 3 kernels a tensor (a group).
//   blockwise   one kernel writing the 1×128-scaled rowwise data and the transposed columnwise copy on
//               every GPU (quantize.cuh:144-164 quantize_transpose_vector_blockwise), with an fp32 scale
//               per 128 elements each: 2 + 1 + 1 + 2·4/128 = 4.0625 bytes; 1 kernel a group.
//   mxfp8       one kernel writing the rowwise and the columnwise data (each scaled per 32 elements, an
//               E8M0 byte a scale) (quantize.cuh:81-85 mxfp8::quantize; csrc/quantizer.cpp:1091-1102):
//               2 + 1 + 1 + 2/32 = 4.0625 bytes; 1 kernel a group.
//
// Not added (per step, not per micro-batch, and under 0.1% of the steps priced in docs/calibration.md):
// the weights' casts (TE caches them across micro-batches, module/linear.py:268 update_workspace only on
// the first micro-batch; with --fp8-param-gather the optimizer writes the FP8 weights); delayed scaling's
// amax reduction (one all-reduce of a few kilobytes per autocast region and pass, quantization.py:497-531,
// latency-bound) and its amax-history update (one multi-tensor kernel over the history,
// fused_amax_and_scale_update_after_reduction); current scaling's amax all-reduce, which TE runs only for
// a sequence-parallel input or output gradient over the TP group (module/linear.py:1616-1640).
//
// Published FP8 GEMM rows (aiconfigurator's sgl-kernel GEMMs, data/kernels/README.md) time a per-token
// activation quantize with each GEMM: read 2 + write 1 bytes an element of the GEMM's input. The time
// model derives each backward pass from the forward row at the same shape, so on such a profile every
// pass's time already holds 3 bytes an element of rows × K; TE's quantize bytes beyond those are added,
// and where the rows already hold more (a GEMM with K well above N) nothing is subtracted: the rows'
// quantize share is not separated from their GEMM's.

#include <string>

#include "time/step_terms.hpp"

namespace budget::detail {

namespace {
/// TN-only FP8 GEMMs (TransformerEngine c188b533c utils.py:491-495): compute capability below 10.0, or
/// 12.x. A capability not recorded (or not of the form "major.minor") is taken as TN-only (the
/// transposed copies counted).
bool fp8_gemm_tn_only(const std::string& compute_capability) {
  int major = 0;
  std::size_t i = 0;
  for (; i < compute_capability.size() && i < 3 && compute_capability[i] >= '0' && compute_capability[i] <= '9'; ++i) {
    major = major * 10 + (compute_capability[i] - '0');
  }
  if (i == 0) return true;
  return major < 10 || major == 12;
}
}  // namespace

Fp8QuantizeCost te_quantize_cost(Fp8Recipe recipe, const std::string& compute_capability) {
  const double transpose = fp8_gemm_tn_only(compute_capability) ? 1.0 : 0.0;
  switch (recipe) {
    case Fp8Recipe::none: return {0.0, 0.0, false};
    case Fp8Recipe::delayed: return {3.0 + transpose, 1.0, transpose > 0};
    case Fp8Recipe::tensorwise: return {5.0 + transpose, 3.0, false};
    case Fp8Recipe::blockwise: return {4.0 + 8.0 / 128.0, 1.0, false};
    case Fp8Recipe::mxfp8: return {4.0 + 2.0 / 32.0, 1.0, false};
  }
  return {0.0, 0.0, false};
}

double quantize_bytes(const StackPlan& plan, std::int64_t rows, std::int64_t k, std::int64_t n, std::int64_t passes) {
  if (plan.quantize.bytes_per_element <= 0) return 0.0;
  const double input = static_cast<double>(rows) * static_cast<double>(k);     // X, rows × K
  const double gradient = static_cast<double>(rows) * static_cast<double>(n);  // dY, rows × N
  const double forwards = passes <= 2 ? 1.0 : static_cast<double>(passes - 2);
  const double backward = passes >= 2 ? 1.0 : 0.0;
  const double te = plan.quantize.bytes_per_element * (forwards * input + backward * gradient);
  // The published rows' per-token quantize: 3 bytes an element of rows × K in each pass timed.
  const double pass_count = forwards + backward + (passes >= 3 ? 1.0 : 0.0);
  const double in_rows = plan.rows_quantize_bytes_per_element * input * pass_count;
  return te > in_rows ? te - in_rows : 0.0;
}

double quantize_launches(const StackPlan& plan, std::int64_t groups, std::int64_t passes) {
  if (plan.quantize.kernels <= 0) return 0.0;
  const double forwards = passes <= 2 ? 1.0 : static_cast<double>(passes - 2);
  const double tensors = forwards + (passes >= 2 ? 1.0 : 0.0);
  const double per_tensor = plan.quantize.multi_tensor ? plan.quantize.kernels
                                                       : plan.quantize.kernels * static_cast<double>(groups);
  return tensors * per_tensor;
}

}  // namespace budget::detail
