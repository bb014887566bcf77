// The op list (ops.hpp): layer_ops() assembles it from its parts (accounting/op_builders.hpp):
// attention (ops_attention.cpp), FFN and memory-bound FFN ops (ops_ffn.cpp), norms, MTP and head
// (ops_stack.cpp).

#include "budget/ops.hpp"

#include "accounting/op_builders.hpp"

#include "accounting/ops_glue.hpp"

namespace budget {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::qkv_projection: return "qkv_projection";
    case OpKind::attention_scores: return "attention_scores";
    case OpKind::output_projection: return "output_projection";
    case OpKind::router: return "router";
    case OpKind::routed_experts: return "routed_experts";
    case OpKind::shared_experts: return "shared_experts";
    case OpKind::dense_ffn: return "dense_ffn";
    case OpKind::norms: return "norms";
    case OpKind::final_norm: return "final_norm";
    case OpKind::embedding: return "embedding";
    case OpKind::lm_head: return "lm_head";
    case OpKind::router_topk: return "router_topk";
    case OpKind::expert_dispatch: return "expert_dispatch";
    case OpKind::expert_combine: return "expert_combine";
    case OpKind::expert_activation: return "expert_activation";
    case OpKind::shared_activation: return "shared_activation";
    case OpKind::dense_activation: return "dense_activation";
    case OpKind::q_down_projection: return "q_down_projection";
    case OpKind::q_up_projection: return "q_up_projection";
    case OpKind::kv_down_projection: return "kv_down_projection";
    case OpKind::kv_up_projection: return "kv_up_projection";
    case OpKind::mtp_module: return "mtp_module";
    case OpKind::residual_add: return "residual_add";
    case OpKind::attention_layout: return "attention_layout";
    case OpKind::routing_weights: return "routing_weights";
    case OpKind::combine_zero: return "combine_zero";
    case OpKind::router_softmax_fp32: return "router_softmax_fp32";
  }
  return "?";
}

std::vector<Op> layer_ops(const ArchConfig& c, const Workload& w) {
  using namespace accounting_detail;
  const OpListContext x(c, w);
  std::vector<Op> ops;
  ops.reserve(24);
  // The order is part of the contract (tests and goldens compare lists): attention, FFN, norms,
  // MTP, embedding and head, then the memory-bound FFN ops.
  add_attention_ops(ops, x);
  add_ffn_ops(ops, x);
  add_norm_ops(ops, x);
  if (c.mtp_layers > 0) add_mtp_op(ops, x);
  if (c.vocab_size > 0) add_head_ops(ops, x);
  add_ffn_memory_ops(ops, x);
  append_glue_ops(c, ops);  // residual adds, layout copies, routing weights, ... (ops_glue.cpp)
  return ops;
}

}  // namespace budget
