#pragma once
/// \file
/// The one checking macro for every CUDA runtime, cuBLAS/cuBLASLt, cuDNN and NCCL call (private header).
///
///   BUDGET_CUDA_CALL(cudaMalloc(&p, n));        // any call returning cudaError_t,
///   BUDGET_CUDA_CALL(cublasLtMatmul(...));      // cublasStatus_t or cudnnStatus_t
///   BUDGET_CUDA_LAUNCH_CHECK();                  // after every kernel launch (cudaGetLastError)
///
/// A failure throws CudaError whose what() is "<file>:<line>: <call> failed: <status name>
/// (<message>)". Nothing is ever silently ignored.

#include <stdexcept>
#include <string>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "budget/profiler/config.hpp"
#if BUDGET_PROFILER_HAS_CUDNN
#include <cudnn.h>
#endif
#if BUDGET_PROFILER_HAS_NCCL
#include <nccl.h>
#endif

namespace budget::profiler {

/// A CUDA, cuBLAS or cuDNN call failed.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
[[noreturn]] void throw_call_error(const char* file, int line, const char* call, const std::string& status);
std::string status_text(cudaError_t status);
std::string status_text(cublasStatus_t status);
#if BUDGET_PROFILER_HAS_CUDNN
std::string status_text(cudnnStatus_t status);
#endif
inline bool ok(cudaError_t s) { return s == cudaSuccess; }
inline bool ok(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }
#if BUDGET_PROFILER_HAS_CUDNN
inline bool ok(cudnnStatus_t s) { return s == CUDNN_STATUS_SUCCESS; }
#endif
#if BUDGET_PROFILER_HAS_NCCL
std::string status_text(ncclResult_t status);  // defined in nccl_timer.cpp (libnccl is loaded at run time)
inline bool ok(ncclResult_t s) { return s == ncclSuccess; }
#endif

template <typename Status>
void check_call(Status status, const char* file, int line, const char* call) {
  if (!ok(status)) throw_call_error(file, line, call, status_text(status));
}
}  // namespace detail

}  // namespace budget::profiler

#define BUDGET_CUDA_CALL(call) ::budget::profiler::detail::check_call((call), __FILE__, __LINE__, #call)
#define BUDGET_CUDA_LAUNCH_CHECK() BUDGET_CUDA_CALL(cudaGetLastError())
