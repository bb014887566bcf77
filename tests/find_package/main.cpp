// A consumer of find_package(budget): builds the SMELT paper's 200M S95 baseline in code, accounts
// it and exits 0 iff its non-embedding parameters are the hand-derived 3,872,226,560
// (12·322,685,440 + 1,280; docs/accounting.md, "Worked example"). It also round-trips the config
// through config_io, so both public headers and the exported library are exercised.

#include <cstdint>
#include <cstdio>

#include "budget/accounting.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"

int main() {
  budget::ArchConfig config;
  config.name = "paper-200M-S95-baseline";
  config.hidden_size = 1280;
  config.num_layers = 12;
  config.attention.num_heads = 10;
  config.attention.head_dim = 128;
  config.attention.num_kv_heads = 2;
  config.ffn.num_experts = 192;
  config.ffn.top_k = 8;
  config.ffn.expert_dim = 432;
  config.ffn.gated = true;

  try {
    const budget::ArchConfig parsed =
        budget::parse_arch_config(budget::arch_config_to_json(config), "find_package consumer");
    const budget::Budgets budgets = budget::account(parsed, budget::paper_workload());
    const std::int64_t expected = 3'872'226'560;
    std::printf("non-embedding parameters: %lld (expected %lld)\n",
                static_cast<long long>(budgets.non_embedding_params_total), static_cast<long long>(expected));
    return budgets.non_embedding_params_total == expected ? 0 : 1;
  } catch (const budget::Error& e) {
    std::fprintf(stderr, "budget error: %s\n", e.what());
    return 2;
  }
}
