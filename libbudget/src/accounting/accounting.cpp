#include "budget/accounting.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/op_traits.hpp"

namespace budget {
namespace {

/// Adds one non-embedding op's forward FLOPs, parameters and active parameters to its component.
void add_to_component(const Op& op, double flops, std::int64_t params, std::int64_t active, Budgets& b) {
  const OpBudget& c = op_traits(op.kind).budget;
  if (c.flops != nullptr) b.forward_by_component.*c.flops += flops;
  if (c.params != nullptr) {
    b.params_by_component.*c.params += params;
    b.active_params_by_component.*c.params += active;
  }
}

/// Depth, KV cache and sparsity of `b` (its parameter sums already set).
void add_depth_kv_and_sparsity(const ArchConfig& c, const Workload& w, Budgets& b) {
  b.physical_layers = c.num_layers;
  b.executed_layers = c.executed_layers();
  // Per executed full-attention layer: K and V, one vector of kv_heads·head_dim each (GQA), or the
  // latent and the rotary key (MLA). Sliding-window layers: a cache of min(window, seq_len) tokens;
  // chunked layers: of min(chunk, seq_len) tokens (the current chunk).
  b.kv_elements_per_token = c.kv_elements_per_token();
  if (c.has_per_layer_kinds()) {
    const LayerCounts n = c.layer_counts();
    const std::int64_t per_layer = c.attention.kv_elements_per_layer();
    b.kv_window_elements_per_sequence =
        n.sliding_attention.executed * per_layer * std::min(c.attention.sliding_window, w.seq_len) +
        n.chunked_attention.executed * per_layer * std::min(c.attention.chunk_size, w.seq_len);
  }
  b.kv_bytes_per_token = b.kv_elements_per_token * w.kv_bytes;
  b.kv_bytes_per_sequence = b.kv_bytes_per_token * w.seq_len + b.kv_window_elements_per_sequence * w.kv_bytes;
  // Recurrent state (linear attention, Mamba-2): per sequence, whatever its length.
  b.state_elements_per_sequence = c.state_elements_per_sequence();
  b.state_bytes_per_sequence = b.state_elements_per_sequence * w.kv_bytes;
  const double total = static_cast<double>(b.non_embedding_params_total);
  b.sparsity = 1.0 - b.executed_active_params / total;
  b.param_sparsity = 1.0 - static_cast<double>(b.non_embedding_params_active) / total;
}

}  // namespace

Budgets account(const std::vector<Op>& ops, const ArchConfig& c, const Workload& w) {
  Budgets b;
  for (const Op& op : ops) {
    const double flops = op.total_forward_flops();
    const std::int64_t params = op.total_params();
    const std::int64_t active = op.total_active_params();
    if (op.kind == OpKind::mtp_module) {
      b.mtp_params += params;
      b.mtp_active_params += active;
      b.mtp_forward_flops_per_token += flops;
      continue;
    }
    if (!is_non_embedding(op.kind)) {
      if (op.kind == OpKind::lm_head) b.lm_head_forward_flops_per_token += flops;
      b.embedding_params += params;
      continue;
    }
    b.forward_flops_per_token += flops;
    b.kernel_forward_flops_per_token += op.total_kernel_forward_flops();
    b.kernel_training_flops_per_token += op.total_kernel_training_flops();
    b.non_embedding_params_total += params;
    b.non_embedding_params_active += active;
    b.executed_active_params +=
        static_cast<double>(op.active_params_per_layer) * static_cast<double>(op.executed_layers);
    add_to_component(op, flops, params, active, b);
  }
  const double passes = static_cast<double>(w.training_passes);
  b.training_flops_per_token = passes * b.forward_flops_per_token;

  add_depth_kv_and_sparsity(c, w, b);
  return b;
}

Budgets account(const ArchConfig& config, const Workload& workload) {
  validate(config);
  validate(workload);
  // Each input is valid on its own, but the KV cache of one window, 2·executed·kv·kv_bytes·seq_len
  // bytes, multiplies sizes of both: bound it before the 64-bit integer products.
  const long double kv_bytes_per_sequence = static_cast<long double>(config.executed_layers()) *
                                            static_cast<long double>(config.attention.kv_elements_per_layer()) *
                                            static_cast<long double>(workload.kv_bytes) *
                                            static_cast<long double>(workload.seq_len) +
                                        static_cast<long double>(config.state_elements_per_sequence()) *
                                            static_cast<long double>(workload.kv_bytes);
  if (kv_bytes_per_sequence >= 9.0e18L) {
    throw Error(fmt::format("the KV cache of one {}-token window would be about {:.3g} bytes, beyond the "
                            "supported 9e18 (64-bit counts); reduce seq_len or the KV width",
                            workload.seq_len, static_cast<double>(kv_bytes_per_sequence)),
                "", "/seq_len");
  }
  return account(layer_ops(config, workload), config, workload);
}

}  // namespace budget
