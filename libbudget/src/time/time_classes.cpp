// The kernel-class → time-class map of the layer correction and the run fit (time_model.hpp, TimeClass;
// docs/calibration.md, "Layer correction").
#include "budget/kernel_class.hpp"
#include "budget/time_model.hpp"
#include "base/enum_names.hpp"

namespace budget {

namespace {
constexpr auto time_class_names = detail::enum_names<TimeClass::glue>({
    {TimeClass::gemm, "gemm"}, {TimeClass::attention_aligned, "attention_aligned"},
    {TimeClass::attention_unaligned, "attention_unaligned"}, {TimeClass::expert_gemms, "expert_gemms"},
    {TimeClass::indexed, "indexed"}, {TimeClass::elementwise, "elementwise"}, {TimeClass::glue, "glue"}});
}  // namespace

std::string_view to_string(TimeClass cls) { return detail::name_of(time_class_names, cls); }

namespace {
struct KernelTimeClass {
  KernelClass kernel;
  TimeClass time;
};
/// The time class of each kernel class (budget/kernel_class.hpp): the GEMMs (projections, MLPs, the
/// recurrent scans' chunk matmuls) gemm; the routed experts' grouped GEMMs their own; fused attention
/// and the indexer's scores (an attention-shaped q·k) attention_aligned (an attention of head_dim not
/// a multiple of 8 is moved to attention_unaligned by step_time_class()); gathers and scatters
/// (dispatch, combine, the embedding lookup) indexed; the norms, router top-k, activations and the
/// short convolution elementwise; the layer glue glue; MTP modules (not timed) gemm.
constexpr auto kernel_time_classes = detail::enum_rows<KernelClass::not_timed, &KernelTimeClass::kernel>({
    {KernelClass::projection_gemm, TimeClass::gemm},
    {KernelClass::mlp_gemms, TimeClass::gemm},
    {KernelClass::expert_gemms, TimeClass::expert_gemms},
    {KernelClass::attention, TimeClass::attention_aligned},
    {KernelClass::rms_norm, TimeClass::elementwise},
    {KernelClass::router_topk, TimeClass::elementwise},
    {KernelClass::gather_scatter, TimeClass::indexed},
    {KernelClass::activation, TimeClass::elementwise},
    {KernelClass::embedding_lookup, TimeClass::indexed},
    {KernelClass::layer_glue, TimeClass::glue},
    {KernelClass::short_convolution, TimeClass::elementwise},
    {KernelClass::recurrent_scan, TimeClass::gemm},
    {KernelClass::indexer_scores, TimeClass::attention_aligned},
    {KernelClass::not_timed, TimeClass::gemm},
});
}  // namespace

/// The op's time class is its kernel class's (the op-traits table, budget/op_traits.hpp).
TimeClass time_class_of(OpKind kind) {
  const auto k = static_cast<std::size_t>(kernel_class(kind));
  return k < kernel_time_classes.size() ? kernel_time_classes[k].time : TimeClass::gemm;
}

bool layer_fitted(TimeClass cls) {
  switch (cls) {
    case TimeClass::gemm:
    case TimeClass::expert_gemms:
    case TimeClass::elementwise: return false;
    case TimeClass::attention_aligned:
    case TimeClass::attention_unaligned:
    case TimeClass::indexed:
    case TimeClass::glue: return true;
  }
  return true;
}

}  // namespace budget
