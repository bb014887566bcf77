#pragma once
/// \file
/// Which kind of GPU kernel executes each op of the op list (budget/ops.hpp) in a training step:
/// the kernel column of the op-traits table (budget/op_traits.hpp), read by the time model (what it
/// queries in a calibration profile, src/time/time_step.cpp) and by budget-profile (what it
/// measures, cuda_profiler/src/config_cases.cpp), so the two never disagree on how an op runs.
///
/// Thread safety: kernel_class() and to_string() are reentrant.

#include <string_view>

#include "budget/ops.hpp"

namespace budget {

enum class KernelClass {
  projection_gemm,   ///< one weight matmul, in_features → out_features, per token: the q/k/v and output
                     ///< projections, the router, the LM head, MLA's down and up projections
  mlp_gemms,         ///< a dense MLP: up[/gate] H → m·width then down width → H (the dense FFN; the
                     ///< shared experts fused side by side into one)
  expert_gemms,      ///< the routed experts' grouped matmuls (up[/gate] and down per expert)
  attention,         ///< fused attention (QKᵀ, softmax and PV)
  rms_norm,          ///< the per-layer norms and the final norm
  router_topk,       ///< softmax over the router logits and top-k selection (memory-bound)
  gather_scatter,    ///< token permutation into and out of the experts: dispatch, combine (memory-bound)
  activation,        ///< the elementwise activation or SwiGLU of an FFN (memory-bound)
  embedding_lookup,  ///< a gather of one V×H row per token
  layer_glue,        ///< what a real layer runs around its kernels (residual adds, attention layout
                     ///< copies, routing-weight products, combine-buffer zeroing, the fp32 router
                     ///< softmax, the indexer's top-k, the attention gate; ops.hpp is_layer_glue()):
                     ///< memory-bound, timed from its bytes at the profile's copy bandwidth, not
                     ///< measured by budget-profile
  short_convolution, ///< the depthwise causal conv1d of linear-attention and Mamba-2 layers
  recurrent_scan,    ///< the chunked scans: Gated DeltaNet's delta rule, Mamba-2's SSD
  indexer_scores,    ///< DeepSeek-V3.2's index scores (q·k of every earlier key, ReLU, head weights)
  not_timed,         ///< multi-token-prediction modules: reported apart from the budgets, never timed
};

/// The kernel class of `kind`. Every OpKind has exactly one; the memory-bound kinds
/// (is_memory_bound()) map to router_topk, gather_scatter, activation or layer_glue, and only
/// they do. short_convolution, recurrent_scan and indexer_scores have no rows in the calibration
/// profiles: the time model prices them from their FLOPs and bytes at the profile's peaks and says
/// so (docs/calibration.md, "Ops without profile rows").
KernelClass kernel_class(OpKind kind);

/// "projection_gemm", "mlp_gemms", ... (the enumerator's name).
std::string_view to_string(KernelClass kernel);

}  // namespace budget
