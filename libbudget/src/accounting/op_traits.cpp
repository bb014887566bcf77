// The op-traits table (budget/op_traits.hpp): one row per OpKind, in declaration order, checked
// complete at compile time (base/enum_names.hpp, enum_rows()).
#include "budget/op_traits.hpp"

#include "base/enum_names.hpp"

namespace budget {

namespace {

using F = FlopsByComponent;
using P = ParamsByComponent;
using K = KernelClass;
using L = LayerPart;
using W = WeightShard;
constexpr bool fp8 = true;   // fp8_linear
constexpr bool skip = true;  // megatron_skips

/// Where an op's forward FLOPs and parameters are summed (OpBudget).
namespace b {
constexpr OpBudget qkv{&F::qkv_projection, &P::attention};
constexpr OpBudget scores{&F::attention_scores, &P::attention};
constexpr OpBudget output{&F::output_projection, &P::attention};
constexpr OpBudget router{&F::router, &P::router};
constexpr OpBudget routed{&F::routed_experts, &P::routed_experts};
constexpr OpBudget shared{&F::shared_experts, &P::shared_experts};
constexpr OpBudget dense{&F::dense_ffn, &P::dense_ffn};
constexpr OpBudget norm{nullptr, &P::norms};
constexpr OpBudget mixer{&F::mixers, &P::mixers};
constexpr OpBudget apart{};  // reported apart from the budgets (embedding, LM head, MTP modules)
constexpr OpBudget none{};   // memory-bound: no FLOPs, no parameters
}  // namespace b

// Budgets: the projections of attention (MLA's down and up, the indexer's) sum into qkv_projection's
// FLOPs, the attention scores (the indexer's too) into attention_scores', all of them into the
// attention parameters (the scores hold only attention sinks, gpt-oss); the linear-attention and
// Mamba-2 ops into the mixers; norms hold parameters only; embedding, LM head and MTP modules are
// reported apart; memory-bound ops add nothing.
// Layer parts (the cluster step time): the layer glue goes with the part whose tensors it touches:
// residual adds, attention layout copies, the indexer's top-k and the attention gate with attention,
// the fp32 router softmax with the router, the routing-weight product and the combine buffer with the
// routed experts.
// Weights: Megatron-Core MLA builds the down projections as TELinear with parallel_mode='duplicated'
// (megatron/core/transformer/multi_latent_attention.py lines 526-527, 573-574 at d98e8a64):
// replicated; its Mamba mixer shards its projections, convolution and heads over TP.
constexpr auto op_traits_table = detail::enum_rows<OpKind::attention_gate, &OpTraits::kind>({
    // kind, budget, kernel class, layer part, weights, fp8_linear, megatron_skips
    {OpKind::qkv_projection, b::qkv, K::projection_gemm, L::attention, W::attention_tp, fp8},
    {OpKind::attention_scores, b::scores, K::attention, L::attention, W::attention_tp},
    {OpKind::output_projection, b::output, K::projection_gemm, L::attention, W::attention_tp, fp8},
    {OpKind::router, b::router, K::projection_gemm, L::moe_tp, W::moe_replicated},
    {OpKind::routed_experts, b::routed, K::expert_gemms, L::routed, W::experts, fp8},
    {OpKind::shared_experts, b::shared, K::mlp_gemms, L::moe_tp, W::moe_tp, fp8},
    {OpKind::dense_ffn, b::dense, K::mlp_gemms, L::dense, W::dense_tp, fp8},
    {OpKind::norms, b::norm, K::rms_norm, L::attention, W::attention_replicated},
    {OpKind::final_norm, b::norm, K::rms_norm, L::final_norm, W::final_norm},
    {OpKind::embedding, b::apart, K::embedding_lookup, L::embedding, W::embedding},
    {OpKind::lm_head, b::apart, K::projection_gemm, L::head, W::lm_head},
    {OpKind::q_down_projection, b::qkv, K::projection_gemm, L::attention, W::attention_replicated, fp8},
    {OpKind::q_up_projection, b::qkv, K::projection_gemm, L::attention, W::attention_tp, fp8},
    {OpKind::kv_down_projection, b::qkv, K::projection_gemm, L::attention, W::attention_replicated, fp8},
    {OpKind::kv_up_projection, b::qkv, K::projection_gemm, L::attention, W::attention_tp, fp8},
    {OpKind::mtp_module, b::apart, K::not_timed, L::none, W::mtp},
    {OpKind::router_topk, b::none, K::router_topk, L::moe_tp},
    {OpKind::expert_dispatch, b::none, K::gather_scatter, L::routed},
    {OpKind::expert_combine, b::none, K::gather_scatter, L::routed},
    {OpKind::expert_activation, b::none, K::activation, L::routed},
    {OpKind::shared_activation, b::none, K::activation, L::moe_tp},
    {OpKind::dense_activation, b::none, K::activation, L::dense},
    {OpKind::residual_add, b::none, K::layer_glue, L::attention},
    {OpKind::attention_layout, b::none, K::layer_glue, L::attention, W::none, false, skip},
    {OpKind::routing_weights, b::none, K::layer_glue, L::routed, W::none, false, skip},
    {OpKind::combine_zero, b::none, K::layer_glue, L::routed, W::none, false, skip},
    {OpKind::router_softmax_fp32, b::none, K::layer_glue, L::moe_tp},
    {OpKind::mixer_in_projection, b::mixer, K::projection_gemm, L::attention, W::attention_tp},
    {OpKind::short_convolution, b::mixer, K::short_convolution, L::attention, W::attention_tp},
    {OpKind::delta_rule_scan, b::mixer, K::recurrent_scan, L::attention, W::attention_tp},
    {OpKind::ssd_scan, b::mixer, K::recurrent_scan, L::attention, W::attention_tp},
    {OpKind::mixer_out_projection, b::mixer, K::projection_gemm, L::attention, W::attention_tp},
    {OpKind::indexer_projection, b::qkv, K::projection_gemm, L::attention, W::attention_tp},
    {OpKind::indexer_scores, b::scores, K::indexer_scores, L::attention},
    {OpKind::indexer_topk, b::none, K::layer_glue, L::attention},
    {OpKind::attention_gate, b::none, K::layer_glue, L::attention},
});

/// The memory-bound kernel classes: what ops.hpp's is_memory_bound() lists by kind.
constexpr bool memory_bound_kernel(KernelClass k) {
  return k == K::router_topk || k == K::gather_scatter || k == K::activation || k == K::layer_glue;
}

/// ops.hpp's predicates agree with the table: a kind added to one and not the other does not compile.
constexpr bool predicates_agree() {
  for (const OpTraits& t : op_traits_table) {
    if (is_layer_glue(t.kind) != (t.kernel == K::layer_glue)) return false;
    if (is_memory_bound(t.kind) != memory_bound_kernel(t.kernel)) return false;
    const bool apart = t.weights == W::embedding || t.weights == W::lm_head || t.weights == W::mtp;
    if (is_non_embedding(t.kind) == apart) return false;
    if (apart && (t.budget.flops != nullptr || t.budget.params != nullptr)) return false;
  }
  return true;
}
static_assert(predicates_agree(), "ops.hpp's is_layer_glue/is_memory_bound/is_non_embedding disagree with the traits");

}  // namespace

const OpTraits& op_traits(OpKind kind) {
  static constexpr OpTraits unknown{};
  const auto i = static_cast<std::size_t>(kind);
  return i < op_traits_table.size() ? op_traits_table[i] : unknown;
}

}  // namespace budget
