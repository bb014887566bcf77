#pragma once
/// \file
/// Training-run plans: a warmup-stable-decay run with decay branches, per cell and architecture,
/// and the compute C = F × D of every endpoint (the data points of a scaling-law fit).
///
/// Thread safety: Every function here is reentrant: concurrent calls are safe.

#include <cstdint>
#include <string>
#include <vector>

namespace budget {

/// Warmup-stable-decay with branches: one stable run of `stable_steps`; from each branch step a
/// decay branch trains `decay_tokens` more. Warmup is part of the stable phase.
struct Recipe {
  std::int64_t sequences_per_step = 256;
  std::int64_t seq_len = 4096;
  std::int64_t stable_steps = 196'075;
  std::vector<std::int64_t> branch_steps{10'000, 20'000, 50'000, 100'000, 150'000, 196'075};
  double decay_tokens = 10e9;

  std::int64_t tokens_per_step() const { return sequences_per_step * seq_len; }
};

/// The SMELT paper's recipe (the defaults above).
Recipe paper_recipe();

/// Reads a recipe JSON (keys as the struct's fields; absent keys take the paper's values).
Recipe parse_recipe(std::string_view json_text, const std::string& source);
Recipe load_recipe(const std::string& path);

/// One architecture of one cell to plan.
struct PlannedRun {
  std::string cell;
  std::string arch;            ///< "baseline" or "looped" (or any label)
  double flops_per_token = 0;  ///< F, training FLOPs per token
  double sparsity = 0;         ///< compute-equivalent sparsity of the config
};

/// One endpoint: the end of one decay branch.
struct PlanEndpoint {
  std::string cell;
  std::string arch;
  std::int64_t branch_step = 0;
  double tokens = 0;           ///< D = branch_step · tokens_per_step + decay_tokens
  double flops_per_token = 0;
  double sparsity = 0;
  double compute = 0;          ///< C = F · D
};

struct Plan {
  std::vector<PlanEndpoint> endpoints;
  /// Compute actually spent: per run F · (stable_steps · tokens_per_step + branches · decay_tokens),
  /// the stable phase shared by all branches.
  double total_compute = 0;
  double total_tokens = 0;
  double min_endpoint_compute = 0;
  double max_endpoint_compute = 0;
};

/// Validates the recipe (budget::Error) and lays out the endpoints of every run.
Plan plan_runs(const std::vector<PlannedRun>& runs, const Recipe& recipe);

void validate(const Recipe& recipe, const std::string& source = {});

}  // namespace budget
