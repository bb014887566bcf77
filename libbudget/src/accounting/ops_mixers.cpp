// The linear-attention (Gated DeltaNet) and Mamba-2 part of the op list, on the layers whose mixer is
// linear_attention or mamba (ArchConfig::layer_counts()). Their gated RMSNorms are in the norms op
// (ops_stack.cpp). Formulas and sources: docs/accounting.md, "Linear attention and Mamba-2".

#include "accounting/op_builders.hpp"

namespace budget::accounting_detail {
namespace {

/// Sets an op's FLOPs (forward = kernel forward; training = passes × forward).
void set_flops(Op& op, double forward, double passes) {
  op.forward_flops = forward;
  op.kernel_forward_flops = forward;
  op.kernel_training_flops = passes * forward;
}

/// An op of `layers` with no matmul weights: `in` × `out` features in `matrices` groups (heads),
/// `value_features` (the chunk of a scan), `params` parameters a layer, every one active.
Op& new_mixer_op(std::vector<Op>& ops, OpKind kind, LayerCount layers, std::int64_t in, std::int64_t out,
                 std::int64_t matrices, std::int64_t value_features, std::int64_t params) {
  Op& op = new_op(ops, kind, layers.physical, layers.executed);
  op.in_features = in;
  op.out_features = out;
  op.matrices = matrices;
  op.value_features = value_features;
  op.params_per_layer = op.active_params_per_layer = params;
  return op;
}

/// The depthwise causal convolution over `channels` with `taps` taps: channels·taps weights (+
/// channels biases), 2·taps FLOPs a channel per token (one multiply-add a tap); it reads and writes a
/// row of `channels` (4·channels bytes, bf16).
void add_convolution(std::vector<Op>& ops, std::int64_t channels, std::int64_t taps, bool bias, LayerCount layers,
                     double passes) {
  Op& conv = new_mixer_op(ops, OpKind::short_convolution, layers, channels, taps, 1, 0,
                          channels * taps + (bias ? channels : 0));
  set_flops(conv, 2.0 * static_cast<double>(taps) * static_cast<double>(channels), passes);
  conv.forward_bytes = 4.0 * static_cast<double>(channels);
}

/// Gated DeltaNet (Qwen3NextGatedDeltaNet, modular_qwen3_next.py at transformers 043bb8dd):
/// in_proj_qkvz and in_proj_ba as one H → 2·key + 2·value + 2·value_heads projection, conv1d over
/// q, k, v without bias, dt_bias and A_log (value_heads each) with the scan, out_proj value → H.
///
/// Scan FLOPs: torch_chunk_gated_delta_rule of the same file, chunk C, per value head (queries and
/// keys are repeated to the value heads), d_k and d_v the head dims, each matmul 2·m·n·k, per chunk:
/// k_β·kᵀ 2C²d_k, the in-chunk triangular solve Σ_{i<C} 2i² = (C − 1)C(2C − 1)/3, attn·v_β 2C²d_v,
/// attn·(k_β·e^g) 2C²d_k, q·kᵀ 2C²d_k, k_cumdecay·S and (q·e^g)·S 2C·d_k·d_v each, attn·v_new
/// 2C²d_v, the state update kᵀ·v_new 2C·d_k·d_v. Per token: 6C·d_k + 4C·d_v + 6·d_k·d_v +
/// (C − 1)(2C − 1)/3 a value head. Bytes: q, k, v, the gate and β read (2·key + value + 2·heads
/// elements), the output written (value), bf16; the chunk states written in fp32 (4·heads·d_k·d_v/C).
void add_linear_attention(std::vector<Op>& ops, const OpListContext& x) {
  const LinearAttentionConfig& l = *x.c.linear_attention;
  const LayerCount layers = x.n.linear_attention;
  add_matmul(ops, OpKind::mixer_in_projection, x.H, l.in_projection_width(), 1, 1, layers.physical, layers.executed,
             x.passes);
  add_convolution(ops, l.conv_width(), l.conv_kernel, false, layers, x.passes);
  Op& scan = new_mixer_op(ops, OpKind::delta_rule_scan, layers, l.key_head_dim, l.value_head_dim, l.num_value_heads,
                          l.chunk_size, 2 * l.num_value_heads);
  const double C = static_cast<double>(l.chunk_size), dk = static_cast<double>(l.key_head_dim),
               dv = static_cast<double>(l.value_head_dim), heads = static_cast<double>(l.num_value_heads);
  set_flops(scan, heads * (6.0 * C * dk + 4.0 * C * dv + 6.0 * dk * dv + (C - 1.0) * (2.0 * C - 1.0) / 3.0), x.passes);
  scan.forward_bytes = 2.0 * static_cast<double>(2 * l.key_width() + 2 * l.value_width() + 2 * l.num_value_heads) +
                       4.0 * heads * dk * dv / C;
  add_matmul(ops, OpKind::mixer_out_projection, l.value_width(), x.H, 1, 1, layers.physical, layers.executed, x.passes);
}

/// Mamba-2 (NemotronHMamba2Mixer, modeling_nemotron_h.py at transformers 897753a0): in_proj H → 2·inner
/// + 2·groups·state + heads (+ biases with projection_bias), conv1d over x, B, C (+ biases with
/// conv_bias), A_log, D and dt_bias (heads each) with the scan, out_proj inner → H.
///
/// Scan FLOPs: the SSD algorithm of Dao & Gu 2024 (arXiv:2405.21060, §7 and Listing 1), chunk Q,
/// state N, head dim P, per head and chunk: C·Bᵀ 2Q²N, (CBᵀ∘L)·X 2Q²P, the chunk's state Bᵀ·X
/// 2QNP, its passing to the next chunk 2NP (one multiply-add of the N×P state, the linear scan the
/// kernels run; Listing 1's einsum over chunk pairs is not), the output from the state C·h 2QNP.
/// Per token: 2Q(N + P) + 4NP + 2NP/Q a head. Bytes: x, B, C and dt read (inner + 2·groups·state +
/// heads), y written (inner), bf16; the chunk states in fp32 (4·heads·P·N/Q).
void add_mamba(std::vector<Op>& ops, const OpListContext& x) {
  const MambaConfig& m = *x.c.mamba;
  const LayerCount layers = x.n.mamba;
  Op& in = add_matmul(ops, OpKind::mixer_in_projection, x.H, m.in_projection_width(), 1, 1, layers.physical,
                      layers.executed, x.passes);
  if (m.projection_bias) add_bias(in, m.in_projection_width(), m.in_projection_width());
  add_convolution(ops, m.conv_width(), m.conv_kernel, m.conv_bias, layers, x.passes);
  Op& scan = new_mixer_op(ops, OpKind::ssd_scan, layers, m.head_dim, m.state_size, m.num_heads, m.chunk_size,
                          3 * m.num_heads);
  const double Q = static_cast<double>(m.chunk_size), N = static_cast<double>(m.state_size),
               P = static_cast<double>(m.head_dim), heads = static_cast<double>(m.num_heads);
  set_flops(scan, heads * (2.0 * Q * (N + P) + 4.0 * N * P + 2.0 * N * P / Q), x.passes);
  scan.forward_bytes = 2.0 * static_cast<double>(2 * m.inner() + 2 * m.num_groups * m.state_size + m.num_heads) +
                       4.0 * heads * P * N / Q;
  Op& out = add_matmul(ops, OpKind::mixer_out_projection, m.inner(), x.H, 1, 1, layers.physical, layers.executed,
                       x.passes);
  if (m.projection_bias) add_bias(out, x.H, x.H);
}

}  // namespace

void add_mixer_ops(std::vector<Op>& ops, const OpListContext& x) {
  if (x.n.linear_attention.physical > 0) add_linear_attention(ops, x);
  if (x.n.mamba.physical > 0) add_mamba(ops, x);
}

}  // namespace budget::accounting_detail
