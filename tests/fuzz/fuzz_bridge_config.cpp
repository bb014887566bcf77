// Megatron-Bridge config YAML (--bridge-config, docs/megatron.md "Megatron-Bridge configs"): arbitrary
// bytes to bridge_config_args(). An accepted config gives non-empty Megatron-LM words; every word
// that begins with "--" is one of Megatron-LM's option strings (the reader maps fields onto the
// argument table only), and the words read by the Megatron-LM parser or refused as budget::Error.
#include <string>

#include "budget/megatron_args.hpp"
#include "fuzz_harness.hpp"

namespace {

constexpr const char* target = "fuzz_bridge_config";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = budget::fuzz::as_text(data, size);
  budget::fuzz::expect_value_or_error(target, [&] {
    const budget::BridgeConfigArgs args = budget::bridge_config_args(text, "<fuzz>");
    for (const std::string& word : args.words) {
      budget::fuzz::require(!word.empty(), target, "an empty argument word");
      if (word.rfind("--", 0) == 0) {
        budget::fuzz::require(budget::find_megatron_argument(word) != nullptr, target, "a word that is not an argument");
      }
    }
    (void)budget::megatron_fp8_recipe(args.words, "<fuzz>");
  });
  return 0;
}
