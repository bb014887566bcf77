// A team's Megatron-LM arguments as the recipe a layout search or a cluster ranking holds
// (budget/megatron_args.hpp, megatron_search_options(); docs/megatron.md, "The cluster ranking at
// the team's recipe").
#include <optional>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "base/checked_math.hpp"

namespace budget {

MegatronAttention megatron_attention(const MegatronRun& run, const Workload& workload) {
  const std::int64_t s = run.layout.seq_len;
  if (!run.document_mask) {
    return {0.0, fmt::format("causal over the whole sequence, (s + 1)/2 = {:g} keys a query (no --reset-attention-mask)",
                             (static_cast<double>(s) + 1.0) / 2.0)};
  }
  if (workload.attention_mask != AttentionMask::document || workload.seq_len != s) {
    throw Error(fmt::format("a document mask (the mask reset at each end of document) needs the documents' lengths at "
                            "the run's --seq-length {}: give a --workload with a document mask at seq_len {} (the one "
                            "given is a {} mask at seq_len {})",
                            s, s, to_string(workload.attention_mask), workload.seq_len),
                "--reset-attention-mask");
  }
  return {workload.attended_keys,
          fmt::format("document mask (--reset-attention-mask): the workload's {:g} mean attended keys a query",
                      workload.attended_keys)};
}

LayoutSearchOptions megatron_search_options(const MegatronRun& run, const Workload& workload, LayoutSearchOptions o,
                                            bool price_at_team_layout) {
  const ParallelLayout& l = run.layout;
  o.recipe.base = l;
  o.recipe.hold_micro_batch_size = true;
  o.recipe.hold_recompute = true;
  o.recipe.hold_distributed_optimizer = true;
  o.seq_len = l.seq_len;
  // The team's batch in tokens: --global-batch-size sequences of --seq-length tokens.
  const std::optional<std::int64_t> tokens =
      detail::product_within({run.global_batch_size, l.seq_len}, std::int64_t{1} << 50);
  if (!tokens) {
    throw Error(fmt::format("--global-batch-size {} x --seq-length {} tokens a step is more than 2^50",
                            run.global_batch_size, l.seq_len),
                "megatron_args");
  }
  o.global_batch_tokens = *tokens;
  o.imbalance = l.imbalance;
  o.time.communication.overlap = run.overlap;
  o.time.communication.moe.router_num_groups = run.router_num_groups;
  o.time.communication.moe.router_group_topk = run.router_group_topk;
  o.time.attended_keys = megatron_attention(run, workload).attended_keys;
  if (price_at_team_layout) o.team_layout = l;
  return o;
}

}  // namespace budget
