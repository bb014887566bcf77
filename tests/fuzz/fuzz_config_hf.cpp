// Hugging Face config.json: parse_hf_config() directly (every supported family, MLA, sliding-window
// layers, multimodal wrappers; docs/config.md). Accepted configs must account to finite budgets.
#include <cmath>

#include "budget/accounting.hpp"
#include "budget/config_hf.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_config_hf", [&] {
    const ArchConfig config = parse_hf_config(fuzz::as_text(data, size), "<fuzz>");
    fuzz::must_succeed("fuzz_config_hf", "round trip and accounting", [&] {
      const std::string json = arch_config_to_json(config);
      const ArchConfig again = parse_arch_config(json, "<round trip>");
      fuzz::require(arch_config_to_json(again) == json, "fuzz_config_hf", "native JSON round trip changed the config");
      const Budgets budgets = account(config, paper_workload());
      fuzz::require(std::isfinite(budgets.training_flops_per_token), "fuzz_config_hf", "FLOPs not finite");
    });
  });
  return 0;
}
