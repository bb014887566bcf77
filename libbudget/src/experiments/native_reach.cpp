// Matching honesty under a kernel target (native_reach.hpp; docs/kernels.md).

#include "budget/native_reach.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget {

namespace {

bool is_native(const Candidate& c) { return !c.kernel_fit || c.kernel_fit->kind == KernelFitKind::native; }

bool has_kernel_rule(const MatchConstraints& c) {
  return c.shapes != ShapeSpace::free && (c.kernels || c.shapes == ShapeSpace::portable || !c.head_dim_set.empty());
}

/// The budgets whose |deviation| exceeds the tolerance, as phrases.
std::vector<std::string> missed_budgets(const Deviation& d) {
  std::vector<std::string> out;
  for (const auto& [name, value] : {std::pair{"flops", d.flops}, std::pair{"params", d.params}, std::pair{"kv", d.kv}}) {
    if (std::fabs(value) > native_match_tolerance) {
      out.push_back(fmt::format("{}: {:+.2f}% at best with native shapes (the tolerance is {:.1f}%)", name,
                                100.0 * value, 100.0 * native_match_tolerance));
    }
  }
  return out;
}

double time_ratio(const TimeModel* model, const ArchConfig& config, const ArchConfig& baseline, const Workload& w) {
  if (model == nullptr) return 0.0;
  return predict_step_seconds(*model, config, w) / predict_step_seconds(*model, baseline, w);
}

/// The best match of a space (the native one at a loop span, or the trainable one): nullopt when
/// infeasible or over the search limits.
std::optional<Candidate> native_match(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                                      const MatchConstraints& native) {
  try {
    MatchResult r = match(baseline, loop, workload, native, 1);
    if (!r.summary.feasible || r.candidates.empty()) return std::nullopt;
    return r.candidates.front();
  } catch (const Error&) {
    return std::nullopt;
  }
}

/// The centred loop of `span` layers of an L-layer stack, at the request's repeats.
LoopSpec centred_loop(const LoopSpec& loop, std::int64_t L, std::int64_t span) {
  LoopSpec spec = loop;
  spec.first = (L - span) / 2 + 1;
  spec.last = spec.first + span - 1;
  return spec;
}

/// Whether some native attention shape of the space (GQA: a head dim of head_dim_set and a KV
/// head count; MLA: a KV latent of the kv_lora_rank range) gives the KV cache per token within
/// `slack` of the baseline's under `spec` (ArchConfig::kv_elements_per_token(), as the search's
/// KV structures count it).
bool native_kv_within(const ArchConfig& baseline, const LoopSpec& spec, const MatchConstraints& native, double slack) {
  const double kv_b = static_cast<double>(baseline.kv_elements_per_token());
  ArchConfig shape = baseline;
  shape.loop = spec.for_baseline(baseline).resolve(baseline.num_layers);
  const auto within = [&] { return std::fabs(static_cast<double>(shape.kv_elements_per_token()) / kv_b - 1.0) <= slack; };
  if (shape.attention.mla) {
    for (const std::int64_t latent : native.kv_lora_rank.values()) {
      shape.attention.mla->kv_lora_rank = latent;
      if (within()) return true;
    }
    return false;
  }
  for (const std::int64_t hd : native.head_dim_set) {
    for (const std::int64_t kvh : native.num_kv_heads.values()) {
      shape.attention.head_dim = hd;
      shape.attention.num_kv_heads = kvh;
      if (within()) return true;
    }
  }
  return false;
}

/// Centred spans whose KV cache a native attention shape can match (GQA: the KV steps of
/// head_dim·KV heads·executed layers), nearest the request's first, searched until one gives a
/// native match within the tolerance (at most `tries` searches): "--loop FIRST-LAST".
void suggest_loop(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                  const MatchConstraints& native, NativeReach& out) {
  const std::int64_t L = baseline.num_layers;
  const std::optional<LoopConfig> current = loop.for_baseline(baseline).resolve(L);
  if (!current || L < 2 || (!baseline.attention.mla && native.head_dim_set.empty())) return;
  const std::int64_t span = current->last - current->first + 1;
  constexpr int tries = 3;
  int searched = 0;
  for (std::int64_t step = 1; step < L && searched < tries; ++step) {
    for (const std::int64_t s : {span - step, span + step}) {
      if (s < 1 || s > L || searched >= tries) continue;
      const LoopSpec spec = centred_loop(loop, L, s);
      if (!native_kv_within(baseline, spec, native, 0.5 * native_match_tolerance)) continue;
      ++searched;
      const std::optional<Candidate> c = native_match(baseline, spec, workload, native);
      if (c && c->deviation.max_abs() <= native_match_tolerance) {
        out.suggested_loop = fmt::format("--loop {}-{}", spec.first, spec.last);
        out.suggested_loop_max_deviation = c->deviation.max_abs();
        return;
      }
    }
  }
}

}  // namespace

MatchConstraints native_only(const MatchConstraints& constraints) {
  MatchConstraints c = constraints;
  if (!c.kernels || c.head_dim.max == 0) return c;
  c.head_dim_set.clear();
  for (const std::int64_t hd : c.head_dim.values()) {
    if (attention_fit_brief(*c.kernels, hd, hd).kind == KernelFitKind::native) c.head_dim_set.push_back(hd);
  }
  return c;
}

std::optional<NativeReach> native_reach(const ArchConfig& baseline, const LoopSpec& loop, const Workload& workload,
                                        const MatchConstraints& constraints, const MatchResult& result,
                                        const TimeModel* model, const MatchConstraints* trainable) {
  if (!has_kernel_rule(constraints) || !result.summary.feasible || result.candidates.empty()) return std::nullopt;
  const Candidate& first = result.candidates.front();
  if (is_native(first) && first.deviation.max_abs() <= native_match_tolerance) return std::nullopt;
  NativeReach out;
  const MatchConstraints native = native_only(constraints);
  if (is_native(first)) {
    out.best_native = first;
  } else {
    out.best_padded = first;
    if (!baseline.attention.mla && native.head_dim_set.empty()) {
      out.note = "the head_dim range holds no head dim the target runs natively";
    } else {
      out.best_native = native_match(baseline, loop, workload, native);
    }
  }
  if (out.best_native) {
    out.unreachable = missed_budgets(out.best_native->deviation);
    out.best_native_time_ratio = time_ratio(model, out.best_native->config, baseline, workload);
  }
  if (out.best_padded) out.best_padded_time_ratio = time_ratio(model, out.best_padded->config, baseline, workload);
  // The portable set (no target) missing a budget: what the trainable shapes reach, side by side.
  if (!constraints.kernels && constraints.shapes == ShapeSpace::portable && trainable != nullptr &&
      !out.unreachable.empty()) {
    out.best_off_portable = native_match(baseline, loop, workload, *trainable);
    if (out.best_off_portable) {
      out.best_off_portable_time_ratio = time_ratio(model, out.best_off_portable->config, baseline, workload);
    }
  }
  if (!out.unreachable.empty() || !out.best_native) suggest_loop(baseline, loop, workload, native, out);
  if (out.note.empty() && out.best_native && out.unreachable.empty()) {
    out.note = fmt::format("the best native shape is within the tolerance ({:.1f}%); row #1 is padded because it "
                           "matches tighter than every native shape (the equally matched set)",
                           100.0 * native_match_tolerance);
  }
  if (out.note.empty()) {
    out.note = out.suggested_loop.empty()
                   ? "no centred loop span (at the request's repeats) whose KV cache a native shape can match gives "
                     "a native match within the tolerance"
                   : fmt::format("{} gives a native match of largest deviation {:.2f}% (a suggestion: the request's "
                                 "loop is kept)",
                                 out.suggested_loop, 100.0 * out.suggested_loop_max_deviation);
  }
  return out;
}

}  // namespace budget
