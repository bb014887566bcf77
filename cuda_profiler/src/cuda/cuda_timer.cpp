// The CUDA-event Timer (cuda_timer.hpp): device description, peaks, correctness checks against the
// CPU references, and timing of every op of the calibration format.

#include "budget/profiler/cuda_timer.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <tuple>

#include "../reference.hpp"
#include "attention_cudnn.hpp"
#include "check.hpp"
#include "device_buffer.hpp"
#include "gemm.hpp"
#include "kernels.hpp"

namespace budget::profiler {
namespace {

using kernels::bf16_bits;
constexpr std::size_t workspace_bytes = std::size_t{64} << 20;  // cuBLASLt workspace: 64 MiB
constexpr double bf16_tolerance = 2e-2;  // ‖out − ref‖/‖ref‖ for bf16 outputs (METHOD.md: 1e-3…1e-2 typical)

std::string version_text(long long v, int major_div, int minor_div) {
  return fmt::format("{}.{}.{}", v / major_div, (v % major_div) / minor_div, v % minor_div);
}

/// The driver version string through NVML when libnvidia-ml is present (dlopen'ed: no link-time
/// dependency), else the CUDA version the driver supports.
std::string driver_version() {
  if (void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    using init_t = int (*)();
    using version_t = int (*)(char*, unsigned);
    auto init = reinterpret_cast<init_t>(dlsym(nvml, "nvmlInit_v2"));
    auto get = reinterpret_cast<version_t>(dlsym(nvml, "nvmlSystemGetDriverVersion"));
    char buffer[96] = {0};
    if (init != nullptr && get != nullptr && init() == 0 && get(buffer, sizeof buffer) == 0) return buffer;
  }
  int v = 0;
  BUDGET_CUDA_CALL(cudaDriverGetVersion(&v));
  return fmt::format("CUDA {}.{} driver", v / 1000, (v % 1000) / 10);
}

class CudaTimer final : public Timer {
 public:
  explicit CudaTimer(const LaunchPlan& plan) : plan_(plan) {
    BUDGET_CUDA_CALL(cudaSetDevice(0));
    BUDGET_CUDA_CALL(cudaStreamCreate(&stream_));
    BUDGET_CUDA_CALL(cublasLtCreate(&lt_));
    BUDGET_CUDA_CALL(cublasCreate(&blas_));
    BUDGET_CUDA_CALL(cublasSetStream(blas_, stream_));
#if BUDGET_PROFILER_HAS_CUDNN
    BUDGET_CUDA_CALL(cudnnCreate(&dnn_));
    BUDGET_CUDA_CALL(cudnnSetStream(dnn_, stream_));
#endif
    BUDGET_CUDA_CALL(cudaEventCreate(&start_));
    BUDGET_CUDA_CALL(cudaEventCreate(&stop_));
    workspace_ = DeviceBuffer(workspace_bytes);
    describe_device();
  }
  ~CudaTimer() override {
#if BUDGET_PROFILER_HAS_CUDNN
    sdpa_plans_.clear();  // plans before their handle
#endif
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
#if BUDGET_PROFILER_HAS_CUDNN
    cudnnDestroy(dnn_);
#endif
    cublasDestroy(blas_);
    cublasLtDestroy(lt_);
    cudaStreamDestroy(stream_);
  }

  DeviceInfo device() const override { return info_; }
  bool simulated() const override { return false; }
  std::string method() const override {
    return fmt::format(
        "CUDA events around each launch, median of {} after {} warm-ups; uniform random bf16 inputs, fresh per "
        "case; every kernel checked against a CPU float64 reference first",
        plan_.repeats, plan_.warmup);
  }

  Peaks measure_peaks() override {
    Peaks p;
    {  // 8192³ bf16 GEMM, fp32 accumulation.
      const std::int64_t n = 8192;
      auto a = random_bf16(n * n), b = random_bf16(n * n);
      DeviceBuffer c(static_cast<std::size_t>(n * n) * 2);
      const LtMatmul mm(lt_, gemm_call("forward", n, n, n), workspace_bytes);
      const double ms = median_ms([&] { mm.run(a.get(), b.get(), c.get(), workspace_.get(), stream_); });
      p.bf16_gemm_tflops = 2.0 * std::pow(static_cast<double>(n), 3) / (ms * 1e-3) / 1e12;
    }
    {  // Device-to-device copy of 2 GiB: (read + write) bytes / time.
      const std::size_t bytes = std::size_t{2} << 30;
      DeviceBuffer src(bytes), dst(bytes);
      kernels::fill_uniform_bf16(src.get<bf16_bits>(), static_cast<std::int64_t>(bytes / 2), next_seed(), 1.0f,
                                 stream_);
      const double ms = median_ms(
          [&] { BUDGET_CUDA_CALL(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream_)); });
      p.copy_gbytes_per_s = 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
    }
    return p;
  }

  /// Each kernel family against its float64 reference (reference.hpp); one function per family, run
  /// through guarded() so that one family's failure does not hide the others'.
  std::vector<CheckResult> check_correctness() override;

  Timing time(const OpCase& c) override {
    try {
      if (c.op == ProfileOp::gemm) return time_gemm(c);
      if (c.op == ProfileOp::expert_gemms) return time_expert_gemms(c);
      if (c.op == ProfileOp::attention) return time_attention(c);
      return time_memory_bound(c);
    } catch (const CudaError& e) {
      // A failed library call for this shape: go on if the device is still usable.
      if (device_usable()) throw CaseFailed(e.what());
      throw;
    }
  }

 private:
  /// GEMMs: an aligned and a ragged shape, every pass, against float64.
  void check_gemms(std::vector<CheckResult>& r);
  /// Grouped expert GEMMs, balanced and skewed routing: each expert against the dense reference.
  void check_expert_gemms(std::vector<CheckResult>& r);
  /// RMSNorm forward and backward (H not a multiple of 8, then one that is).
  void check_rms_norm(std::vector<CheckResult>& r);
  /// SwiGLU forward and backward.
  void check_swiglu(std::vector<CheckResult>& r);
  /// Router softmax + top-k, forward (indices and weights) and backward.
  void check_router(std::vector<CheckResult>& r);
  /// Token dispatch (gather) and combine (weighted scatter-add), forward and backward.
  void check_gather_combine(std::vector<CheckResult>& r);
#if BUDGET_PROFILER_HAS_CUDNN
  /// cuDNN SDPA forward and backward, grouped K/V then plain, against float64.
  void check_attention(std::vector<CheckResult>& r);
#endif

  std::uint64_t next_seed() { return ++seed_ * 0x9E3779B97F4A7C15ull; }

  /// True when the context has no sticky error (a failed call left the device usable).
  static bool device_usable() {
    const cudaError_t sync = cudaDeviceSynchronize();
    const cudaError_t last = cudaGetLastError();
    return sync == cudaSuccess && last == cudaSuccess;
  }

  /// Runs one group of checks; a library error in it becomes a failed check of `op` (and the
  /// others still run) unless the device is no longer usable.
  template <typename Fn>
  void guarded(std::vector<CheckResult>& results, std::initializer_list<const char*> ops, Fn&& fn) {
    try {
      fn();
    } catch (const CudaError& e) {
      if (!device_usable()) throw;
      for (const char* op : ops)
        results.push_back(CheckResult{op, std::string(op) + " (a library call failed)", 0.0, 0.0, false, e.what()});
    }
  }

  DeviceBuffer random_bf16(std::int64_t count, float scale = 1.0f) {
    DeviceBuffer b(static_cast<std::size_t>(count) * 2);
    kernels::fill_uniform_bf16(b.get<bf16_bits>(), count, next_seed(), scale, stream_);
    return b;
  }
  DeviceBuffer random_f32(std::int64_t count, float scale = 1.0f) {
    DeviceBuffer b(static_cast<std::size_t>(count) * 4);
    kernels::fill_uniform_f32(b.get<float>(), count, next_seed(), scale, stream_);
    return b;
  }
  DeviceBuffer bf16_out(std::int64_t count) {
    DeviceBuffer b(static_cast<std::size_t>(count) * 2);
    kernels::poison_bf16(b.get<bf16_bits>(), count, stream_);
    return b;
  }
  std::vector<float> host_bf16(const DeviceBuffer& b, std::int64_t count) {
    BUDGET_CUDA_CALL(cudaStreamSynchronize(stream_));
    const auto bits = to_host<bf16_bits>(b, static_cast<std::size_t>(count));
    std::vector<float> out(bits.size());
    std::transform(bits.begin(), bits.end(), out.begin(), bf16_to_float);
    return out;
  }
  std::vector<float> host_f32(const DeviceBuffer& b, std::int64_t count) {
    BUDGET_CUDA_CALL(cudaStreamSynchronize(stream_));
    return to_host<float>(b, static_cast<std::size_t>(count));
  }
  /// A random permutation of [0, n) (host, seeded), on the device.
  DeviceBuffer permutation(std::int64_t n, std::vector<std::int32_t>* host = nullptr) {
    std::vector<std::int32_t> p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    std::mt19937_64 rng(next_seed());
    std::shuffle(p.begin(), p.end(), rng);
    if (host != nullptr) *host = p;
    return to_device(p);
  }
  DeviceBuffer random_indices(std::int64_t n, std::int64_t range, std::vector<std::int32_t>* host = nullptr) {
    DeviceBuffer b(static_cast<std::size_t>(n) * 4);
    kernels::fill_indices(b.get<std::int32_t>(), n, range, next_seed(), stream_);
    if (host != nullptr) *host = host_i32(b, n);
    return b;
  }
  std::vector<std::int32_t> host_i32(const DeviceBuffer& b, std::int64_t count) {
    BUDGET_CUDA_CALL(cudaStreamSynchronize(stream_));
    return to_host<std::int32_t>(b, static_cast<std::size_t>(count));
  }

  /// Median milliseconds of `launch` (events recorded around each launch on stream_).
  double median_ms(const std::function<void()>& launch) {
    for (int i = 0; i < plan_.warmup; ++i) launch();
    BUDGET_CUDA_CALL(cudaStreamSynchronize(stream_));
    std::vector<double> times;
    for (int i = 0; i < plan_.repeats; ++i) {
      BUDGET_CUDA_CALL(cudaEventRecord(start_, stream_));
      launch();
      BUDGET_CUDA_CALL(cudaEventRecord(stop_, stream_));
      BUDGET_CUDA_CALL(cudaEventSynchronize(stop_));
      float ms = 0;
      BUDGET_CUDA_CALL(cudaEventElapsedTime(&ms, start_, stop_));
      times.push_back(ms);
    }
    BUDGET_CUDA_LAUNCH_CHECK();
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    return times[times.size() / 2];
  }

  void describe_device() {
    cudaDeviceProp prop{};
    BUDGET_CUDA_CALL(cudaGetDeviceProperties(&prop, 0));
    info_.name = prop.name;
    info_.compute_capability = fmt::format("{}.{}", prop.major, prop.minor);
    info_.sm_count = prop.multiProcessorCount;
    info_.memory_gib = static_cast<double>(prop.totalGlobalMem) / static_cast<double>(1ull << 30);
    int khz = 0;
    BUDGET_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    info_.sm_clock_mhz = khz / 1000.0;
    BUDGET_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0));
    info_.memory_clock_mhz = khz / 1000.0;
    info_.driver = driver_version();
    int runtime = 0;
    BUDGET_CUDA_CALL(cudaRuntimeGetVersion(&runtime));
    info_.cuda_runtime = fmt::format("{}.{}", runtime / 1000, (runtime % 1000) / 10);
    info_.cublas = version_text(static_cast<long long>(cublasLtGetVersion()), 10000, 100);
#if BUDGET_PROFILER_HAS_CUDNN
    info_.cudnn = version_text(static_cast<long long>(cudnnGetVersion()), 10000, 100);
#else
    info_.cudnn = "not built";
#endif
  }

  // ---- GEMMs -------------------------------------------------------------------------------
  struct GemmBuffers {
    DeviceBuffer x, w, dy, out;
  };
  GemmBuffers gemm_buffers(std::int64_t M, std::int64_t K, std::int64_t N, const GemmCall& call) {
    const std::int64_t out = call.c == Operand::y ? M * N : call.c == Operand::dx ? M * K : N * K;
    return GemmBuffers{random_bf16(M * K), random_bf16(N * K), random_bf16(M * N), bf16_out(out)};
  }
  static const void* operand(const GemmBuffers& b, Operand o) {
    return o == Operand::x ? b.x.get() : o == Operand::w ? b.w.get() : b.dy.get();
  }

  Timing time_gemm(const OpCase& c) {
    const std::int64_t M = c.at("M"), K = c.at("K"), N = c.at("N");
    const GemmCall call = gemm_call(c.pass, M, K, N);
    auto b = gemm_buffers(M, K, N, call);
    const LtMatmul mm(lt_, call, workspace_bytes);
    const double ms =
        median_ms([&] { mm.run(operand(b, call.a), operand(b, call.b), b.out.get(), workspace_.get(), stream_); });
    return Timing{false, ms, "cublaslt", {}};
  }

  Timing time_expert_gemms(const OpCase& c) {
    const std::int64_t E = c.at("E"), H = c.at("H"), D = c.at("expert_dim");
    const std::vector<std::int64_t> rows = expert_rows(E, c.at("tokens_per_expert"), c.routing);
    const std::int64_t total = std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
    const std::int64_t K = c.matrix == "down" ? D : H;
    const std::int64_t N = c.matrix == "up_gate" ? 2 * D : c.matrix == "up" ? D : H;
    auto x = random_bf16(total * K), w = random_bf16(E * N * K), dy = random_bf16(total * N);
    const std::int64_t out_count = c.pass == "forward" ? total * N : c.pass == "input_grad" ? total * K : E * N * K;
    auto out = bf16_out(out_count);
    const GroupedGemm gg(blas_, c.pass, rows, K, N, x.get(), w.get(), dy.get(), out.get());
    const double ms = median_ms([&] { gg.run(stream_); });
    return Timing{false, ms, "cublas-grouped", {}};
  }

  // ---- attention ---------------------------------------------------------------------------
#if BUDGET_PROFILER_HAS_CUDNN
  struct AttentionBuffers {
    DeviceBuffer q, k, v, o, stats, dout, dq, dk, dv, dq_accum;
    SdpaBuffers view() const {
      return SdpaBuffers{q.get(),    k.get(),  v.get(),  o.get(),  stats.get<float>(),
                         dout.get(), dq.get(), dk.get(), dv.get(), dq_accum.get<float>()};
    }
  };
  AttentionBuffers attention_buffers(const SdpaShape& s) {
    const std::int64_t tq = s.docs * s.len * s.heads * s.head_dim, tk = s.docs * s.len * s.kv_heads * s.head_dim;
    const std::int64_t rows = s.docs * s.len * s.heads;
    AttentionBuffers b;
    b.q = random_bf16(tq), b.k = random_bf16(tk), b.v = random_bf16(tk), b.o = bf16_out(tq);
    b.stats = DeviceBuffer(static_cast<std::size_t>(rows) * 4);
    b.dout = random_bf16(tq), b.dq = bf16_out(tq), b.dk = bf16_out(tk), b.dv = bf16_out(tk);
    b.dq_accum = DeviceBuffer(static_cast<std::size_t>(tq) * 4);
    return b;
  }
  /// The finalised plan of a shape and pass, built once per timer (a graph build can take a
  /// second: the forward plan of a shape serves its backward case too). Refusals are cached too.
  const CudnnSdpa& sdpa_plan(const SdpaShape& s, bool backward) {
    const auto key = std::make_tuple(s.docs, s.len, s.heads, s.kv_heads, s.head_dim, backward);
    auto it = sdpa_plans_.find(key);
    if (it == sdpa_plans_.end()) {
      std::string refusal;
      std::unique_ptr<CudnnSdpa> plan;
      try {
        plan = std::make_unique<CudnnSdpa>(dnn_, s, backward);
      } catch (const CudnnRefused& e) {
        refusal = e.what();
      } catch (const CudaError& e) {
        // A backend call failed while building the graph: cuDNN did not accept this graph; the
        // message (file:line, call, status) is kept in the refused row's note.
        refusal = std::string("graph construction failed: ") + e.what();
      }
      it = sdpa_plans_.emplace(key, std::make_pair(std::move(plan), refusal)).first;
    }
    if (!it->second.first) throw CudnnRefused(it->second.second);
    return *it->second.first;
  }
  /// Times one pass; the backward's inputs (O, stats) come from a forward run first.
  double time_sdpa(const SdpaShape& s, bool backward) {
    const CudnnSdpa& forward = sdpa_plan(s, false);
    const CudnnSdpa* bwd = backward ? &sdpa_plan(s, true) : nullptr;
    auto b = attention_buffers(s);
    DeviceBuffer ws(static_cast<std::size_t>(std::max<std::int64_t>(forward.workspace_bytes(), 1)));
    if (!backward) return median_ms([&] { forward.run(b.view(), ws.get(), stream_); });
    forward.run(b.view(), ws.get(), stream_);
    DeviceBuffer bws(static_cast<std::size_t>(std::max<std::int64_t>(bwd->workspace_bytes(), 1)));
    return median_ms([&] { bwd->run(b.view(), bws.get(), stream_); });
  }
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool>,
           std::pair<std::unique_ptr<CudnnSdpa>, std::string>>
      sdpa_plans_;
#endif

  /// cuDNN SDPA; when cuDNN refuses grouped K/V heads, K and V expanded to num_heads
  /// ("fallback-repeat-kv": what trainers without native GQA kernels do). head_dim not a multiple
  /// of 8 is refused here; the runner then measures the padded fallback.
  Timing time_attention(const OpCase& c) {
#if BUDGET_PROFILER_HAS_CUDNN
    SdpaShape s{c.at("docs"), c.at("doc_len"), c.at("num_heads"), c.at("num_kv_heads"), c.at("head_dim")};
    const bool backward = c.pass == "backward";
    try {
      return Timing{false, time_sdpa(s, backward), "cudnn", {}};
    } catch (const CudnnRefused& refused) {
      if (s.kv_heads == s.heads || s.head_dim % 8 != 0) return Timing{true, 0.0, "cudnn", refused.what()};
      s.kv_heads = s.heads;
      try {
        return Timing{false, time_sdpa(s, backward), "fallback-repeat-kv",
                      std::string("cuDNN refused grouped K/V (") + refused.what() + "); K/V expanded to num_heads"};
      } catch (const CudnnRefused& again) {
        return Timing{true, 0.0, "cudnn", std::string(refused.what()) + "; with K/V expanded: " + again.what()};
      }
    }
#else
    (void)c;
    return Timing{true, 0.0, "cudnn", "this build has no cuDNN"};
#endif
  }

  // ---- memory-bound ops --------------------------------------------------------------------
  Timing time_memory_bound(const OpCase& c) {
    const bool fwd = c.pass == "forward";
    double ms = 0;
    if (c.op == ProfileOp::rms_norm) {
      const std::int64_t T = c.at("tokens"), H = c.at("H");
      auto x = random_bf16(T * H), w = random_bf16(H), dy = random_bf16(T * H), y = bf16_out(T * H);
      DeviceBuffer rstd(static_cast<std::size_t>(T) * 4), dw(static_cast<std::size_t>(H) * 4);
      kernels::rms_norm_forward(x.get<bf16_bits>(), w.get<bf16_bits>(), y.get<bf16_bits>(), rstd.get<float>(), T, H,
                                1e-6f, stream_);
      ms = fwd ? median_ms([&] {
        kernels::rms_norm_forward(x.get<bf16_bits>(), w.get<bf16_bits>(), y.get<bf16_bits>(), rstd.get<float>(), T, H,
                                  1e-6f, stream_);
      })
               : median_ms([&] {
                   BUDGET_CUDA_CALL(cudaMemsetAsync(dw.get(), 0, dw.bytes(), stream_));
                   kernels::rms_norm_backward(x.get<bf16_bits>(), dy.get<bf16_bits>(), w.get<bf16_bits>(),
                                              rstd.get<float>(), y.get<bf16_bits>(), dw.get<float>(), T, H, stream_);
                 });
    } else if (c.op == ProfileOp::swiglu) {
      const std::int64_t R = c.at("rows"), D = c.at("expert_dim");
      auto gu = random_bf16(R * 2 * D, 4.0f), dy = random_bf16(R * D), y = bf16_out(R * D), dgu = bf16_out(R * 2 * D);
      ms = fwd ? median_ms([&] { kernels::swiglu_forward(gu.get<bf16_bits>(), y.get<bf16_bits>(), R, D, stream_); })
               : median_ms([&] {
                   kernels::swiglu_backward(gu.get<bf16_bits>(), dy.get<bf16_bits>(), dgu.get<bf16_bits>(), R, D,
                                            stream_);
                 });
    } else if (c.op == ProfileOp::router_softmax_topk) {
      const std::int64_t T = c.at("tokens"), E = c.at("E"), k = c.at("top_k");
      auto logits = random_f32(T * E, 4.0f), dweights = random_f32(T * k);
      DeviceBuffer weights(static_cast<std::size_t>(T * k) * 4), indices(static_cast<std::size_t>(T * k) * 4),
          dlogits(static_cast<std::size_t>(T * E) * 4);
      kernels::router_forward(logits.get<float>(), weights.get<float>(), indices.get<std::int32_t>(), T, E, k, stream_);
      ms = fwd ? median_ms([&] {
        kernels::router_forward(logits.get<float>(), weights.get<float>(), indices.get<std::int32_t>(), T, E, k,
                                stream_);
      })
               : median_ms([&] {
                   kernels::router_backward(logits.get<float>(), indices.get<std::int32_t>(), dweights.get<float>(),
                                            dlogits.get<float>(), T, E, k, stream_);
                 });
    } else if (c.op == ProfileOp::dispatch_gather || c.op == ProfileOp::combine_scatter_add) {
      const std::int64_t R = c.at("rows"), H = c.at("H"), T = R / combine_top_k;
      auto rows = random_bf16(R * H), tokens = random_bf16(T * H), out_rows = bf16_out(R * H),
           out_tokens = bf16_out(T * H);
      auto perm = permutation(R);
      auto weights = random_f32(R);
      const bool gather = c.op == ProfileOp::dispatch_gather;
      // gather forward: rows[r] = x[src[r]], src = perm / k (each token's k copies, permuted).
      // gather backward and combine forward: gather-reduce over each token's k rows (weights 1 for
      // the gather's backward); combine backward: weighted row copies.
      DeviceBuffer src = random_indices(R, T);
      if (gather && fwd) {
        ms = median_ms([&] {
          kernels::gather_rows(tokens.get<bf16_bits>(), src.get<std::int32_t>(), out_rows.get<bf16_bits>(), R, H,
                               stream_);
        });
      } else if (gather || fwd) {
        const float* w = gather ? nullptr : weights.get<float>();
        ms = median_ms([&] {
          kernels::combine_rows(rows.get<bf16_bits>(), perm.get<std::int32_t>(), w, out_tokens.get<bf16_bits>(), T,
                                combine_top_k, H, stream_);
        });
      } else {
        ms = median_ms([&] {
          kernels::combine_rows_backward(tokens.get<bf16_bits>(), perm.get<std::int32_t>(), weights.get<float>(),
                                         out_rows.get<bf16_bits>(), T, combine_top_k, H, stream_);
        });
      }
    } else {
      throw CudaError("budget-profile cannot time op '" + std::string(to_string(c.op)) + "'");
    }
    return Timing{false, ms, "budget-kernel", {}};
  }

  LaunchPlan plan_;
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t blas_ = nullptr;
#if BUDGET_PROFILER_HAS_CUDNN
  cudnnHandle_t dnn_ = nullptr;
#endif
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceBuffer workspace_;
  std::uint64_t seed_ = 0;
};

CheckResult make_check(const std::string& name, const std::vector<float>& out, const reference::Vec& ref,
                       double tolerance = bf16_tolerance) {
  const double e = reference::relative_error(out, ref);
  // The op is the first word of the name (gemm, expert_gemms, attention, rms_norm, ...).
  return CheckResult{name.substr(0, name.find(' ')), name, e, tolerance, std::isfinite(e) && e <= tolerance, {}};
}

}  // namespace

void CudaTimer::check_gemms(std::vector<CheckResult>& r) {
  // GEMMs: an aligned and a ragged shape, every pass, against float64.
  for (const auto& [M, K, N] : {std::array<std::int64_t, 3>{96, 72, 40}, std::array<std::int64_t, 3>{50, 37, 29}}) {
    for (const char* pass : {"forward", "input_grad", "weight_grad"}) {
      const GemmCall call = gemm_call(pass, M, K, N);
      auto b = gemm_buffers(M, K, N, call);
      const LtMatmul mm(lt_, call, workspace_bytes);
      mm.run(operand(b, call.a), operand(b, call.b), b.out.get(), workspace_.get(), stream_);
      const std::int64_t out = call.c == Operand::y ? M * N : call.c == Operand::dx ? M * K : N * K;
      const auto ref =
          reference::gemm(pass, M, K, N, host_bf16(b.x, M * K), host_bf16(b.w, N * K), host_bf16(b.dy, M * N));
      r.push_back(
          make_check(fmt::format("gemm {} M={} K={} N={} (cuBLASLt)", pass, M, K, N), host_bf16(b.out, out), ref));
    }
  }
}

void CudaTimer::check_expert_gemms(std::vector<CheckResult>& r) {
  // Grouped expert GEMMs, balanced and skewed: each expert against the dense reference.
  for (const char* routing : {"balanced", "skewed"}) {
    const std::int64_t E = 4, K = 64, N = 48;
    const auto rows = expert_rows(E, 24, routing);
    const std::int64_t total = std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
    for (const char* pass : {"forward", "input_grad", "weight_grad"}) {
      auto x = random_bf16(total * K), w = random_bf16(E * N * K), dy = random_bf16(total * N);
      const std::string p = pass;
      const std::int64_t out_count = p == "forward" ? total * N : p == "input_grad" ? total * K : E * N * K;
      auto out = bf16_out(out_count);
      const GroupedGemm gg(blas_, pass, rows, K, N, x.get(), w.get(), dy.get(), out.get());
      gg.run(stream_);
      const auto hx = host_bf16(x, total * K), hw = host_bf16(w, E * N * K), hdy = host_bf16(dy, total * N);
      reference::Vec ref;
      std::int64_t row0 = 0;
      for (std::int64_t e = 0; e < E; ++e) {
        const std::int64_t m = rows[static_cast<std::size_t>(e)];
        const auto slice = [](const std::vector<float>& v, std::int64_t first, std::int64_t count) {
          return std::vector<float>(v.begin() + first, v.begin() + first + count);
        };
        const auto part = reference::gemm(pass, m, K, N, slice(hx, row0 * K, m * K), slice(hw, e * N * K, N * K),
                                          slice(hdy, row0 * N, m * N));
        ref.insert(ref.end(), part.begin(), part.end());
        row0 += m;
      }
      r.push_back(make_check(
          fmt::format("expert_gemms {} {} E={} K={} N={} (cublasGemmGroupedBatchedEx)", pass, routing, E, K, N),
          host_bf16(out, out_count), ref));
    }
  }
}

void CudaTimer::check_rms_norm(std::vector<CheckResult>& r) {
  // RMSNorm forward and backward (H not a multiple of 8, then one that is).
  for (const std::int64_t H : {std::int64_t{200}, std::int64_t{256}}) {
    const std::int64_t T = 37;
    auto x = random_bf16(T * H), w = random_bf16(H), dy = random_bf16(T * H), y = bf16_out(T * H),
         dx = bf16_out(T * H);
    DeviceBuffer rstd(static_cast<std::size_t>(T) * 4), dw(static_cast<std::size_t>(H) * 4);
    BUDGET_CUDA_CALL(cudaMemsetAsync(dw.get(), 0, dw.bytes(), stream_));
    kernels::rms_norm_forward(x.get<bf16_bits>(), w.get<bf16_bits>(), y.get<bf16_bits>(), rstd.get<float>(), T, H,
                              1e-6f, stream_);
    kernels::rms_norm_backward(x.get<bf16_bits>(), dy.get<bf16_bits>(), w.get<bf16_bits>(), rstd.get<float>(),
                               dx.get<bf16_bits>(), dw.get<float>(), T, H, stream_);
    const auto hx = host_bf16(x, T * H), hw = host_bf16(w, H), hdy = host_bf16(dy, T * H);
    reference::Vec ry, rrstd, rdx, rdw;
    reference::rms_norm_forward(hx, hw, T, H, 1e-6, ry, rrstd);
    reference::rms_norm_backward(hx, hdy, hw, T, H, 1e-6, rdx, rdw);
    r.push_back(make_check(fmt::format("rms_norm forward y T={} H={}", T, H), host_bf16(y, T * H), ry));
    r.push_back(make_check(fmt::format("rms_norm forward rstd T={} H={}", T, H), host_f32(rstd, T), rrstd, 1e-4));
    r.push_back(make_check(fmt::format("rms_norm backward dx T={} H={}", T, H), host_bf16(dx, T * H), rdx));
    r.push_back(make_check(fmt::format("rms_norm backward dw T={} H={}", T, H), host_f32(dw, H), rdw, 1e-4));
  }
}

void CudaTimer::check_swiglu(std::vector<CheckResult>& r) {
  {  // SwiGLU.
    const std::int64_t R = 33, D = 72;
    auto gu = random_bf16(R * 2 * D, 4.0f), dy = random_bf16(R * D), y = bf16_out(R * D), dgu = bf16_out(R * 2 * D);
    kernels::swiglu_forward(gu.get<bf16_bits>(), y.get<bf16_bits>(), R, D, stream_);
    kernels::swiglu_backward(gu.get<bf16_bits>(), dy.get<bf16_bits>(), dgu.get<bf16_bits>(), R, D, stream_);
    const auto hgu = host_bf16(gu, R * 2 * D), hdy = host_bf16(dy, R * D);
    r.push_back(make_check("swiglu forward rows=33 d=72", host_bf16(y, R * D), reference::swiglu_forward(hgu, R, D)));
    r.push_back(make_check("swiglu backward rows=33 d=72", host_bf16(dgu, R * 2 * D),
                           reference::swiglu_backward(hgu, hdy, R, D)));
  }
}

void CudaTimer::check_router(std::vector<CheckResult>& r) {
  for (const auto& [E, k] : {std::pair<std::int64_t, std::int64_t>{64, 8}, {200, 6}}) {  // router
    const std::int64_t T = 50;
    auto logits = random_f32(T * E, 4.0f), dweights = random_f32(T * k);
    DeviceBuffer weights(static_cast<std::size_t>(T * k) * 4), indices(static_cast<std::size_t>(T * k) * 4),
        dlogits(static_cast<std::size_t>(T * E) * 4);
    kernels::router_forward(logits.get<float>(), weights.get<float>(), indices.get<std::int32_t>(), T, E, k, stream_);
    const auto hl = host_f32(logits, T * E), hdw = host_f32(dweights, T * k);
    const auto gpu_indices = host_i32(indices, T * k);
    reference::Vec rw;
    std::vector<std::int32_t> ri;
    reference::router_forward(hl, T, E, k, rw, ri);
    const std::int64_t mismatched =
        std::inner_product(gpu_indices.begin(), gpu_indices.end(), ri.begin(), std::int64_t{0}, std::plus<>(),
                           [](std::int32_t a, std::int32_t b) { return a != b; });
    r.push_back(CheckResult{"router_softmax_topk", fmt::format("router_softmax_topk indices T={} E={} k={}", T, E, k),
                            static_cast<double>(mismatched), 0.0, mismatched == 0, "value = mismatched indices"});
    r.push_back(make_check(fmt::format("router_softmax_topk weights T={} E={} k={}", T, E, k),
                           host_f32(weights, T * k), rw, 1e-4));
    kernels::router_backward(logits.get<float>(), indices.get<std::int32_t>(), dweights.get<float>(),
                             dlogits.get<float>(), T, E, k, stream_);
    r.push_back(make_check(fmt::format("router_softmax_topk backward T={} E={} k={}", T, E, k),
                           host_f32(dlogits, T * E), reference::router_backward(hl, ri, hdw, T, E, k), 1e-4));
  }
}

void CudaTimer::check_gather_combine(std::vector<CheckResult>& r) {
  for (const std::int64_t H : {std::int64_t{72}, std::int64_t{30}}) {  // gather / combine
    const std::int64_t T = 20, k = combine_top_k, R = T * k;
    std::vector<std::int32_t> hsrc, hperm;
    auto src = random_indices(R, T, &hsrc);
    auto perm = permutation(R, &hperm);
    auto x = random_bf16(T * H), rows = random_bf16(R * H), weights = random_f32(R), dout = random_bf16(T * H);
    auto gathered = bf16_out(R * H), combined = bf16_out(T * H), summed = bf16_out(T * H), drows = bf16_out(R * H);
    kernels::gather_rows(x.get<bf16_bits>(), src.get<std::int32_t>(), gathered.get<bf16_bits>(), R, H, stream_);
    kernels::combine_rows(rows.get<bf16_bits>(), perm.get<std::int32_t>(), weights.get<float>(),
                          combined.get<bf16_bits>(), T, k, H, stream_);
    kernels::combine_rows(rows.get<bf16_bits>(), perm.get<std::int32_t>(), nullptr, summed.get<bf16_bits>(), T, k, H,
                          stream_);
    kernels::combine_rows_backward(dout.get<bf16_bits>(), perm.get<std::int32_t>(), weights.get<float>(),
                                   drows.get<bf16_bits>(), T, k, H, stream_);
    const auto hx = host_bf16(x, T * H), hrows = host_bf16(rows, R * H), hdout = host_bf16(dout, T * H);
    const auto hw = host_f32(weights, R);
    r.push_back(make_check(fmt::format("dispatch_gather forward rows={} H={}", R, H), host_bf16(gathered, R * H),
                           reference::gather(hx, hsrc, H), 1e-6));
    r.push_back(make_check(fmt::format("combine_scatter_add forward rows={} H={}", R, H), host_bf16(combined, T * H),
                           reference::combine(hrows, hperm, hw, T, k, H)));
    r.push_back(make_check(fmt::format("dispatch_gather backward rows={} H={}", R, H), host_bf16(summed, T * H),
                           reference::combine(hrows, hperm, {}, T, k, H)));
    r.push_back(make_check(fmt::format("combine_scatter_add backward rows={} H={}", R, H), host_bf16(drows, R * H),
                           reference::combine_backward(hdout, hperm, hw, T, k, H, R)));
  }
}

#if BUDGET_PROFILER_HAS_CUDNN
void CudaTimer::check_attention(std::vector<CheckResult>& r) {
  // cuDNN SDPA forward and backward, grouped K/V then plain, against float64.
  for (const std::int64_t kv : {std::int64_t{2}, std::int64_t{4}}) {
    const SdpaShape s{2, 64, 4, kv, 64};
    const reference::AttentionShape rs{s.docs, s.len, s.heads, s.kv_heads, s.head_dim};
    const std::string name = fmt::format("attention docs=2 len=64 heads=4 kv_heads={} d=64 (cuDNN)", kv);
    try {
      const CudnnSdpa& fwd = sdpa_plan(s, false);
      const CudnnSdpa& bwd = sdpa_plan(s, true);
      auto b = attention_buffers(s);
      DeviceBuffer ws(static_cast<std::size_t>(std::max<std::int64_t>(fwd.workspace_bytes(), 1)));
      fwd.run(b.view(), ws.get(), stream_);
      const std::int64_t tq = s.docs * s.len * s.heads * s.head_dim, tk = s.docs * s.len * s.kv_heads * s.head_dim;
      const auto hq = host_bf16(b.q, tq), hk = host_bf16(b.k, tk), hv = host_bf16(b.v, tk),
                 hdo = host_bf16(b.dout, tq);
      r.push_back(make_check(name + " forward O", host_bf16(b.o, tq), reference::attention_forward(rs, hq, hk, hv)));
      DeviceBuffer bws(static_cast<std::size_t>(std::max<std::int64_t>(bwd.workspace_bytes(), 1)));
      bwd.run(b.view(), bws.get(), stream_);
      reference::Vec dq, dk, dv;
      reference::attention_backward(rs, hq, hk, hv, hdo, dq, dk, dv);
      r.push_back(make_check(name + " backward dQ", host_bf16(b.dq, tq), dq));
      r.push_back(make_check(name + " backward dK", host_bf16(b.dk, tk), dk));
      r.push_back(make_check(name + " backward dV", host_bf16(b.dv, tk), dv));
    } catch (const CudnnRefused& e) {
      // A refusal is reported, not failed: timing then records refused rows or the fallback.
      r.push_back(
          CheckResult{"attention", name, 0.0, 0.0, true, std::string("refused by cuDNN, not checked: ") + e.what()});
    }
  }
}
#endif

std::vector<CheckResult> CudaTimer::check_correctness() {
  std::vector<CheckResult> r;
  guarded(r, {"gemm"}, [&] { check_gemms(r); });
  guarded(r, {"expert_gemms"}, [&] { check_expert_gemms(r); });
  guarded(r, {"rms_norm"}, [&] { check_rms_norm(r); });
  guarded(r, {"swiglu"}, [&] { check_swiglu(r); });
  guarded(r, {"router_softmax_topk"}, [&] { check_router(r); });
  guarded(r, {"dispatch_gather", "combine_scatter_add"}, [&] { check_gather_combine(r); });
#if BUDGET_PROFILER_HAS_CUDNN
  guarded(r, {"attention"}, [&] { check_attention(r); });
#endif
  return r;
}

bool cuda_timer_built() { return true; }

std::unique_ptr<Timer> make_cuda_timer(const LaunchPlan& plan) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    const std::string why = status != cudaSuccess ? cudaGetErrorString(status) : "no device visible";
    cudaGetLastError();  // clear the sticky-free error state of the failed query
    throw NoGpuError(fmt::format(
        "no CUDA GPU is usable on this machine ({}), so budget-profile cannot measure anything here; run it on a "
        "machine with a GPU, or use --dry-run to see the plan",
        why));
  }
  return std::make_unique<CudaTimer>(plan);
}

}  // namespace budget::profiler
