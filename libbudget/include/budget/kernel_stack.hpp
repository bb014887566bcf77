#pragma once
/// \file
/// The kernels a team trains on (issue 43): GPU architecture, attention backend and precision
/// recipe, and what shapes they run. One table of attention rules per (architecture, backend),
/// each row with its source; width multiples and per-expert token padding per precision; the
/// expert-parallel limits of the dispatchers. docs/kernels.md shows the table.
///
/// Sources (commits): Dao-AILab/flash-attention 0251105a2f, NVIDIA/TransformerEngine d0067d0da6,
/// deepseek-ai/DeepEP dd758caf45, NVIDIA/Megatron-LM d98e8a64dd (docs/kernels.md names each rule's file:line).
///
/// Thread safety: every function here is reentrant; the table is immutable.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "budget/config.hpp"

namespace budget {

/// The GPU generations whose kernels differ: Ampere (A100), Hopper (H100, H200), Blackwell
/// (B200, GB200, B300, GB300).
enum class GpuArch { sm80, sm90, sm100 };
/// "sm80", "sm90", "sm100".
std::string_view to_string(GpuArch arch);

/// The attention kernel: Transformer Engine's own choice for the GPU (te_default, the default;
/// attention_backend_order()), or one backend asked for (--attention-backend).
enum class AttentionBackend { te_default, fa2, fa3, fa4, cudnn, unfused };
/// "te-default", "fa2", "fa3", "fa4", "cudnn", "unfused".
std::string_view to_string(AttentionBackend backend);

/// The GEMM precision recipe (--precision; Megatron-LM's --fp8-recipe / --fp4-format).
/// Attention runs in BF16 under every recipe: Megatron-LM's --fp8-dot-product-attention is off by
/// default, and it is not modelled here.
enum class Precision { bf16, fp8_tensorwise, fp8_delayed, fp8_blockwise, mxfp8, nvfp4 };
/// "bf16", "fp8-tensorwise", "fp8-delayed", "fp8-blockwise", "mxfp8", "nvfp4".
std::string_view to_string(Precision precision);

/// Parsers of the option values above; budget::Error naming `where` and the allowed values.
AttentionBackend parse_attention_backend(std::string_view text, const std::string& where);
Precision parse_precision(std::string_view text, const std::string& where);
/// The architecture of a GPU named as the example clusters are (h100-sxm, h200, b200,
/// gb200-nvl72, a100-80gb) or as a cluster file's gpu.name ("NVIDIA H100 SXM5 80GB"): the first of
/// a100, h100, h200, h800, gh200, b200, b300, gb200, gb300 found in the lower-cased name.
/// budget::Error naming `where` otherwise.
GpuArch parse_gpu_arch(std::string_view gpu_name, const std::string& where);

/// The kernels a search targets: a GPU, an attention backend and a precision.
struct KernelTarget {
  std::string gpu;  ///< as given (--gpu, or the cluster file's gpu.name)
  GpuArch arch = GpuArch::sm90;
  AttentionBackend attention = AttentionBackend::te_default;
  Precision precision = Precision::bf16;
};
/// "h100-sxm (sm90), attention te-default, precision bf16".
std::string describe(const KernelTarget& target);

/// How a shape runs on a target.
enum class KernelFitKind { native, padded, refused };
/// "native", "padded", "refused".
std::string_view to_string(KernelFitKind kind);

/// How the attention of one (qk, v) head-dim pair runs: natively, padded (executed_qk/executed_v
/// the head dims the kernel computes, and so is charged for), or refused.
struct AttentionFit {
  KernelFitKind kind = KernelFitKind::refused;
  AttentionBackend backend = AttentionBackend::unfused;  ///< the backend that runs it
  std::int64_t executed_qk = 0;
  std::int64_t executed_v = 0;
  std::string reason;  ///< refused: why; padded: which kernel pads it
};

/// What one backend runs on one architecture, as data (one row of attention_rules()). A (qk, v)
/// pair with both multiples of `alignment`:
///  - runs natively when qk = v <= max_any (any multiple of the alignment), or qk = v is one of
///    `tiles` or `extra_sizes`, or (qk, v) is one of `pairs`, or (any_pairs_within_max) both are
///    <= max_any and not both >= pairs_refused_from;
///  - otherwise, when the backend rounds to `tiles` (pads_to_tiles) and max(qk, v) <= the largest
///    tile, runs padded at the smallest tile >= max(qk, v) for both (the backend's V padding);
///  - otherwise is refused.
/// A backend that is not built for the architecture has available = false.
struct AttentionRule {
  GpuArch arch = GpuArch::sm90;
  AttentionBackend backend = AttentionBackend::fa2;
  bool available = true;
  std::int64_t alignment = 8;
  std::int64_t max_any = 0;                 ///< 0: no range of any multiple
  std::vector<std::int64_t> tiles;          ///< compiled head-dim tiles (FA2, FA3)
  bool pads_to_tiles = false;
  std::vector<std::int64_t> extra_sizes;    ///< other symmetric sizes run natively
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;  ///< (qk, v), qk ≠ v, run natively
  /// Any qk ≠ v with both <= max_any runs natively (cuDNN, FA4 on sm90, unfused) ...
  bool any_pairs_within_max = false;
  /// ... except pairs with both >= this (0: none), other than those in `pairs` (cuDNN on sm90:
  /// TE's known-bug exclusion for cuDNN >= 9.11).
  std::int64_t pairs_refused_from = 0;
  const char* source = "";
};

/// The table: one row per (architecture, explicit backend). Training (forward and backward), BF16.
const std::vector<AttentionRule>& attention_rules();
/// The row of (arch, backend); backend must not be te_default.
const AttentionRule& attention_rule(GpuArch arch, AttentionBackend backend);
/// Transformer Engine's choice on an architecture, in order: the first backend that runs a shape
/// (natively or padded) runs it; UnfusedDotProductAttention, TE's last resort, is not offered (a
/// shape only it runs is refused: no fused kernel). sm80: FlashAttention-2, then cuDNN; sm90 and
/// sm100: cuDNN ("FusedAttention preference on Hopper+", TE utils.py:1647-1653), then
/// FlashAttention-2.
std::vector<AttentionBackend> attention_backend_order(GpuArch arch);
/// How (qk, v) runs on `target`.
AttentionFit attention_fit(const KernelTarget& target, std::int64_t qk, std::int64_t v);
/// attention_fit() without the reason (no text formatted: the matcher's inner loops).
AttentionFit attention_fit_brief(const KernelTarget& target, std::int64_t qk, std::int64_t v);

/// The multiple every GEMM dimension of a weight (hidden, query/KV widths, FFN and expert widths,
/// MLA ranks) must be under `precision`: bf16 8 (16-byte cuBLASLt tiles), FP8 tensorwise/delayed
/// 16 (TE pytorch/utils.py:618 assert_dim_for_fp8_exec, last dim % 16), FP8 blockwise 128 (TE
/// float8_blockwise_tensor.py:55 block_len, is_quantizable :235), MXFP8 32 (TE constants.py:175),
/// NVFP4 16 (TE constants.py:177).
std::int64_t width_multiple(Precision precision);
/// Tokens each expert's grouped GEMM is padded to a multiple of (TE quantization.py:262-278
/// get_align_size_for_quantization: MXFP8 32, NVFP4 128, other FP8 16; Megatron-LM moe_utils.py
/// returns 0 for BF16: no padding, returned here as 1). TE's grouped-tensor / op-fuser path pads to
/// 256 (Megatron-LM moe_utils.py:1463-1480), not modelled (Megatron's default path is assumed).
std::int64_t expert_token_alignment(Precision precision);

/// Whether `precision` runs on `arch`: MXFP8 and NVFP4 need Blackwell (sm100); FP8 needs sm89+
/// (sm80 refuses every FP8 recipe). Empty when it does; else why not.
std::string precision_refusal(GpuArch arch, Precision precision);

/// How a whole config runs on a target: its attention head dims (GQA: (head_dim, head_dim); MLA:
/// (qk_nope + qk_rope, v_head_dim)) and every weight width a multiple of width_multiple() (MLA's
/// kv_a output width kv_lora_rank + qk_rope_head_dim of 16 under FP8 blockwise, which TE runs with
/// a partial last block: docs/kernels.md).
struct KernelFit {
  KernelFitKind kind = KernelFitKind::native;
  AttentionFit attention;
  /// The widths off the precision's multiple, one phrase each (refused when any).
  std::vector<std::string> width_problems;
  /// One phrase: "native", "padded: head dim 168 runs as 192 on fa2", "refused: ...".
  std::string describe() const;
};
KernelFit kernel_fit(const ArchConfig& config, const KernelTarget& target);

/// Why a dispatcher refuses an expert layout (empty when it runs it):
///  - experts must divide by EP (Megatron-LM training/arguments.py:1655-1658);
///  - `deepep` (Megatron's flex dispatcher on DeepEP's legacy kernels, fused_a2a.py) needs TP·EP > 1
///    (token_dispatcher.py:1836-1840), EP·TP ranks < 8 or a multiple of 8 (DeepEP
///    csrc/legacy/buffer.hpp:114) and at most 8·20 = 160 of them in normal mode (buffer.hpp:113,
///    compiled.cuh:5-6), TP·top_k <= 32 (Megatron hands DeepEP router_topk = TP·top_k;
///    intranode.cu:251 asserts num_topk <= 32), and a rank count DeepEP has a dispatch and combine
///    config for (2, 4, 8, 16, 24, 32, 64, 128, 144, 160: deep_ep/buffer.py:228-279 at hybrid-ep
///    94a9f8f asserts on others; Megatron sizes its buffers from them, fused_a2a.py:47-57).
std::string expert_layout_refusal(bool deepep, std::int64_t num_experts, std::int64_t expert_parallel,
                                  std::int64_t tensor_parallel, std::int64_t top_k);

/// Why HybridEP refuses an expert layout (empty when it runs it): Megatron's flex dispatcher with
/// --moe-flex-dispatcher-backend hybridep, on the TP·EP ranks (token_dispatcher.py:1845-1851),
/// running DeepEP's hybrid-ep branch at 94a9f8f. Of its G = TP·EP ranks, R = min(G, nvlink_domain)
/// share an NVLink domain (hybrid_ep_buffer.py:62-72: the ranks the group reaches over NVLink):
///  - experts divide by EP (as expert_layout_refusal());
///  - the hidden size a multiple of 16 (BF16 tokens, TMA: csrc/hybrid_ep/config.cuh:87-89; Megatron
///    dispatches no FP8 through HybridEP, fused_a2a.py:327);
///  - G a multiple of R (deep_ep/hybrid_ep_buffer.py:74-76);
///  - R <= 72 (config.cuh:16, MAX_NUM_OF_RANKS_PER_NODE);
///  - (E/EP local experts)·R a multiple of 4 (config.cuh:91);
///  - across NVLink domains (G > R), 3·tokens_per_rank + 1 below the IB queue pair depth 65,536:
///    at most 21,844 tokens a rank (config.cuh:17-47).
/// nvlink_domain 0 (no cluster known): the first two rules alone.
std::string hybridep_layout_refusal(std::int64_t num_experts, std::int64_t expert_parallel,
                                    std::int64_t tensor_parallel, std::int64_t hidden_size,
                                    std::int64_t nvlink_domain, std::int64_t tokens_per_rank);

/// Tokens an expert's grouped GEMM computes for `tokens` routed to it: rounded up to
/// expert_token_alignment(precision) (0 stays 0: an expert with no tokens runs no rows).
std::int64_t padded_expert_tokens(std::int64_t tokens, Precision precision);
/// The expected padding of a grouped GEMM over `experts` experts receiving `routed_tokens` in all:
/// each expert pads on average (alignment − 1)/2 rows when its count is spread over the residues
/// (the uniform-residue assumption); returns the factor (routed + experts·(a − 1)/2) / routed,
/// 1 for BF16 or no tokens.
double expected_expert_padding_factor(double routed_tokens, std::int64_t experts, Precision precision);

}  // namespace budget
