#pragma once
/// \file
/// CPU references in double precision for every kernel the profiler times (private; pure C++ so
/// the unit tests check them against hand calculations). Row-major; inputs as float (the values
/// the GPU saw after rounding to bf16), outputs as double. Math: kernels.hpp and gemm.hpp.

#include <cstdint>
#include <string>
#include <vector>

namespace budget::profiler::reference {

using Vec = std::vector<double>;
using FVec = std::vector<float>;

/// forward y[M×N] = x·Wᵀ, input_grad dx[M×K] = dy·W, weight_grad dW[N×K] = dyᵀ·x.
Vec gemm(const std::string& pass, std::int64_t M, std::int64_t K, std::int64_t N, const FVec& x, const FVec& w,
         const FVec& dy);

void rms_norm_forward(const FVec& x, const FVec& w, std::int64_t tokens, std::int64_t hidden, double eps, Vec& y,
                      Vec& rstd);
void rms_norm_backward(const FVec& x, const FVec& dy, const FVec& w, std::int64_t tokens, std::int64_t hidden,
                       double eps, Vec& dx, Vec& dw);

Vec swiglu_forward(const FVec& gate_up, std::int64_t rows, std::int64_t dim);
Vec swiglu_backward(const FVec& gate_up, const FVec& dy, std::int64_t rows, std::int64_t dim);

/// weights and indices of the top_k softmax probabilities of each token (ties: lower index).
void router_forward(const FVec& logits, std::int64_t tokens, std::int64_t experts, std::int64_t top_k, Vec& weights,
                    std::vector<std::int32_t>& indices);
Vec router_backward(const FVec& logits, const std::vector<std::int32_t>& indices, const FVec& dweights,
                    std::int64_t tokens, std::int64_t experts, std::int64_t top_k);

Vec gather(const FVec& x, const std::vector<std::int32_t>& src, std::int64_t hidden);
/// weights empty: all 1.
Vec combine(const FVec& rows, const std::vector<std::int32_t>& perm, const FVec& weights, std::int64_t tokens,
            std::int64_t top_k, std::int64_t hidden);
Vec combine_backward(const FVec& dout, const std::vector<std::int32_t>& perm, const FVec& weights, std::int64_t tokens,
                     std::int64_t top_k, std::int64_t hidden, std::int64_t rows);

/// Causal attention per document: q [docs·len, heads, d], k and v [docs·len, kv_heads, d]
/// (grouped: query head h reads kv head h / (heads / kv_heads)); o like q; scale = 1/sqrt(d).
/// Backward: dP = dO·Vᵀ, dS = P ⊙ (dP − rowsum(dO ⊙ O)), dQ = scale·dS·K, dK = scale·dSᵀ·Q,
/// dV = Pᵀ·dO, dK and dV summed over the query heads sharing a KV head.
struct AttentionShape {
  std::int64_t docs = 0, len = 0, heads = 0, kv_heads = 0, head_dim = 0;
};
Vec attention_forward(const AttentionShape& s, const FVec& q, const FVec& k, const FVec& v);
void attention_backward(const AttentionShape& s, const FVec& q, const FVec& k, const FVec& v, const FVec& dout,
                        Vec& dq, Vec& dk, Vec& dv);

/// ‖out − ref‖₂ / ‖ref‖₂; +∞ when any out is NaN or ±∞, or sizes differ.
double relative_error(const FVec& out, const Vec& ref);

}  // namespace budget::profiler::reference
