// DeepEP's recommended chunk configs (kernels/deepep_config.hpp), copied from deepseek-ai/DeepEP's
// hybrid-ep branch at 94a9f8f, deep_ep/buffer.py:240-251 (dispatch) and :268-279 (combine): the
// branch Megatron-LM's LTS image installs (docker/Dockerfile.ci.lts:95 at d98e8a64) and the one
// this project cites for HybridEP. DeepEP's main branch tunes some differently (deep_ep/buffers/
// legacy.py at dd758ca: 64 ranks dispatch RDMA chunk 8 of 128, and configs for 48 and 96 ranks).
#include "kernels/deepep_config.hpp"

#include <array>

#include <fmt/format.h>

namespace budget::detail {

namespace {

struct ConfigRow {
  std::int64_t ranks;
  // Config(num_sms, nvl_send, nvl_recv, rdma_send, rdma_recv) as buffer.py writes them.
  std::array<std::int64_t, 4> dispatch;
  std::array<std::int64_t, 4> combine;
};

constexpr std::array<ConfigRow, 10> deepep_config_rows{{
    {2, {24, 256, 6, 128}, {10, 256, 6, 128}},
    {4, {6, 256, 6, 128}, {9, 256, 6, 128}},
    {8, {6, 256, 6, 128}, {4, 256, 6, 128}},
    {16, {36, 288, 20, 128}, {4, 288, 12, 128}},
    {24, {8, 288, 32, 128}, {1, 288, 8, 128}},
    {32, {32, 288, 32, 128}, {1, 288, 8, 128}},
    {64, {20, 288, 28, 128}, {1, 288, 20, 128}},
    {128, {20, 560, 32, 128}, {1, 560, 12, 128}},
    {144, {32, 720, 12, 128}, {2, 720, 8, 128}},
    {160, {28, 720, 12, 128}, {2, 720, 8, 128}},
}};

/// The Config constructor's rounding: rdma_recv up to a multiple of rdma_send (config.hpp:40-41).
DeepepChunkConfig chunk_config(const std::array<std::int64_t, 4>& row) {
  const std::int64_t send = row[2];
  return {row[0], row[1], send, (row[3] + send - 1) / send * send};
}

}  // namespace

std::optional<DeepepConfigs> deepep_configs(std::int64_t ranks) {
  for (const ConfigRow& row : deepep_config_rows) {
    if (row.ranks == ranks) return DeepepConfigs{chunk_config(row.dispatch), chunk_config(row.combine)};
  }
  return std::nullopt;
}

std::string deepep_config_rank_counts() {
  std::string out;
  for (const ConfigRow& row : deepep_config_rows) out += fmt::format("{}{}", out.empty() ? "" : ", ", row.ranks);
  return out;
}

}  // namespace budget::detail
