// The dispatcher limits of a layout that depend on the cluster (issue 43; docs/kernels.md,
// "Expert-parallel layouts"): HybridEP's NVLink-domain rules, read from DeepEP's hybrid-ep branch
// at 94a9f8f (budget/kernel_stack.hpp, hybridep_layout_refusal()).
#include "layout/dispatcher_limits.hpp"

#include "base/checked_math.hpp"
#include "budget/kernel_stack.hpp"

namespace budget::detail {

std::string dispatcher_cluster_error(const ParallelLayout& l, const ArchConfig& config, std::int64_t nvlink_domain) {
  if (!config.ffn.is_moe() || l.dispatcher != MoeDispatcher::flex || !l.moe_memory.hybridep) return {};
  const std::int64_t tokens_per_rank = checked_mul(l.micro_batch_size, l.seq_len / l.cp, "tokens a rank");
  const std::string why = hybridep_layout_refusal(config.ffn.num_experts, l.ep, l.expert_tp(), config.hidden_size,
                                                  nvlink_domain, tokens_per_rank);
  return why.empty() ? why : "the flex dispatcher (HybridEP) refuses this expert layout on the cluster: " + why;
}

}  // namespace budget::detail
