// Constraints files of the matcher (schema: docs/matching.md, "Constraints file").

#include <numeric>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/match.hpp"
#include "base/json_reader.hpp"

namespace budget {
namespace {

/// Merges {"min", "max", "multiple_of", "fixed"} at `key` into `range`.
void read_range(const detail::ObjectReader& root, std::string_view key, VariableRange& range) {
  if (!root.has(key)) return;
  const detail::ObjectReader r = root.object(key);
  r.reject_unknown_keys({"min", "max", "multiple_of", "fixed"});
  constexpr std::int64_t limit = max_dimension;
  if (r.has("fixed")) {
    if (r.has("min") || r.has("max") || r.has("multiple_of")) {
      r.fail("fixed", "give either \"fixed\" or \"min\"/\"max\"/\"multiple_of\", not both");
    }
    range = VariableRange::fixed(r.integer("fixed", 0, limit));
    return;
  }
  range.min = r.integer_or("min", range.min, 0, limit);
  range.max = r.integer_or("max", range.max, 0, limit);
  range.multiple_of = r.integer_or("multiple_of", range.multiple_of, 1, limit);
  if (range.max < range.min) {
    r.fail_here(fmt::format("empty range: min {} > max {}", range.min, range.max));
  }
  if (range.size() == 0) {
    r.fail_here(fmt::format("no multiple of {} lies in [{}, {}]", range.multiple_of, range.min, range.max));
  }
}

void read_cap(const detail::ObjectReader& caps, std::string_view key, std::optional<double>& cap) {
  if (caps.has(key)) cap = caps.number(key, 0.0, 10.0);
}

}  // namespace

MatchConstraints parse_constraints(std::string_view json_text, const std::string& source, MatchConstraints c) {
  const nlohmann::json document = detail::parse_json_text(json_text, source);
  const detail::ObjectReader root(document, source, "");
  root.reject_unknown_keys({"hidden_size", "num_experts", "expert_dim", "head_dim", "num_heads", "num_kv_heads",
                            "shared_expert_dim", "num_layers", "top_k", "kv_lora_rank", "query_equals_hidden",
                            "expert_parallel",
                            "max_deviation", "weights", "tolerance", "proportion_weights", "max_structures", "max_work"});
  read_range(root, "hidden_size", c.hidden_size);
  read_range(root, "num_experts", c.num_experts);
  read_range(root, "expert_dim", c.expert_dim);
  read_range(root, "head_dim", c.head_dim);
  read_range(root, "num_heads", c.num_heads);
  read_range(root, "num_kv_heads", c.num_kv_heads);
  read_range(root, "shared_expert_dim", c.shared_expert_dim);
  read_range(root, "num_layers", c.num_layers);
  read_range(root, "top_k", c.top_k);
  read_range(root, "kv_lora_rank", c.kv_lora_rank);
  c.query_equals_hidden = root.boolean_or("query_equals_hidden", c.query_equals_hidden);
  if (root.has("expert_parallel")) {
    // Experts are sharded evenly over an expert-parallel group: E must be a multiple of its size.
    const std::int64_t ep = root.integer("expert_parallel", 1, 1 << 20);
    if (c.num_experts.is_fixed()) {
      if (c.num_experts.min % ep != 0) {
        root.fail("expert_parallel", fmt::format("num_experts is fixed at {}, which {} does not divide",
                                                 c.num_experts.min, ep));
      }
    } else {
      c.num_experts.multiple_of = std::lcm(c.num_experts.multiple_of, ep);
      if (c.num_experts.size() == 0) {
        root.fail("expert_parallel", fmt::format("no multiple of {} lies in the num_experts range [{}, {}]",
                                                 c.num_experts.multiple_of, c.num_experts.min, c.num_experts.max));
      }
    }
  }
  if (root.has("max_deviation")) {
    const detail::ObjectReader caps = root.object("max_deviation");
    caps.reject_unknown_keys({"flops", "params", "kv"});
    read_cap(caps, "flops", c.max_flops_deviation);
    read_cap(caps, "params", c.max_params_deviation);
    read_cap(caps, "kv", c.max_kv_deviation);
  }
  if (root.has("weights")) {
    const detail::ObjectReader w = root.object("weights");
    w.reject_unknown_keys({"flops", "params", "kv"});
    c.weight_flops = w.number_or("flops", c.weight_flops, 0.0, 1e6);
    c.weight_params = w.number_or("params", c.weight_params, 0.0, 1e6);
    c.weight_kv = w.number_or("kv", c.weight_kv, 0.0, 1e6);
    if (c.weight_flops + c.weight_params + c.weight_kv <= 0) w.fail_here("at least one weight must be positive");
  }
  c.tolerance = root.number_or("tolerance", c.tolerance, 0.0, 0.5);
  // Work limits (docs/reliability.md): raise them for spaces larger than the defaults allow.
  c.max_structures = root.integer_or("max_structures", c.max_structures, 1, std::int64_t{1} << 40);
  c.max_work = root.integer_or("max_work", c.max_work, 1, std::int64_t{1} << 50);

  if (root.has("proportion_weights")) {
    const detail::ObjectReader p = root.object("proportion_weights");
    p.reject_unknown_keys({"expert_dim_to_hidden", "head_dim", "query_to_hidden", "shared_expert_dim_to_hidden"});
    auto& w = c.proportions;
    w.expert_dim_to_hidden = p.number_or("expert_dim_to_hidden", w.expert_dim_to_hidden, 0.0, 1e6);
    w.head_dim = p.number_or("head_dim", w.head_dim, 0.0, 1e6);
    w.query_to_hidden = p.number_or("query_to_hidden", w.query_to_hidden, 0.0, 1e6);
    w.shared_expert_dim_to_hidden = p.number_or("shared_expert_dim_to_hidden", w.shared_expert_dim_to_hidden, 0.0, 1e6);
  }
  return c;
}

MatchConstraints load_constraints(const std::string& path, MatchConstraints defaults) {
  return parse_constraints(detail::read_text_file(path), path, std::move(defaults));
}

}  // namespace budget
