// The profiler's own kernels: random fills and the memory-bound ops of a training step.
// Contracts and math: kernels.hpp. Simple, correct kernels with coalesced (and, where the width
// allows, 16-byte) accesses; they are what the profile measures for these ops.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "check.hpp"
#include "kernels.hpp"

namespace budget::profiler::kernels {
namespace {

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ inline float uniform(std::uint64_t seed, std::int64_t i, float scale) {
  const std::uint64_t h = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)));
  const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  return (2.0f * u - 1.0f) * scale;
}

__device__ inline float to_f(bf16_bits b) { return __uint_as_float(static_cast<unsigned>(b) << 16); }
__device__ inline bf16_bits to_b(float f) {
  const __nv_bfloat16 h = __float2bfloat16_rn(f);
  return *reinterpret_cast<const bf16_bits*>(&h);
}

unsigned blocks_for(std::int64_t n, int threads) {
  const std::int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 65535 * 32 ? (b < 1 ? 1 : b) : 65535 * 32);
}

__global__ void fill_bf16_kernel(bf16_bits* d, std::int64_t n, std::uint64_t seed, float scale) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    d[i] = to_b(uniform(seed, i, scale));
}
__global__ void fill_f32_kernel(float* d, std::int64_t n, std::uint64_t seed, float scale) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    d[i] = uniform(seed, i, scale);
}
__global__ void fill_index_kernel(std::int32_t* d, std::int64_t n, std::int64_t range, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    d[i] = static_cast<std::int32_t>(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i))) % static_cast<std::uint64_t>(range));
}
__global__ void poison_kernel(bf16_bits* d, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    d[i] = 0xFFFF;
}

// Block-wide sum of one float per thread (blockDim.x a multiple of 32, ≤ 1024).
__device__ float block_sum(float v) {
  __shared__ float partial[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  v = threadIdx.x < warps ? partial[threadIdx.x] : 0.0f;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x == 0) partial[0] = v;
  __syncthreads();
  const float total = partial[0];
  __syncthreads();
  return total;
}

// One block per token row.
__global__ void rms_norm_forward_kernel(const bf16_bits* x, const bf16_bits* w, bf16_bits* y, float* rstd,
                                        std::int64_t hidden, float eps) {
  const std::int64_t t = blockIdx.x;
  const bf16_bits* xr = x + t * hidden;
  float ss = 0.0f;
  for (std::int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
    const float v = to_f(xr[i]);
    ss += v * v;
  }
  const float r = rsqrtf(block_sum(ss) / static_cast<float>(hidden) + eps);
  for (std::int64_t i = threadIdx.x; i < hidden; i += blockDim.x) y[t * hidden + i] = to_b(to_f(xr[i]) * r * to_f(w[i]));
  if (threadIdx.x == 0) rstd[t] = r;
}

constexpr int rms_rows_per_block = 32;

// A block handles rms_rows_per_block rows: dx per row, and dw partial sums accumulated over its rows
// in registers (one column slot per thread stride), then one atomicAdd per column and block.
__global__ void rms_norm_backward_kernel(const bf16_bits* x, const bf16_bits* dy, const bf16_bits* w, const float* rstd,
                                         bf16_bits* dx, float* dw, std::int64_t tokens, std::int64_t hidden) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * rms_rows_per_block;
  const std::int64_t last = min(first + rms_rows_per_block, tokens);
  for (std::int64_t t = first; t < last; ++t) {
    const float r = rstd[t];
    float dot = 0.0f;  // Σ_j dy_j·w_j·x_j
    for (std::int64_t i = threadIdx.x; i < hidden; i += blockDim.x)
      dot += to_f(dy[t * hidden + i]) * to_f(w[i]) * to_f(x[t * hidden + i]);
    dot = block_sum(dot);
    const float coef = r * r * r * dot / static_cast<float>(hidden);
    for (std::int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
      const float xi = to_f(x[t * hidden + i]);
      const float g = to_f(dy[t * hidden + i]) * to_f(w[i]);
      dx[t * hidden + i] = to_b(r * g - xi * coef);
    }
  }
  for (std::int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
    float acc = 0.0f;
    for (std::int64_t t = first; t < last; ++t) acc += to_f(dy[t * hidden + i]) * to_f(x[t * hidden + i]) * rstd[t];
    atomicAdd(&dw[i], acc);
  }
}

__device__ inline float sigmoid(float g) { return 1.0f / (1.0f + __expf(-g)); }

__global__ void swiglu_forward_kernel(const bf16_bits* gu, bf16_bits* y, std::int64_t rows, std::int64_t dim) {
  const std::int64_t n = rows * dim;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / dim, c = i - r * dim;
    const float g = to_f(gu[r * 2 * dim + c]), u = to_f(gu[r * 2 * dim + dim + c]);
    y[i] = to_b(g * sigmoid(g) * u);
  }
}

__global__ void swiglu_backward_kernel(const bf16_bits* gu, const bf16_bits* dy, bf16_bits* dgu, std::int64_t rows,
                                       std::int64_t dim) {
  const std::int64_t n = rows * dim;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / dim, c = i - r * dim;
    const float g = to_f(gu[r * 2 * dim + c]), u = to_f(gu[r * 2 * dim + dim + c]);
    const float s = sigmoid(g), d = to_f(dy[i]);
    dgu[r * 2 * dim + c] = to_b(d * u * s * (1.0f + g * (1.0f - s)));
    dgu[r * 2 * dim + dim + c] = to_b(d * g * s);
  }
}

constexpr int router_max_per_lane = 32;  // experts ≤ 32·32 = 1024
constexpr int router_max_top_k = 32;

// One warp per token: each lane holds experts lane, lane+32, ...; softmax by warp reductions;
// top-k by k rounds of warp arg-max (ties to the lower index).
__global__ void router_forward_kernel(const float* logits, float* weights, std::int32_t* indices, std::int64_t tokens,
                                      int experts, int top_k) {
  const std::int64_t t = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t >= tokens) return;
  float p[router_max_per_lane];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < router_max_per_lane; ++j) {
    const int e = lane + 32 * j;
    p[j] = e < experts ? logits[t * experts + e] : -INFINITY;
    m = fmaxf(m, p[j]);
  }
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < router_max_per_lane; ++j) {
    p[j] = lane + 32 * j < experts ? __expf(p[j] - m) : 0.0f;
    s += p[j];
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  for (int k = 0; k < top_k; ++k) {
    float best = -1.0f;
    int best_e = 0x7fffffff;
#pragma unroll
    for (int j = 0; j < router_max_per_lane; ++j) {
      const int e = lane + 32 * j;
      if (e < experts && p[j] >= 0.0f && (p[j] > best || (p[j] == best && e < best_e))) best = p[j], best_e = e;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const float ob = __shfl_xor_sync(0xffffffffu, best, o);
      const int oe = __shfl_xor_sync(0xffffffffu, best_e, o);
      if (ob > best || (ob == best && oe < best_e)) best = ob, best_e = oe;
    }
    if (lane == 0) {
      weights[t * top_k + k] = best / s;
      indices[t * top_k + k] = best_e;
    }
    // Remove the winner (marked by a negative value) from further rounds.
#pragma unroll
    for (int j = 0; j < router_max_per_lane; ++j)
      if (lane + 32 * j == best_e) p[j] = -1.0f;
  }
}

__global__ void router_backward_kernel(const float* logits, const std::int32_t* indices, const float* dweights,
                                       float* dlogits, std::int64_t tokens, int experts, int top_k) {
  const std::int64_t t = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t >= tokens) return;
  float p[router_max_per_lane];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < router_max_per_lane; ++j) {
    const int e = lane + 32 * j;
    p[j] = e < experts ? logits[t * experts + e] : -INFINITY;
    m = fmaxf(m, p[j]);
  }
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < router_max_per_lane; ++j) {
    p[j] = lane + 32 * j < experts ? __expf(p[j] - m) : 0.0f;
    s += p[j];
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  // Σ_j p_j ĝ_j over the selected experts (each lane reads all k picks: k ≤ 32).
  float pg = 0.0f;
  for (int k = lane; k < top_k; k += 32) {
    const int e = indices[t * top_k + k];
    pg += __expf(logits[t * experts + e] - m) / s * dweights[t * top_k + k];
  }
  for (int o = 16; o > 0; o >>= 1) pg += __shfl_xor_sync(0xffffffffu, pg, o);
#pragma unroll
  for (int j = 0; j < router_max_per_lane; ++j) {
    const int e = lane + 32 * j;
    if (e >= experts) continue;
    float g = 0.0f;
    for (int k = 0; k < top_k; ++k)
      if (indices[t * top_k + k] == e) g += dweights[t * top_k + k];
    dlogits[t * experts + e] = p[j] / s * (g - pg);
  }
}

// Row copies: 16-byte vectors when hidden is a multiple of 8, else element by element.
__global__ void gather_kernel(const bf16_bits* x, const std::int32_t* src, bf16_bits* rows, std::int64_t count,
                              std::int64_t hidden) {
  const bool vec = hidden % 8 == 0;
  const std::int64_t width = vec ? hidden / 8 : hidden;
  const std::int64_t n = count * width;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / width, c = i - r * width;
    const std::int64_t s = src[r];
    if (vec)
      reinterpret_cast<uint4*>(rows)[r * width + c] = reinterpret_cast<const uint4*>(x)[s * width + c];
    else
      rows[r * hidden + c] = x[s * hidden + c];
  }
}

// out[t, c] = Σ_j w·rows[perm[t·k+j], c]; 8 columns per thread when hidden % 8 == 0.
__global__ void combine_kernel(const bf16_bits* rows, const std::int32_t* perm, const float* weights, bf16_bits* out,
                               std::int64_t tokens, int top_k, std::int64_t hidden) {
  const int per = hidden % 8 == 0 ? 8 : 1;
  const std::int64_t width = hidden / per;
  const std::int64_t n = tokens * width;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t t = i / width, c = (i - t * width) * per;
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < top_k; ++j) {
      const std::int64_t r = perm[t * top_k + j];
      const float wj = weights != nullptr ? weights[t * top_k + j] : 1.0f;
      if (per == 8) {
        const uint4 v = *reinterpret_cast<const uint4*>(rows + r * hidden + c);
        const bf16_bits* b = reinterpret_cast<const bf16_bits*>(&v);
#pragma unroll
        for (int q = 0; q < 8; ++q) acc[q] += wj * to_f(b[q]);
      } else {
        acc[0] += wj * to_f(rows[r * hidden + c]);
      }
    }
    if (per == 8) {
      uint4 v;
      bf16_bits* b = reinterpret_cast<bf16_bits*>(&v);
#pragma unroll
      for (int q = 0; q < 8; ++q) b[q] = to_b(acc[q]);
      *reinterpret_cast<uint4*>(out + t * hidden + c) = v;
    } else {
      out[t * hidden + c] = to_b(acc[0]);
    }
  }
}

__global__ void combine_backward_kernel(const bf16_bits* dout, const std::int32_t* perm, const float* weights,
                                        bf16_bits* drows, std::int64_t tokens, int top_k, std::int64_t hidden) {
  const std::int64_t n = tokens * top_k * hidden;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t slot = i / hidden, c = i - slot * hidden;
    const std::int64_t t = slot / top_k;
    drows[static_cast<std::int64_t>(perm[slot]) * hidden + c] = to_b(weights[slot] * to_f(dout[t * hidden + c]));
  }
}

constexpr int threads = 256;

}  // namespace

void fill_uniform_bf16(bf16_bits* data, std::int64_t count, std::uint64_t seed, float scale, cudaStream_t stream) {
  fill_bf16_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(data, count, seed, scale);
  BUDGET_CUDA_LAUNCH_CHECK();
}
void fill_uniform_f32(float* data, std::int64_t count, std::uint64_t seed, float scale, cudaStream_t stream) {
  fill_f32_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(data, count, seed, scale);
  BUDGET_CUDA_LAUNCH_CHECK();
}
void fill_indices(std::int32_t* data, std::int64_t count, std::int64_t range, std::uint64_t seed, cudaStream_t stream) {
  fill_index_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(data, count, range, seed);
  BUDGET_CUDA_LAUNCH_CHECK();
}
void poison_bf16(bf16_bits* data, std::int64_t count, cudaStream_t stream) {
  poison_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(data, count);
  BUDGET_CUDA_LAUNCH_CHECK();
}

void rms_norm_forward(const bf16_bits* x, const bf16_bits* w, bf16_bits* y, float* rstd, std::int64_t tokens,
                      std::int64_t hidden, float eps, cudaStream_t stream) {
  rms_norm_forward_kernel<<<static_cast<unsigned>(tokens), threads, 0, stream>>>(x, w, y, rstd, hidden, eps);
  BUDGET_CUDA_LAUNCH_CHECK();
}
void rms_norm_backward(const bf16_bits* x, const bf16_bits* dy, const bf16_bits* w, const float* rstd, bf16_bits* dx,
                       float* dw, std::int64_t tokens, std::int64_t hidden, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((tokens + rms_rows_per_block - 1) / rms_rows_per_block);
  rms_norm_backward_kernel<<<blocks, threads, 0, stream>>>(x, dy, w, rstd, dx, dw, tokens, hidden);
  BUDGET_CUDA_LAUNCH_CHECK();
}

void swiglu_forward(const bf16_bits* gate_up, bf16_bits* y, std::int64_t rows, std::int64_t dim, cudaStream_t stream) {
  swiglu_forward_kernel<<<blocks_for(rows * dim, threads), threads, 0, stream>>>(gate_up, y, rows, dim);
  BUDGET_CUDA_LAUNCH_CHECK();
}
void swiglu_backward(const bf16_bits* gate_up, const bf16_bits* dy, bf16_bits* dgate_up, std::int64_t rows,
                     std::int64_t dim, cudaStream_t stream) {
  swiglu_backward_kernel<<<blocks_for(rows * dim, threads), threads, 0, stream>>>(gate_up, dy, dgate_up, rows, dim);
  BUDGET_CUDA_LAUNCH_CHECK();
}

void router_forward(const float* logits, float* weights, std::int32_t* indices, std::int64_t tokens,
                    std::int64_t experts, std::int64_t top_k, cudaStream_t stream) {
  if (experts > 32 * router_max_per_lane || top_k > router_max_top_k || top_k > experts)
    throw CudaError("router_forward: needs experts <= 1024 and top_k <= min(32, experts)");
  router_forward_kernel<<<blocks_for(tokens * 32, threads), threads, 0, stream>>>(
      logits, weights, indices, tokens, static_cast<int>(experts), static_cast<int>(top_k));
  BUDGET_CUDA_LAUNCH_CHECK();
}
void router_backward(const float* logits, const std::int32_t* indices, const float* dweights, float* dlogits,
                     std::int64_t tokens, std::int64_t experts, std::int64_t top_k, cudaStream_t stream) {
  if (experts > 32 * router_max_per_lane || top_k > router_max_top_k || top_k > experts)
    throw CudaError("router_backward: needs experts <= 1024 and top_k <= min(32, experts)");
  router_backward_kernel<<<blocks_for(tokens * 32, threads), threads, 0, stream>>>(
      logits, indices, dweights, dlogits, tokens, static_cast<int>(experts), static_cast<int>(top_k));
  BUDGET_CUDA_LAUNCH_CHECK();
}

void gather_rows(const bf16_bits* x, const std::int32_t* src, bf16_bits* rows, std::int64_t count,
                 std::int64_t hidden, cudaStream_t stream) {
  const std::int64_t work = count * (hidden % 8 == 0 ? hidden / 8 : hidden);
  gather_kernel<<<blocks_for(work, threads), threads, 0, stream>>>(x, src, rows, count, hidden);
  BUDGET_CUDA_LAUNCH_CHECK();
}
void combine_rows(const bf16_bits* rows, const std::int32_t* perm, const float* weights, bf16_bits* out,
                  std::int64_t tokens, std::int64_t top_k, std::int64_t hidden, cudaStream_t stream) {
  const std::int64_t work = tokens * (hidden % 8 == 0 ? hidden / 8 : hidden);
  combine_kernel<<<blocks_for(work, threads), threads, 0, stream>>>(rows, perm, weights, out, tokens,
                                                                    static_cast<int>(top_k), hidden);
  BUDGET_CUDA_LAUNCH_CHECK();
}
void combine_rows_backward(const bf16_bits* dout, const std::int32_t* perm, const float* weights, bf16_bits* drows,
                           std::int64_t tokens, std::int64_t top_k, std::int64_t hidden, cudaStream_t stream) {
  combine_backward_kernel<<<blocks_for(tokens * top_k * hidden, threads), threads, 0, stream>>>(
      dout, perm, weights, drows, tokens, static_cast<int>(top_k), hidden);
  BUDGET_CUDA_LAUNCH_CHECK();
}

}  // namespace budget::profiler::kernels
