#include "budget/kernel_class.hpp"
#include "base/enum_names.hpp"

namespace budget {

KernelClass kernel_class(OpKind kind) {
  switch (kind) {
    case OpKind::qkv_projection:
    case OpKind::output_projection:
    case OpKind::router:
    case OpKind::lm_head:
    case OpKind::q_down_projection:
    case OpKind::q_up_projection:
    case OpKind::kv_down_projection:
    case OpKind::kv_up_projection:
    case OpKind::mixer_in_projection:
    case OpKind::mixer_out_projection:
    case OpKind::indexer_projection: return KernelClass::projection_gemm;
    case OpKind::short_convolution: return KernelClass::short_convolution;
    case OpKind::delta_rule_scan:
    case OpKind::ssd_scan: return KernelClass::recurrent_scan;
    case OpKind::indexer_scores: return KernelClass::indexer_scores;
    case OpKind::dense_ffn:
    case OpKind::shared_experts: return KernelClass::mlp_gemms;
    case OpKind::routed_experts: return KernelClass::expert_gemms;
    case OpKind::attention_scores: return KernelClass::attention;
    case OpKind::norms:
    case OpKind::final_norm: return KernelClass::rms_norm;
    case OpKind::router_topk: return KernelClass::router_topk;
    case OpKind::expert_dispatch:
    case OpKind::expert_combine: return KernelClass::gather_scatter;
    case OpKind::expert_activation:
    case OpKind::shared_activation:
    case OpKind::dense_activation: return KernelClass::activation;
    case OpKind::embedding: return KernelClass::embedding_lookup;
    case OpKind::residual_add:
    case OpKind::attention_layout:
    case OpKind::routing_weights:
    case OpKind::combine_zero:
    case OpKind::router_softmax_fp32:
    case OpKind::indexer_topk:
    case OpKind::attention_gate: return KernelClass::layer_glue;
    case OpKind::mtp_module: return KernelClass::not_timed;
  }
  return KernelClass::not_timed;
}

namespace {
constexpr auto kernel_class_names = detail::enum_names<KernelClass::not_timed>({
    {KernelClass::projection_gemm, "projection_gemm"}, {KernelClass::mlp_gemms, "mlp_gemms"},
    {KernelClass::expert_gemms, "expert_gemms"}, {KernelClass::attention, "attention"},
    {KernelClass::rms_norm, "rms_norm"}, {KernelClass::router_topk, "router_topk"},
    {KernelClass::gather_scatter, "gather_scatter"}, {KernelClass::activation, "activation"},
    {KernelClass::embedding_lookup, "embedding_lookup"}, {KernelClass::layer_glue, "layer_glue"},
    {KernelClass::short_convolution, "short_convolution"}, {KernelClass::recurrent_scan, "recurrent_scan"},
    {KernelClass::indexer_scores, "indexer_scores"}, {KernelClass::not_timed, "not_timed"}});
}  // namespace

std::string_view to_string(KernelClass kernel) { return detail::name_of(kernel_class_names, kernel); }

}  // namespace budget
