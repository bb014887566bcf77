// Megatron-LM and Megatron-Bridge logs as printed (issue 42 item 4): the public log excerpts of
// tests/data/logs/ (README.md there names the source of each) are read as they are.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/megatron_args.hpp"
#include "budget/run_fit.hpp"

using namespace budget;

namespace {

const std::string logs_dir = std::string(BUDGET_SOURCE_DIR) + "/tests/data/logs";

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

/// GPT-2 small as the log's arguments build it (12 layers, hidden 768, 12 heads of 64, MLP 3072,
/// LayerNorm, learned positions, tied embeddings, GPT-2's 50,257 tokens).
ArchConfig gpt2_small() {
  ArchConfig c;
  c.name = "gpt2-small";
  c.hidden_size = 768;
  c.num_layers = 12;
  c.attention = {12, 64, 12};
  c.ffn.gated = false;
  c.ffn.dense_dim = 3072;
  c.norm = NormKind::layernorm;
  c.vocab_size = 50257;
  c.tie_embeddings = true;
  c.settings.max_position_embeddings = 512;
  return c;
}

}  // namespace

TEST_CASE("Megatron-LM log as printed: enum and dtype reprs, defaults of features that are off, undotted names",
          "[runs][logs]") {
  const MegatronLog log = load_megatron_log(logs_dir + "/megatron_lm_gpt2_fp16_1gpu.log");
  // 10 iteration lines; the median of the 9 after the first (820.7 … 904.5 ms sorted: the 5th is 840.3).
  REQUIRE(log.iterations.size() == 10);
  CHECK(log.iterations[0].elapsed_ms == 1147.6);
  CHECK(log.iterations[0].global_batch_size == 16);
  CHECK(log.step_time_s() == Approx(0.8403));
  CHECK(log.max_allocated_mib == 1464.3408203125);
  // "attention_backend ... AttnBackend.auto": the member's name, one of --attention-backend's choices.
  const auto at = std::find(log.arguments.begin(), log.arguments.end(), "--attention-backend");
  REQUIRE(at != log.arguments.end());
  CHECK(*(at + 1) == "auto");
  // "main_grads_dtype ... torch.float32": the choice fp32 (arguments.py:1078's map read backwards).
  const auto grads = std::find(log.arguments.begin(), log.arguments.end(), "--main-grads-dtype");
  REQUIRE(grads != log.arguments.end());
  CHECK(*(grads + 1) == "fp32");
  // fp8 None: "fp8_recipe ... delayed" is Megatron's default, not a recipe; left out and listed.
  CHECK_FALSE(has(log.arguments, "--fp8-recipe"));
  CHECK(std::any_of(log.left_out.begin(), log.left_out.end(),
                    [](const std::string& s) { return s.rfind("fp8_recipe delayed (fp8 None", 0) == 0; }));
  // No MoE (num_experts None): the router's default top-k 2 is not a shape to check.
  CHECK_FALSE(has(log.arguments, "--moe-router-topk"));
  // No MLA: kv_lora_rank 32 is a default; the precision-aware optimizer off: the state dtypes too.
  CHECK_FALSE(has(log.arguments, "--kv-lora-rank"));
  CHECK_FALSE(has(log.arguments, "--exp-avg-dtype"));
  // A destination of 48 characters or more is printed without dots; one the parser at d98e8a64 does
  // not have (this log's Megatron-LM is older) is skipped and listed.
  CHECK(has(log.derived, "inference_dynamic_batching_buffer_guaranteed_fraction"));
  CHECK(has(log.derived, "cuda_graph_scope"));

  // The arguments read as the run: fp16, one GPU, 16 micro-batches of one 512-token sequence, the
  // flash path (auto), dropout on (0.1).
  const MegatronRun run = read_megatron_args(log.arguments, gpt2_small(), 1, "log");
  CHECK(run.layout.precision == TrainingPrecision::fp16);
  CHECK(run.layout.fp8 == Fp8Recipe::none);
  CHECK(run.layout.micro_batches == 16);
  CHECK(run.layout.seq_len == 512);
  CHECK(run.layout.flash_attention);
  CHECK(run.layout.dropout);
  CHECK(has(run.checked, "--kv-channels"));
  CHECK(has(run.checked, "--ffn-hidden-size"));

  // The same rules leave nothing out when the feature is on: fp8 printed e4m3 keeps its recipe.
  const std::string open = "------------------------ arguments ------------------------\n";
  const std::string close = "-------------------- end of arguments ---------------------\n"
                            " iteration 1/2 | elapsed time per iteration (ms): 5.0 |\n";
  const MegatronLog fp8 = parse_megatron_log(
      open + "  fp8 ............ e4m3\n  fp8_recipe ....... tensorwise\n  seq_length ....... 4096\n" + close, "a.log");
  CHECK(has(fp8.arguments, "--fp8-recipe"));
  CHECK(has(fp8.arguments, "tensorwise"));
  // A name shorter than 48 characters still needs its dots; an enum repr whose member is not a choice
  // stays as printed and is refused by the choices.
  REQUIRE_THROWS_WITH(parse_megatron_log(open + "  seq_length  4096\n" + close, "a.log"), Catch::Contains("dots"));
  const MegatronLog odd = parse_megatron_log(open + "  attention_backend ...... AttnBackend.magic\n" + close, "a.log");
  REQUIRE_THROWS_WITH(read_megatron_args(odd.arguments, gpt2_small(), 1, "a.log"),
                      Catch::Contains("--attention-backend") && Catch::Contains("magic"));
  // Megatron-LM prints the step time with {:.1f}: 0.1 ms is the least a step can read; 0.0 and a
  // denormal (5e-324 ms, which becomes 0 s) are refused with the line, as the fuzzer found.
  const std::string args = open + "  seq_length ....... 4096\n-------------------- end of arguments ---------------------\n";
  const auto with_elapsed = [&](const std::string& ms) {
    return args + " iteration 1/2 | elapsed time per iteration (ms): 5.0 |\n iteration 2/2 | elapsed time per iteration (ms): " +
           ms + " |\n";
  };
  CHECK(parse_megatron_log(with_elapsed("0.1"), "a.log").step_time_s() == Approx(1e-4));
  for (const char* tiny : {"0.0", "5e-324", "0.09"}) {
    REQUIRE_THROWS_WITH(parse_megatron_log(with_elapsed(tiny), "a.log"),
                        Catch::Contains("a.log") && Catch::Contains("line 5") && Catch::Contains("at least 0.1 ms"));
  }
}

TEST_CASE("Megatron-Bridge log as printed: the Task Configuration YAML, iteration, memory and Step Time lines",
          "[runs][logs]") {
  const MegatronLog log = load_megatron_log(logs_dir + "/megatron_bridge_formats.log");
  // Bridge's iteration line is Megatron-LM's (train_utils.py:1088-1133 at 067f987d): two lines; the
  // step time needs two, the median of the one after the first.
  REQUIRE(log.iterations.size() == 2);
  CHECK(log.iterations[1].iteration == 20);
  CHECK(log.iterations[1].elapsed_ms == 14260.3);
  CHECK(log.iterations[1].global_batch_size == 512);
  CHECK(log.step_time_s() == Approx(14.2603));
  CHECK(log.max_allocated_mib == 12712.43603515625);
  // The Task Configuration read as --bridge-config reads the same YAML: the same words.
  std::ifstream in(std::string(BUDGET_SOURCE_DIR) + "/tests/data/bridge/qwen3_30b_a3b_h100_bf16_n16.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const BridgeConfigArgs yaml = bridge_config_args(text.str(), "qwen3.yaml");
  CHECK(log.arguments == yaml.words);
  CHECK(has(log.arguments, "--expert-model-parallel-size"));
  CHECK(std::any_of(log.notes.begin(), log.notes.end(), [](const std::string& n) {
    return n == "env_vars.NCCL_NVLS_ENABLE = 0: read, not modelled";
  }));
  // A Task Configuration without its closing dashes, or beside an arguments block, is refused.
  const std::string iteration = " iteration 1/2 | elapsed time per iteration (ms): 5.0 |\n";
  REQUIRE_THROWS_WITH(parse_megatron_log("------- Task Configuration -------\nmodel:\n  num_layers: 2\n" + iteration,
                                         "b.log"),
                      Catch::Contains("no end line"));
  REQUIRE_THROWS_WITH(
      parse_megatron_log("------- Task Configuration -------\nmodle:\n  num_layers: 2\n"
                         "----------------------------------\n" + iteration, "b.log"),
      Catch::Contains("b.log (the Task Configuration from line 2)") && Catch::Contains("did you mean model?"));
}
