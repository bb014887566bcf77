// The NCCL collectives timer (collectives.hpp): one process drives the first n visible GPUs
// through ncclCommInitAll, one communicator set and one stream per GPU for each rank count.
// Compiled only when CMake found nccl.h (BUDGET_PROFILER_HAS_NCCL = 1). libnccl is opened at run
// time (dlopen "libnccl.so.2"), not linked: it is 200+ MB, the GPU bundle cannot carry it, and a
// machine without it must still run every other mode; without it `collectives` refuses.
#include "budget/profiler/collectives.hpp"
#include "budget/profiler/config.hpp"
#include "budget/profiler/cuda_timer.hpp"

#if BUDGET_PROFILER_HAS_NCCL
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "check.hpp"

namespace budget::profiler {
namespace {

/// The NCCL entry points used, from the library opened at run time.
struct NcclApi {
  void* library = nullptr;
  decltype(&::ncclGetVersion) get_version = nullptr;
  decltype(&::ncclGetErrorString) error_string = nullptr;
  decltype(&::ncclCommInitAll) comm_init_all = nullptr;
  decltype(&::ncclCommDestroy) comm_destroy = nullptr;
  decltype(&::ncclGroupStart) group_start = nullptr;
  decltype(&::ncclGroupEnd) group_end = nullptr;
  decltype(&::ncclAllReduce) all_reduce = nullptr;
  decltype(&::ncclAllGather) all_gather = nullptr;
  decltype(&::ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&::ncclSend) send = nullptr;
  decltype(&::ncclRecv) recv = nullptr;
  /// ncclAlltoAll (NCCL ≥ 2.28), null before: then grouped send/recv. Same signature as ncclAllGather.
  decltype(&::ncclAllGather) all_to_all = nullptr;
};

/// The process's NCCL, opened once; `error` says why when it could not be (then library is null).
const NcclApi& nccl_api(std::string* error) {
  static std::string load_error;
  static const NcclApi api = [] {
    NcclApi a;
    for (const char* name : {"libnccl.so.2", "libnccl.so"}) {
      a.library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (a.library != nullptr) break;
    }
    if (a.library == nullptr) {
      const char* why = dlerror();
      load_error = fmt::format("libnccl.so.2 could not be loaded ({}); put NCCL's lib folder on LD_LIBRARY_PATH",
                               why != nullptr ? why : "not found");
      return a;
    }
    const auto bind = [&](auto& fn, const char* symbol, bool required) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(a.library, symbol));
      if (fn == nullptr && required && load_error.empty()) {
        load_error = fmt::format("the loaded libnccl has no {}", symbol);
      }
    };
    bind(a.get_version, "ncclGetVersion", true);
    bind(a.error_string, "ncclGetErrorString", true);
    bind(a.comm_init_all, "ncclCommInitAll", true);
    bind(a.comm_destroy, "ncclCommDestroy", true);
    bind(a.group_start, "ncclGroupStart", true);
    bind(a.group_end, "ncclGroupEnd", true);
    bind(a.all_reduce, "ncclAllReduce", true);
    bind(a.all_gather, "ncclAllGather", true);
    bind(a.reduce_scatter, "ncclReduceScatter", true);
    bind(a.send, "ncclSend", true);
    bind(a.recv, "ncclRecv", true);
    bind(a.all_to_all, "ncclAlltoAll", false);
    if (!load_error.empty()) {
      dlclose(a.library);
      a = NcclApi{};
    }
    return a;
  }();
  if (error != nullptr) *error = load_error;
  return api;
}

/// One rank count: a communicator, stream, event pair and two buffers per GPU.
struct Group {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> starts, stops;
  std::vector<void*> send, recv;
  std::size_t buffer_bytes = 0;
};

class NcclTimer final : public CollectiveTimer {
 public:
  NcclTimer(const NcclApi& api, const LaunchPlan& plan, int gpus) : api_(api), plan_(plan), gpus_(gpus) {
    int nccl_version = 0;
    BUDGET_CUDA_CALL(api_.get_version(&nccl_version));
    std::string names;
    for (int d = 0; d < gpus_; ++d) {
      cudaDeviceProp p{};
      BUDGET_CUDA_CALL(cudaGetDeviceProperties(&p, d));
      names += (names.empty() ? "" : ", ") + std::string(p.name);
    }
    device_ = fmt::format("{} GPUs ({}), NCCL {}.{}.{}", gpus_, names, nccl_version / 10000, (nccl_version / 100) % 100,
                          nccl_version % 100);
  }
  ~NcclTimer() override {
    for (auto& [n, g] : groups_) release(*g);
  }
  NcclTimer(const NcclTimer&) = delete;
  NcclTimer& operator=(const NcclTimer&) = delete;

  std::int64_t gpus() const override { return gpus_; }
  std::string device() const override { return device_; }
  std::string method() const override {
    return fmt::format("NCCL in one process (ncclCommInitAll), bf16 buffers filled with 0x3f3f; per launch CUDA events "
                       "on every rank's stream, the slowest rank's time; {} warm-ups, median of {}",
                       plan_.warmup, plan_.repeats);
  }
  bool simulated() const override { return false; }

  double seconds(const CollectiveCase& c) override {
    Group& g = group(static_cast<int>(c.ranks), static_cast<std::size_t>(c.size_bytes));
    for (int i = 0; i < plan_.warmup; ++i) launch(g, c);
    synchronize(g);
    std::vector<double> times;
    for (int i = 0; i < plan_.repeats; ++i) {
      for (std::size_t r = 0; r < g.comms.size(); ++r) {
        BUDGET_CUDA_CALL(cudaSetDevice(static_cast<int>(r)));
        BUDGET_CUDA_CALL(cudaEventRecord(g.starts[r], g.streams[r]));
      }
      launch(g, c);
      double slowest_ms = 0.0;
      for (std::size_t r = 0; r < g.comms.size(); ++r) {
        BUDGET_CUDA_CALL(cudaSetDevice(static_cast<int>(r)));
        BUDGET_CUDA_CALL(cudaEventRecord(g.stops[r], g.streams[r]));
      }
      for (std::size_t r = 0; r < g.comms.size(); ++r) {
        BUDGET_CUDA_CALL(cudaEventSynchronize(g.stops[r]));
        float ms = 0.0f;
        BUDGET_CUDA_CALL(cudaEventElapsedTime(&ms, g.starts[r], g.stops[r]));
        slowest_ms = std::max(slowest_ms, static_cast<double>(ms));
      }
      times.push_back(slowest_ms * 1e-3);
    }
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    return times[times.size() / 2];
  }

 private:
  Group& group(int n, std::size_t bytes) {
    std::unique_ptr<Group>& slot = groups_[n];
    if (!slot) {
      slot = std::make_unique<Group>();
      Group& g = *slot;
      std::vector<int> devices(static_cast<std::size_t>(n));
      for (int d = 0; d < n; ++d) devices[static_cast<std::size_t>(d)] = d;
      g.comms.resize(devices.size());
      BUDGET_CUDA_CALL(api_.comm_init_all(g.comms.data(), n, devices.data()));
      g.streams.resize(devices.size());
      g.starts.resize(devices.size());
      g.stops.resize(devices.size());
      g.send.assign(devices.size(), nullptr);
      g.recv.assign(devices.size(), nullptr);
      for (int d = 0; d < n; ++d) {
        const auto r = static_cast<std::size_t>(d);
        BUDGET_CUDA_CALL(cudaSetDevice(d));
        BUDGET_CUDA_CALL(cudaStreamCreateWithFlags(&g.streams[r], cudaStreamNonBlocking));
        BUDGET_CUDA_CALL(cudaEventCreate(&g.starts[r]));
        BUDGET_CUDA_CALL(cudaEventCreate(&g.stops[r]));
      }
    }
    Group& g = *slot;
    if (bytes > g.buffer_bytes) {
      for (std::size_t r = 0; r < g.comms.size(); ++r) {
        BUDGET_CUDA_CALL(cudaSetDevice(static_cast<int>(r)));
        if (g.send[r] != nullptr) BUDGET_CUDA_CALL(cudaFree(g.send[r]));
        if (g.recv[r] != nullptr) BUDGET_CUDA_CALL(cudaFree(g.recv[r]));
        g.send[r] = g.recv[r] = nullptr;
        BUDGET_CUDA_CALL(cudaMalloc(&g.send[r], bytes));
        BUDGET_CUDA_CALL(cudaMalloc(&g.recv[r], bytes));
        // 0x3f3f as bf16 is 0.746: finite and non-zero, and sums of 2^20 of them stay finite.
        BUDGET_CUDA_CALL(cudaMemset(g.send[r], 0x3f, bytes));
        BUDGET_CUDA_CALL(cudaMemset(g.recv[r], 0x3f, bytes));
      }
      g.buffer_bytes = bytes;
      synchronize(g);
    }
    return g;
  }

  /// One call of the collective on every rank, as one NCCL group.
  void launch(Group& g, const CollectiveCase& c) const {
    const std::size_t n = g.comms.size();
    const std::size_t elements = static_cast<std::size_t>(c.size_bytes) / 2;  // bf16
    BUDGET_CUDA_CALL(api_.group_start());
    for (std::size_t r = 0; r < n; ++r) {
      ncclComm_t comm = g.comms[r];
      cudaStream_t s = g.streams[r];
      switch (c.kind) {
        case CollectiveKind::all_reduce:
          BUDGET_CUDA_CALL(api_.all_reduce(g.send[r], g.recv[r], elements, ncclBfloat16, ncclSum, comm, s));
          break;
        case CollectiveKind::all_gather:  // size = the gathered output
          BUDGET_CUDA_CALL(api_.all_gather(g.send[r], g.recv[r], elements / n, ncclBfloat16, comm, s));
          break;
        case CollectiveKind::reduce_scatter:  // size = the whole input
          BUDGET_CUDA_CALL(api_.reduce_scatter(g.send[r], g.recv[r], elements / n, ncclBfloat16, ncclSum, comm, s));
          break;
        case CollectiveKind::all_to_all:  // size = one rank's send buffer, elements / n to each peer
          if (api_.all_to_all != nullptr) {
            BUDGET_CUDA_CALL(api_.all_to_all(g.send[r], g.recv[r], elements / n, ncclBfloat16, comm, s));
            break;
          }
          for (std::size_t peer = 0; peer < n; ++peer) {
            const std::size_t chunk = elements / n;
            BUDGET_CUDA_CALL(api_.send(static_cast<char*>(g.send[r]) + peer * chunk * 2, chunk, ncclBfloat16,
                                       static_cast<int>(peer), comm, s));
            BUDGET_CUDA_CALL(api_.recv(static_cast<char*>(g.recv[r]) + peer * chunk * 2, chunk, ncclBfloat16,
                                       static_cast<int>(peer), comm, s));
          }
          break;
        case CollectiveKind::send_recv:  // each rank sends size bytes to the next in a ring (nccl-tests sendrecv)
          BUDGET_CUDA_CALL(api_.send(g.send[r], elements, ncclBfloat16, static_cast<int>((r + 1) % n), comm, s));
          BUDGET_CUDA_CALL(api_.recv(g.recv[r], elements, ncclBfloat16, static_cast<int>((r + n - 1) % n), comm, s));
          break;
      }
    }
    BUDGET_CUDA_CALL(api_.group_end());
  }

  static void synchronize(Group& g) {
    for (std::size_t r = 0; r < g.comms.size(); ++r) BUDGET_CUDA_CALL(cudaStreamSynchronize(g.streams[r]));
  }

  void release(Group& g) const {
    for (std::size_t r = 0; r < g.comms.size(); ++r) {
      cudaSetDevice(static_cast<int>(r));
      if (g.comms[r] != nullptr) api_.comm_destroy(g.comms[r]);
      if (g.send[r] != nullptr) cudaFree(g.send[r]);
      if (g.recv[r] != nullptr) cudaFree(g.recv[r]);
      cudaEventDestroy(g.starts[r]);
      cudaEventDestroy(g.stops[r]);
      cudaStreamDestroy(g.streams[r]);
    }
  }

  const NcclApi& api_;
  LaunchPlan plan_;
  int gpus_;
  std::string device_;
  std::map<int, std::unique_ptr<Group>> groups_;
};

}  // namespace

namespace detail {
std::string status_text(ncclResult_t status) {
  const NcclApi& api = nccl_api(nullptr);
  return fmt::format("NCCL error {} ({})", static_cast<int>(status),
                     api.error_string != nullptr ? api.error_string(status) : "libnccl not loaded");
}
}  // namespace detail

bool nccl_collectives_built() { return true; }

std::unique_ptr<CollectiveTimer> make_nccl_collective_timer(const LaunchPlan& plan, std::int64_t max_gpus) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    throw NoGpuError(std::string(collectives_refusal) + "no CUDA GPU is usable on this machine (" +
                     cudaGetErrorString(status) + ")");
  }
  if (max_gpus > 0) count = static_cast<int>(std::min<std::int64_t>(count, max_gpus));
  if (count < 2) {
    throw NoGpuError(std::string(collectives_refusal) + fmt::format("only {} GPU is visible on this machine", count));
  }
  std::string error;
  const NcclApi& api = nccl_api(&error);
  if (api.library == nullptr) throw NoGpuError(std::string(collectives_refusal) + error);
  return std::make_unique<NcclTimer>(api, plan, count);
}

}  // namespace budget::profiler
#endif
