#pragma once
/// \file
/// The profiler's own kernels (kernels.cu), callable from host C++. Activations are bf16 stored as
/// std::uint16_t (the upper half of an IEEE float); statistics, router logits and weights fp32.
/// Every launcher checks its launch (BUDGET_CUDA_LAUNCH_CHECK) and runs on `stream`.
///
/// Math (each kernel's CPU reference in reference.cpp computes the same in double):
///  - rms_norm forward: rstd_t = 1/sqrt(mean_i x_ti² + eps), y_ti = x_ti·rstd_t·w_i.
///    backward: with g_i = dy_i·w_i, dx_i = rstd·g_i − x_i·rstd³·(Σ_j g_j x_j)/H;
///    dw_i += Σ_t dy_ti·x_ti·rstd_t (fp32, accumulated into dw, which the caller zeroes).
///  - swiglu on [rows, 2·d] (gate | up): forward y = silu(g)·u, silu(g) = g·σ(g);
///    backward dg = dy·u·σ(g)·(1 + g·(1 − σ(g))), du = dy·silu(g), written as [rows, 2·d].
///  - router: p = softmax(logits_t) over E (fp32); indices = the top_k largest p (ties: lower
///    index), weights = their p (not renormalised). backward, given dweights:
///    dlogits_e = p_e·(ĝ_e − Σ_j p_j ĝ_j), ĝ = dweights scattered to the selected experts (0 else).
///  - gather: rows[r] = x[src[r]].
///  - combine: out[t] = Σ_{j<k} w[t·k+j]·rows[perm[t·k+j]] (fp32 sum, bf16 out); w = nullptr
///    means all weights 1 (the gather's backward). combine backward: drows[perm[t·k+j]] =
///    w[t·k+j]·dout[t].

#include <cstdint>

#include <cuda_runtime_api.h>

namespace budget::profiler::kernels {

using bf16_bits = std::uint16_t;

/// Uniform values in [-scale, scale] from a counter hash of (seed, index); never all zero.
void fill_uniform_bf16(bf16_bits* data, std::int64_t count, std::uint64_t seed, float scale, cudaStream_t stream);
void fill_uniform_f32(float* data, std::int64_t count, std::uint64_t seed, float scale, cudaStream_t stream);
/// A random permutation-like routing: index[i] = hash(seed, i) mod range.
void fill_indices(std::int32_t* data, std::int64_t count, std::int64_t range, std::uint64_t seed, cudaStream_t stream);
/// Writes a NaN-pattern (0xFFFF per bf16) so that unwritten outputs are caught by the checks.
void poison_bf16(bf16_bits* data, std::int64_t count, cudaStream_t stream);

void rms_norm_forward(const bf16_bits* x, const bf16_bits* w, bf16_bits* y, float* rstd, std::int64_t tokens,
                      std::int64_t hidden, float eps, cudaStream_t stream);
void rms_norm_backward(const bf16_bits* x, const bf16_bits* dy, const bf16_bits* w, const float* rstd, bf16_bits* dx,
                       float* dw, std::int64_t tokens, std::int64_t hidden, cudaStream_t stream);

void swiglu_forward(const bf16_bits* gate_up, bf16_bits* y, std::int64_t rows, std::int64_t dim, cudaStream_t stream);
void swiglu_backward(const bf16_bits* gate_up, const bf16_bits* dy, bf16_bits* dgate_up, std::int64_t rows,
                     std::int64_t dim, cudaStream_t stream);

/// top_k ≤ 32, experts ≤ 1024.
void router_forward(const float* logits, float* weights, std::int32_t* indices, std::int64_t tokens,
                    std::int64_t experts, std::int64_t top_k, cudaStream_t stream);
void router_backward(const float* logits, const std::int32_t* indices, const float* dweights, float* dlogits,
                     std::int64_t tokens, std::int64_t experts, std::int64_t top_k, cudaStream_t stream);

void gather_rows(const bf16_bits* x, const std::int32_t* src, bf16_bits* rows, std::int64_t count,
                 std::int64_t hidden, cudaStream_t stream);
void combine_rows(const bf16_bits* rows, const std::int32_t* perm, const float* weights, bf16_bits* out,
                  std::int64_t tokens, std::int64_t top_k, std::int64_t hidden, cudaStream_t stream);
void combine_rows_backward(const bf16_bits* dout, const std::int32_t* perm, const float* weights, bf16_bits* drows,
                           std::int64_t tokens, std::int64_t top_k, std::int64_t hidden, cudaStream_t stream);

}  // namespace budget::profiler::kernels
