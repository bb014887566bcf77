#pragma once
/// \file
/// Kernel-ready shapes (issue 17, item 3): which shapes of a config keep its GEMMs and its
/// attention on the fused kernels' full-rate path, and the best match whose shapes all do.
///
/// The rules (docs/matching.md, "Kernel-ready shapes"), for bf16 on NVIDIA tensor cores:
///  - attention: the query/key head dim and the value head dim are multiples of 8 and at most
///    256. cuDNN's fused SDPA refuses other head dims and FlashAttention pads them (the shipped
///    H200 profile: flash fallback at 79 TFLOP/s against 232 at head_dim 128; PyTorch
///    `sdp_utils.cpp` checks `head_dim % 8 == 0` for the cuDNN and flash paths);
///  - GEMMs: every dimension a weight matrix has (hidden size, query and key/value widths, routed,
///    shared and dense FFN widths, MLA ranks) a multiple of 8: cuBLASLt then runs 16-byte-aligned
///    tensor-core tiles (in the per-op H200 file, K and N not multiples of 8 run about three times
///    slower). The vocabulary is not checked: trainers pad it (Megatron-LM's
///    --make-vocab-size-divisible-by, 128 by default).
/// `multiple` raises 8 to a stricter alignment (16, 64, ...); the 256 cap on head dims stays.
///
/// Thread safety: every function here is reentrant.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "budget/config.hpp"
#include "budget/match.hpp"
#include "budget/workload.hpp"

namespace budget {

/// Each shape of `config` off the full-rate path, one phrase each ("head_dim 84 is not a multiple
/// of 8", "expert_dim 1144 ..."): empty when every shape is kernel-ready. budget::Error for
/// multiple < 1.
std::vector<std::string> off_kernel_path(const ArchConfig& config, std::int64_t multiple = 8);

/// `range` restricted to multiples of lcm(its multiple, m); a fixed value off the alignment is
/// moved up to the next multiple of m (the nearest aligned value at or above it).
VariableRange aligned_range(VariableRange range, std::int64_t m);

/// `constraints` with every searched shape restricted to multiples of `multiple`: hidden_size,
/// head_dim (also ≤ max_fused_head_dim), expert_dim (dense_dim for dense baselines),
/// shared_expert_dim and kv_lora_rank. budget::Error when a range then holds no value (e.g. a
/// head_dim range wholly above 256), naming the field.
MatchConstraints aligned_constraints(const MatchConstraints& constraints, std::int64_t multiple = 8);

/// The best match whose shapes are all kernel-ready, for reporting beside the best match.
struct AlignedAlternative {
  std::optional<Candidate> candidate;  ///< nullopt when the aligned space has no candidate
  std::int64_t multiple = 8;
  /// Why there is none (empty when there is a candidate): the aligned search's message.
  std::string reason;
};

/// match() under aligned_constraints(constraints, multiple), top 1; a candidate that still has a
/// shape off the path (a dimension the matcher holds at the baseline's, e.g. the vocabulary or
/// MLA's fixed head dims) is no alternative: reason names it.
AlignedAlternative aligned_alternative(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                                       const MatchConstraints& constraints, std::int64_t multiple = 8);

}  // namespace budget
