// The op list (ops.hpp): layer_ops() assembles it from its parts (accounting/op_builders.hpp):
// attention (ops_attention.cpp), FFN and memory-bound FFN ops (ops_ffn.cpp), norms, MTP and head
// (ops_stack.cpp).

#include "budget/ops.hpp"

#include "accounting/op_builders.hpp"

#include "accounting/ops_glue.hpp"
#include "base/enum_names.hpp"

namespace budget {

namespace {
constexpr auto op_kind_names = detail::enum_names<OpKind::attention_gate>({
    {OpKind::qkv_projection, "qkv_projection"}, {OpKind::attention_scores, "attention_scores"},
    {OpKind::output_projection, "output_projection"}, {OpKind::router, "router"},
    {OpKind::routed_experts, "routed_experts"}, {OpKind::shared_experts, "shared_experts"},
    {OpKind::dense_ffn, "dense_ffn"}, {OpKind::norms, "norms"}, {OpKind::final_norm, "final_norm"},
    {OpKind::embedding, "embedding"}, {OpKind::lm_head, "lm_head"}, {OpKind::q_down_projection, "q_down_projection"},
    {OpKind::q_up_projection, "q_up_projection"}, {OpKind::kv_down_projection, "kv_down_projection"},
    {OpKind::kv_up_projection, "kv_up_projection"}, {OpKind::mtp_module, "mtp_module"},
    {OpKind::router_topk, "router_topk"}, {OpKind::expert_dispatch, "expert_dispatch"},
    {OpKind::expert_combine, "expert_combine"}, {OpKind::expert_activation, "expert_activation"},
    {OpKind::shared_activation, "shared_activation"}, {OpKind::dense_activation, "dense_activation"},
    {OpKind::residual_add, "residual_add"}, {OpKind::attention_layout, "attention_layout"},
    {OpKind::routing_weights, "routing_weights"}, {OpKind::combine_zero, "combine_zero"},
    {OpKind::router_softmax_fp32, "router_softmax_fp32"}, {OpKind::mixer_in_projection, "mixer_in_projection"},
    {OpKind::short_convolution, "short_convolution"}, {OpKind::delta_rule_scan, "delta_rule_scan"},
    {OpKind::ssd_scan, "ssd_scan"}, {OpKind::mixer_out_projection, "mixer_out_projection"},
    {OpKind::indexer_projection, "indexer_projection"}, {OpKind::indexer_scores, "indexer_scores"},
    {OpKind::indexer_topk, "indexer_topk"}, {OpKind::attention_gate, "attention_gate"}});
}  // namespace

std::string_view to_string(OpKind kind) { return detail::name_of(op_kind_names, kind); }

std::vector<Op> layer_ops(const ArchConfig& c, const Workload& w) {
  using namespace accounting_detail;
  const OpListContext x(c, w);
  std::vector<Op> ops;
  ops.reserve(24);
  // The order is part of the contract (tests and goldens compare lists): attention, linear-attention
  // and Mamba-2 mixers, FFN, norms, MTP, embedding and head, then the memory-bound FFN and attention
  // ops.
  add_attention_ops(ops, x);
  add_mixer_ops(ops, x);
  add_ffn_ops(ops, x);
  add_norm_ops(ops, x);
  if (c.mtp_layers > 0) add_mtp_op(ops, x);
  if (c.vocab_size > 0) add_head_ops(ops, x);
  add_ffn_memory_ops(ops, x);
  add_attention_memory_ops(ops, x);
  append_glue_ops(c, x.n, ops);  // residual adds, layout copies, routing weights, ... (ops_glue.cpp)
  return ops;
}

}  // namespace budget
