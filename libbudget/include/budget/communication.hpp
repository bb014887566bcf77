#pragma once
/// \file
/// Communication per training step under a parallel layout (docs/cluster.md, "Communication"):
/// every collective one GPU of each pipeline stage takes part in, its message size, its group,
/// which link it crosses (intra- or inter-node, from Megatron-Core's rank order tp-cp-ep-dp-pp),
/// its time (bytes over the link's bandwidth with the collective's bus-bandwidth factor, plus the
/// link latency per step of the algorithm) and whether it is overlapped with compute (an option per
/// collective; default: DP overlapped with the backward pass, the rest exposed — Megatron-Core
/// without --overlap-grad-reduce / --overlap-param-gather exposes DP too; with them it overlaps).
/// Also the 1F1B pipeline bubble.
///
/// A collective's size and its time on a link follow nccl-tests' conventions (budget/cluster.hpp,
/// collective_seconds()).
///
/// Thread safety: every function here is reentrant.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/training_memory.hpp"

namespace budget {

/// Where a process group of `size` ranks with rank stride `stride` lies on nodes of
/// `gpus_per_node` GPUs (Megatron-Core's RankGenerator: the group of a dimension is the ranks
/// base + k·stride, k < size, where stride is the product of the sizes of the dimensions before
/// it in the order tp-cp-ep-dp-pp).
struct GroupPlacement {
  std::int64_t size = 1;
  std::int64_t stride = 1;
  std::int64_t members_per_node = 1;  ///< ranks of the group on one node
  std::int64_t nodes = 1;             ///< nodes the group spans
  bool inter_node() const { return nodes > 1; }
};
/// Groups that do not tile nodes evenly (stride or span not dividing the node size) are counted as
/// spanning size / members_per_node nodes with members_per_node = max(1, gpus_per_node / stride)
/// rounded down to a divisor of size, the conservative side.
GroupPlacement group_placement(std::int64_t size, std::int64_t stride, std::int64_t gpus_per_node);

/// Which collectives overlap compute (their time is then not added to the step). Defaults as the
/// issue asks: DP's gradient reduce and parameter gather overlapped with the backward pass, every
/// other collective exposed.
struct CommOverlap {
  bool tp = false;  ///< Megatron --tp-comm-overlap (Transformer Engine userbuffers)
  bool ep = false;  ///< Megatron --overlap-moe-expert-parallel-comm (DeepSeek-V3's DualPipe-like overlap)
  bool cp = false;  ///< Transformer Engine overlaps the ring's KV exchange with attention blocks when long enough
  bool pp = false;  ///< the p2p of 1F1B's steady state (Megatron --overlap-p2p-comm, interleaved only)
  bool dp = true;   ///< Megatron --overlap-grad-reduce and --overlap-param-gather
};

/// The flex dispatcher's backend (Megatron --moe-flex-dispatcher-backend; NCCL-EP not modelled).
enum class FlexBackend { deepep, hybridep };
std::string_view to_string(FlexBackend backend);

/// How Megatron-Core dispatches an MoE layer's tokens beyond what the layout says (the layout's
/// `dispatcher`, capacity factor): its time (docs/cluster.md, "MoE dispatch").
struct MoeDispatchOptions {
  FlexBackend flex_backend = FlexBackend::deepep;  ///< with ParallelLayout::dispatcher flex
  /// --moe-pad-expert-input-to-capacity (with a capacity factor): fixed shapes, no host synchronisation.
  bool pad_to_capacity = false;
  bool router_fusion = false;  ///< --moe-router-fusion: the router's top-k and aux loss in a few fused kernels
  /// SMs the dispatcher's communication kernels occupy while they overlap compute (--overlap-moe-
  /// expert-parallel-comm): --moe-flex-dispatcher-num-sms; 0: the backend's default (DeepEP and
  /// HybridEP 20, Megatron's historical DeepEP default; NCCL's all-to-all 32, its default channel limit).
  std::int64_t comm_sms = 0;
  /// Group-limited routing (Megatron --moe-router-num-groups G, --moe-router-group-topk g;
  /// megatron/core/transformer/moe/moe_utils.py:673-733 at d98e8a64, group_limited_topk): the experts in
  /// G equal groups, each token's experts from its top g groups only. 0: not group-limited.
  std::int64_t router_num_groups = 0;
  std::int64_t router_group_topk = 0;
};

struct CommOptions {
  CommOverlap overlap;
  MoeDispatchOptions moe;
  /// Node-limited routing (DeepSeek-V3 §2.1.2): each token is sent to at most this many nodes,
  /// once per node over the inter-node link and forwarded inside the node; 0: unlimited.
  std::int64_t max_nodes_per_token = 0;
  /// Bytes of one activation element on the wire (bf16: 2).
  double activation_bytes = 2.0;
};

/// One collective of one stage's GPU over a step.
struct CommTerm {
  std::string name;     ///< tp, etp, ep, cp, pp, dp_grad, dp_param, expert_dp_grad, expert_dp_param
  CollectiveKind kind{};
  GroupPlacement group;
  double size_bytes = 0.0;      ///< one call's nccl-tests size
  double calls_per_step = 0.0;  ///< calls of this size per step (forward, backward and recomputed forward)
  /// Bytes one GPU sends per step (calls · size · bus factor); for all-to-all split by link below.
  double bytes_per_step = 0.0;
  double inter_node_bytes_per_step = 0.0;  ///< of bytes_per_step, over the inter-node link
  double seconds_per_step = 0.0;
  bool overlapped = false;
};

struct StageCommunication {
  std::int64_t pipeline_rank = 0;
  std::vector<CommTerm> terms;  ///< only collectives that exist under the layout (group size > 1)
  double exposed_seconds = 0.0;
  double overlapped_seconds = 0.0;
};

/// The communication of every pipeline stage of `memory`'s layout (which training_memory() resolved
/// and validated for `config` on `cluster`): per stage its executed layers (TP/ETP/EP/CP per
/// execution and micro-batch), its boundaries (PP), and its parameters (DP, expert DP), as listed
/// in docs/cluster.md. budget::Error when the options are out of range.
std::vector<StageCommunication> step_communication(const ArchConfig& config, const TrainingMemory& memory,
                                                   const ClusterSpec& cluster, const CommOptions& options = {});

/// The 1F1B pipeline bubble in micro-batch times: (PP − 1) / V micro-batches' time of one stage
/// (Narayanan et al. 2021, §2.2: bubble fraction (p − 1)/m of the ideal m micro-batches, divided
/// by the v model chunks per device when interleaved). 0 for PP = 1.
double pipeline_bubble_micro_batches(std::int64_t pp, std::int64_t virtual_stages);

}  // namespace budget
