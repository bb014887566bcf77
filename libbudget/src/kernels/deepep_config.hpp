#pragma once
// Private to the kernels domain and the domains above it: DeepEP's recommended chunk configs, as
// Megatron-LM sizes DeepEP's Buffer from them (memory/dispatcher_buffers.cpp) and as DeepEP asserts
// on a rank count it has none for (budget/kernel_stack.hpp, expert_layout_refusal()).
#include <cstdint>
#include <optional>
#include <string>

namespace budget::detail {

/// One `deep_ep.Config` (csrc/config.hpp:24-47 at DeepEP hybrid-ep@94a9f8f), the SM count aside:
/// tokens a channel sends and receives at a time over NVLink and over RDMA. The constructor rounds
/// the RDMA receive count up to a multiple of the send count (config.hpp:40-41); rdma_recv is that.
struct DeepepChunkConfig {
  std::int64_t nvl_send = 0, nvl_recv = 0, rdma_send = 0, rdma_recv = 0;
};

/// `Buffer.get_dispatch_config(ranks)` and `Buffer.get_combine_config(ranks)` (deep_ep/buffer.py
/// :228-279 at hybrid-ep@94a9f8f); nullopt for a rank count DeepEP has no config for (it asserts).
struct DeepepConfigs {
  DeepepChunkConfig dispatch, combine;
};
std::optional<DeepepConfigs> deepep_configs(std::int64_t ranks);

/// The rank counts deepep_configs() knows, as text for a refusal: "2, 4, 8, 16, ...".
std::string deepep_config_rank_counts();

}  // namespace budget::detail
