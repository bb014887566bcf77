#pragma once
// Test support: two layouts compared member by member (not through the layout field table), the
// recipe settings every layout comparison of the suite checks (the Megatron round trip, the field
// table's round trip).
#include <catch2/catch.hpp>

#include "budget/parallel_layout.hpp"

namespace budget::test {

/// The parallel sizes in effect (derived GPU count, DP and ETP) and the batch of `a` and `b`.
inline void check_same_sizes(const ParallelLayout& a, const ParallelLayout& b) {
  CHECK(a.tp == b.tp);
  CHECK(a.sequence_parallel == b.sequence_parallel);
  CHECK(a.pp == b.pp);
  CHECK(a.virtual_stages == b.virtual_stages);
  CHECK(a.ep == b.ep);
  CHECK(a.expert_tp() == b.expert_tp());
  CHECK(a.cp == b.cp);
  CHECK(a.gpu_count() == b.gpu_count());
  CHECK(a.data_parallel() == b.data_parallel());
  CHECK(a.micro_batch_size == b.micro_batch_size);
  CHECK(a.micro_batches == b.micro_batches);
  CHECK(a.seq_len == b.seq_len);
}

/// The recipe and split settings of `a` and `b`: CHECKs, one per member.
inline void check_same_recipe_settings(const ParallelLayout& a, const ParallelLayout& b) {
  CHECK(a.distributed_optimizer == b.distributed_optimizer);
  CHECK(a.distributed_optimizer_instances == b.distributed_optimizer_instances);
  CHECK(a.precision == b.precision);
  CHECK(a.cross_entropy_fusion == b.cross_entropy_fusion);
  CHECK(a.capacity_factor == b.capacity_factor);
  CHECK(a.imbalance == b.imbalance);
  CHECK(a.vocab_divisible_by == b.vocab_divisible_by);
  CHECK(a.flash_attention == b.flash_attention);
  CHECK(a.dropout == b.dropout);
  CHECK(a.gradient_accumulation_fusion == b.gradient_accumulation_fusion);
  CHECK(a.split == b.split);
  CHECK(a.split.stages == b.split.stages);
  CHECK(a.embedding_in_split == b.embedding_in_split);
  CHECK(a.loss_in_split == b.loss_in_split);
  CHECK(a.fsdp == b.fsdp);
  CHECK(a.fp8 == b.fp8);
  CHECK(a.fp8_param_gather == b.fp8_param_gather);
  CHECK(a.cpu_offload_layers == b.cpu_offload_layers);
  CHECK(a.dispatcher == b.dispatcher);
  CHECK(a.moe_permute_fusion == b.moe_permute_fusion);
  CHECK(a.optimizer_dtypes == b.optimizer_dtypes);
}

}  // namespace budget::test
