#pragma once
/// \file
/// OpCase: one shape and pass of one op to be measured, named exactly as a row of the calibration
/// profile (docs/calibration.md, format v1). Building cases is pure C++ (no GPU): the sweep's shape
/// lists (sweep.hpp) and the ops of a config (config_cases.hpp) both produce OpCases.
///
/// Cost conventions (each written once, here; the same as libbudget's ops.hpp):
///  - gemm: y = x·Wᵀ with x M×K, W N×K. forward M×K·K×N, input_grad M×N·N×K, weight_grad
///    N×M·M×K: each 2·M·K·N FLOPs. Bytes: each operand read once, the output written once, bf16:
///    2·(M·K + N·K + M·N) for every pass (the three passes touch the same three matrix sizes).
///  - expert_gemms: E groups of tokens_per_expert rows (balanced) or skewed rows (routing
///    "skewed": expert e gets a share ∝ 1/(e+1), normalised, rounded, total E·tokens_per_expert).
///    up_gate: H → 2·expert_dim, up: H → expert_dim, down: expert_dim → H. FLOPs = 2·rows·in·out
///    summed over experts; bytes = 2·(rows·in + E·in·out + rows·out).
///  - attention: packed windows of `docs` equal documents of `doc_len` tokens, per-document causal
///    masks; mean attended keys A = (doc_len + 1)/2. Forward FLOPs 4·num_heads·head_dim·A·tokens
///    (QKᵀ and PV, 2·q·A each; the masked half is not counted), backward 2.5× that (FlashAttention
///    convention: dQ, dK, dV, and the recomputed QKᵀ = 5 matmuls against the forward's 2).
///    Bytes: bf16 Q, K, V, O read/written once (forward), plus dO, dQ, dK, dV (backward).
///  - memory-bound ops: bytes = the fewest bytes moved (each input read once, each output written
///    once, bf16 activations, fp32 statistics); flops = 0 (not counted, as in ops.hpp).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "budget/calibration.hpp"

namespace budget::profiler {

/// Routed copies per token assumed by combine_scatter_add and dispatch_gather's backward (the
/// row shape has no top_k field): rows must be a multiple of it. 8 = the SMELT paper's top-8.
inline constexpr std::int64_t combine_top_k = 8;

struct OpCase {
  ProfileOp op = ProfileOp::gemm;  ///< the profile row's op (written by its name, to_string(op))
  std::string pass;  ///< forward, input_grad, weight_grad (GEMMs); forward, backward (others)
  std::map<std::string, std::int64_t> shape;  ///< the row's integer shape fields
  std::string matrix;   ///< expert_gemms only: up_gate, up, down
  std::string routing;  ///< expert_gemms only: balanced, skewed
  double flops = 0.0;   ///< FLOPs of one launch of this case (conventions above)
  double bytes = 0.0;   ///< fewest bytes one launch moves

  std::int64_t at(const std::string& field) const;  ///< shape field; throws budget::Error if absent
  std::string label() const;                        ///< "gemm forward M=..,K=..,N=.." for tables and errors
};

/// Factories that fill flops and bytes by the conventions above. Arguments must be positive
/// (throw budget::Error otherwise).
OpCase gemm_case(std::int64_t M, std::int64_t K, std::int64_t N, const std::string& pass);
OpCase expert_gemm_case(std::int64_t experts, std::int64_t tokens_per_expert, std::int64_t hidden,
                        std::int64_t expert_dim, std::int64_t top_k, const std::string& matrix,
                        const std::string& pass, const std::string& routing = "balanced");
OpCase attention_case(std::int64_t docs, std::int64_t doc_len, std::int64_t num_heads, std::int64_t num_kv_heads,
                      std::int64_t head_dim, const std::string& pass);
/// Memory-bound ops: rms_norm (tokens, H), swiglu (rows, expert_dim), router_softmax_topk
/// (tokens, E, top_k), dispatch_gather (rows, H), combine_scatter_add (rows, H).
OpCase rms_norm_case(std::int64_t tokens, std::int64_t hidden, const std::string& pass);
OpCase swiglu_case(std::int64_t rows, std::int64_t expert_dim, const std::string& pass);
OpCase router_case(std::int64_t tokens, std::int64_t experts, std::int64_t top_k, const std::string& pass);
OpCase gather_case(std::int64_t rows, std::int64_t hidden, const std::string& pass);
OpCase scatter_add_case(std::int64_t rows, std::int64_t hidden, const std::string& pass);

/// Rows per expert of `experts` groups totalling experts·tokens_per_expert rows: all equal for
/// "balanced"; for "skewed", ∝ 1/(e+1) (a Zipf-like imbalance, the busiest expert getting
/// ≈ E/H_E times the mean), rounded with the remainder given to expert 0, each at least 1.
std::vector<std::int64_t> expert_rows(std::int64_t experts, std::int64_t tokens_per_expert, const std::string& routing);

}  // namespace budget::profiler
