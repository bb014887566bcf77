#include "budget/profiler/op_case.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::profiler {
namespace {

void require_positive(std::int64_t value, const char* name, ProfileOp op) {
  if (value <= 0) throw Error(fmt::format("{} must be positive for op {} (got {})", name, to_string(op), value));
}

void require_pass(const std::string& pass, std::initializer_list<const char*> allowed, ProfileOp op) {
  for (const char* a : allowed)
    if (pass == a) return;
  std::string list;
  for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  throw Error(fmt::format("unknown pass '{}' for op {} (allowed: {})", pass, to_string(op), list));
}

double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

std::int64_t OpCase::at(const std::string& field) const {
  const auto it = shape.find(field);
  if (it == shape.end()) throw Error(fmt::format("op case {} has no shape field '{}'", to_string(op), field));
  return it->second;
}

std::string OpCase::label() const {
  std::string s = std::string(to_string(op)) + " " + pass;
  std::string fields;
  for (const auto& [k, v] : shape) fields += fmt::format("{}{}={}", fields.empty() ? "" : ",", k, v);
  s += " " + fields;
  if (!matrix.empty()) s += " " + matrix;
  if (!routing.empty() && routing != "balanced") s += " " + routing;
  return s;
}

OpCase gemm_case(std::int64_t M, std::int64_t K, std::int64_t N, const std::string& pass) {
  require_positive(M, "M", ProfileOp::gemm);
  require_positive(K, "K", ProfileOp::gemm);
  require_positive(N, "N", ProfileOp::gemm);
  require_pass(pass, {"forward", "input_grad", "weight_grad"}, ProfileOp::gemm);
  OpCase c{ProfileOp::gemm, pass, {{"M", M}, {"K", K}, {"N", N}}, {}, {}, 0, 0};
  c.flops = 2.0 * d(M) * d(K) * d(N);
  c.bytes = 2.0 * (d(M) * d(K) + d(N) * d(K) + d(M) * d(N));
  return c;
}

std::vector<std::int64_t> expert_rows(std::int64_t experts, std::int64_t tokens_per_expert, const std::string& routing) {
  require_positive(experts, "E", ProfileOp::expert_gemms);
  require_positive(tokens_per_expert, "tokens_per_expert", ProfileOp::expert_gemms);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(experts), tokens_per_expert);
  if (routing == "balanced" || routing.empty()) return rows;
  if (routing != "skewed") throw Error(fmt::format("unknown routing '{}' (allowed: balanced, skewed)", routing));
  // share_e = (1/(e+1)) / H_E, H_E = Σ_{e<E} 1/(e+1); rows_e = max(1, floor(total·share_e)),
  // the remainder added to expert 0 so that Σ rows_e = total exactly.
  const std::int64_t total = experts * tokens_per_expert;
  double harmonic = 0.0;
  for (std::int64_t e = 0; e < experts; ++e) harmonic += 1.0 / d(e + 1);
  std::int64_t assigned = 0;
  for (std::int64_t e = 0; e < experts; ++e) {
    const auto r = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(d(total) / (d(e + 1) * harmonic))));
    rows[static_cast<std::size_t>(e)] = r;
    assigned += r;
  }
  rows[0] += total - assigned;
  if (rows[0] < 1) throw Error(fmt::format("skewed routing cannot place {} rows on {} experts", total, experts));
  return rows;
}

OpCase expert_gemm_case(std::int64_t experts, std::int64_t tokens_per_expert, std::int64_t hidden,
                        std::int64_t expert_dim, std::int64_t top_k, const std::string& matrix,
                        const std::string& pass, const std::string& routing) {
  require_positive(hidden, "H", ProfileOp::expert_gemms);
  require_positive(expert_dim, "expert_dim", ProfileOp::expert_gemms);
  require_positive(top_k, "top_k", ProfileOp::expert_gemms);
  require_pass(pass, {"forward", "input_grad", "weight_grad"}, ProfileOp::expert_gemms);
  std::int64_t in = 0, out = 0;
  if (matrix == "up_gate") {
    in = hidden, out = 2 * expert_dim;
  } else if (matrix == "up") {
    in = hidden, out = expert_dim;
  } else if (matrix == "down") {
    in = expert_dim, out = hidden;
  } else {
    throw Error(fmt::format("unknown expert matrix '{}' (allowed: up_gate, up, down)", matrix));
  }
  const std::vector<std::int64_t> rows = expert_rows(experts, tokens_per_expert, routing);
  const std::int64_t total_rows = experts * tokens_per_expert;
  // tokens: the step's tokens whose top_k routed copies fill the groups: E·tpe/top_k (rounded up).
  const std::int64_t tokens = (total_rows + top_k - 1) / top_k;
  OpCase c{ProfileOp::expert_gemms,
           pass,
           {{"E", experts}, {"tokens_per_expert", tokens_per_expert}, {"H", hidden}, {"expert_dim", expert_dim},
            {"top_k", top_k}, {"tokens", tokens}},
           matrix,
           routing.empty() ? "balanced" : routing,
           0,
           0};
  c.flops = 2.0 * d(total_rows) * d(in) * d(out);
  c.bytes = 2.0 * (d(total_rows) * d(in) + d(experts) * d(in) * d(out) + d(total_rows) * d(out));
  return c;
}

OpCase attention_case(std::int64_t docs, std::int64_t doc_len, std::int64_t num_heads, std::int64_t num_kv_heads,
                      std::int64_t head_dim, const std::string& pass) {
  require_positive(docs, "docs", ProfileOp::attention);
  require_positive(doc_len, "doc_len", ProfileOp::attention);
  require_positive(num_heads, "num_heads", ProfileOp::attention);
  require_positive(num_kv_heads, "num_kv_heads", ProfileOp::attention);
  require_positive(head_dim, "head_dim", ProfileOp::attention);
  require_pass(pass, {"forward", "backward"}, ProfileOp::attention);
  if (num_heads % num_kv_heads != 0)
    throw Error(fmt::format("attention: num_heads {} is not a multiple of num_kv_heads {}", num_heads, num_kv_heads));
  const std::int64_t tokens = docs * doc_len;
  OpCase c{ProfileOp::attention,
           pass,
           {{"docs", docs}, {"doc_len", doc_len}, {"tokens", tokens}, {"num_heads", num_heads},
            {"num_kv_heads", num_kv_heads}, {"head_dim", head_dim}},
           {},
           {},
           0,
           0};
  const double mean_keys = (d(doc_len) + 1.0) / 2.0;  // exact causal mean: Σ_{i=1..n} i / n
  const double forward = 4.0 * d(num_heads) * d(head_dim) * mean_keys * d(tokens);
  const double q_bytes = 2.0 * d(tokens) * d(num_heads) * d(head_dim);
  const double kv_bytes = 2.0 * d(tokens) * d(num_kv_heads) * d(head_dim);
  const double stats_bytes = 4.0 * d(tokens) * d(num_heads);  // fp32 log-sum-exp per query and head
  if (pass == "forward") {
    c.flops = forward;
    c.bytes = 2.0 * q_bytes + 2.0 * kv_bytes + stats_bytes;  // read Q, K, V; write O, stats
  } else {
    c.flops = 2.5 * forward;
    // read Q, K, V, O, dO, stats; write dQ, dK, dV
    c.bytes = 4.0 * q_bytes + 4.0 * kv_bytes + stats_bytes;
  }
  return c;
}

OpCase rms_norm_case(std::int64_t tokens, std::int64_t hidden, const std::string& pass) {
  require_positive(tokens, "tokens", ProfileOp::rms_norm);
  require_positive(hidden, "H", ProfileOp::rms_norm);
  require_pass(pass, {"forward", "backward"}, ProfileOp::rms_norm);
  OpCase c{ProfileOp::rms_norm, pass, {{"tokens", tokens}, {"H", hidden}}, {}, {}, 0, 0};
  const double x = 2.0 * d(tokens) * d(hidden);
  // forward: read x, weight; write y and the fp32 reciprocal rms per token.
  // backward: read x, dy, weight, rstd; write dx and dweight (fp32).
  c.bytes = pass == "forward" ? 2.0 * x + 2.0 * d(hidden) + 4.0 * d(tokens)
                              : 3.0 * x + 2.0 * d(hidden) + 4.0 * d(tokens) + 4.0 * d(hidden);
  return c;
}

OpCase swiglu_case(std::int64_t rows, std::int64_t expert_dim, const std::string& pass) {
  require_positive(rows, "rows", ProfileOp::swiglu);
  require_positive(expert_dim, "expert_dim", ProfileOp::swiglu);
  require_pass(pass, {"forward", "backward"}, ProfileOp::swiglu);
  OpCase c{ProfileOp::swiglu, pass, {{"rows", rows}, {"expert_dim", expert_dim}}, {}, {}, 0, 0};
  const double a = 2.0 * d(rows) * d(expert_dim);  // one bf16 rows × expert_dim matrix
  // forward: read gate and up, write silu(gate)·up. backward: read gate, up, dy; write dgate, dup.
  c.bytes = pass == "forward" ? 3.0 * a : 5.0 * a;
  return c;
}

OpCase router_case(std::int64_t tokens, std::int64_t experts, std::int64_t top_k, const std::string& pass) {
  require_positive(tokens, "tokens", ProfileOp::router_softmax_topk);
  require_positive(experts, "E", ProfileOp::router_softmax_topk);
  require_positive(top_k, "top_k", ProfileOp::router_softmax_topk);
  require_pass(pass, {"forward", "backward"}, ProfileOp::router_softmax_topk);
  if (top_k > experts) throw Error(fmt::format("router_softmax_topk: top_k {} exceeds E {}", top_k, experts));
  OpCase c{ProfileOp::router_softmax_topk, pass, {{"tokens", tokens}, {"E", experts}, {"top_k", top_k}}, {}, {}, 0, 0};
  const double logits = 4.0 * d(tokens) * d(experts);  // fp32 router logits
  const double picks = 4.0 * d(tokens) * d(top_k);     // fp32 weights or int32 indices
  // forward: read logits; write top-k weights and indices. backward: read logits (softmax
  // recomputed), indices and d(weights); write d(logits).
  c.bytes = pass == "forward" ? logits + 2.0 * picks : 2.0 * logits + 2.0 * picks;
  return c;
}

namespace {

/// The case of the routed-row op `op` (dispatch_gather, combine_scatter_add) over `rows` rows of
/// width `hidden`, its arguments checked: rows a multiple of combine_top_k, forward or backward.
OpCase routed_rows_case(ProfileOp op, std::int64_t rows, std::int64_t hidden, const std::string& pass) {
  require_positive(rows, "rows", op);
  require_positive(hidden, "H", op);
  require_pass(pass, {"forward", "backward"}, op);
  if (rows % combine_top_k != 0)
    throw Error(fmt::format("{}: rows {} is not a multiple of {}", to_string(op), rows, combine_top_k));
  return OpCase{op, pass, {{"rows", rows}, {"H", hidden}}, {}, {}, 0, 0};
}

}  // namespace

OpCase gather_case(std::int64_t rows, std::int64_t hidden, const std::string& pass) {
  OpCase c = routed_rows_case(ProfileOp::dispatch_gather, rows, hidden, pass);
  // forward: rows[r] = x[src[r]]: read one bf16 row and write one per routed row, plus the int32
  // index. backward: dx[t] = Σ_j drows[perm[t,j]] over the combine_top_k rows of token t (a
  // gather-reduce, no atomics): read the rows and indices, write rows/combine_top_k token rows.
  const double row = 2.0 * d(rows) * d(hidden);
  c.bytes = pass == "forward" ? 2.0 * row + 4.0 * d(rows) : row + 4.0 * d(rows) + row / d(combine_top_k);
  return c;
}

OpCase scatter_add_case(std::int64_t rows, std::int64_t hidden, const std::string& pass) {
  OpCase c = routed_rows_case(ProfileOp::combine_scatter_add, rows, hidden, pass);
  // forward: out[t] = Σ_j w[t,j]·rows[perm[t,j]] over the combine_top_k rows of token t: read the
  // rows (bf16), weights (fp32) and indices (int32); write rows/combine_top_k bf16 token rows.
  // backward: drows[perm[t,j]] = w[t,j]·dout[t]: read each dout row once (fewest bytes), the
  // weights and indices; write the rows. (The weights' gradient is not part of this op.)
  const double row = 2.0 * d(rows) * d(hidden);
  const double tokens_rows = row / d(combine_top_k);
  c.bytes = row + 8.0 * d(rows) + tokens_rows;
  return c;
}

}  // namespace budget::profiler
