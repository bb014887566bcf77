// Communication per step (docs/cluster.md, "Communication"). The time of one collective on a link
// (nccl-tests' bus factors) is hardware/collectives.cpp's; rank order and process groups from Megatron-Core
// megatron/core/parallel_state.py (RankGenerator, order "tp-cp-ep-dp-pp"; the expert
// decomposition etp-ep-edp-pp on the same ranks).
#include "budget/communication.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "layout/layer_kinds.hpp"
#include "layout/stage_executions.hpp"

namespace budget {

GroupPlacement group_placement(std::int64_t size, std::int64_t stride, std::int64_t gpus_per_node) {
  GroupPlacement g;
  g.size = size;
  g.stride = stride;
  if (size <= 1) return g;
  if (stride >= gpus_per_node) {
    g.members_per_node = 1;  // consecutive members at least a node apart
  } else {
    // Members base + k·stride, k < size: gpus_per_node / stride of them share a node when the
    // stride divides the node; otherwise count fewer (the conservative side).
    std::int64_t per_node = std::min(size, std::max<std::int64_t>(1, gpus_per_node / stride));
    if (gpus_per_node % stride != 0) per_node = 1;
    while (size % per_node != 0) --per_node;
    g.members_per_node = per_node;
  }
  g.nodes = size / g.members_per_node;
  return g;
}

double pipeline_bubble_micro_batches(std::int64_t pp, std::int64_t virtual_stages) {
  if (pp <= 1) return 0.0;
  return static_cast<double>(pp - 1) / static_cast<double>(std::max<std::int64_t>(1, virtual_stages));
}

namespace {

const LinkSpec& link_of(const GroupPlacement& g, const ClusterSpec& cluster) {
  return g.inter_node() ? cluster.inter_node : cluster.intra_node;
}

CommTerm ring_term(std::string name, CollectiveKind kind, const GroupPlacement& g, double size_bytes, double calls,
                   const ClusterSpec& cluster, bool overlapped) {
  CommTerm t;
  t.name = std::move(name);
  t.kind = kind;
  t.group = g;
  t.size_bytes = size_bytes;
  t.calls_per_step = calls;
  t.bytes_per_step = calls * size_bytes * bus_factor(kind, g.size);
  t.inter_node_bytes_per_step = g.inter_node() ? t.bytes_per_step : 0.0;
  t.seconds_per_step = calls * collective_seconds(kind, size_bytes, g.size, link_of(g, cluster));
  t.overlapped = overlapped;
  return t;
}

/// The options' and the memory result's checks, in this order (the first failure is reported).
void check_step_communication_inputs(const TrainingMemory& memory, const CommOptions& options) {
  if (options.max_nodes_per_token < 0) {
    throw Error(fmt::format("max nodes per token = {} is negative (0: unlimited)", options.max_nodes_per_token),
                "communication");
  }
  const MoeDispatchOptions& moe = options.moe;
  if (moe.router_num_groups < 0 || moe.router_group_topk < 0 || (moe.router_num_groups > 0) != (moe.router_group_topk > 0) ||
      moe.router_group_topk > moe.router_num_groups) {
    throw Error(fmt::format("group-limited routing: {} groups, top {} is not 0 groups, top 0 or 1 ≤ top ≤ groups",
                            moe.router_num_groups, moe.router_group_topk),
                "communication");
  }
  if (!(options.activation_bytes > 0.0) || options.activation_bytes > 8.0) {
    throw Error(fmt::format("activation bytes = {} is not in (0, 8]", options.activation_bytes), "communication");
  }
  if (memory.stages.size() != static_cast<std::size_t>(memory.layout.pp)) {
    throw Error("the memory result does not match its layout (one stage per pipeline rank)", "communication");
  }
}

/// What every stage's collectives share: the layout's process groups, the tokens and widths a
/// call moves, and the options.
struct StepCommShared {
  StepCommShared(const ParallelLayout& layout, const ClusterSpec& cluster_spec, const CommOptions& comm_options)
      : l(layout), cluster(cluster_spec), options(comm_options) {}
  const ParallelLayout& l;
  const ClusterSpec& cluster;
  const CommOptions& options;
  double A = 0.0;  ///< bytes of one activation element on the wire
  double H = 0.0;
  double m = 0.0;  ///< micro-batches per step
  double T = 0.0;  ///< b·s/CP, tokens of one micro-batch on a rank
  bool sp = false;
  double r = 1.0;  ///< TP under sequence parallelism, else 1
  std::int64_t etp = 1;
  // Process groups (Megatron-Core RankGenerator): dense tp-cp-dp-pp, experts etp-ep-edp-pp.
  GroupPlacement tp_group;
  GroupPlacement cp_group;
  GroupPlacement dp_cp_group;  ///< gradients reduce over DP × CP
  GroupPlacement etp_group;
  GroupPlacement ep_group;
  GroupPlacement edp_group;
  GroupPlacement pp_group;
  double imbalance = 1.0;       ///< min(F, G) with a capacity factor F, else G
  /// Rows the most loaded expert rank sends or receives per token of its own: top_k · min(F, G).
  double rows_per_token = 0.0;
  double kv_width = 0.0;        ///< K and V one CP rank passes round the ring, per token (heads split by TP)
  ParameterBytes per_param;
};

StepCommShared step_comm_shared(const ArchConfig& config, const ParallelLayout& l, const ClusterSpec& cluster,
                                const CommOptions& options) {
  StepCommShared s(l, cluster, options);
  const std::int64_t G = cluster.nvlink_domain();  // a group inside one NVLink domain runs on NVLink
  s.A = options.activation_bytes;
  s.H = static_cast<double>(config.hidden_size);
  s.m = static_cast<double>(l.micro_batches);
  s.T = static_cast<double>(l.micro_batch_size) * static_cast<double>(l.seq_len / l.cp);
  s.sp = l.sequence_parallel_active();
  s.r = s.sp ? static_cast<double>(l.tp) : 1.0;
  s.etp = l.expert_tp();
  const std::int64_t dp = l.data_parallel();
  const std::int64_t edp = l.expert_data_parallel();
  s.tp_group = group_placement(l.tp, 1, G);
  s.cp_group = group_placement(l.cp, l.tp, G);
  s.dp_cp_group = group_placement(dp * l.cp, l.tp, G);
  s.etp_group = group_placement(s.etp, 1, G);
  s.ep_group = group_placement(l.ep, s.etp, G);
  s.edp_group = group_placement(edp, s.etp * l.ep, G);
  s.pp_group = group_placement(l.pp, l.tp * l.cp * dp, G);
  s.imbalance = l.capacity_factor > 0.0 ? std::min(l.capacity_factor, l.imbalance) : l.imbalance;
  s.rows_per_token = static_cast<double>(config.ffn.top_k) * s.imbalance;
  const auto& a = config.attention;
  s.kv_width = a.mla ? static_cast<double>(a.num_heads * (a.mla->qk_head_dim() + a.mla->v_head_dim))
                     : 2.0 * static_cast<double>(a.kv_width());
  s.per_param = parameter_bytes(l);
  return s;
}

/// TP collectives of one stage (when TP > 1). Forward-like passes of a layer's collective per
/// micro-batch: the forward, its mirror in the backward, and the recomputed forward under full
/// recompute; embedding (first stage) and LM head (last stage) one TP collective pair each. A TP
/// region per mixer (attention, and Mamba-2 and Gated DeltaNet alike: a column-parallel input
/// projection and a row-parallel output projection, Megatron-Core hybrid_layer_specs.py:110-131 at
/// d98e8a64) and per TP-split FFN.
void add_tp_comm_terms(StageCommunication& sc, const StepCommShared& s, const StageExecutions& e,
                       const StageMemory& stage) {
  const double tp_sublayers =
      (e.mixer_layers + e.ffn_tp_layers) * 2.0 + (e.recomputed_mixer_layers + e.recomputed_ffn_tp_layers);
  const double head_pairs = (stage.has_embedding ? 1.0 : 0.0) + (stage.has_lm_head ? 1.0 : 0.0);
  if (s.l.tp <= 1) return;
  const double size = s.T * s.H * s.A;  // the layer's whole activation [s/CP, b, H]
  const bool overlapped = s.options.overlap.tp;
  if (s.sp) {
    // Sequence parallelism (Korthikanti et al. §4.2.2): an all-gather before and a
    // reduce-scatter after each TP region; the backward mirrors them.
    const double calls = s.m * (tp_sublayers + head_pairs);
    sc.terms.push_back(ring_term("tp", CollectiveKind::all_gather, s.tp_group, size, calls, s.cluster, overlapped));
    sc.terms.push_back(ring_term("tp", CollectiveKind::reduce_scatter, s.tp_group, size, calls, s.cluster, overlapped));
  } else {
    // Megatron's f/g operators: one all-reduce per TP region forward and one backward.
    const double calls = s.m * (tp_sublayers + head_pairs);
    sc.terms.push_back(ring_term("tp", CollectiveKind::all_reduce, s.tp_group, size, calls, s.cluster, overlapped));
  }
}

/// ETP (when the stage runs MoE layers and ETP > 1): the received rows all-gathered over the
/// expert-TP group, reduce-scattered after, once per MoE pass.
void add_etp_comm_terms(StageCommunication& sc, const StepCommShared& s, double moe_passes) {
  if (!(moe_passes > 0.0 && s.etp > 1)) return;
  const double size = static_cast<double>(s.etp) * (s.T / s.r) * s.rows_per_token * s.H * s.A;
  const double calls = s.m * moe_passes;
  const bool overlapped = s.options.overlap.ep;
  sc.terms.push_back(ring_term("etp", CollectiveKind::all_gather, s.etp_group, size, calls, s.cluster, overlapped));
  sc.terms.push_back(ring_term("etp", CollectiveKind::reduce_scatter, s.etp_group, size, calls, s.cluster, overlapped));
}

/// Of a link's bandwidth, what the dispatcher's all-to-all kernels reach (large messages):
///   NCCL's all-to-all (the alltoall and allgather dispatchers): 0.6 over NVLink, SimuMax's measured
///     efficiency on a B200 node (MooreThreads/SimuMax@4dcaae5:configs/system/b200_bf16_ceperm.json,
///     networks.high_intra_node.op.all2all.efficient_factor 0.5968 of 900 GB/s); 0.85 between nodes
///     (an estimate);
///   DeepEP's normal kernels (flex): 0.8 over NVLink (deepseek-ai/DeepEP@dd758ca:README.md, SM100 EP8
///     643-740 GB/s of 900 at 24-64 SMs; docs/legacy.md, H800 EP8 153-158 GB/s of 160 at 20 SMs),
///     0.86 over RDMA (docs/legacy.md: 43 GB/s of 50 at EP16); HybridEP taken as DeepEP (estimate).
struct AllToAllEfficiency {
  double intra = 1.0, inter = 1.0;
};
AllToAllEfficiency all_to_all_efficiency(const ParallelLayout& l) {
  if (l.dispatcher == MoeDispatcher::flex) return {0.8, 0.86};
  return {0.6, 0.85};
}

/// The nodes one token's rows can reach, as routing limits them (0: unlimited): node-limited routing
/// (CommOptions::max_nodes_per_token) and group-limited routing with a dispatcher that sends a token
/// once a node (flex: DeepEP's and HybridEP's kernels). Group-limited: the E experts in G contiguous
/// groups (moe_utils.py:673-733 at d98e8a64: scores.view(tokens, G, E/G), the top g groups kept), EP
/// ranks holding E/EP contiguous experts each (the expert layout of Megatron-Core's MoE layer), so a
/// group spans EP/G ranks and, with p of the EP group's ranks a node, max(1, EP/(G·p)) nodes (groups
/// assumed aligned to nodes, as Megatron's docs set G to EP or to the EP group's node count); a token
/// reaches at most g · max(1, EP/(G·p)) nodes. NCCL's all-to-all (the alltoall and allgather
/// dispatchers) sends every routed row on its own (token_dispatcher.py:551-563 at d98e8a64: tokens ·
/// top-k rows out, split by destination rank): under uniform routing the share of rows that leave
/// the node is (n − p)/n with or without groups, so group-limited routing leaves its volume unchanged.
double routing_node_cap(const StepCommShared& s) {
  double cap = s.options.max_nodes_per_token > 0 ? static_cast<double>(s.options.max_nodes_per_token) : 0.0;
  const MoeDispatchOptions& moe = s.options.moe;
  if (s.l.dispatcher == MoeDispatcher::flex && moe.router_num_groups > 0 && moe.router_group_topk > 0) {
    const double ranks_per_group = static_cast<double>(s.l.ep) / static_cast<double>(moe.router_num_groups);
    const double nodes_per_group = std::max(1.0, ranks_per_group / static_cast<double>(s.ep_group.members_per_node));
    const double groups = static_cast<double>(moe.router_group_topk) * nodes_per_group;
    cap = cap > 0.0 ? std::min(cap, groups) : groups;
  }
  return cap;
}

/// EP all-to-all (when the stage runs MoE layers and EP > 1): dispatch and combine per MoE
/// execution and pass. One call's send buffer S = (T/r) · top_k · min(F, G) · H · bytes; of it
/// (EP − 1)/EP leaves the GPU: (p − 1)/EP to the p − 1 other members on its node, (EP − p)/EP to
/// other nodes (uniform routing). Intra- and inter-node parts run concurrently: time = max of the
/// two at the dispatcher's reached bandwidths (all_to_all_efficiency()) + latency. The alltoall
/// dispatcher sends the routing probabilities in a second all-to-all after the tokens (token_dispatch
/// at d98e8a64; its backward likewise): one more latency and 4 bytes a row.
void add_ep_all_to_all_comm_term(StageCommunication& sc, const StepCommShared& s, double moe_passes) {
  if (!(moe_passes > 0.0 && s.l.ep > 1)) return;
  const ClusterSpec& cluster = s.cluster;
  const GroupPlacement& ep_group = s.ep_group;
  const double rows = (s.T / s.r) * s.rows_per_token;
  const bool probs = s.l.dispatcher != MoeDispatcher::flex;
  const double size = rows * (s.H * s.A + (probs ? 4.0 : 0.0));
  const double calls = s.m * moe_passes * 2.0;
  const double n = static_cast<double>(s.l.ep);
  const double p = static_cast<double>(ep_group.members_per_node);
  const double nodes = static_cast<double>(ep_group.nodes);
  double inter = size * (n - p) / n;
  double intra = size * (p - 1.0) / n;
  const bool flex = s.l.dispatcher == MoeDispatcher::flex;
  const double node_cap = routing_node_cap(s);
  if ((node_cap > 0.0 || flex) && ep_group.nodes > 1) {
    // Node-limited routing, and DeepEP's and HybridEP's kernels always: each token crosses to a
    // remote node once (its rows for that node travel as one copy; the combine reduces them there
    // before they cross back) and is forwarded over NVLink there. Node-limited: M nodes uniform over
    // the group's, own node included: M·(nodes − 1)/nodes copies of H leave per token. Otherwise the
    // remote nodes its k = top_k·min(F, G) rows reach, routing uniform: (nodes − 1)(1 − (1 − 1/nodes)^k).
    // The forwarded rows (all but the receiving GPU's share) are intra-node traffic on the
    // receiving node.
    double remote = (nodes - 1.0) * (1.0 - std::pow(1.0 - 1.0 / nodes, s.rows_per_token));
    if (node_cap > 0.0) {
      const double m_nodes = std::min(node_cap, nodes);
      remote = std::min(remote, m_nodes * (nodes - 1.0) / nodes * s.imbalance);
    }
    const double copies = std::min(remote, s.rows_per_token * (n - p) / n);
    inter = (s.T / s.r) * copies * s.H * s.A;
    intra += size * (n - p) / n * (p - 1.0) / p;
  }
  CommTerm t;
  t.name = "ep";
  t.kind = CollectiveKind::all_to_all;
  t.group = ep_group;
  t.size_bytes = size;
  t.calls_per_step = calls;
  t.bytes_per_step = calls * (intra + inter);
  t.inter_node_bytes_per_step = calls * inter;
  const AllToAllEfficiency reach = all_to_all_efficiency(s.l);
  const double latency = static_cast<double>(latency_steps(CollectiveKind::all_to_all, s.l.ep)) *
                         (ep_group.inter_node() ? cluster.inter_node.latency_s : cluster.intra_node.latency_s);
  // NCCL's all-to-all sends to every peer at once: its intra- and inter-node parts run concurrently.
  // DeepEP's and HybridEP's rows cross the NIC and are then forwarded over NVLink by a GPU of the
  // receiving node, store and forward: the two parts add.
  const double intra_s = intra / (reach.intra * cluster.intra_node.bandwidth_bytes_per_s);
  const double inter_s = inter / (reach.inter * cluster.inter_node.bandwidth_bytes_per_s);
  const double one = (flex ? intra_s + inter_s : std::max(intra_s, inter_s)) + (probs ? 2.0 : 1.0) * latency;
  t.seconds_per_step = calls * one;
  t.overlapped = s.options.overlap.ep;
  sc.terms.push_back(t);
}

/// A CP all-to-all term of `calls` calls whose send buffers sum to `bytes_per_pass` per pass
/// (`calls_per_pass` calls a pass); nccl-tests' all-to-all time (cluster.hpp).
CommTerm mixer_cp_term(const char* name, const GroupPlacement& g, const ClusterSpec& cluster, double bytes_per_pass,
                       double calls_per_pass, double passes, bool overlapped) {
  CommTerm t;
  t.name = name;
  t.kind = CollectiveKind::all_to_all;
  t.group = g;
  t.size_bytes = bytes_per_pass / calls_per_pass;
  t.calls_per_step = passes * calls_per_pass;
  t.bytes_per_step = t.calls_per_step * t.size_bytes * bus_factor(t.kind, g.size);
  t.inter_node_bytes_per_step = g.inter_node() ? t.bytes_per_step : 0.0;
  const LinkSpec& link = g.inter_node() ? cluster.inter_node : cluster.intra_node;
  t.seconds_per_step = t.calls_per_step * collective_seconds(t.kind, t.size_bytes, g.size, link);
  t.overlapped = overlapped;
  return t;
}

/// Context parallelism of the Mamba-2 and linear-attention layers (docs/cluster.md): all-to-alls
/// over the CP group that turn a rank's s/CP tokens of all its heads into all tokens of 1/CP of
/// its heads before the scan, and back after it (Megatron-Core at d98e8a64: Mamba-2
/// mamba_context_parallel.py:140-209, five before — z, x, B, C, dt — and one after; Gated
/// DeltaNet gated_delta_net/common.py:819-900, one of the whole input projection before and one
/// of the gated norm's output after). Per execution and forward-like pass (forward, backward,
/// recomputed forward), each all-to-all's send buffer is `tokens` × its width / TP × `bytes`.
/// Appends one term per mixer kind with such layers ("cp_mamba", "cp_linear_attention"): its size
/// the mean of the calls' sizes, so that calls × size and calls × latency are the sums.
void add_mixer_cp_comm_terms(std::vector<CommTerm>& terms, const ArchConfig& config, const ParallelLayout& l,
                             const ClusterSpec& cluster, const GroupPlacement& cp_group, double tokens,
                             double activation_bytes, double mamba_passes, double linear_attention_passes,
                             bool overlapped) {
  if (l.cp <= 1) return;
  const double tp = static_cast<double>(l.tp);
  if (mamba_passes > 0.0 && config.mamba) {
    // Before the scan z and x (inner/TP each), B and C (groups/TP · state each, repeated CP/(groups/TP)
    // times when a TP rank holds fewer groups than CP ranks) and dt (heads/TP); after it y (inner/TP).
    const MambaConfig& m = *config.mamba;
    const std::int64_t groups = m.num_groups / l.tp;
    const double repeat = groups < l.cp ? static_cast<double>(l.cp / groups) : 1.0;
    const double inner = static_cast<double>(m.inner()) / tp;
    const double width = 3.0 * inner + 2.0 * static_cast<double>(groups * m.state_size) * repeat +
                         static_cast<double>(m.num_heads) / tp;
    terms.push_back(
        mixer_cp_term("cp_mamba", cp_group, cluster, tokens * width * activation_bytes, 6.0, mamba_passes, overlapped));
  }
  if (linear_attention_passes > 0.0 && config.linear_attention) {
    // Before the recurrence the whole input projection (q, k, v, z, β, a: in_projection_width()/TP),
    // after it the gated norm's output (value width/TP).
    const LinearAttentionConfig& a = *config.linear_attention;
    const double width = static_cast<double>(a.in_projection_width() + a.value_width()) / tp;
    terms.push_back(mixer_cp_term("cp_linear_attention", cp_group, cluster, tokens * width * activation_bytes, 2.0,
                                  linear_attention_passes, overlapped));
  }
}

/// Ring attention (when CP > 1; Transformer Engine's p2p context parallelism): forward CP − 1
/// steps each passing one rank's K and V of T tokens (heads split by TP); backward CP − 1 steps of
/// K, V and CP − 1 of their gradients; a recomputed forward CP − 1 more. Attention layers only;
/// Mamba-2 and linear-attention layers exchange their heads by all-to-all (add_mixer_cp_comm_terms()).
void add_cp_ring_comm_term(StageCommunication& sc, const StepCommShared& s, const StageExecutions& e,
                           const ArchConfig& config) {
  if (s.l.cp <= 1) return;
  const double size = s.T * s.kv_width / static_cast<double>(s.l.tp) * s.A;
  const double attention = config.layer_mixers.empty() ? e.layers : e.mixer_executions(LayerMixer::attention, false);
  const double recomputed =
      config.layer_mixers.empty() ? e.recomputed_layers : e.mixer_executions(LayerMixer::attention, true);
  const double passes = attention * 3.0 + recomputed;
  const double calls = s.m * passes * static_cast<double>(s.l.cp - 1);
  if (calls > 0.0 || config.layer_mixers.empty()) {  // a stack without attention layers has no ring
    sc.terms.push_back(
        ring_term("cp", CollectiveKind::send_recv, s.cp_group, size, calls, s.cluster, s.options.overlap.cp));
  }
  const auto passes_of = [&](LayerMixer mixer) {
    return s.m * (2.0 * e.mixer_executions(mixer, false) + e.mixer_executions(mixer, true));
  };
  add_mixer_cp_comm_terms(sc.terms, config, s.l, s.cluster, s.cp_group, s.T, s.A, passes_of(LayerMixer::mamba),
                          passes_of(LayerMixer::linear_attention), s.options.overlap.cp);
}

/// Pipeline send/recv (when PP > 1), 1F1B: per micro-batch and model chunk one activation sent
/// forward and one gradient sent backward, each [s/(CP·TP under SP), b, H] (Megatron scatters it
/// over TP with SP).
void add_pp_send_recv_comm_term(StageCommunication& sc, const StepCommShared& s) {
  if (s.l.pp <= 1) return;
  const double size = s.T / s.r * s.H * s.A;
  const double calls = s.m * static_cast<double>(s.l.virtual_stages) * 2.0;
  sc.terms.push_back(
      ring_term("pp", CollectiveKind::send_recv, s.pp_group, size, calls, s.cluster, s.options.overlap.pp));
}

/// Data parallelism over `g`, once per step (nothing when the group or the parameters are
/// empty): gradients in the main-gradient dtype (bf16 training: fp32, Megatron's
/// accumulate_allreduce_grads_in_fp32) reduce-scattered and parameters all-gathered in the
/// weights' dtype under the distributed optimizer, else the gradients all-reduced.
void add_dp_reduction_comm_terms(StageCommunication& sc, const StepCommShared& s, const std::string& base,
                                 const GroupPlacement& g, double params) {
  if (g.size <= 1 || params <= 0.0) return;
  const ParameterBytes& per_param = s.per_param;
  const bool overlapped = s.options.overlap.dp;
  const ParallelLayout& l = s.l;
  const bool params_sharded = l.fsdp == FsdpKind::torch_fsdp2 ||
                              (l.fsdp == FsdpKind::megatron_fsdp && l.fsdp_sharding == FsdpSharding::optim_grads_params);
  const bool grads_sharded = params_sharded || (l.fsdp == FsdpKind::megatron_fsdp && l.fsdp_sharding == FsdpSharding::optim_grads);
  if (l.fsdp != FsdpKind::none && (params_sharded || grads_sharded)) {
    // FSDP (ZeRO-2/3): gradients reduce-scattered every micro-batch (they are not kept whole);
    // ZeRO-3 all-gathers the bf16 weights before each micro-batch's forward and again before its
    // backward (reshard after forward, Megatron-FSDP's and FSDP2's default), else once a step.
    sc.terms.push_back(ring_term(base + "_grad", CollectiveKind::reduce_scatter, g, params * per_param.gradients, s.m,
                                 s.cluster, overlapped));
    sc.terms.push_back(ring_term(base + "_param", CollectiveKind::all_gather, g, params * 2.0,
                                 params_sharded ? 2.0 * s.m : 1.0, s.cluster, overlapped));
  } else if (l.distributed_optimizer || l.fsdp != FsdpKind::none) {
    sc.terms.push_back(ring_term(base + "_grad", CollectiveKind::reduce_scatter, g, params * per_param.gradients, 1.0,
                                 s.cluster, overlapped));
    sc.terms.push_back(ring_term(base + "_param", CollectiveKind::all_gather, g, params * per_param.weights, 1.0,
                                 s.cluster, overlapped));
  } else {
    sc.terms.push_back(ring_term(base + "_grad", CollectiveKind::all_reduce, g, params * per_param.gradients, 1.0,
                                 s.cluster, overlapped));
  }
}

/// Loop placement replicated: the gradients of the loop layers the stage stores beside other pipeline
/// ranks, all-reduced among the ranks that store them once a step, after the backward (not
/// overlapped), in the main-gradient dtype, the whole tensors: as Megatron all-reduces the tied word
/// embedding's main_grad between the first and last stage (finalize_model_grads.py:204-258, called at
/// line 676 after the DP reduction, at d98e8a64). The group: `share_ranks` pipeline ranks (the most
/// sharing one of the stage's layers), members as far apart as the PP group's.
void add_loop_share_comm_term(StageCommunication& sc, const StepCommShared& s, const StageMemory& stage) {
  const double params = stage.shared_dense_params + stage.shared_expert_params;
  if (stage.share_ranks <= 1 || params <= 0.0) return;
  const GroupPlacement g = group_placement(stage.share_ranks, s.pp_group.stride, s.cluster.nvlink_domain());
  sc.terms.push_back(ring_term("loop_grad_all_reduce", CollectiveKind::all_reduce, g, params * s.per_param.gradients,
                               1.0, s.cluster, false));
}

/// One stage's collectives in the order TP, ETP, EP, CP, PP, DP, expert DP, the replicated loop's
/// gradient all-reduce, and their exposed and overlapped seconds.
StageCommunication stage_communication_of(const ArchConfig& config, const StepCommShared& s,
                                          const std::vector<ModelChunk>& chunks, const StageMemory& stage) {
  StageCommunication sc;
  sc.pipeline_rank = stage.pipeline_rank;
  const StageExecutions e = stage_executions(config, s.l, chunks, stage.pipeline_rank);
  add_tp_comm_terms(sc, s, e, stage);
  // Each MoE execution's forward and backward, a fully recomputed one's forward again, and the
  // forward again of a selectively recomputed moe module (its dispatch and combine rerun).
  const bool moe_recomputed = s.l.recompute.kind == RecomputeKind::selective && s.l.recompute.recomputes(RecomputeModule::moe);
  const double moe_passes = e.moe_layers * 2.0 + e.recomputed_moe_layers + (moe_recomputed ? e.moe_layers : 0.0);
  add_etp_comm_terms(sc, s, moe_passes);
  add_ep_all_to_all_comm_term(sc, s, moe_passes);
  add_cp_ring_comm_term(sc, s, e, config);
  add_pp_send_recv_comm_term(sc, s);
  add_dp_reduction_comm_terms(sc, s, "dp", s.dp_cp_group, stage.dense_params);
  add_dp_reduction_comm_terms(sc, s, "expert_dp", s.edp_group, stage.expert_params);
  add_loop_share_comm_term(sc, s, stage);
  for (const CommTerm& t : sc.terms) (t.overlapped ? sc.overlapped_seconds : sc.exposed_seconds) += t.seconds_per_step;
  return sc;
}

}  // namespace

std::vector<StageCommunication> step_communication(const ArchConfig& config, const TrainingMemory& memory,
                                                   const ClusterSpec& cluster, const CommOptions& options) {
  check_step_communication_inputs(memory, options);
  const ParallelLayout& l = memory.layout;
  const StepCommShared shared = step_comm_shared(config, l, cluster, options);
  const std::vector<ModelChunk> chunks = model_chunks(config, l);
  std::vector<StageCommunication> out;
  for (const StageMemory& stage : memory.stages) out.push_back(stage_communication_of(config, shared, chunks, stage));
  return out;
}

}  // namespace budget
