#include "budget/plan.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "base/checked_math.hpp"
#include "base/json_reader.hpp"

namespace budget {

Recipe paper_recipe() { return Recipe{}; }

void validate(const Recipe& r, const std::string& source) {
  const auto fail = [&](const char* path, const std::string& message) { throw Error(message, source, path); };
  if (r.sequences_per_step < 1) fail("/sequences_per_step", fmt::format("value {} must be at least 1", r.sequences_per_step));
  if (r.seq_len < 1) fail("/seq_len", fmt::format("value {} must be at least 1", r.seq_len));
  if (r.stable_steps < 1) fail("/stable_steps", fmt::format("value {} must be at least 1", r.stable_steps));
  // Token counts are int64: sequences_per_step · seq_len and stable_steps · tokens_per_step must fit.
  try {
    (void)detail::checked_mul(r.stable_steps,
                              detail::checked_mul(r.sequences_per_step, r.seq_len, "tokens_per_step (sequences_per_step x seq_len)"),
                              "stable-phase tokens (stable_steps x tokens_per_step)");
  } catch (const Error& e) {
    fail("/stable_steps", e.message());
  }
  if (!(r.decay_tokens >= 0)) fail("/decay_tokens", fmt::format("value {} must be >= 0", r.decay_tokens));
  if (r.branch_steps.empty()) fail("/branch_steps", "at least one branch step is needed");
  for (std::size_t i = 0; i < r.branch_steps.size(); ++i) {
    const std::int64_t step = r.branch_steps[i];
    if (step < 1 || step > r.stable_steps) {
      fail("/branch_steps", fmt::format("branch step {} (item {}) is outside [1, stable_steps = {}]", step, i, r.stable_steps));
    }
    if (i > 0 && step <= r.branch_steps[i - 1]) {
      fail("/branch_steps", fmt::format("branch steps must increase: {} follows {}", step, r.branch_steps[i - 1]));
    }
  }
}

Recipe parse_recipe(std::string_view json_text, const std::string& source) {
  const nlohmann::json document = detail::parse_json_text(json_text, source);
  const detail::ObjectReader root(document, source, "");
  root.reject_unknown_keys({"sequences_per_step", "seq_len", "stable_steps", "branch_steps", "decay_tokens"});
  Recipe r = paper_recipe();
  r.sequences_per_step = root.integer_or("sequences_per_step", r.sequences_per_step, 1, 1 << 30);
  r.seq_len = root.integer_or("seq_len", r.seq_len, 1, 1 << 30);
  r.stable_steps = root.integer_or("stable_steps", r.stable_steps, 1, std::int64_t{1} << 40);
  r.decay_tokens = root.number_or("decay_tokens", r.decay_tokens, 0.0, 1e18);
  if (root.has("branch_steps")) {
    const nlohmann::json& steps = root.raw("branch_steps");
    if (!steps.is_array()) root.fail("branch_steps", "expected an array of increasing step numbers");
    r.branch_steps.clear();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (!steps[i].is_number_integer()) {
        throw Error(fmt::format("value {} is not an integer step", detail::describe_value(steps[i])), source,
                    fmt::format("/branch_steps/{}", i));
      }
      r.branch_steps.push_back(steps[i].get<std::int64_t>());
    }
  }
  validate(r, source);
  return r;
}

Recipe load_recipe(const std::string& path) { return parse_recipe(detail::read_text_file(path), path); }

Plan plan_runs(const std::vector<PlannedRun>& runs, const Recipe& recipe) {
  validate(recipe);
  Plan plan;
  plan.min_endpoint_compute = std::numeric_limits<double>::infinity();
  plan.max_endpoint_compute = 0;
  const double tokens_per_step = static_cast<double>(recipe.tokens_per_step());
  const double branches = static_cast<double>(recipe.branch_steps.size());
  const double run_tokens = static_cast<double>(recipe.stable_steps) * tokens_per_step + branches * recipe.decay_tokens;
  for (const PlannedRun& run : runs) {
    if (!(run.flops_per_token > 0)) {
      throw Error(fmt::format("FLOPs per token {} must be positive", run.flops_per_token), run.cell + "/" + run.arch);
    }
    for (std::int64_t step : recipe.branch_steps) {
      PlanEndpoint e{run.cell, run.arch, step, 0, run.flops_per_token, run.sparsity, 0};
      e.tokens = static_cast<double>(step) * tokens_per_step + recipe.decay_tokens;
      e.compute = run.flops_per_token * e.tokens;
      plan.min_endpoint_compute = std::min(plan.min_endpoint_compute, e.compute);
      plan.max_endpoint_compute = std::max(plan.max_endpoint_compute, e.compute);
      plan.endpoints.push_back(std::move(e));
    }
    plan.total_tokens += run_tokens;
    plan.total_compute += run.flops_per_token * run_tokens;
  }
  if (runs.empty()) plan.min_endpoint_compute = 0;
  return plan;
}

}  // namespace budget
