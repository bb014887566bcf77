#pragma once
/// \file
/// bf16 GEMMs with fp32 accumulation (private): dense ones through cuBLASLt, routed experts
/// through cuBLAS grouped batched GEMM (cublasGemmGroupedBatchedEx, cuBLAS ≥ 12.5).
///
/// Row-major training passes of y = x·Wᵀ (x M×K, W N×K, y M×N), as cuBLAS column-major calls
/// (a row-major R×C matrix is a column-major C×R one):
///   forward     y  = x·Wᵀ   : C[N×M] = Wcmᵀ[N×K]·xcm[K×M]    A = W (K×N, T), B = x (K×M, N)
///   input_grad  dx = dy·W   : C[K×M] = Wcm[K×N]·dycm[N×M]     A = W (K×N, N), B = dy (N×M, N)
///   weight_grad dW = dyᵀ·x  : C[K×N] = xcm[K×M]·dycmᵀ[M×N]    A = x (K×M, N), B = dy (N×M, T)

#include <cstdint>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace budget::profiler {

enum class Operand { x, w, dy, y, dx, dw };

/// One column-major call C(m×n) = op(A)·op(B) and which row-major operands it reads and writes.
struct GemmCall {
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  Operand a = Operand::x, b = Operand::x, c = Operand::y;
};

/// The call of `pass` ("forward", "input_grad", "weight_grad") for row-major M, K, N.
GemmCall gemm_call(const std::string& pass, std::int64_t M, std::int64_t K, std::int64_t N);

/// A planned cuBLASLt bf16 matmul (fp32 compute and scale, bf16 output, β = 0), with the
/// heuristic's best algorithm for the workspace given.
class LtMatmul {
 public:
  LtMatmul(cublasLtHandle_t handle, const GemmCall& call, std::size_t workspace_bytes);
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  ~LtMatmul();
  void run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  std::size_t workspace_ = 0;
};

/// Grouped expert GEMMs: E experts with rows[e] rows each; expert e's x_e (rows_e × K), W_e (N × K),
/// dy_e (rows_e × N) lie back to back in three buffers; the pass's output likewise. One call of
/// cublasGemmGroupedBatchedEx: experts with equal rows form one group (balanced: one group of E).
class GroupedGemm {
 public:
  /// Builds the device pointer arrays for buffers x, w, dy and output `out` (the pass's result).
  GroupedGemm(cublasHandle_t handle, const std::string& pass, const std::vector<std::int64_t>& rows, std::int64_t K,
              std::int64_t N, const void* x, const void* w, const void* dy, void* out);
  void run(cudaStream_t stream) const;

 private:
  cublasHandle_t handle_;
  std::vector<cublasOperation_t> trans_a_, trans_b_;
  std::vector<int> m_, n_, k_, lda_, ldb_, ldc_, group_size_;
  std::vector<float> alpha_, beta_;
  void* pointers_ = nullptr;  // device: A pointers, then B, then C (each E entries)
  std::int64_t experts_ = 0;

 public:
  ~GroupedGemm();
  GroupedGemm(const GroupedGemm&) = delete;
  GroupedGemm& operator=(const GroupedGemm&) = delete;
};

}  // namespace budget::profiler
