#pragma once
/// \file
/// The exact ops one training step of a config runs, as OpCases (for `budget-profile configs`),
/// and the sums that turn their measured times into time per layer, per step and per token.
///
/// Source of truth: libbudget's layer_ops() (the same list the accounting sums). Each matmul op
/// becomes a GEMM (or grouped expert GEMMs) at M = tokens per step, in the three passes forward,
/// input_grad and weight_grad; attention becomes cuDNN SDPA forward + backward; the memory-bound
/// work of each layer (two RMSNorms, SwiGLU of each gated MLP, the router's softmax/top-k, dispatch
/// gather and combine scatter-add of the routed rows) is added from the config's structure.
///
/// Attention documents: per-document causal masks over packed windows of the workload's seq_len.
/// The measured case uses equal documents of doc_len = round(2·A − 1) tokens (capped at seq_len),
/// A = the workload's mean attended keys, which reproduces A exactly ((n + 1)/2 for documents of
/// n tokens); a causal workload uses doc_len = seq_len. Equal lengths are a proxy for the
/// workload's length distribution with the same FLOPs; the T mod doc_len leftover tokens form one
/// shorter document measured as its own case.

#include <cstdint>
#include <string>
#include <vector>

#include "budget/config.hpp"
#include "budget/profiler/op_case.hpp"
#include "budget/workload.hpp"

namespace budget::profiler {

/// One op case of a config's step and how many times a step runs it.
struct StepOp {
  std::string name;      ///< the layer_ops() kind it comes from (qkv_projection, ...) or the memory-bound op
  OpCase op;
  std::int64_t count = 0;  ///< launches per step: executed layers that run it × launches per layer
};

struct StepPlan {
  std::string config;
  std::int64_t tokens_per_step = 0;
  std::int64_t executed_layers = 0;
  std::vector<StepOp> ops;
};

/// The step's ops. `tokens_per_step` must be a positive multiple of the workload's seq_len.
/// Throws budget::Error for configs it cannot express: multi-head latent attention (query/key and
/// value head widths differ) and sliding-window attention are not measured, nor op kinds it does
/// not know. MLA's projections are plain GEMMs; multi-token-prediction modules are left out, as
/// the time model leaves them out.
StepPlan step_plan(const ArchConfig& config, const Workload& workload, std::int64_t tokens_per_step);

/// Σ count·ms over the step's ops with `ms_of(op)` giving each op case's time.
struct StepTime {
  double step_ms = 0.0;
  double layer_ms = 0.0;      ///< step_ms / executed layers
  double per_token_us = 0.0;  ///< step_ms·1000 / tokens_per_step
};
template <typename MsOf>
StepTime step_time(const StepPlan& plan, MsOf&& ms_of) {
  StepTime t;
  for (const StepOp& s : plan.ops) t.step_ms += static_cast<double>(s.count) * ms_of(s);
  t.layer_ms = plan.executed_layers > 0 ? t.step_ms / static_cast<double>(plan.executed_layers) : 0.0;
  t.per_token_us = t.step_ms * 1e3 / static_cast<double>(plan.tokens_per_step);
  return t;
}

}  // namespace budget::profiler
