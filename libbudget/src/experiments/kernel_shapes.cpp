// Kernel-ready shapes and the aligned alternative (kernel_shapes.hpp; docs/matching.md).

#include "budget/kernel_shapes.hpp"

#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "budget/error.hpp"

namespace budget {

namespace {

void check_multiple(std::int64_t multiple) {
  if (multiple < 1) throw Error(fmt::format("alignment {} is not allowed; allowed: a multiple ≥ 1", multiple), "align");
}

/// Adds "NAME VALUE is not a multiple of M" when a nonzero dimension is off the alignment.
void check_dim(std::vector<std::string>& out, const char* name, std::int64_t value, std::int64_t multiple) {
  if (value > 0 && value % multiple != 0) out.push_back(fmt::format("{} {} is not a multiple of {}", name, value, multiple));
}

void check_head_dim(std::vector<std::string>& out, const char* name, std::int64_t value, std::int64_t multiple) {
  check_dim(out, name, value, multiple);
  if (value > max_fused_head_dim) {
    out.push_back(fmt::format("{} {} is above {}, the largest the fused attention kernels take", name, value,
                              max_fused_head_dim));
  }
}

}  // namespace

std::vector<std::string> off_kernel_path(const ArchConfig& c, std::int64_t multiple) {
  check_multiple(multiple);
  std::vector<std::string> out;
  const AttentionConfig& a = c.attention;
  check_dim(out, "hidden_size", c.hidden_size, multiple);
  if (a.mla) {
    check_head_dim(out, "qk head dim (qk_nope_head_dim + qk_rope_head_dim)", a.mla->qk_head_dim(), multiple);
    check_head_dim(out, "v_head_dim", a.mla->v_head_dim, multiple);
    check_dim(out, "q_lora_rank", a.mla->q_lora_rank, multiple);
    check_dim(out, "kv_lora_rank", a.mla->kv_lora_rank, multiple);
  } else {
    check_head_dim(out, "head_dim", a.head_dim, multiple);
    // Query and key/value widths are heads · head_dim: aligned whenever head_dim is, but a
    // stricter multiple can still leave them off (e.g. 12 heads of 88 for 64).
    check_dim(out, "query width (num_heads·head_dim)", a.query_width(), multiple);
    check_dim(out, "key/value width (num_kv_heads·head_dim)", a.kv_width(), multiple);
  }
  const FfnConfig& f = c.ffn;
  if (f.is_moe()) {
    check_dim(out, "expert_dim", f.expert_dim, multiple);
    if (f.num_shared_experts > 0) check_dim(out, "shared_expert_dim", f.shared_expert_dim, multiple);
    if (f.first_dense_layers > 0) check_dim(out, "dense_dim", f.dense_dim, multiple);
  } else {
    check_dim(out, "dense_dim", f.dense_dim, multiple);
  }
  return out;
}

VariableRange aligned_range(VariableRange range, std::int64_t m) {
  check_multiple(m);
  if (range.is_fixed()) {
    if (range.min % m != 0) {
      const std::int64_t up = (range.min + m - 1) / m * m;
      return VariableRange{up, up, 1};
    }
    return range;
  }
  range.multiple_of = range.multiple_of / std::gcd(range.multiple_of, m) * m;
  return range;
}

MatchConstraints aligned_constraints(const MatchConstraints& constraints, std::int64_t multiple) {
  check_multiple(multiple);
  MatchConstraints c = constraints;
  c.hidden_size = aligned_range(c.hidden_size, multiple);
  c.expert_dim = aligned_range(c.expert_dim, multiple);
  if (c.shared_expert_dim.max > 0) c.shared_expert_dim = aligned_range(c.shared_expert_dim, multiple);
  if (c.kv_lora_rank.max > 0) c.kv_lora_rank = aligned_range(c.kv_lora_rank, multiple);
  c.head_dim = aligned_range(c.head_dim, multiple);
  if (c.head_dim.min > max_fused_head_dim) {
    throw Error(fmt::format("head_dim range [{}, {}] lies above {}, the largest head dim the fused attention "
                            "kernels take",
                            c.head_dim.min, c.head_dim.max, max_fused_head_dim),
                "", "head_dim");
  }
  c.head_dim.max = std::min(c.head_dim.max, max_fused_head_dim);
  const auto nonempty = [](const VariableRange& r, const char* name) {
    if (r.max > 0 && r.size() == 0) {
      throw Error(fmt::format("no multiple of {} lies in [{}, {}]", r.multiple_of, r.min, r.max), "", name);
    }
  };
  nonempty(c.hidden_size, "hidden_size");
  nonempty(c.expert_dim, "expert_dim");
  nonempty(c.shared_expert_dim, "shared_expert_dim");
  nonempty(c.kv_lora_rank, "kv_lora_rank");
  nonempty(c.head_dim, "head_dim");
  return c;
}

AlignedAlternative aligned_alternative(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                                       const MatchConstraints& constraints, std::int64_t multiple) {
  AlignedAlternative out;
  out.multiple = multiple;
  MatchConstraints aligned;
  try {
    aligned = aligned_constraints(constraints, multiple);
  } catch (const Error& e) {
    out.reason = fmt::format("no aligned search space: {}", e.what());
    return out;
  }
  const MatchResult result = match(baseline, loop, workload, aligned, 1);
  if (!result.summary.feasible || result.candidates.empty()) {
    out.reason = result.summary.message.empty() ? "no candidate meets the constraints with aligned shapes"
                                                : result.summary.message;
    return out;
  }
  const std::vector<std::string> off = off_kernel_path(result.candidates.front().config, multiple);
  if (!off.empty()) {
    out.reason = fmt::format("the aligned search still holds a shape off the path at the baseline's value: {}",
                             fmt::join(off, "; "));
    return out;
  }
  out.candidate = result.candidates.front();
  return out;
}

}  // namespace budget
