// The layer glue ops (docs/calibration.md, "Layer glue"): what a real eager layer runs beyond the
// matmuls, the attention kernel and the measured memory-bound ops. Each is a memory-bound op with
// its fewest forward bytes per token and execution, bf16 activations (2 bytes an element) unless
// said otherwise; the backward's bytes and the launches are the time model's (time_step.cpp).
// Sources: the PyTorch-eager layer of tests/data/time/h200_torch_layers.jsonl (docs/calibration.md): fused
// QKV split into q/k/v viewed as (docs, heads, len, head_dim), output reshaped to tokens × q,
// residual adds, router softmax/top-k in fp32, routing weights gathered and multiplied,
// scatter-add into a zeroed buffer.

#include "accounting/ops_glue.hpp"

#include "accounting/op_builders.hpp"

namespace budget {

using accounting_detail::add_memory;

void append_glue_ops(const ArchConfig& c, const LayerCounts& n, std::vector<Op>& ops) {
  const double H = static_cast<double>(c.hidden_size);
  const auto& a = c.attention;
  const auto& f = c.ffn;
  const std::int64_t L = c.num_layers;
  const std::int64_t executed = c.executed_layers();
  const std::int64_t moe_physical = n.moe.physical;
  const std::int64_t moe_executed = n.moe.executed;

  // Residual adds, one a block (two a layer; one a single-block layer, Nemotron-H): each reads two
  // rows of H and writes one: 3 · 2H = 6·H.
  const LayerCount single{n.no_mixer.physical + n.no_ffn.physical, n.no_mixer.executed + n.no_ffn.executed};
  if (L > single.physical) {
    add_memory(ops, OpKind::residual_add, c.hidden_size, 2, 12.0 * H, L - single.physical, executed - single.executed);
  }
  if (single.physical > 0) {
    add_memory(ops, OpKind::residual_add, c.hidden_size, 1, 6.0 * H, single.physical, single.executed);
  }

  // Attention layout (fused QKV only; MLA's projections are separate GEMMs and not modelled here):
  // q, k and v are strided views of the QKV output; the attention kernel takes each as a
  // contiguous (docs, heads, len, head_dim) tensor, so each is copied (read + write: 4 bytes an
  // element, heads + 2·kv_heads rows of head_dim), and the attention output is copied back to
  // tokens × q (4·q): 4·head_dim·(heads + 2·kv_heads) + 4·q. `in_features` = head_dim (its
  // alignment decides the copy kernels' speed), `matrices` = heads + 2·kv_heads.
  const LayerCount attention = n.attention();
  if (!a.mla && attention.physical > 0) {
    const std::int64_t rows = a.num_heads + 2 * a.num_kv_heads;
    const double bytes = 4.0 * static_cast<double>(a.head_dim * rows) + 4.0 * static_cast<double>(a.query_width());
    add_memory(ops, OpKind::attention_layout, a.head_dim, rows, bytes, attention.physical, attention.executed);
  }

  if (moe_physical > 0) {
    const double k = static_cast<double>(f.top_k);
    const double E = static_cast<double>(f.num_experts);
    // Router in fp32: the E bf16 logits cast to fp32 (read 2E, write 4E) and the fp32 softmax
    // (read 4E, write 4E): 14·E. The top-k selection is router_topk's (ops.cpp).
    add_memory(ops, OpKind::router_softmax_fp32, f.num_experts, 1, 14.0 * E, moe_physical, moe_executed);
    // Routing weights: the k weights gathered into dispatch order (read + write: 4k) and the
    // product of the k expert output rows by them (read k·H and k weights, write k·H: 4kH + 2k):
    // 4·k·H + 6·k.
    add_memory(ops, OpKind::routing_weights, c.hidden_size, f.top_k, 4.0 * k * H + 6.0 * k, moe_physical,
             moe_executed);
    // The combine buffer zeroed before the scatter-add: one row of H written, 2·H.
    add_memory(ops, OpKind::combine_zero, c.hidden_size, 1, 2.0 * H, moe_physical, moe_executed);
  }
}

}  // namespace budget
