#pragma once
/// \file
/// Whether a config's training state fits one GPU of the kind a calibration profile was measured
/// on, said beside every predicted step time (docs/calibration.md, "Does it fit one GPU"): a step
/// time on one GPU is only a step that GPU can run when weights, gradients, optimizer states and
/// activations fit it. The memory is training_memory()'s (docs/cluster.md) on one GPU with
/// everything that saves memory there (full recompute, micro-batch 1, sequence length of the
/// workload); the capacity is the profile's (device.memory_gib) when it carries one, else that of
/// the example cluster (examples/clusters/, compiled in) whose GPU name the profile's name begins
/// (whole words, exactly one example), else unknown. When it does not fit, the fewest-GPU layout
/// that does (smallest_fitting_layout()).
///
/// Thread safety: every function here is reentrant.

#include <optional>
#include <string>
#include <vector>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/config.hpp"
#include "budget/layout_search.hpp"
#include "budget/training_memory.hpp"
#include "budget/workload.hpp"

namespace budget {

/// One example cluster file compiled in: its path under the source tree and the cluster it holds.
struct ClusterExample {
  std::string path;  ///< "examples/clusters/h200.json"
  ClusterSpec cluster;
};

/// The example clusters (examples/clusters/*.json, read when the library was built), by path.
const std::vector<ClusterExample>& cluster_examples();

/// Where the capacity of the profile's GPU comes from.
enum class GpuCapacitySource {
  profile,          ///< the profile's device.memory_gib
  cluster_example,  ///< the example cluster whose GPU name the profile's device name begins
  unknown,          ///< neither: whether it fits is not known
};

/// The GPU kind of a profile: where its capacity comes from and, when known, the GPU as a cluster
/// (capacity as above; GPUs per node from the matched example, else 8).
struct ProfileGpu {
  GpuCapacitySource source = GpuCapacitySource::unknown;
  std::string gpu_name;  ///< the profile's device name ("NVIDIA H200")
  /// "the profile (memory_gib 140)", "examples/clusters/h200.json (NVIDIA H200 SXM 141GB)", or
  /// why the capacity is unknown.
  std::string capacity_from;
  std::optional<ClusterSpec> cluster;  ///< with a known capacity
};
ProfileGpu profile_gpu(const CalibrationProfile& profile);

struct OneGpuFit {
  ProfileGpu gpu;
  /// Known capacity only: the peak bytes on one GPU (full recompute, micro-batch 1) and the
  /// GPU's usable bytes (memory − reserved).
  std::optional<bool> fits;
  double needed_bytes = 0;
  double capacity_bytes = 0;
  MemoryComponents needed;  ///< the peak stage's components
  /// Known capacity and not fitting: the fewest-GPU layout that fits (found false: none up to
  /// 4096 GPUs).
  std::optional<SmallestLayout> smallest;
  /// Not fitting, and the fewest-GPU layout not searched because the time limit (--max-seconds)
  /// had passed: the limit's message (smallest is then absent).
  std::string smallest_not_searched;

  /// "fits one NVIDIA H200 (needs 61.2 GiB of 139.4 GiB usable)", "does not fit one NVIDIA H200
  /// (needs 1.90 TiB of 139.4 GiB usable; smallest layout that fits: 32 GPUs, TP 8 x PP 4 x DP 1,
  /// EP 8 (ETP 1), recompute none)", "fits one NVIDIA H200: unknown (<why>)".
  std::string note() const;
};

/// Whether `config` trained on `workload`'s sequences fits one GPU of `profile`'s kind (see the
/// file comment). budget::Error from training_memory() only for a config it cannot lay out on one
/// GPU (none of the validated configs).
OneGpuFit one_gpu_fit(const ArchConfig& config, const CalibrationProfile& profile, const Workload& workload);

}  // namespace budget
