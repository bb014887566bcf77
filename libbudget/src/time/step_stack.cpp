// The kernel stack of a training step (docs/calibration.md, "Kernel stacks"): what PyTorch eager and
// Megatron-Core with Transformer Engine run beyond the op list's GEMMs and attention, and FP8.
//
// PyTorch eager (the H200 profile's stack): the op list's memory-bound ops as the profile's rows
// time them, plus the layer glue an eager layer runs (layer_glue_time(), the table of glue_cost()).
//
// Megatron-Core with Transformer Engine (Megatron-LM d98e8a64, TE as Megatron-Core's
// --transformer-impl transformer_engine builds the layer; each kernel's source below):
//   - no attention layout copies: TE's fused attention reads the QKV GEMM's output in place
//     (sbhd/bshd views, megatron/core/transformer/attention.py); instead the fused RoPE kernel
//     (--apply-rope-fusion, megatron/core/models/common/embeddings/rope_utils.py,
//     fused_apply_rotary_pos_emb) reads and writes q and k: 2·2·(q + kv) bytes a token forward, the
//     same backward;
//   - no routing-weight products and no zeroed combine buffer: the fused unpermute applies the
//     probabilities (--moe-permute-fusion, megatron/core/transformer/moe/moe_utils.py, unpermute
//     with TE's moe_unpermute); the permute/unpermute themselves are the dispatch and combine ops
//     (gather/scatter of top_k rows of H);
//   - SwiGLU fused (bias_swiglu_impl, megatron/core/fusions/fused_bias_swiglu.py): the activation op;
//   - the fused cross-entropy (--cross-entropy-loss-fusion, TE's parallel_cross_entropy): the
//     bf16 logits read forward and read again with the gradient written backward, 6 bytes a logit
//     (added to the LM head);
//   - grouped GEMMs (--moe-grouped-gemm, TE GroupedLinear): a profile without expert_gemms rows times
//     them as one GEMM over every expert's rows (each expert's rounded up to 128, a tile) plus the
//     further experts' weights read and, in the weight-gradient pass, every expert's gradient
//     accumulated into the main gradients (time_step.cpp, grouped_gemm_stack_terms());
//   - FP8 (--fp8-format / --fp8-recipe, TE's quantizers): the TE linear layers' GEMMs at FP8 (the
//     router and the LM head stay bf16: Megatron builds them outside TE), and per GEMM the quantize
//     kernels of its input (forward) and of its output gradient (backward) under the recipe, each
//     with its TransformerEngine source line (fp8_quantize.cpp), beyond what published FP8 GEMM rows
//     already time (StackPlan::rows_quantize_bytes_per_element).
//   - kernel launches: without CUDA graphs each launch costs the CPU c =
//     TimeModelOptions::host_launch_seconds (PyTorch's and TE's dispatch; 30 µs, fitted on the
//     measured MoE runs: megatron_host_launch_seconds); the GPU waits only where an op's kernels are
//     shorter than their launches: max(0, c · launches − op time). With CUDA graphs nothing.

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/op_traits.hpp"
#include "base/enum_names.hpp"
#include "time/step_terms.hpp"

namespace budget {

namespace {
constexpr auto kernel_stack_names = detail::enum_names<KernelStack::megatron_core_te>(
    {{KernelStack::profile, "profile"}, {KernelStack::pytorch_eager, "pytorch-eager"},
     {KernelStack::megatron_core_te, "megatron-core-te"}});
constexpr auto time_provenance_names = detail::enum_names<TimeProvenance::assumed>(
    {{TimeProvenance::measured, "measured"}, {TimeProvenance::published, "published"},
     {TimeProvenance::interpolated, "interpolated"}, {TimeProvenance::carried, "carried"},
     {TimeProvenance::extrapolated, "extrapolated"}, {TimeProvenance::assumed, "assumed"}});

}  // namespace

std::string_view to_string(KernelStack stack) { return detail::name_of(kernel_stack_names, stack); }
std::string_view to_string(TimeProvenance provenance) { return detail::name_of(time_provenance_names, provenance); }

namespace detail {

StackPlan stack_plan(const TimeModel& model) {
  StackPlan plan;
  const TimeModelOptions& o = model.options();
  plan.megatron = o.stack == KernelStack::megatron_core_te ||
                  (o.stack == KernelStack::profile && model.profile().source.stack == "megatron-core-te");
  plan.recipe = o.recipe.fp8;
  switch (o.recipe.fp8) {
    case Fp8Recipe::none: plan.gemm_dtype = TimeQuery::Dtype::bf16; break;
    case Fp8Recipe::delayed:
    case Fp8Recipe::tensorwise: plan.gemm_dtype = TimeQuery::Dtype::fp8; break;
    case Fp8Recipe::blockwise: plan.gemm_dtype = TimeQuery::Dtype::fp8_block; break;
    case Fp8Recipe::mxfp8: plan.gemm_dtype = TimeQuery::Dtype::mxfp8; break;
  }
  plan.quantize = te_quantize_cost(o.recipe.fp8, model.profile().device.compute_capability);
  plan.launch_seconds = plan.megatron && !o.cuda_graphs ? o.host_launch_seconds : 0.0;
  plan.graphed = o.cuda_graph_modules;
  plan.main_grad_bytes = main_grad_bytes(o.recipe);
  // Published FP8 GEMM rows (aiconfigurator's collector) time a per-token activation quantize with the
  // GEMM (data/kernels/README.md names it: ai-dynamo/aiconfigurator@095f58a5; the collection's README:
  // "FP8 GEMM times include the activation-quantization kernel"): read 2 + write 1 bytes an element of
  // the input. Each backward pass is derived from the forward row by its FLOPs, so it carries that
  // quantize likewise; TE's quantize bytes beyond those are added (quantize_bytes()).
  const bool fp8_rows = model.has_rows(TimeQuery::Op::gemm, TimeQuery::Dtype::fp8) ||
                        model.has_rows(TimeQuery::Op::gemm, TimeQuery::Dtype::fp8_block) ||
                        model.has_rows(TimeQuery::Op::gemm, TimeQuery::Dtype::mxfp8);
  plan.quantize_in_rows = o.recipe.fp8 != Fp8Recipe::none && fp8_rows && model.profile().source.kind == "published";
  if (plan.quantize_in_rows) plan.rows_quantize_bytes_per_element = 3.0;
  return plan;
}

bool stack_drops(const StackPlan& plan, OpKind kind) { return plan.megatron && op_traits(kind).megatron_skips; }

StackExtra stack_extra(const StackPlan& plan, const Op& op, const ArchConfig& c, const Workload& w) {
  StackExtra e;
  if (!plan.megatron) return e;
  const double T = static_cast<double>(w.tokens_per_step);
  const double backward = w.training_passes >= 2 ? 1.0 : 0.0;
  const double extra_forwards = w.training_passes > 3 ? static_cast<double>(w.training_passes - 3) : 0.0;
  const double forwards = 1.0 + extra_forwards;
  if (op.kind == OpKind::attention_scores && !c.attention.mla) {
    // Fused RoPE on q and k (rope_utils.py): read and write, 2 bytes an element, each pass.
    const double width = static_cast<double>(c.attention.num_heads + c.attention.num_kv_heads) *
                         static_cast<double>(c.attention.head_dim);
    e.bytes += 4.0 * width * T * (forwards + backward);
    e.launches += 2.0 * (forwards + backward);
    e.note = "fused RoPE (q and k read and written)";
  }
  if (op.kind == OpKind::lm_head && w.training_passes >= 2) {
    // Fused cross-entropy: the bf16 logits read forward, read and their gradient written backward.
    e.bytes += 6.0 * static_cast<double>(op.out_features) * T;
    e.launches += 2.0;
    e.note = "fused cross-entropy (6 bytes a logit)";
  }
  return e;
}

double exposed_launch_seconds(const StackPlan& plan, double launches, double op_seconds) {
  return std::max(0.0, plan.launch_seconds * launches - op_seconds);
}

double graphed_launch_share(const CudaGraphModules& g, OpKind kind) {
  // The submodules each CUDA graph module covers (TransformerLayer._get_submodules_under_cudagraphs,
  // megatron/core/transformer/transformer_layer.py:1235-1262 at d98e8a64): attn the input norm and
  // the attention; mlp a dense layer's pre-MLP norm and MLP, moe an MoE layer's; moe_router the
  // pre-MLP norm, the router and the shared experts (without --moe-shared-expert-overlap, which this
  // model does not read: counted graphed). Of a layer's two norms and two residual adds, one each
  // belongs to each sublayer (the op list's norms and adds are every layer's: a model with dense and
  // MoE layers under mlp or moe alone is counted as if both were); the q/k norms are in attention.
  const bool attention = g.attn, whole_mlp = g.mlp || g.moe, router = g.moe || g.moe_router;
  switch (kind) {
    case OpKind::qkv_projection:
    case OpKind::attention_scores:
    case OpKind::output_projection:
    case OpKind::attention_layout:
    case OpKind::q_down_projection:
    case OpKind::q_up_projection:
    case OpKind::kv_down_projection:
    case OpKind::kv_up_projection:
    case OpKind::indexer_projection:
    case OpKind::indexer_scores:
    case OpKind::indexer_topk:
    case OpKind::attention_gate: return attention ? 1.0 : 0.0;
    case OpKind::mixer_in_projection:
    case OpKind::short_convolution:
    case OpKind::delta_rule_scan:
    case OpKind::ssd_scan:
    case OpKind::mixer_out_projection: return g.mamba || attention ? 1.0 : 0.0;
    case OpKind::norms: return (attention ? 0.5 : 0.0) + (router || g.mlp ? 0.5 : 0.0);
    case OpKind::residual_add: return (attention ? 0.5 : 0.0) + (whole_mlp ? 0.5 : 0.0);
    case OpKind::router:
    case OpKind::router_topk:
    case OpKind::router_softmax_fp32:
    case OpKind::shared_experts:
    case OpKind::shared_activation: return router ? 1.0 : 0.0;
    case OpKind::dense_ffn:
    case OpKind::dense_activation: return g.mlp ? 1.0 : 0.0;
    case OpKind::routed_experts:
    case OpKind::expert_dispatch:
    case OpKind::expert_combine:
    case OpKind::expert_activation:
    case OpKind::routing_weights:
    case OpKind::combine_zero: return g.moe ? 1.0 : 0.0;
    case OpKind::final_norm:
    case OpKind::embedding:
    case OpKind::lm_head:
    case OpKind::mtp_module: return 0.0;
  }
  return 0.0;
}

void add_stack_time(const StackPlan& plan, const Op& op, const ArchConfig& config, const Workload& workload,
                    double copy_bytes_per_s, const StackBytes& stack_bytes, StepTermsPath path, OpStepTime& t,
                    double& launches) {
  const double quantize_bytes = stack_bytes.quantize;
  if (!plan.megatron && quantize_bytes <= 0) return;
  const StackExtra extra = stack_extra(plan, op, config, workload);
  const double bytes = quantize_bytes + extra.bytes + stack_bytes.grouped_weights + stack_bytes.grad_accumulate;
  t.seconds_per_step += bytes / copy_bytes_per_s;
  launches += extra.launches + stack_bytes.quantize_launches;
  const double eager_launches = launches * (1.0 - graphed_launch_share(plan.graphed, op.kind));
  const double waited = exposed_launch_seconds(plan, eager_launches, t.seconds_per_step);
  t.seconds_per_step += waited;
  if (path != StepTermsPath::rows) return;
  const auto add_note = [&t](const std::string& text) { t.note += (t.note.empty() ? "" : "; ") + text; };
  if (quantize_bytes > 0) {
    add_note(fmt::format("FP8 ({}) quantize kernels ({:g} bytes an element of the input and the output gradient{}) at "
                         "the copy bandwidth",
                         to_string(plan.recipe), plan.quantize.bytes_per_element,
                         plan.quantize_in_rows ? ", less the 3 the published FP8 rows time" : ""));
  }
  if (stack_bytes.grouped_weights > 0) add_note("the grouped GEMM's further groups' weights read at the copy bandwidth");
  if (stack_bytes.grad_accumulate > 0) {
    add_note(fmt::format("its weight gradients accumulated into the main gradients ({:g} bytes a weight) at the copy "
                         "bandwidth",
                         2.0 * plan.main_grad_bytes));
  }
  if (!extra.note.empty()) add_note(extra.note + " at the copy bandwidth");
  if (waited > 0) {
    add_note(fmt::format("kernels shorter than their CPU launch time ({:g} µs a launch without CUDA graphs)",
                         plan.launch_seconds * 1e6));
  }
}

namespace {
/// Backward bytes / forward bytes and the launches of one execution of a layer glue op (PyTorch
/// eager, the layer of tests/data/time/h200_torch_layers.jsonl):
///   residual_add: the gradient of the residual stream is accumulated by an add of the same shape
///     (ratio 1); 2 adds forward, 2 backward.
///   attention_layout: the gradients of q, k, v and of the output are copied back (ratio 1); 4
///     copies (q, k, v, output) each way.
///   routing_weights: the gradient of the rows (k rows × weight: 4kH) and of the weights (a dot
///     product over H of two k-row tensors: 4kH) (ratio 2); gather and product forward, 3 backward.
///   combine_zero: no backward; 1 launch.
///   router_softmax_fp32: softmax backward reads the probabilities and their gradient and writes
///     one (12E), the cast back 6E: 18E over the forward's 14E; 2 launches each way.
struct GlueCost {
  double backward_ratio;
  double forward_launches;
  double backward_launches;
};
GlueCost glue_cost(OpKind kind) {
  switch (kind) {
    case OpKind::residual_add: return {1.0, 2, 2};
    case OpKind::attention_layout: return {1.0, 4, 4};
    case OpKind::routing_weights: return {2.0, 2, 3};
    case OpKind::combine_zero: return {0.0, 1, 0};
    case OpKind::router_softmax_fp32: return {18.0 / 14.0, 2, 2};
    default: return {0.0, 0, 0};
  }
}

}  // namespace

/// KernelClass::layer_glue (no profile rows): forward bytes × T × (1 + backward ratio + extra
/// forwards) at the copy bandwidth, and the glue op's launches (glue_cost()).
void time_layer_glue(const Op& op, const Workload& w, double copy_bytes_per_s, StepTermsPath path, OpStepTime& t,
                     double& launches) {
  const GlueCost cost = glue_cost(op.kind);
  const double extra_forwards = w.training_passes > 3 ? static_cast<double>(w.training_passes - 3) : 0.0;
  const double backward = w.training_passes >= 2 ? cost.backward_ratio : 0.0;
  t.seconds_per_step =
      op.forward_bytes * static_cast<double>(w.tokens_per_step) * (1.0 + backward + extra_forwards) / copy_bytes_per_s;
  launches = cost.forward_launches * (1.0 + extra_forwards) + (w.training_passes >= 2 ? cost.backward_launches : 0.0);
  if (path == StepTermsPath::rows) t.note = "no rows: bytes at the measured copy bandwidth";
}


}  // namespace detail
}  // namespace budget
