// A team's Megatron-LM arguments as the recipe a layout search or a cluster ranking holds
// (budget/megatron_args.hpp, megatron_search_options(); docs/megatron.md, "The cluster ranking at
// the team's recipe").
#include <optional>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "base/checked_math.hpp"

namespace budget {

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
                "--megatron-args");
  }
  o.global_batch_tokens = *tokens;
  o.imbalance = l.imbalance;
  o.time.communication.overlap = run.overlap;
  // The one attended-keys default (layout_attended_keys()): the workload's document mask at its own
  // sequence length; another sequence length is a causal window.
  o.time.attended_keys = l.seq_len == workload.seq_len ? layout_attended_keys(workload) : 0.0;
  if (price_at_team_layout) o.team_layout = l;
  return o;
}

}  // namespace budget
