#pragma once
/// \file
/// Causal scaled-dot-product attention (forward or backward) through cuDNN's fused flash-attention
/// engines, built with the cuDNN 9 backend graph API (cudnn_backend.h; the cudnn_frontend C++
/// headers are not available here). Private.
///
/// The graph is the pattern cuDNN's fused flash-attention engines recognise (the one cudnn_frontend
/// ≥ 1.0 lowers SDPA to, for cuDNN versions without a single SDPA operation): S = Q·Kᵀ, S·scale,
/// causal mask (row ≥ column, else the lowest float), softmax with its log-sum-exp statistics,
/// O = P·V; the backward recomputes P from the statistics and forms dV = Pᵀ·dO,
/// dS = scale·P ⊙ (dO·Vᵀ − rowsum(dO ⊙ O)), dQ = dS·K (through an fp32 accumulator),
/// dK = dSᵀ·Q; with grouped K/V heads dK and dV are formed per query head and summed per group.
///
/// Layout: tokens-major (BSHD) bf16, batch = documents: Q, O, dQ, dO are [docs, len, heads, d];
/// K, V, dK, dV are [docs, len, kv_heads, d]. One batch entry per document is exactly the
/// per-document causal mask of a packed window when all documents have the same length.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include "budget/profiler/config.hpp"

#if BUDGET_PROFILER_HAS_CUDNN
#include <cudnn.h>

namespace budget::profiler {

/// cuDNN has no engine for this graph (unsupported shape or pattern): the shape is "refused".
class CudnnRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SdpaShape {
  std::int64_t docs = 0, len = 0, heads = 0, kv_heads = 0, head_dim = 0;
};

struct SdpaBuffers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;        ///< forward output; backward input
  float* stats = nullptr;   ///< [docs, heads, len] log-sum-exp: forward output, backward input
  const void* dout = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  float* dq_accum = nullptr;  ///< backward scratch: [docs, heads, len, d] fp32, zeroed by run()
};

class CudnnSdpa {
 public:
  /// Builds the graph, asks the heuristics for engine configs and finalises the first plan that
  /// accepts it. Throws CudnnRefused (with cuDNN's message) when none does.
  CudnnSdpa(cudnnHandle_t handle, const SdpaShape& shape, bool backward);
  ~CudnnSdpa();
  CudnnSdpa(const CudnnSdpa&) = delete;
  CudnnSdpa& operator=(const CudnnSdpa&) = delete;

  std::int64_t workspace_bytes() const { return workspace_; }
  /// Runs once on the handle's stream (set by the caller with cudnnSetStream).
  void run(const SdpaBuffers& buffers, void* workspace, cudaStream_t stream) const;

 private:
  cudnnHandle_t handle_;
  SdpaShape shape_;
  bool backward_;
  cudnnBackendDescriptor_t plan_ = nullptr;
  std::int64_t workspace_ = 0;
};

}  // namespace budget::profiler
#endif
