#include "gemm.hpp"

#include <map>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "check.hpp"

namespace budget::profiler {

GemmCall gemm_call(const std::string& pass, std::int64_t M, std::int64_t K, std::int64_t N) {
  GemmCall c;
  if (pass == "forward") {
    c = GemmCall{true, false, N, M, K, K, K, N, Operand::w, Operand::x, Operand::y};
  } else if (pass == "input_grad") {
    c = GemmCall{false, false, K, M, N, K, N, K, Operand::w, Operand::dy, Operand::dx};
  } else if (pass == "weight_grad") {
    c = GemmCall{false, true, K, N, M, K, N, K, Operand::x, Operand::dy, Operand::dw};
  } else {
    throw Error(fmt::format("unknown GEMM pass '{}' (allowed: forward, input_grad, weight_grad)", pass));
  }
  return c;
}

namespace {
// Column-major layout of op(X) stored as rows × cols with leading dimension ld.
cublasLtMatrixLayout_t layout(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t l = nullptr;
  BUDGET_CUDA_CALL(cublasLtMatrixLayoutCreate(&l, CUDA_R_16BF, static_cast<std::uint64_t>(rows),
                                              static_cast<std::uint64_t>(cols), ld));
  return l;
}
}  // namespace

LtMatmul::LtMatmul(cublasLtHandle_t handle, const GemmCall& call, std::size_t workspace_bytes)
    : handle_(handle), workspace_(workspace_bytes) {
  BUDGET_CUDA_CALL(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = call.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = call.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  BUDGET_CUDA_CALL(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  BUDGET_CUDA_CALL(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  // Stored shapes: A is m×k (k×m when transposed), B is k×n (n×k when transposed), C is m×n.
  a_ = call.trans_a ? layout(call.k, call.m, call.lda) : layout(call.m, call.k, call.lda);
  b_ = call.trans_b ? layout(call.n, call.k, call.ldb) : layout(call.k, call.n, call.ldb);
  c_ = layout(call.m, call.n, call.ldc);
  cublasLtMatmulPreference_t pref = nullptr;
  BUDGET_CUDA_CALL(cublasLtMatmulPreferenceCreate(&pref));
  BUDGET_CUDA_CALL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                        sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, c_, c_, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  BUDGET_CUDA_CALL(status);
  if (found == 0) throw CudaError(fmt::format("cuBLASLt found no algorithm for m={} n={} k={}", call.m, call.n, call.k));
  algo_ = result.algo;
}

LtMatmul::~LtMatmul() {
  if (c_ != nullptr) cublasLtMatrixLayoutDestroy(c_);
  if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
  if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
  if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
}

void LtMatmul::run(const void* a, const void* b, void* c, void* workspace, cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  BUDGET_CUDA_CALL(cublasLtMatmul(handle_, op_, &alpha, a, a_, b, b_, &beta, c, c_, c, c_, &algo_, workspace,
                                  workspace_, stream));
}

GroupedGemm::GroupedGemm(cublasHandle_t handle, const std::string& pass, const std::vector<std::int64_t>& rows,
                         std::int64_t K, std::int64_t N, const void* x, const void* w, const void* dy, void* out)
    : handle_(handle), experts_(static_cast<std::int64_t>(rows.size())) {
  // Order experts into groups of equal row counts (problems of a group are consecutive).
  std::map<std::int64_t, std::vector<std::size_t>> by_rows;
  for (std::size_t e = 0; e < rows.size(); ++e) by_rows[rows[e]].push_back(e);
  std::vector<std::int64_t> offset(rows.size(), 0);  // first row of expert e
  for (std::size_t e = 1; e < rows.size(); ++e) offset[e] = offset[e - 1] + rows[e - 1];
  std::vector<const void*> a_ptr, b_ptr;
  std::vector<void*> c_ptr;
  const auto* xb = static_cast<const std::uint16_t*>(x);
  const auto* wb = static_cast<const std::uint16_t*>(w);
  const auto* dyb = static_cast<const std::uint16_t*>(dy);
  auto* ob = static_cast<std::uint16_t*>(out);
  for (const auto& [r, members] : by_rows) {
    const GemmCall call = gemm_call(pass, r, K, N);
    const auto narrow = [](std::int64_t v) {
      if (v > 2147483647) throw CudaError("grouped GEMM dimension exceeds int range");
      return static_cast<int>(v);
    };
    trans_a_.push_back(call.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N);
    trans_b_.push_back(call.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
    m_.push_back(narrow(call.m));
    n_.push_back(narrow(call.n));
    k_.push_back(narrow(call.k));
    lda_.push_back(narrow(call.lda));
    ldb_.push_back(narrow(call.ldb));
    ldc_.push_back(narrow(call.ldc));
    alpha_.push_back(1.0f);
    beta_.push_back(0.0f);
    group_size_.push_back(narrow(static_cast<std::int64_t>(members.size())));
    for (const std::size_t e : members) {
      const std::uint16_t* xe = xb + offset[e] * K;
      const std::uint16_t* we = wb + static_cast<std::int64_t>(e) * N * K;
      const std::uint16_t* dye = dyb + offset[e] * N;
      const auto pick = [&](Operand o) -> const void* {
        return o == Operand::x ? static_cast<const void*>(xe) : o == Operand::w ? static_cast<const void*>(we) : dye;
      };
      a_ptr.push_back(pick(call.a));
      b_ptr.push_back(pick(call.b));
      // Output: y_e (rows_e × N), dx_e (rows_e × K) or dW_e (N × K), back to back.
      std::uint16_t* oe = call.c == Operand::y    ? ob + offset[e] * N
                          : call.c == Operand::dx ? ob + offset[e] * K
                                                  : ob + static_cast<std::int64_t>(e) * N * K;
      c_ptr.push_back(oe);
    }
  }
  const std::size_t n = rows.size();
  BUDGET_CUDA_CALL(cudaMalloc(&pointers_, 3 * n * sizeof(void*)));
  auto** p = static_cast<void**>(pointers_);
  BUDGET_CUDA_CALL(cudaMemcpy(p, a_ptr.data(), n * sizeof(void*), cudaMemcpyHostToDevice));
  BUDGET_CUDA_CALL(cudaMemcpy(p + n, b_ptr.data(), n * sizeof(void*), cudaMemcpyHostToDevice));
  BUDGET_CUDA_CALL(cudaMemcpy(p + 2 * n, c_ptr.data(), n * sizeof(void*), cudaMemcpyHostToDevice));
}

GroupedGemm::~GroupedGemm() {
  if (pointers_ != nullptr) cudaFree(pointers_);
}

void GroupedGemm::run(cudaStream_t stream) const {
  BUDGET_CUDA_CALL(cublasSetStream(handle_, stream));
  auto** p = static_cast<void**>(pointers_);
  const auto n = static_cast<std::size_t>(experts_);
  BUDGET_CUDA_CALL(cublasGemmGroupedBatchedEx(
      handle_, trans_a_.data(), trans_b_.data(), m_.data(), n_.data(), k_.data(), alpha_.data(),
      const_cast<const void* const*>(p), CUDA_R_16BF, lda_.data(), const_cast<const void* const*>(p + n), CUDA_R_16BF,
      ldb_.data(), beta_.data(), p + 2 * n, CUDA_R_16BF, ldc_.data(), static_cast<int>(m_.size()), group_size_.data(),
      CUBLAS_COMPUTE_32F));
}

}  // namespace budget::profiler
