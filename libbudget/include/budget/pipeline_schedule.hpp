#pragma once
/// \file
/// Megatron-Core's pipeline schedules, simulated step by step: which model chunk each pipeline rank
/// runs forward or backward, and so how many layer executions keep their activations at once
/// (docs/cluster.md, "Micro-batches in flight" and "Loops across pipeline stages").
///
/// Thread safety: every function here is reentrant.

#include <cstdint>
#include <vector>

namespace budget {

/// Per pipeline rank s, the peak number of layer executions whose activations are saved at once
/// under Megatron-Core's interleaved 1F1B schedule (vp == 1: the non-interleaved 1F1B schedule).
/// chunk_layers[c] = layers executed by global model chunk c = v*pp + s (size pp*vp), micro_batches = m.
///
/// The schedule (megatron/core/pipeline_parallel/schedules.py at d98e8a64, default
/// microbatch_group_size_per_vp_stage = PP, model_parallel_config.py:567-568): rank s runs W warm-up
/// forwards, then (forward W+k, backward k) pairs, then the remaining backwards (lines 1573, 1733-1746,
/// 1971); interleaved, W = 2(PP − s − 1) + (V − 1)·PP, at most m·V (lines 964-977), forward k runs
/// chunk (k mod PP·V) / PP and backward k chunk V − 1 − that (get_schedule_table, lines 989-1016;
/// get_model_chunk_id, lines 1244-1249); non-interleaved, W = min(PP − s − 1, m) (lines 2277-2278).
/// A forward saves its chunk's layer executions, a backward frees those of the oldest forward of its
/// chunk. PP = 1 (forward_backward_no_pipelining): one micro-batch at a time.
///
/// Refused (budget::Error naming the argument, the value and what is allowed), as Megatron refuses
/// it: pp < 1, micro_batches < 1, a chunk_layers size that is not a positive multiple of pp, a
/// negative entry, vp > 1 with pp = 1, and vp > 1 with m not a multiple of PP (schedules.py:1160-1180:
/// the last group of PP micro-batches must be full).
std::vector<std::int64_t> peak_saved_layer_executions(const std::vector<std::int64_t>& chunk_layers, int pp,
                                                      std::int64_t micro_batches);

}  // namespace budget
