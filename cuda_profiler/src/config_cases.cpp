#include "budget/profiler/config_cases.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/kernel_class.hpp"
#include "budget/ops.hpp"

namespace budget::profiler {
namespace {

const char* const gemm_passes[] = {"forward", "input_grad", "weight_grad"};
const char* const passes[] = {"forward", "backward"};

void add_gemms(StepPlan& plan, const std::string& name, std::int64_t K, std::int64_t N, std::int64_t layers) {
  for (const char* pass : gemm_passes) plan.ops.push_back(StepOp{name, gemm_case(plan.tokens_per_step, K, N, pass), layers});
}

/// A dense MLP (shared experts fused side by side, or a dense FFN): up[/gate] H → m·width, down
/// width → H, and SwiGLU when gated.
void add_mlp(StepPlan& plan, const std::string& name, std::int64_t H, std::int64_t width, bool gated,
             std::int64_t layers) {
  add_gemms(plan, name, H, (gated ? 2 : 1) * width, layers);
  add_gemms(plan, name, width, H, layers);
  if (gated)
    for (const char* pass : passes) plan.ops.push_back(StepOp{name, swiglu_case(plan.tokens_per_step, width, pass), layers});
}

}  // namespace

StepPlan step_plan(const ArchConfig& config, const Workload& workload, std::int64_t tokens_per_step) {
  if (tokens_per_step <= 0 || tokens_per_step % workload.seq_len != 0)
    throw Error(fmt::format("tokens per step must be a positive multiple of seq_len {} (got {})", workload.seq_len,
                            tokens_per_step),
                "--tokens");
  StepPlan plan;
  plan.config = config.name;
  plan.tokens_per_step = tokens_per_step;
  plan.executed_layers = config.executed_layers();
  const std::int64_t T = tokens_per_step;
  const std::int64_t H = config.hidden_size;
  const auto& a = config.attention;
  const auto& f = config.ffn;
  if (a.mla || a.sliding_window > 0 || workload.sliding_window > 0)
    throw Error("budget-profile measures causal attention with equal query, key and value head widths and no "
                "sliding window; this config uses " +
                    std::string(a.mla ? "multi-head latent attention" : "sliding-window attention") + " (not measured)",
                config.name);
  for (const Op& op : layer_ops(config, workload)) {
    const std::int64_t layers = op.executed_layers;
    // What each op runs is the one op-kind → kernel-class map (budget/kernel_class.hpp), shared with
    // the time model, which queries what this plan measures.
    switch (kernel_class(op.kind)) {
      case KernelClass::projection_gemm:
        add_gemms(plan, std::string(to_string(op.kind)), op.in_features, op.out_features, layers);
        break;
      case KernelClass::attention: {
        std::int64_t doc_len = workload.seq_len;
        if (workload.attention_mask == AttentionMask::document)
          doc_len = std::clamp<std::int64_t>(std::llround(2.0 * workload.attended_keys - 1.0), 1, workload.seq_len);
        // Whole documents, then one shorter document with the remaining tokens (its own launch).
        const std::int64_t docs = T / doc_len;
        const std::int64_t remainder = T - docs * doc_len;
        for (const char* pass : passes) {
          plan.ops.push_back(StepOp{"attention", attention_case(docs, doc_len, a.num_heads, a.num_kv_heads, a.head_dim, pass), layers});
          if (remainder > 0)
            plan.ops.push_back(StepOp{"attention", attention_case(1, remainder, a.num_heads, a.num_kv_heads, a.head_dim, pass), layers});
        }
        break;
      }
      case KernelClass::expert_gemms: {
        const std::int64_t rows = T * f.top_k;
        const std::int64_t per_expert = std::max<std::int64_t>(1, rows / f.num_experts);
        for (const char* matrix : {f.gated ? "up_gate" : "up", "down"})
          for (const char* pass : gemm_passes)
            plan.ops.push_back(StepOp{"routed_experts",
                                      expert_gemm_case(f.num_experts, per_expert, H, f.expert_dim, f.top_k, matrix, pass),
                                      layers});
        for (const char* pass : passes) {
          plan.ops.push_back(StepOp{"router", router_case(T, f.num_experts, f.top_k, pass), layers});
          if (f.gated) plan.ops.push_back(StepOp{"routed_experts", swiglu_case(rows, f.expert_dim, pass), layers});
          if (rows % combine_top_k == 0) {
            plan.ops.push_back(StepOp{"routed_experts", gather_case(rows, H, pass), layers});
            plan.ops.push_back(StepOp{"routed_experts", scatter_add_case(rows, H, pass), layers});
          }
        }
        break;
      }
      case KernelClass::mlp_gemms:
        if (op.kind == OpKind::shared_experts) {
          add_mlp(plan, "shared_experts", H, f.num_shared_experts * f.shared_expert_dim, f.gated, layers);
        } else {
          add_mlp(plan, "dense_ffn", H, f.dense_dim, f.gated, layers);
        }
        break;
      case KernelClass::rms_norm:
        if (op.kind == OpKind::norms) {
          // One RMSNorm per block: two per layer (before attention and before the FFN), one per
          // single-block layer (Nemotron-H).
          for (const char* pass : passes) plan.ops.push_back(StepOp{"norms", rms_norm_case(T, H, pass), op.matrices * layers});
        } else {
          for (const char* pass : passes) plan.ops.push_back(StepOp{"final_norm", rms_norm_case(T, H, pass), 1});
        }
        break;
      case KernelClass::embedding_lookup:
        break;  // a lookup: no FLOPs, negligible time against the rest of a step
      case KernelClass::not_timed:
        break;  // multi-token prediction: reported apart, like the embedding (the time model skips it too)
      case KernelClass::router_topk:
      case KernelClass::gather_scatter:
      case KernelClass::activation:
        // Memory-bound kinds of the op list (router top-k, dispatch, combine, activations): this
        // plan already times them beside the matmul ops they belong to (above), so they are not
        // added twice.
        break;
      case KernelClass::layer_glue:
        // The layer glue (residual adds, layout copies, routing weights, ...; ops_glue.cpp) has no
        // kernels here: the time model times it from its bytes (docs/calibration.md, "Layer glue").
        break;
      case KernelClass::short_convolution:
      case KernelClass::recurrent_scan:
      case KernelClass::indexer_scores:
        // Linear-attention and Mamba-2 convolutions and scans, DeepSeek-V3.2's index scores: no
        // kernels here; the time model prices them from their FLOPs and bytes at the profile's peaks
        // and flags them (docs/calibration.md, "Ops without profile rows").
        break;
    }
  }
  return plan;
}

}  // namespace budget::profiler
