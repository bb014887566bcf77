// Whether a layout's model chunks fit a config (layout/chunk_plan_check.hpp).
#include "layout/chunk_plan_check.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

namespace budget {
namespace {

// With wrap, every physical layer runs on one pipeline rank in every pass: the first rank that runs
// a layer twice is named. Chunk c sits on rank c mod PP (model_chunks).
std::string loop_wrap_error(const ParallelLayout& l, const ArchConfig& config) {
  std::vector<std::int64_t> rank_of(static_cast<std::size_t>(config.num_layers) + 1, -1);
  for (const ModelChunk& chunk : model_chunks(config, l)) {
    for (const std::int64_t layer : chunk.executed_layers) {
      std::int64_t& rank = rank_of[static_cast<std::size_t>(layer)];
      if (rank >= 0 && rank != chunk.pipeline_rank) {
        return fmt::format("with loop placement wrap, layer {} runs on pipeline ranks {} and {}: every pass of the "
                           "loop must put each layer on the rank of its first pass (a pass spanning a multiple of "
                           "PP = {} chunks; docs/cluster.md, \"Loops across pipeline stages\"), or choose "
                           "loop placement replicated",
                           layer, rank, chunk.pipeline_rank, l.pp);
      }
      rank = chunk.pipeline_rank;
    }
  }
  return {};
}

// The model chunks (plan_chunks: the layout string, first/last counts or the even split) fit the
// config; in_chunk, a repeated loop lies inside one chunk; wrap, each layer on one rank.
std::string chunk_plan_error_uncached(const ParallelLayout& l, const ArchConfig& config) {
  std::string error;
  const ChunkPlan plan = plan_chunks(config, l, &error);
  if (plan.layers.empty()) return error;
  if (!config.loop || config.loop->repeats <= 1) return {};
  if (l.loop_placement == LoopPlacement::replicated) return {};
  if (l.loop_placement == LoopPlacement::wrap) return loop_wrap_error(l, config);
  std::int64_t first_chunk = -1, last_chunk = -1, end = 0;
  for (std::size_t c = 0; c < plan.layers.size(); ++c) {
    const std::int64_t begin = end;
    end += plan.layers[c];
    if (config.loop->first > begin && config.loop->first <= end) first_chunk = static_cast<std::int64_t>(c);
    if (config.loop->last > begin && config.loop->last <= end) last_chunk = static_cast<std::int64_t>(c);
  }
  if (first_chunk != last_chunk) {
    const std::int64_t a = plan.layers[static_cast<std::size_t>(first_chunk)];
    const std::int64_t b = plan.layers[static_cast<std::size_t>(last_chunk)];
    return fmt::format("the loop over layers {}-{} crosses pipeline chunks {} and {} ({}): a loop must lie inside one "
                       "pipeline stage with loop placement in_chunk; choose loop placement wrap or replicated "
                       "(--loop-placement) to split its executions over the pipeline",
                       config.loop->first, config.loop->last, first_chunk, last_chunk,
                       a == b ? fmt::format("{} layers each", a) : fmt::format("{} and {} layers", a, b));
  }
  return {};
}

}  // namespace

ChunkPlanKey chunk_plan_key(const ParallelLayout& l, const ArchConfig& config) {
  const LoopConfig loop = config.loop.value_or(LoopConfig{});
  return {config.num_layers, config.mtp_layers, loop.first, loop.last, loop.repeats, l.pp, l.virtual_stages,
          static_cast<int>(l.loop_placement), l.split, l.embedding_in_split, l.loss_in_split};
}

bool same_chunk_plan_key(const ChunkPlanKey& k, const ParallelLayout& l, const ArchConfig& config) {
  const LoopConfig loop = config.loop.value_or(LoopConfig{});
  return std::get<0>(k) == config.num_layers && std::get<1>(k) == config.mtp_layers && std::get<2>(k) == loop.first &&
         std::get<3>(k) == loop.last && std::get<4>(k) == loop.repeats && std::get<5>(k) == l.pp &&
         std::get<6>(k) == l.virtual_stages && std::get<7>(k) == static_cast<int>(l.loop_placement) &&
         std::get<8>(k) == l.split && std::get<9>(k) == l.embedding_in_split && std::get<10>(k) == l.loss_in_split;
}

std::string chunk_plan_error(const ParallelLayout& l, const ArchConfig& config) {
  // A search asks for the same pipeline many times in a row: the last answer first, compared without
  // building the key (no allocation).
  thread_local std::optional<ChunkPlanKey> last_key;
  thread_local std::string last_error;
  if (last_key && same_chunk_plan_key(*last_key, l, config)) return last_error;
  ChunkPlanKey key = chunk_plan_key(l, config);
  thread_local std::map<ChunkPlanKey, std::string> memo;
  auto it = memo.find(key);
  if (it == memo.end()) {
    if (memo.size() >= 4096) memo.clear();  // bounded: a search asks a few hundred pipelines
    it = memo.emplace(key, chunk_plan_error_uncached(l, config)).first;
  }
  last_key = std::move(key);
  last_error = it->second;
  return last_error;
}

}  // namespace budget
