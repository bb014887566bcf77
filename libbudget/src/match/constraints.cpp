// The matcher's constraints: the documented defaults, their validation (validation_error() and
// validate()) and constraints files (schema: docs/matching.md, "Constraints file"). The search
// variables are the rows of search_variables() (search_space.hpp).

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "budget/error.hpp"
#include "budget/match.hpp"
#include "base/json_reader.hpp"
#include "match/lattice.hpp"
#include "match/match_names.hpp"
#include "match/search_space.hpp"
#include "base/first_error.hpp"

namespace budget {

using match_detail::ceil_to_multiple;
using match_detail::search_variables;
using match_detail::SearchVariable;

std::int64_t expert_parallel_multiple(const ArchConfig& b) {
  if (!b.ffn.is_moe() || b.ffn.num_experts < 1) return 0;
  const std::int64_t E = b.ffn.num_experts;
  // Every EP degree at which each rank holds at least 4 of the baseline's experts, up to 64.
  const std::int64_t limit = std::min<std::int64_t>(64, std::max<std::int64_t>(1, E / 4));
  std::int64_t p = 1;
  while (2 * p <= limit && E % (2 * p) == 0) p *= 2;
  return p;
}

namespace {
MatchConstraints lattice_defaults(const ArchConfig& b, ShapeSpace shapes) {
  MatchConstraints c;
  c.shapes = shapes;
  const bool trainable = shapes == ShapeSpace::trainable;
  const std::int64_t H = b.hidden_size;
  c.hidden_size = {std::max<std::int64_t>(8, ceil_to_multiple(H / 4, 8)), 2 * H, 8};
  const std::int64_t hd = b.attention.head_dim;
  c.head_dim = {std::max<std::int64_t>(4, ceil_to_multiple(hd / 4, 4)), 2 * hd, 4};
  if (trainable) {
    // The fused kernels' head dims (kernel_shapes.hpp): multiples of 8, at most 256.
    const std::int64_t low = std::min<std::int64_t>(max_fused_head_dim, std::max<std::int64_t>(8, ceil_to_multiple(hd / 4, 8)));
    c.head_dim = {low, std::max(low, std::min<std::int64_t>(max_fused_head_dim, 2 * hd)), 8};
  }
  c.num_kv_heads = VariableRange::fixed(b.attention.num_kv_heads);
  const std::int64_t kvh = b.attention.num_kv_heads;
  // Trainable: the baseline's KV heads or half as many (a loop adds KV per token, so fewer KV
  // heads give it back: SMELT's "GQA ratio that gives KV back"); tensor parallelism up to kvh/2
  // stays possible.
  if (trainable && kvh >= 2 && kvh % 2 == 0) c.num_kv_heads = {kvh / 2, kvh, kvh / 2};
  c.num_heads = {1, 4 * b.attention.num_heads, 1};
  c.num_layers = VariableRange::fixed(b.num_layers);
  c.top_k = VariableRange::fixed(b.ffn.top_k);
  if (b.ffn.is_moe()) {
    // Trainable: every expert-parallel degree of the baseline (a power of two dividing E, up to
    // 64) divides the candidate's count; never coarser than the free lattice's 8 when E allows it.
    const std::int64_t step = trainable ? std::max<std::int64_t>(expert_parallel_multiple(b), 1) : 8;
    c.num_experts = {b.ffn.top_k, std::max(8 * b.ffn.num_experts, ceil_to_multiple(b.ffn.top_k, step)), step};
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
  if (trainable) c.proportion_factor = default_proportion_factor;
  return c;
}

/// `range` on multiples of lcm(its multiple, m) when searched and when that leaves a value.
void align_searched(VariableRange& range, std::int64_t m) {
  if (range.is_fixed() || range.max == 0) return;
  VariableRange aligned = range;
  aligned.multiple_of = std::lcm(range.multiple_of, m);
  if (aligned.size() > 0) range = aligned;
}

/// The trainable space's kernel rules (issue 43): GEMM widths multiples of the target's (or the
/// portable) multiple; without a target, GQA head dims from the portable set.
void apply_kernel_shapes(MatchConstraints& c, const ArchConfig& b, const std::optional<KernelTarget>& kernels) {
  c.gemm_width_multiple = kernels ? width_multiple(kernels->precision) : portable_width_multiple(b);
  align_searched(c.hidden_size, c.gemm_width_multiple);
  align_searched(c.expert_dim, c.gemm_width_multiple);
  align_searched(c.shared_expert_dim, c.gemm_width_multiple);
  align_searched(c.kv_lora_rank, c.gemm_width_multiple);
  if (kernels || b.attention.mla) return;
  for (const std::int64_t hd : portable_head_dims()) {
    if (hd >= c.head_dim.min && hd <= c.head_dim.max) c.head_dim_set.push_back(hd);
  }
}
}  // namespace

std::vector<std::int64_t> portable_head_dims() { return {64, 128, 256}; }

std::int64_t portable_width_multiple(const ArchConfig& b) {
  const std::int64_t width = b.ffn.is_moe() ? b.ffn.expert_dim : b.ffn.dense_dim;
  return b.hidden_size % 128 == 0 && width % 128 == 0 ? 128 : 32;
}

MatchConstraints default_constraints(const ArchConfig& b, ShapeSpace shapes) {
  return default_constraints(b, shapes, std::nullopt);
}

MatchConstraints default_constraints(const ArchConfig& b, ShapeSpace shapes, const std::optional<KernelTarget>& kernels) {
  const bool free = shapes == ShapeSpace::free;
  MatchConstraints c = lattice_defaults(b, free ? ShapeSpace::free : ShapeSpace::trainable);
  if (!free && (kernels || shapes == ShapeSpace::portable)) apply_kernel_shapes(c, b, kernels);
  c.shapes = free ? ShapeSpace::free : kernels ? ShapeSpace::trainable : shapes;
  c.kernels = kernels;
  return c;
}

namespace {
std::string range_text(const VariableRange& r) {
  if (r.is_fixed()) return fmt::format("fixed at {}", r.min);
  return r.multiple_of > 1 ? fmt::format("multiples of {} in [{}, {}]", r.multiple_of, r.min, r.max)
                           : fmt::format("[{}, {}]", r.min, r.max);
}
}  // namespace

namespace {
/// The kernel rule of a trainable space: the target's, or the portable set's.
std::string kernel_rule_text(const MatchConstraints& c) {
  const std::string widths = c.gemm_width_multiple > 1
                                 ? fmt::format("GEMM widths multiples of {}", c.gemm_width_multiple)
                                 : std::string("any GEMM widths");
  if (c.kernels) {
    return fmt::format("kernels of {}: head dims the target runs natively or padded (never refused), {}",
                       describe(*c.kernels), widths);
  }
  const std::string heads = c.head_dim_set.empty() ? std::string("the baseline's head dims")
                                                   : fmt::format("head dims {}", fmt::join(c.head_dim_set, ", "));
  return fmt::format("the portable set (no --gpu: shapes native on Hopper and Blackwell in BF16 and FP8): {}, {}",
                     heads, widths);
}
}  // namespace

std::string describe_search_space(const MatchConstraints& c) {
  const std::string factor =
      c.proportion_factor ? fmt::format("query and expert widths within {:g}× of the baseline's proportions to hidden",
                                        *c.proportion_factor)
                          : std::string("any proportions");
  const std::string experts = c.num_experts.is_fixed() && c.num_experts.min == 0
                                  ? std::string()
                                  : fmt::format(", experts {}", range_text(c.num_experts));
  if (c.shapes == ShapeSpace::portable || (c.shapes == ShapeSpace::trainable && c.kernels)) {
    return fmt::format("search space: trainable shapes (the default): {}; head_dim {}{}, {}; --free-shapes "
                       "(constraints key \"free_shapes\") searches the whole lattice",
                       kernel_rule_text(c), range_text(c.head_dim), experts, factor);
  }
  if (c.shapes == ShapeSpace::trainable) {
    return fmt::format("search space: every trainable shape (not only the portable set): head_dim {}{}, {}; "
                       "--free-shapes (constraints key \"free_shapes\") searches the whole lattice",
                       range_text(c.head_dim), experts, factor);
  }
  return fmt::format("search space: the whole lattice (--free-shapes): head_dim {}{}, {}; shapes may be off the fused "
                     "kernels and off the baseline's expert-parallel degrees",
                     range_text(c.head_dim), experts, factor);
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
  if (c.proportion_factor && !(*c.proportion_factor >= 1 && std::isfinite(*c.proportion_factor))) {
    return Error(fmt::format("proportion factor {} is out of range; allowed: a finite number >= 1", *c.proportion_factor),
                 "", "/proportion_factor");
  }
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

namespace {
/// The keys of a constraints file applied over `c` (free_shapes checked by the callers).
MatchConstraints apply_constraints_file(const detail::ObjectReader& root, MatchConstraints c) {
  // The range keys are the names of search_variables() (a unit test checks that each is read).
  root.reject_unknown_keys({"hidden_size", "num_experts", "expert_dim", "head_dim", "num_heads", "num_kv_heads",
                            "shared_expert_dim", "num_layers", "top_k", "kv_lora_rank", "query_equals_hidden",
                            "tie_shared_expert_dim", "count_lm_head", "expert_parallel",
                            "max_deviation", "weights", "tolerance", "proportion_weights", "max_structures", "max_work",
                            "free_shapes", "proportion_factor", "order"});
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
    p.reject_unknown_keys(
        {"expert_dim_to_hidden", "head_dim", "query_to_hidden", "shared_expert_dim_to_hidden", "kernel_head_dim"});
    auto& w = c.proportions;
    w.expert_dim_to_hidden = p.number_or("expert_dim_to_hidden", w.expert_dim_to_hidden, 0.0, 1e6);
    w.head_dim = p.number_or("head_dim", w.head_dim, 0.0, 1e6);
    w.query_to_hidden = p.number_or("query_to_hidden", w.query_to_hidden, 0.0, 1e6);
    w.shared_expert_dim_to_hidden = p.number_or("shared_expert_dim_to_hidden", w.shared_expert_dim_to_hidden, 0.0, 1e6);
    w.kernel_head_dim = p.number_or("kernel_head_dim", w.kernel_head_dim, 0.0, 1e6);
  }
  if (root.has("proportion_factor")) c.proportion_factor = root.number("proportion_factor", 1.0, 1e6);
  c.order = root.enum_or("order", c.order, match_detail::match_order_names);
  return c;
}

/// "free_shapes" of a constraints file: the defaults it asks for (absent: `given`).
ShapeSpace file_shapes(const detail::ObjectReader& root, ShapeSpace given) {
  if (!root.has("free_shapes")) return given;
  if (root.boolean_or("free_shapes", false)) return ShapeSpace::free;
  return given == ShapeSpace::free ? ShapeSpace::trainable : given;
}
}  // namespace

MatchConstraints parse_constraints(std::string_view json_text, const std::string& source, MatchConstraints c) {
  const nlohmann::json document = detail::parse_json_text(json_text, source);
  const detail::ObjectReader root(document, source, "");
  if (file_shapes(root, c.shapes) != c.shapes) {
    root.fail("free_shapes", fmt::format("the defaults given are the {} ones; free_shapes picks the defaults of a "
                                         "baseline, so read this file over the baseline (parse_constraints(text, source, "
                                         "baseline))",
                                         to_string(c.shapes)));
  }
  return apply_constraints_file(root, std::move(c));
}

MatchConstraints parse_constraints(std::string_view json_text, const std::string& source, const ArchConfig& baseline,
                                   ShapeSpace shapes, const std::optional<KernelTarget>& kernels) {
  const nlohmann::json document = detail::parse_json_text(json_text, source);
  const detail::ObjectReader root(document, source, "");
  // --free-shapes wins over "free_shapes": false (either one opens the lattice).
  const ShapeSpace chosen = shapes == ShapeSpace::free ? shapes : file_shapes(root, shapes);
  return apply_constraints_file(root, default_constraints(baseline, chosen, kernels));
}

MatchConstraints load_constraints(const std::string& path, const ArchConfig& baseline, ShapeSpace shapes,
                                  const std::optional<KernelTarget>& kernels) {
  return parse_constraints(detail::read_text_file(path), path, baseline, shapes, kernels);
}


MatchConstraints load_constraints(const std::string& path, MatchConstraints defaults) {
  return parse_constraints(detail::read_text_file(path), path, std::move(defaults));
}

}  // namespace budget
