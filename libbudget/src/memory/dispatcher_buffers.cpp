// The flex dispatcher's communication buffers of one GPU (memory/dispatcher_buffers.hpp): memory
// that DeepEP and HybridEP allocate with cudaMalloc, cuMemCreate or NVSHMEM, outside PyTorch's
// caching allocator, so it is not in torch.cuda.max_memory_allocated() but must fit beside it.
// Sources: Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553 (megatron/core/transformer/moe/
// fused_a2a.py, token_dispatcher.py) and deepseek-ai/DeepEP's hybrid-ep branch at 94a9f8f (the
// branch Megatron-LM's LTS image installs, docker/Dockerfile.ci.lts:95; it holds DeepEP's Buffer
// and HybridEP's HybridEPBuffer), as cited per term.
#include "memory/dispatcher_buffers.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "base/checked_math.hpp"
#include "budget/error.hpp"
#include "kernels/deepep_config.hpp"

namespace budget::memory_detail {

using detail::checked_add;
using detail::checked_mul;

namespace {

// ---- DeepEP (Megatron's flex dispatcher, --moe-flex-dispatcher-backend deepep, the default) ----
//
// Megatron creates one Buffer for the TP×EP group (token_dispatcher.py:1836-1844: group tp_ep, n =
// ETP·EP ranks) with num_nvl_bytes and num_rdma_bytes the larger of the dispatch and combine
// configs' size hints for n ranks (fused_a2a.py:36-68: Buffer.get_dispatch_config(n),
// get_combine_config(n); hidden_bytes = H · max(element size, 2), :24-33, the bf16 hidden states
// 2H), the SM count num_sms = --moe-flex-dispatcher-num-sms, 20 by default (token_dispatcher.py
// :1287-1292; Buffer.set_num_sms). DeepEP's csrc/config.hpp, with ch = num_sms / 2 channels,
// P = 8 NVLink peers (kernels/configs.cuh:3), n_nvl = min(n, P), n_rdma = max(n / P, 1), the
// config's receive chunks c_nvl and c_rdma (tokens a channel), s = sizeof(SourceMeta) = 8
// (kernels/internode.cu:17-18, 40-42), K = 128 top-k slots and 128 scales:
//   NVLink hint (:51-73): ch·n_nvl·(2·n_rdma + 3)·4 + ch·n_nvl·c_nvl·(hidden_bytes + s + K·8 + K·4 +
//     128·4), rounded up to 128 B;
//   RDMA hint (:75-100): 0 for n <= P (one NVLink domain of 8, the "legacy" intranode mode); else
//     ch·n_rdma·(2P + 2)·2·4 + ch·n_rdma·c_rdma·2·(hidden_bytes + s + K·8 + K·4 + 128·4 + 16),
//     rounded up to 128 B, where n_rdma = n / P.
// The Buffer (csrc/deep_ep.cpp) cudaMallocs num_nvl_bytes plus P barrier ints and 2P pointers
// (:145-147, 171-174), a 32 MiB workspace (:186-188, configs.cuh:5) and, when num_rdma_bytes > 0,
// NVSHMEM-allocates the RDMA buffer (:341-356). Only n decides whether the RDMA buffer exists, not
// the cluster's NVLink domain: DeepEP's normal kernels take 8 ranks a domain and reach the others
// through NVSHMEM (Megatron passes allow_mnnvl False), so a group of 16 in one NVL72 domain still
// has one. Not counted: NVSHMEM's own heap beyond the buffer (buffer.py:118-121 sets its mapping
// granularity to 512 MiB; the mapped memory may round up to it) and its bootstrap state.

constexpr std::int64_t deepep_nvl_peers = 8;       // NUM_MAX_NVL_PEERS, kernels/configs.cuh:3
constexpr std::int64_t deepep_source_meta = 8;     // sizeof(SourceMeta), kernels/internode.cu:17-18
constexpr std::int64_t deepep_topk_slots = 128;    // kNumMaxTopK, config.hpp:54, 83
constexpr std::int64_t deepep_scales = 128;        // kNumMaxScales, config.hpp:55, 84
constexpr std::int64_t deepep_workspace = 32 * 1024 * 1024;  // NUM_WORKSPACE_BYTES, configs.cuh:5
constexpr std::int64_t deepep_default_sms = 20;    // token_dispatcher.py:1287-1292

std::int64_t round_up_128(std::int64_t bytes) { return (checked_add(bytes, 127, "DeepEP buffer bytes") / 128) * 128; }

/// Per received token of a channel and peer: the hidden bytes, source meta, top-k indices (int64)
/// and weights (fp32) and FP8 scales (fp32) slots.
std::int64_t deepep_token_slot_bytes(std::int64_t hidden_bytes) {
  return hidden_bytes + deepep_source_meta + deepep_topk_slots * 8 + deepep_topk_slots * 4 + deepep_scales * 4;
}

std::int64_t deepep_nvl_hint(const detail::DeepepChunkConfig& config, std::int64_t hidden_bytes, std::int64_t ranks,
                             std::int64_t channels) {
  const std::int64_t nvl_ranks = std::min(ranks, deepep_nvl_peers);
  const std::int64_t rdma_ranks = std::max<std::int64_t>(ranks / deepep_nvl_peers, 1);
  const std::int64_t lanes = checked_mul(channels, nvl_ranks, "DeepEP channels x NVLink ranks");
  const std::int64_t meta = checked_mul(lanes, (2 * rdma_ranks + 3) * 4, "DeepEP NVLink meta bytes");
  const std::int64_t slots = checked_mul(checked_mul(lanes, config.nvl_recv, "DeepEP NVLink slots"),
                                         deepep_token_slot_bytes(hidden_bytes), "DeepEP NVLink buffer bytes");
  return round_up_128(checked_add(meta, slots, "DeepEP NVLink buffer bytes"));
}

std::int64_t deepep_rdma_hint(const detail::DeepepChunkConfig& config, std::int64_t hidden_bytes, std::int64_t ranks,
                              std::int64_t channels) {
  if (ranks <= deepep_nvl_peers) return 0;
  const std::int64_t lanes = checked_mul(channels, ranks / deepep_nvl_peers, "DeepEP channels x RDMA ranks");
  const std::int64_t meta = checked_mul(lanes, (deepep_nvl_peers * 2 + 2) * 2 * 4, "DeepEP RDMA meta bytes");
  // An int4 more a token; each slot twice, sent and received.
  const std::int64_t per_token = 2 * (deepep_token_slot_bytes(hidden_bytes) + 16);
  const std::int64_t slots = checked_mul(checked_mul(lanes, config.rdma_recv, "DeepEP RDMA slots"), per_token,
                                         "DeepEP RDMA buffer bytes");
  return round_up_128(checked_add(meta, slots, "DeepEP RDMA buffer bytes"));
}

struct DeepepBufferSizes {
  std::int64_t nvl = 0;   // num_nvl_bytes
  std::int64_t rdma = 0;  // num_rdma_bytes
};

DeepepBufferSizes deepep_buffer_sizes(const ArchConfig& c, const ParallelLayout& l) {
  const std::int64_t ranks = checked_mul(l.ep, l.expert_tp(), "TP·EP ranks");
  const auto configs = detail::deepep_configs(ranks);
  if (!configs) throw Error(fmt::format("DeepEP has no config for {} ranks (a layout that did not validate)", ranks));
  const std::int64_t sms = l.moe_memory.flex_num_sms > 0 ? l.moe_memory.flex_num_sms : deepep_default_sms;
  const std::int64_t hidden_bytes =
      checked_mul(c.hidden_size, l.precision == TrainingPrecision::fp32 ? 4 : 2, "DeepEP hidden bytes");
  DeepepBufferSizes out;
  for (const detail::DeepepChunkConfig& config : {configs->dispatch, configs->combine}) {
    out.nvl = std::max(out.nvl, deepep_nvl_hint(config, hidden_bytes, ranks, sms / 2));
    out.rdma = std::max(out.rdma, deepep_rdma_hint(config, hidden_bytes, ranks, sms / 2));
  }
  return out;
}

DispatcherBufferBytes deepep_buffer_bytes(const ArchConfig& c, const ParallelLayout& l) {
  const DeepepBufferSizes sizes = deepep_buffer_sizes(c, l);
  const std::int64_t barrier_and_pointers = deepep_nvl_peers * 4 + 2 * deepep_nvl_peers * 8;  // deep_ep.cpp:145-147
  DispatcherBufferBytes out;
  out.nvlink = static_cast<double>(sizes.nvl + barrier_and_pointers);
  out.rdma = static_cast<double>(sizes.rdma);
  out.workspace = static_cast<double>(deepep_workspace);
  return out;
}

// ---- HybridEP (--moe-flex-dispatcher-backend hybridep) ----
//
// Megatron creates one HybridEPBuffer for the TP×EP group (token_dispatcher.py:1845-1851) with
// max_num_of_tokens_per_rank the rank's dispatch input x.shape[0] (fused_a2a.py:400-414): t = T/r
// tokens, T = b·s/CP, r = TP under sequence parallelism. Of the group's G = ETP·EP ranks, R =
// min(G, NVLink domain) share a domain (hybrid_ep_buffer.py:62-83: the ranks it reaches over NVLink;
// the group's ranks are consecutive, as the communication domain's group_placement(G, 1, domain)
// places them) and N = G / R domains ("nodes"). E_l = E/EP local experts. The Configurer pads the
// tokens: t' = 64·⌈max(t, 512)/64⌉ (csrc/hybrid_ep/config.cuh:383-386, 52-61: the combine chunk of
// 64 tokens). Tokens are bf16 (Megatron dispatches no FP8 through HybridEP, fused_a2a.py:327).
//
// NVLink (csrc/hybrid_ep/buffer/intranode.cu), tokens = t'·R·N, the worst case of every token of the
// group routed to this rank (:127-129). Megatron leaves use_shared_buffer at its default, True
// (hybrid_ep_buffer.py:51; Megatron passes none, fused_a2a.py:340-347), so dispatch's output
// shares combine's input (intranode.cu:204-209; docs/Hybrid-EP_Implementation.md:310):
//   combine's expert_input_token tokens·H·2 and expert_input_prob tokens·(E_l·R)·4 (:253-261),
//   dispatch's expert_output_scaling_factor tokens·⌊H/128⌋·4 (:196-213),
//   the custom all-gather's routing map (E_l·R·N)·t'·(R·N) bools, allocated whether or not the
//   custom all-gather runs (extension/allgather.cu:142-147; hybrid_ep.cu:99).
// RDMA (N > 1; csrc/hybrid_ep/buffer/internode_doca.cu, the DOCA path setup.py builds unless
// USE_NIXL), each cudaMalloc'd and registered with the NIC:
//   dispatch (:383-428): attn_input_token t'·H·2, attn_input_prob t'·(E_l·R·N)·4, attn_input
//     scaling factors t'·⌊H/128⌋·4, and for the N − 1 other domains t'·(N−1)·(H·2 + E_l·R·4 +
//     ⌊H/128⌋·4);
//   combine (:557-590): rdma_intra_node_red and rdma_inter_node_group, token and prob each,
//     2·t'·(N−1)·(H·2 + E_l·R·4).
// Not counted: the chunk and RDMA flags (a few uint32/uint64 per chunk of 64 tokens and domain),
// the preprocessing scratch (108 blocks × R states) and the fabric allocator's rounding of each
// allocation to its granularity (allocator/allocator.cu:8-13, 89-92; at most 2 MiB each).

struct HybridepShape {
  double tokens_per_rank = 0.0;  // t'
  double ranks_per_domain = 0.0;  // R
  double domains = 0.0;          // N
  double local_experts = 0.0;    // E_l
  double hidden = 0.0;           // H
};

HybridepShape hybridep_shape(const ArchConfig& c, const ParallelLayout& l, const ClusterSpec& cluster) {
  const std::int64_t group = checked_mul(l.ep, l.expert_tp(), "TP·EP ranks");
  const std::int64_t per_domain = std::min(group, cluster.nvlink_domain());
  const double r = l.sequence_parallel_active() ? static_cast<double>(l.tp) : 1.0;
  const double tokens = static_cast<double>(l.micro_batch_size) * static_cast<double>(l.seq_len / l.cp) / r;
  HybridepShape s;
  s.tokens_per_rank = 64.0 * std::ceil(std::max(tokens, 512.0) / 64.0);
  s.ranks_per_domain = static_cast<double>(per_domain);
  s.domains = static_cast<double>(group / per_domain);
  s.local_experts = static_cast<double>(c.ffn.num_experts / l.ep);
  s.hidden = static_cast<double>(c.hidden_size);
  return s;
}

DispatcherBufferBytes hybridep_buffer_bytes(const HybridepShape& s) {
  const double scales = std::floor(s.hidden / 128.0) * 4.0;
  const double prob_width = s.local_experts * s.ranks_per_domain * 4.0;  // E_l·R fp32
  const double group = s.ranks_per_domain * s.domains;
  const double tokens = s.tokens_per_rank * group;
  DispatcherBufferBytes out;
  out.nvlink = tokens * (s.hidden * 2.0 + prob_width + scales) + s.local_experts * group * s.tokens_per_rank * group;
  if (s.domains > 1.0) {
    const double others = s.tokens_per_rank * (s.domains - 1.0);
    const double dispatch = s.tokens_per_rank * (s.hidden * 2.0 + prob_width * s.domains + scales) +
                            others * (s.hidden * 2.0 + prob_width + scales);
    const double combine = 2.0 * others * (s.hidden * 2.0 + prob_width);
    out.rdma = dispatch + combine;
  }
  return out;
}

bool uses_flex_dispatcher(const ArchConfig& c, const ParallelLayout& l) {
  return c.ffn.is_moe() && l.dispatcher == MoeDispatcher::flex;
}

}  // namespace

DispatcherBufferBytes dispatcher_buffer_bytes(const ArchConfig& c, const ParallelLayout& l,
                                              const ClusterSpec& cluster) {
  if (!uses_flex_dispatcher(c, l)) return {};
  if (l.moe_memory.hybridep) return hybridep_buffer_bytes(hybridep_shape(c, l, cluster));
  return deepep_buffer_bytes(c, l);
}

std::string deepep_buffer_refusal(const ArchConfig& c, const ParallelLayout& l) {
  if (!uses_flex_dispatcher(c, l) || l.moe_memory.hybridep) return {};
  const DeepepBufferSizes sizes = deepep_buffer_sizes(c, l);
  if (sizes.rdma > 0 && sizes.nvl > INT_MAX) {
    return fmt::format("DeepEP's NVLink buffer of {} bytes is above INT_MAX with an RDMA buffer (csrc/deep_ep.cpp:150 "
                       "at hybrid-ep 94a9f8f): fewer flex dispatcher SMs",
                       sizes.nvl);
  }
  if (sizes.rdma > INT_MAX) {
    return fmt::format("DeepEP's RDMA buffer of {} bytes is above INT_MAX (csrc/deep_ep.cpp:151 at hybrid-ep 94a9f8f): "
                       "fewer flex dispatcher SMs",
                       sizes.rdma);
  }
  return {};
}

}  // namespace budget::memory_detail
