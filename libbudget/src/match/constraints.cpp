// The matcher's constraints: the documented defaults, their validation (validation_error() and
// validate()) and constraints files (schema: docs/matching.md, "Constraints file"). The search
// variables are the rows of search_variables() (search_space.hpp).

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/match.hpp"
#include "base/json_reader.hpp"
#include "match/lattice.hpp"
#include "match/search_space.hpp"
#include "base/first_error.hpp"

namespace budget {

using match_detail::ceil_to_multiple;
using match_detail::search_variables;
using match_detail::SearchVariable;

MatchConstraints default_constraints(const ArchConfig& b) {
  MatchConstraints c;
  const std::int64_t H = b.hidden_size;
  c.hidden_size = {std::max<std::int64_t>(8, ceil_to_multiple(H / 4, 8)), 2 * H, 8};
  const std::int64_t hd = b.attention.head_dim;
  c.head_dim = {std::max<std::int64_t>(4, ceil_to_multiple(hd / 4, 4)), 2 * hd, 4};
  c.num_kv_heads = VariableRange::fixed(b.attention.num_kv_heads);
  c.num_heads = {1, 4 * b.attention.num_heads, 1};
  c.num_layers = VariableRange::fixed(b.num_layers);
  c.top_k = VariableRange::fixed(b.ffn.top_k);
  if (b.ffn.is_moe()) {
    c.num_experts = {b.ffn.top_k, 8 * b.ffn.num_experts, 8};
    c.expert_dim = {8, 4 * b.ffn.expert_dim, 8};
  } else {
    c.num_experts = VariableRange::fixed(0);
    c.expert_dim = {8, 4 * b.ffn.dense_dim, 8};
  }
  c.shared_expert_dim = b.ffn.num_shared_experts > 0 ? VariableRange{8, 4 * b.ffn.shared_expert_dim, 8}
                                                     : VariableRange::fixed(b.ffn.shared_expert_dim);
  c.query_equals_hidden = b.attention.query_width() == b.hidden_size;
  // MLA: the query latent, rotary, no-rope and value dims are held (head_dim = qk_nope + qk_rope);
  // the KV latent is searched, as head_dim and KV heads are for GQA, to match the KV cache.
  if (b.attention.mla) {
    c.head_dim = VariableRange::fixed(hd);
    const std::int64_t r = b.attention.mla->kv_lora_rank;
    c.kv_lora_rank = {std::max<std::int64_t>(16, ceil_to_multiple(r / 4, 16)), std::max<std::int64_t>(16, 2 * r), 16};
    // MLA baselines are large and free the query width (num_heads searched with hidden): coarser
    // lattices keep a default search of DeepSeek-V3 or Kimi-K2 to seconds.
    c.hidden_size = {std::max<std::int64_t>(64, ceil_to_multiple(H / 4, 64)), std::max<std::int64_t>(64, 2 * H), 64};
    const std::int64_t heads = b.attention.num_heads;
    const std::int64_t step = std::max<std::int64_t>(1, heads / 16);
    c.num_heads = {std::max(step, ceil_to_multiple(heads / 4, step)), 2 * heads, step};
    const std::int64_t width = b.ffn.is_moe() ? b.ffn.expert_dim : b.ffn.dense_dim;
    c.expert_dim = {64, std::max<std::int64_t>(64, 4 * width), 64};
    if (b.ffn.num_shared_experts > 0) c.shared_expert_dim = {64, std::max<std::int64_t>(64, 4 * b.ffn.shared_expert_dim), 64};
    c.query_equals_hidden = false;
  }
  c.tie_shared_expert_dim = b.ffn.is_moe() && b.ffn.num_shared_experts > 0 &&
                            b.ffn.shared_expert_dim == b.ffn.expert_dim && !b.ffn.shared_expert_gate;
  return c;
}

namespace {

/// The first problem of a range, as the error validate() throws (path: the JSON pointer).
std::optional<Error> range_error(const VariableRange& r, const SearchVariable& v) {
  if (r.multiple_of < 1) {
    return Error(fmt::format("multiple_of {} is out of range; allowed: an integer >= 1", r.multiple_of), "",
                 fmt::format("/{}/multiple_of", v.name));
  }
  if (r.min < v.min_allowed || r.max < r.min) {
    return Error(fmt::format("range [{}, {}] is empty or below {}; allowed: {} <= min <= max", r.min, r.max,
                             v.min_allowed, v.min_allowed),
                 "", fmt::format("/{}", v.name));
  }
  if (r.size() == 0) {
    return Error(fmt::format("range [{}, {}] holds no multiple of {}", r.min, r.max, r.multiple_of), "",
                 fmt::format("/{}", v.name));
  }
  return std::nullopt;
}

/// The first problem of `c`, as the error validate() throws; nullopt when valid.
std::optional<Error> constraints_error(const MatchConstraints& c) {
  for (const SearchVariable& v : search_variables()) {
    if (auto e = range_error(c.*v.range, v)) return e;
  }
  struct Weight {
    double value;
    const char* path;
  };
  for (const Weight& w : {Weight{c.weight_flops, "/weights/flops"}, Weight{c.weight_params, "/weights/params"},
                          Weight{c.weight_kv, "/weights/kv"}, Weight{c.weight_state, "/weights/state"}}) {
    if (!(w.value >= 0 && std::isfinite(w.value))) {
      return Error(fmt::format("weight {} must be a finite number >= 0", w.value), "", w.path);
    }
  }
  if (c.weight_flops + c.weight_params + c.weight_kv + c.weight_state <= 0) {
    return Error("at least one weight must be positive", "", "/weights");
  }
  for (const auto& [cap, path] : {std::pair{c.max_flops_deviation, "/max_deviation/flops"},
                                  std::pair{c.max_params_deviation, "/max_deviation/params"},
                                  std::pair{c.max_kv_deviation, "/max_deviation/kv"},
                                  std::pair{c.max_state_deviation, "/max_deviation/state"}}) {
    if (cap && !(*cap >= 0 && std::isfinite(*cap))) {
      return Error(fmt::format("cap {} is out of range; allowed: a finite number >= 0", *cap), "", path);
    }
  }
  if (!(c.tolerance >= 0 && c.tolerance < 1)) return Error(fmt::format("tolerance {} must be in [0, 1)", c.tolerance), "", "/tolerance");
  if (c.max_structures < 1) return Error(fmt::format("max_structures {} must be at least 1", c.max_structures), "", "/max_structures");
  if (c.max_work < 1) return Error(fmt::format("max_work {} must be at least 1", c.max_work), "", "/max_work");
  return std::nullopt;
}


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

std::string validation_error(const MatchConstraints& constraints) {
  return detail::message_of(constraints_error(constraints));
}

void validate(const MatchConstraints& constraints) { detail::throw_if_error(constraints_error(constraints)); }

MatchConstraints parse_constraints(std::string_view json_text, const std::string& source, MatchConstraints c) {
  const nlohmann::json document = detail::parse_json_text(json_text, source);
  const detail::ObjectReader root(document, source, "");
  // The range keys are the names of search_variables() (a unit test checks that each is read).
  root.reject_unknown_keys({"hidden_size", "num_experts", "expert_dim", "head_dim", "num_heads", "num_kv_heads",
                            "shared_expert_dim", "num_layers", "top_k", "kv_lora_rank", "query_equals_hidden",
                            "tie_shared_expert_dim", "count_lm_head", "expert_parallel",
                            "max_deviation", "weights", "tolerance", "proportion_weights", "max_structures", "max_work"});
  for (const SearchVariable& v : search_variables()) read_range(root, v.name, c.*v.range);
  c.query_equals_hidden = root.boolean_or("query_equals_hidden", c.query_equals_hidden);
  c.tie_shared_expert_dim = root.boolean_or("tie_shared_expert_dim", c.tie_shared_expert_dim);
  c.count_lm_head = root.boolean_or("count_lm_head", c.count_lm_head);
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
    caps.reject_unknown_keys({"flops", "params", "kv", "state"});
    read_cap(caps, "flops", c.max_flops_deviation);
    read_cap(caps, "params", c.max_params_deviation);
    read_cap(caps, "kv", c.max_kv_deviation);
    read_cap(caps, "state", c.max_state_deviation);  // the recurrent state (hybrid stacks)
  }
  if (root.has("weights")) {
    const detail::ObjectReader w = root.object("weights");
    w.reject_unknown_keys({"flops", "params", "kv", "state"});
    c.weight_flops = w.number_or("flops", c.weight_flops, 0.0, 1e6);
    c.weight_params = w.number_or("params", c.weight_params, 0.0, 1e6);
    c.weight_kv = w.number_or("kv", c.weight_kv, 0.0, 1e6);
    c.weight_state = w.number_or("state", c.weight_state, 0.0, 1e6);
    if (c.weight_flops + c.weight_params + c.weight_kv + c.weight_state <= 0) {
      w.fail_here("at least one weight must be positive");
    }
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
