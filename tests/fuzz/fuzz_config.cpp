// Native (and auto-detected Hugging Face) config JSON: parse_arch_config(). A config it accepts
// must account to finite budgets and survive a round trip through its own native JSON.
#include <cmath>

#include "budget/accounting.hpp"
#include "budget/config_io.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_config", [&] {
    const ArchConfig config = parse_arch_config(fuzz::as_text(data, size), "<fuzz>");
    fuzz::must_succeed("fuzz_config", "round trip and accounting", [&] {
      const std::string json = arch_config_to_json(config);
      const ArchConfig again = parse_arch_config(json, "<round trip>");
      fuzz::require(arch_config_to_json(again) == json, "fuzz_config", "native JSON round trip changed the config");
      const Budgets budgets = account(config, paper_workload());
      fuzz::require(std::isfinite(budgets.training_flops_per_token) && budgets.training_flops_per_token > 0,
                    "fuzz_config", "training FLOPs per token not finite and positive");
      fuzz::require(budgets.non_embedding_params_total > 0 && budgets.kv_elements_per_token >= 0, "fuzz_config",
                    "non-positive parameters or negative KV cache");
    });
  });
  return 0;
}
