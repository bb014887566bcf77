#pragma once
// One rank of Megatron-Core's 1F1B schedules (budget/pipeline_schedule.hpp: the schedule, its source
// lines and what is refused), weighted per chunk: the memory model weights each chunk by the bytes
// one forward saves, the public peak_saved_layer_executions() by its layer executions.

#include <cstdint>
#include <vector>

namespace budget::schedule_detail {

/// The peak, over the schedule of rank `rank` of `pp` with m micro-batches, of the summed weights of
/// the chunk forwards whose backward has not run; weights[v] belongs to chunk v·PP + rank (V =
/// weights.size() ≥ 1). The caller has checked the arguments (V > 1: PP > 1 and m a multiple of PP).
double rank_peak_saved(const std::vector<double>& weights, std::int64_t pp, std::int64_t rank, std::int64_t m);
std::int64_t rank_peak_saved(const std::vector<std::int64_t>& weights, std::int64_t pp, std::int64_t rank,
                             std::int64_t m);

}  // namespace budget::schedule_detail
