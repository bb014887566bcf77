#include "check.hpp"

#include <fmt/format.h>

namespace budget::profiler::detail {

void throw_call_error(const char* file, int line, const char* call, const std::string& status) {
  throw CudaError(fmt::format("{}:{}: {} failed: {}", file, line, call, status));
}

std::string status_text(cudaError_t status) {
  return fmt::format("{} ({})", cudaGetErrorName(status), cudaGetErrorString(status));
}

std::string status_text(cublasStatus_t status) {
  return fmt::format("{} ({})", cublasGetStatusName(status), cublasGetStatusString(status));
}

#if BUDGET_PROFILER_HAS_CUDNN
std::string status_text(cudnnStatus_t status) {
  char last[512] = {0};
  cudnnGetLastErrorString(last, sizeof last);
  return fmt::format("{} ({})", cudnnGetErrorString(status), last);
}
#endif
// status_text(ncclResult_t) is nccl_timer.cpp's: it asks the NCCL library loaded at run time.

}  // namespace budget::profiler::detail
