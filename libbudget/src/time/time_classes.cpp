// The op-kind → time-class map of the layer correction and the run fit (time_model.hpp, TimeClass;
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

/// The op-kind → time-class map of the layer correction.
TimeClass time_class_of(OpKind kind) {
  switch (kind) {
    case OpKind::qkv_projection:
    case OpKind::output_projection:
    case OpKind::router:
    case OpKind::shared_experts:
    case OpKind::dense_ffn:
    case OpKind::lm_head:
    case OpKind::q_down_projection:
    case OpKind::q_up_projection:
    case OpKind::kv_down_projection:
    case OpKind::kv_up_projection:
    case OpKind::mixer_in_projection:
    case OpKind::mixer_out_projection:
    case OpKind::indexer_projection:
    case OpKind::delta_rule_scan:
    case OpKind::ssd_scan:
    case OpKind::mtp_module: return TimeClass::gemm;
    case OpKind::indexer_scores: return TimeClass::attention_aligned;
    case OpKind::short_convolution: return TimeClass::elementwise;
    case OpKind::attention_scores: return TimeClass::attention_aligned;
    case OpKind::routed_experts: return TimeClass::expert_gemms;
    case OpKind::embedding:
    case OpKind::expert_dispatch:
    case OpKind::expert_combine: return TimeClass::indexed;
    case OpKind::norms:
    case OpKind::final_norm:
    case OpKind::router_topk:
    case OpKind::expert_activation:
    case OpKind::shared_activation:
    case OpKind::dense_activation: return TimeClass::elementwise;
    case OpKind::residual_add:
    case OpKind::attention_layout:
    case OpKind::routing_weights:
    case OpKind::combine_zero:
    case OpKind::router_softmax_fp32:
    case OpKind::indexer_topk:
    case OpKind::attention_gate: return TimeClass::glue;
  }
  return TimeClass::gemm;
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
