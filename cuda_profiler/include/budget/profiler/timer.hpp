#pragma once
/// \file
/// Timer: what measures an OpCase. The sweep, the config runner and the profile writer talk only
/// to this interface, so everything but the kernels is testable without a GPU:
///  - make_cuda_timer() (cuda_timer.hpp): CUDA events around real kernels (cuBLASLt, grouped
///    cuBLAS, cuDNN SDPA, the profiler's own memory-bound kernels), available when built with CUDA;
///  - FakeTimer: a roofline max(flops/peak, bytes/bandwidth) + a launch overhead, deterministic,
///    for tests and `--simulate`. Its numbers are labelled as simulated wherever they are written.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "budget/profiler/op_case.hpp"

namespace budget::profiler {

/// The measuring device, as written in the profile header.
struct DeviceInfo {
  std::string name, compute_capability, driver, cuda_runtime, cublas, cudnn;
  std::int64_t sm_count = 0;
  double memory_gib = 0.0, sm_clock_mhz = 0.0, memory_clock_mhz = 0.0;
};

/// Peak rates measured in the same run: an 8192³ bf16 GEMM (fp32 accumulation) and a
/// device-to-device copy (bytes read + bytes written per second).
struct Peaks {
  double bf16_gemm_tflops = 0.0;
  double copy_gbytes_per_s = 0.0;
};

/// The outcome of timing one case.
struct Timing {
  bool refused = false;   ///< the backend rejected the shape (then `ms` is 0 and `note` says why)
  double ms = 0.0;        ///< median milliseconds of one launch
  std::string backend;    ///< cublaslt, cublas-grouped, cudnn, fallback-pad8-cudnn, own-kernel, ...
  std::string note;       ///< why refused, or what fallback was used
};

/// The outcome of one correctness check (GPU output against a CPU reference on a small shape).
struct CheckResult {
  std::string op;          ///< the profile op it vouches for (gemm, expert_gemms, attention, rms_norm, ...)
  std::string name;        ///< which kernel and shape
  double rel_error = 0.0;  ///< ‖out − ref‖₂ / ‖ref‖₂ (NaN fails)
  double tolerance = 0.0;
  bool passed = false;
  std::string note;        ///< e.g. "refused by cuDNN" for an unchecked backend
};

/// Thrown by Timer::time() when one case could not be timed (a library call failed for that
/// shape) but the device is still usable: the runner records it and goes on.
class CaseFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Timer {
 public:
  virtual ~Timer() = default;
  virtual DeviceInfo device() const = 0;
  /// One line for the profile's source.method.
  virtual std::string method() const = 0;
  /// True when the times are not measurements (FakeTimer): written into the profile's source.
  virtual bool simulated() const = 0;
  virtual Peaks measure_peaks() = 0;
  /// Runs every correctness check; the caller times no case of an op whose check failed.
  virtual std::vector<CheckResult> check_correctness() = 0;
  /// Times one case (warm-up, then the median of the configured launches).
  virtual Timing time(const OpCase& c) = 0;
};

/// Roofline rates of the fake timer. Defaults: an H200 as measured through PyTorch on this
/// project's machine (shared/GPU.md): 760 TFLOP/s bf16 dense, 4.16 TB/s copy; a 5 µs launch.
struct RooflineRates {
  double tflops = 760.0;
  double gbytes_per_s = 4160.0;
  double launch_us = 5.0;
  /// ms = max(flops / (tflops·1e12), bytes / (GB/s·1e9))·1e3 + launch_us·1e-3.
  double ms(const OpCase& c) const;
};

/// Deterministic fake: ms from RooflineRates; refuses attention whose head_dim is not a multiple of
/// 8 with backend "cudnn" exactly as the CUDA timer's cuDNN path does (the caller then asks for
/// the padded fallback). Counts the cases it was asked to time (for tests).
class FakeTimer final : public Timer {
 public:
  explicit FakeTimer(RooflineRates rates = {}) : rates_(rates) {}
  DeviceInfo device() const override;
  std::string method() const override;
  bool simulated() const override { return true; }
  Peaks measure_peaks() override;
  std::vector<CheckResult> check_correctness() override;
  Timing time(const OpCase& c) override;
  std::int64_t timed_cases() const { return timed_; }

 private:
  RooflineRates rates_;
  std::int64_t timed_ = 0;
};

/// cuDNN's fused attention needs head_dim a multiple of 8 (and ≤ 256); trainers pad head_dim to
/// the next multiple of 8 when it is not. Returns that padded size.
constexpr std::int64_t padded_head_dim(std::int64_t head_dim) { return (head_dim + 7) / 8 * 8; }

}  // namespace budget::profiler
