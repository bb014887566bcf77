#pragma once
/// \file
/// ClusterSpec: the GPUs a training run is planned on (docs/cluster.md): the GPU's name and memory
/// capacity, where its compute figures come from (a calibration profile, or datasheet peaks marked
/// as such), GPUs per node, nodes, and the intra- and inter-node links per GPU (bandwidth and
/// latency, for communication time in part 2 of the cluster work), and the time of one collective
/// over a link. Read strictly from `cluster.json` (schema "budget.cluster", version 1); examples
/// under examples/clusters/.
///
/// Thread safety: every function here is reentrant; a ClusterSpec is a plain value.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace budget {

/// One kind of link as seen by one GPU: unidirectional bandwidth per GPU and the latency of one
/// message (one step of a collective's algorithm).
struct LinkSpec {
  double bandwidth_bytes_per_s = 0.0;
  double latency_s = 0.0;
  std::string source;  ///< where the figures come from (datasheet, measurement)
};

/// One collective over one link. Conventions (nccl-tests doc/PERFORMANCE.md): a collective's `size`
/// S is the per-rank buffer nccl-tests reports (all-reduce: the whole tensor; all-gather: the
/// gathered output; reduce-scatter: the whole input; all-to-all: one rank's send buffer). Its time
/// on a ring of n ranks at per-GPU bandwidth B is S·f(n)/B + steps(n)·latency, with the bus factor
/// f = 2(n−1)/n (all-reduce), (n−1)/n (all-gather, reduce-scatter, all-to-all), 1 (send/recv).
enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
std::string_view to_string(CollectiveKind kind);

/// nccl-tests' bus-bandwidth factor for `kind` on n ranks (n ≥ 1; 0 for n = 1 except send/recv).
double bus_factor(CollectiveKind kind, std::int64_t ranks);
/// Latency-bound steps of the algorithm on n ranks: ring all-reduce 2(n−1), ring all-gather and
/// reduce-scatter n−1, all-to-all n−1 (pairwise exchange, an upper bound: NCCL posts the n−1
/// sends at once), send/recv 1; 0 for n = 1.
std::int64_t latency_steps(CollectiveKind kind, std::int64_t ranks);
/// Seconds of one collective of `size_bytes` (the nccl-tests size) on n ranks over `link`:
/// size·bus_factor/bandwidth + latency_steps·latency.
double collective_seconds(CollectiveKind kind, double size_bytes, std::int64_t ranks, const LinkSpec& link);

/// Where the GPU's step time comes from: a calibration profile (docs/calibration.md, a path resolved
/// against the cluster file's folder: gpu.compute.calibration, the one key naming the GPU's profile),
/// or only datasheet peaks, stated as such (no step time without a profile given elsewhere).
enum class ComputeSource { calibration, datasheet };
std::string_view to_string(ComputeSource source);

struct ComputeSpec {
  /// calibration when the file names a profile (gpu.compute.calibration), else datasheet.
  ComputeSource source = ComputeSource::datasheet;
  std::string calibration_profile;          ///< the profile's path ("" when none is named)
  /// gpu.compute.datasheet (optional beside a profile): the dense BF16 tensor-core peak (0: not given)
  /// and the document it comes from; informational (MFU's denominator is the profile's).
  double peak_bf16_dense_flops_per_s = 0.0;
  std::string datasheet_source;
};

struct ClusterSpec {
  std::string name;
  std::string gpu_name;
  /// Memory one GPU has for the training process, bytes (the datasheet capacity).
  std::int64_t memory_bytes = 0;
  /// Memory on each GPU that PyTorch's allocator never sees: CUDA context, NCCL and cuBLAS
  /// workspaces (an estimate; 0 when not stated). Usable = memory_bytes − reserved_bytes.
  std::int64_t reserved_bytes = 0;
  std::string memory_source;
  ComputeSpec compute;
  std::int64_t gpus_per_node = 0;
  std::int64_t nodes = 0;
  /// GPUs one NVLink domain joins (GB200 NVL72: 72 GPUs over 18 nodes of 4); 0: one node. A
  /// collective inside a domain runs on `intra_node`, one across domains on `inter_node`.
  std::int64_t nvlink_domain_gpus = 0;
  LinkSpec intra_node;  ///< e.g. NVLink through NVSwitch, per GPU and direction
  LinkSpec inter_node;  ///< e.g. InfiniBand / RoCE, per GPU and direction

  std::int64_t total_gpus() const { return gpus_per_node * nodes; }
  /// GPUs sharing the intra-node (NVLink) link: the NVLink domain, or one node.
  std::int64_t nvlink_domain() const { return nvlink_domain_gpus > 0 ? nvlink_domain_gpus : gpus_per_node; }
  std::int64_t usable_memory_bytes() const { return memory_bytes - reserved_bytes; }
  /// Empty when valid, else what is wrong (one line).
  std::string validation_error() const;
  /// Throws budget::Error naming `source` when validation_error() is not empty.
  void validate(const std::string& source = {}) const;
};

/// Parses cluster JSON text (docs/cluster.md): unknown keys, wrong types, out-of-range values and
/// missing fields are budget::Error naming `source` and the JSON pointer. A relative
/// calibration-profile path is resolved against `base_directory` (empty: kept as written).
ClusterSpec parse_cluster_spec(std::string_view json_text, const std::string& source,
                               const std::string& base_directory = {});
/// Reads and parses a cluster file; `nodes`, when given, replaces the file's node count
/// (resize_cluster()).
ClusterSpec load_cluster_spec(const std::string& path, std::optional<std::int64_t> nodes = std::nullopt);

/// Sets the node count (the CLI's --nodes, Python's nodes=) and validates (budget::Error naming
/// `source`). A named cluster whose count changes gets ", resized to N nodes of G" after its name,
/// so no heading printed from the name ("1 node of 8x H200 ...") states the file's size instead of
/// the one planned on.
void resize_cluster(ClusterSpec& cluster, std::int64_t nodes, const std::string& source);

/// The cluster file text of `cluster` (the form parse_cluster_spec() reads; `notes` becomes its
/// "notes"). A calibration profile's path is written absolute, so the file reads back from any
/// folder. Validates first (budget::Error). Reading the text back gives `cluster` again.
std::string cluster_spec_json(const ClusterSpec& cluster, const std::string& notes = {});

}  // namespace budget
