// Communication per step (docs/cluster.md, "Communication"). Bus factors from nccl-tests
// doc/PERFORMANCE.md (NVIDIA/nccl-tests); rank order and process groups from Megatron-Core
// megatron/core/parallel_state.py (RankGenerator, order "tp-cp-ep-dp-pp"; the expert
// decomposition etp-ep-edp-pp on the same ranks).
#include "budget/communication.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "cluster/stage_executions.hpp"

namespace budget {

std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::send_recv: return "send_recv";
  }
  return "?";
}

double bus_factor(CollectiveKind kind, std::int64_t ranks) {
  if (kind == CollectiveKind::send_recv) return 1.0;
  if (ranks <= 1) return 0.0;
  const double n = static_cast<double>(ranks);
  // nccl-tests PERFORMANCE.md: AllReduce busBw = algBw · 2(n−1)/n; ReduceScatter and AllGather
  // (n−1)/n; AlltoAll (n−1)/n (src/alltoall.cu, AlltoAllGetBw).
  return kind == CollectiveKind::all_reduce ? 2.0 * (n - 1.0) / n : (n - 1.0) / n;
}

std::int64_t latency_steps(CollectiveKind kind, std::int64_t ranks) {
  if (kind == CollectiveKind::send_recv) return 1;
  if (ranks <= 1) return 0;
  return kind == CollectiveKind::all_reduce ? 2 * (ranks - 1) : ranks - 1;
}

double collective_seconds(CollectiveKind kind, double size_bytes, std::int64_t ranks, const LinkSpec& link) {
  const double steps = static_cast<double>(latency_steps(kind, ranks));
  const double volume = size_bytes * bus_factor(kind, ranks);
  if (volume <= 0.0 && steps <= 0.0) return 0.0;
  return volume / link.bandwidth_bytes_per_s + steps * link.latency_s;
}

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

}  // namespace

std::vector<StageCommunication> step_communication(const ArchConfig& config, const TrainingMemory& memory,
                                                   const ClusterSpec& cluster, const CommOptions& options) {
  if (options.max_nodes_per_token < 0) {
    throw Error(fmt::format("max nodes per token = {} is negative (0: unlimited)", options.max_nodes_per_token),
                "communication");
  }
  if (!(options.activation_bytes > 0.0) || options.activation_bytes > 8.0) {
    throw Error(fmt::format("activation bytes = {} is not in (0, 8]", options.activation_bytes), "communication");
  }
  const ParallelLayout& l = memory.layout;
  if (memory.stages.size() != static_cast<std::size_t>(l.pp)) {
    throw Error("the memory result does not match its layout (one stage per pipeline rank)", "communication");
  }
  const std::int64_t G = cluster.gpus_per_node;
  const double A = options.activation_bytes;
  const double H = static_cast<double>(config.hidden_size);
  const double m = static_cast<double>(l.micro_batches);
  const double T = static_cast<double>(l.micro_batch_size) * static_cast<double>(l.seq_len / l.cp);  // b·s/CP
  const bool sp = l.sequence_parallel_active();
  const double r = sp ? static_cast<double>(l.tp) : 1.0;
  const std::int64_t etp = l.expert_tp();
  const std::int64_t dp = l.data_parallel();
  const std::int64_t edp = l.expert_data_parallel();
  // Process groups (Megatron-Core RankGenerator): dense tp-cp-dp-pp, experts etp-ep-edp-pp.
  const GroupPlacement tp_group = group_placement(l.tp, 1, G);
  const GroupPlacement cp_group = group_placement(l.cp, l.tp, G);
  const GroupPlacement dp_cp_group = group_placement(dp * l.cp, l.tp, G);  // gradients reduce over DP × CP
  const GroupPlacement etp_group = group_placement(etp, 1, G);
  const GroupPlacement ep_group = group_placement(l.ep, etp, G);
  const GroupPlacement edp_group = group_placement(edp, etp * l.ep, G);
  const GroupPlacement pp_group = group_placement(l.pp, l.tp * l.cp * dp, G);
  // Rows the most loaded expert rank sends or receives per token of its own: top_k · min(F, G).
  const double imbalance = l.capacity_factor > 0.0 ? std::min(l.capacity_factor, l.imbalance) : l.imbalance;
  const double rows_per_token = static_cast<double>(config.ffn.top_k) * imbalance;
  // K and V one CP rank passes round the ring, per token (heads split by TP).
  const auto& a = config.attention;
  const double kv_width = a.mla ? static_cast<double>(a.num_heads * (a.mla->qk_head_dim() + a.mla->v_head_dim))
                                : 2.0 * static_cast<double>(a.kv_width());
  const ParameterBytes per_param = parameter_bytes(l.precision);
  const std::vector<ModelChunk> chunks = model_chunks(config, l);

  std::vector<StageCommunication> out;
  for (const StageMemory& stage : memory.stages) {
    StageCommunication sc;
    sc.pipeline_rank = stage.pipeline_rank;
    const StageExecutions e = stage_executions(config, l, chunks, stage.pipeline_rank);
    // Forward-like passes of a layer's collective per micro-batch: the forward, its mirror in the
    // backward, and the recomputed forward under full recompute.
    const double tp_sublayers = (e.layers + e.ffn_tp_layers) * 2.0 + (e.recomputed_layers + e.recomputed_ffn_tp_layers);
    // Embedding (first stage) and LM head (last stage): one TP collective pair each per micro-batch.
    const double head_pairs = (stage.has_embedding ? 1.0 : 0.0) + (stage.has_lm_head ? 1.0 : 0.0);
    if (l.tp > 1) {
      const double size = T * H * A;  // the layer's whole activation [s/CP, b, H]
      if (sp) {
        // Sequence parallelism (Korthikanti et al. §4.2.2): an all-gather before and a
        // reduce-scatter after each TP region; the backward mirrors them.
        const double calls = m * (tp_sublayers + head_pairs);
        sc.terms.push_back(ring_term("tp", CollectiveKind::all_gather, tp_group, size, calls, cluster, options.overlap.tp));
        sc.terms.push_back(
            ring_term("tp", CollectiveKind::reduce_scatter, tp_group, size, calls, cluster, options.overlap.tp));
      } else {
        // Megatron's f/g operators: one all-reduce per TP region forward and one backward.
        const double calls = m * (tp_sublayers + head_pairs);
        sc.terms.push_back(ring_term("tp", CollectiveKind::all_reduce, tp_group, size, calls, cluster, options.overlap.tp));
      }
    }
    const double moe_passes = e.moe_layers * 2.0 + e.recomputed_moe_layers;
    if (moe_passes > 0.0 && etp > 1) {
      // ETP: the received rows all-gathered over the expert-TP group, reduce-scattered after.
      const double size = static_cast<double>(etp) * (T / r) * rows_per_token * H * A;
      const double calls = m * moe_passes;
      sc.terms.push_back(ring_term("etp", CollectiveKind::all_gather, etp_group, size, calls, cluster, options.overlap.ep));
      sc.terms.push_back(
          ring_term("etp", CollectiveKind::reduce_scatter, etp_group, size, calls, cluster, options.overlap.ep));
    }
    if (moe_passes > 0.0 && l.ep > 1) {
      // EP all-to-all: dispatch and combine per MoE execution and pass. One call's send buffer
      // S = (T/r) · top_k · min(F, G) · H · bytes; of it (EP − 1)/EP leaves the GPU: (p − 1)/EP to
      // the p − 1 other members on its node, (EP − p)/EP to other nodes (uniform routing). Intra-
      // and inter-node parts run concurrently: time = max of the two + latency.
      const double size = (T / r) * rows_per_token * H * A;
      const double calls = m * moe_passes * 2.0;
      const double n = static_cast<double>(l.ep);
      const double p = static_cast<double>(ep_group.members_per_node);
      const double nodes = static_cast<double>(ep_group.nodes);
      double inter = size * (n - p) / n;
      double intra = size * (p - 1.0) / n;
      if (options.max_nodes_per_token > 0 && ep_group.nodes > 1) {
        // Node-limited routing: each token crosses to at most M nodes once (its rows for that node
        // travel as one copy), forwarded over NVLink there. With the M nodes uniform over the group's
        // nodes, own node included, M·(nodes − 1)/nodes copies of H leave per token; the forwarded
        // rows (all but the receiving GPU's share) are intra-node traffic on the receiving node.
        const double m_nodes = std::min(static_cast<double>(options.max_nodes_per_token), nodes);
        const double copies = std::min(m_nodes * (nodes - 1.0) / nodes * imbalance, rows_per_token * (n - p) / n);
        inter = (T / r) * copies * H * A;
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
      const double one = std::max(intra / cluster.intra_node.bandwidth_bytes_per_s,
                                  inter / cluster.inter_node.bandwidth_bytes_per_s) +
                         static_cast<double>(latency_steps(CollectiveKind::all_to_all, l.ep)) *
                             (ep_group.inter_node() ? cluster.inter_node.latency_s : cluster.intra_node.latency_s);
      t.seconds_per_step = calls * one;
      t.overlapped = options.overlap.ep;
      sc.terms.push_back(t);
    }
    if (l.cp > 1) {
      // Ring attention (Transformer Engine's p2p context parallelism): forward CP − 1 steps each
      // passing one rank's K and V of T tokens (heads split by TP); backward CP − 1 steps of K, V
      // and CP − 1 of their gradients; a recomputed forward CP − 1 more.
      const double size = T * kv_width / static_cast<double>(l.tp) * A;
      const double passes = e.layers * 3.0 + e.recomputed_layers;
      const double calls = m * passes * static_cast<double>(l.cp - 1);
      sc.terms.push_back(ring_term("cp", CollectiveKind::send_recv, cp_group, size, calls, cluster, options.overlap.cp));
    }
    if (l.pp > 1) {
      // 1F1B: per micro-batch and model chunk one activation sent forward and one gradient sent
      // backward, each [s/(CP·TP under SP), b, H] (Megatron scatters it over TP with SP).
      const double size = T / r * H * A;
      const double calls = m * static_cast<double>(l.virtual_stages) * 2.0;
      sc.terms.push_back(ring_term("pp", CollectiveKind::send_recv, pp_group, size, calls, cluster, options.overlap.pp));
    }
    // Data parallelism, once per step: gradients in the main-gradient dtype (bf16 training: fp32,
    // Megatron's accumulate_allreduce_grads_in_fp32), parameters gathered in the weights' dtype.
    const auto add_dp = [&](const std::string& base, const GroupPlacement& g, double params) {
      if (g.size <= 1 || params <= 0.0) return;
      if (l.distributed_optimizer) {
        sc.terms.push_back(ring_term(base + "_grad", CollectiveKind::reduce_scatter, g, params * per_param.gradients, 1.0,
                                     cluster, options.overlap.dp));
        sc.terms.push_back(ring_term(base + "_param", CollectiveKind::all_gather, g, params * per_param.weights, 1.0,
                                     cluster, options.overlap.dp));
      } else {
        sc.terms.push_back(ring_term(base + "_grad", CollectiveKind::all_reduce, g, params * per_param.gradients, 1.0,
                                     cluster, options.overlap.dp));
      }
    };
    add_dp("dp", dp_cp_group, stage.dense_params);
    add_dp("expert_dp", edp_group, stage.expert_params);
    for (const CommTerm& t : sc.terms) (t.overlapped ? sc.overlapped_seconds : sc.exposed_seconds) += t.seconds_per_step;
    out.push_back(std::move(sc));
  }
  return out;
}

}  // namespace budget
