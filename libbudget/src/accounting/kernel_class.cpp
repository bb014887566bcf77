#include "budget/kernel_class.hpp"

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
    case OpKind::kv_up_projection: return KernelClass::projection_gemm;
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
    case OpKind::router_softmax_fp32: return KernelClass::layer_glue;
    case OpKind::mtp_module: return KernelClass::not_timed;
  }
  return KernelClass::not_timed;
}

std::string_view to_string(KernelClass kernel) {
  switch (kernel) {
    case KernelClass::projection_gemm: return "projection_gemm";
    case KernelClass::mlp_gemms: return "mlp_gemms";
    case KernelClass::expert_gemms: return "expert_gemms";
    case KernelClass::attention: return "attention";
    case KernelClass::rms_norm: return "rms_norm";
    case KernelClass::router_topk: return "router_topk";
    case KernelClass::gather_scatter: return "gather_scatter";
    case KernelClass::activation: return "activation";
    case KernelClass::embedding_lookup: return "embedding_lookup";
    case KernelClass::layer_glue: return "layer_glue";
    case KernelClass::not_timed: return "not_timed";
  }
  return "?";
}

}  // namespace budget
