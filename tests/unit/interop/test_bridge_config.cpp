// Megatron-Bridge configs in (issue 42 item 3): the ConfigContainer YAML that Bridge's to_yaml()
// writes, mapped field by field onto the Megatron-LM reader's recipe (budget/megatron_args.hpp,
// bridge_config_args()); the Qwen3-30B-A3B fixture of tests/data/bridge/ (README.md there) priced as
// its Megatron-LM arguments.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/megatron_args.hpp"
#include "budget/run_fit.hpp"
#include "budget/training_memory.hpp"
#include "interop/bridge_detail.hpp"

using namespace budget;

namespace {

const std::string bridge_dir = std::string(BUDGET_SOURCE_DIR) + "/tests/data/bridge";

bool contains(const std::vector<std::string>& v, const std::string& part) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

ArchConfig qwen3_30b() { return load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/tests/data/hf/qwen3-30b-a3b.json"); }

std::string fixture() {
  std::ifstream in(bridge_dir + "/qwen3_30b_a3b_h100_bf16_n16.yaml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

/// The Megatron-LM arguments of the same run (the handed-over megatron_moe_runs.json,
/// mbcard-qwen3-30b-h100-bf16-n16-perf's recipe.args, copied into qwen3_runs.jsonl).
const char* qwen3_megatron_args =
    "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --context-parallel-size 1 "
    "--expert-model-parallel-size 16 --expert-tensor-parallel-size 1 --micro-batch-size 1 --global-batch-size 1024 "
    "--seq-length 4096 --bf16 --grad-reduce-in-bf16 --use-distributed-optimizer --use-precision-aware-optimizer "
    "--main-grads-dtype fp32 --main-params-dtype fp32 --exp-avg-dtype fp32 --exp-avg-sq-dtype fp32 "
    "--overlap-grad-reduce --overlap-param-gather --ddp-bucket-size 134217728 --ddp-average-in-collective "
    "--moe-grouped-gemm --moe-permute-fusion --moe-router-fusion --moe-token-dispatcher-type flex "
    "--moe-flex-dispatcher-backend hybridep --moe-hybridep-num-sms 32 --moe-router-force-load-balancing "
    "--cuda-graph-impl transformer_engine --cuda-graph-modules moe_router moe_preprocess --te-rng-tracker "
    "--overlap-moe-expert-parallel-comm --cross-entropy-loss-fusion --cross-entropy-fusion-impl te --manual-gc "
    "--manual-gc-interval 100 "
    // The model's own settings, which the shared file's recipe.args leave out (tests/data/bridge/README.md):
    "--hidden-dropout 0.0 --attention-dropout 0.0";

}  // namespace

TEST_CASE("interop: a Megatron-Bridge config reads as the Megatron-LM arguments of the same recipe", "[interop][bridge]") {
  const ArchConfig config = qwen3_30b();
  const MegatronRun bridge = read_bridge_config(fixture(), config, 16, "qwen3.yaml");
  const MegatronRun megatron = read_megatron_args(megatron_words(qwen3_megatron_args, "args"), config, 16, "args");
  // The whole layout and overlap as Megatron-LM arguments (megatron_layout_args() writes every field
  // the layout and the overlap hold), the same.
  CHECK(megatron_layout_args(bridge.layout, bridge.overlap) == megatron_layout_args(megatron.layout, megatron.overlap));
  CHECK(bridge.layout.micro_batches == 64);  // 1024 / (1 · 16)
  CHECK(bridge.layout.optimizer_dtypes == megatron.layout.optimizer_dtypes);
  CHECK(bridge.layout.optimizer_dtypes.precision_aware);
  CHECK(bridge.layout.dispatcher == MoeDispatcher::flex);
  CHECK(bridge.layout.imbalance == 1.0);  // moe_router_force_load_balancing
  CHECK(bridge.layout.cross_entropy_fusion);
  CHECK(bridge.layout.flash_attention == megatron.layout.flash_attention);
  CHECK(bridge.layout.dropout == megatron.layout.dropout);
  CHECK(bridge.overlap.ep);
  CHECK_FALSE(bridge.overlap.tp);  // comm_overlap.tp_comm_overlap true, turned off at TP 1 (comm_overlap.py:442)
  // The shape fields were checked against the config: num_moe_experts is --num-experts.
  CHECK(std::find(bridge.checked.begin(), bridge.checked.end(), "--num-experts") != bridge.checked.end());
  CHECK(std::find(bridge.checked.begin(), bridge.checked.end(), "--untie-embeddings-and-output-weights") !=
        bridge.checked.end());
  // What no argument says: read and listed as not modelled.
  CHECK(bridge.bridge.given);
  CHECK_FALSE(bridge.bridge.parameter_transpose_cache_disabled);
  REQUIRE(bridge.bridge.env_vars.size() == 3);
  CHECK(bridge.bridge.env_vars[0] == std::pair<std::string, std::string>("CUDA_DEVICE_MAX_CONNECTIONS", "1"));
  CHECK(contains(bridge.read, "env_vars.NCCL_NVLS_ENABLE = 0: read, not modelled"));
  // The CUDA-graph scope is a run's kernel setting (MegatronKernelOptions): modelled, not a "read" note.
  CHECK(contains(bridge.modelled, "--cuda-graph-modules"));
  CHECK_FALSE(contains(bridge.read, "--cuda-graph-modules"));
  // ... and a recipe file's kernel settings as `layout` (with a config) and match or grid (without)
  // read them: the router and its preprocessing graphed, the router fused, HybridEP's 32 SMs.
  const std::string yaml = bridge_dir + "/qwen3_30b_a3b_h100_bf16_n16.yaml";
  const MegatronKernelOptions kernels = load_team_kernel_options(yaml, true, qwen3_30b(), 16);
  CHECK_FALSE(kernels.cuda_graphs);
  CHECK(kernels.cuda_graph_modules.moe_router);
  CHECK(kernels.cuda_graph_modules.moe_preprocess);
  CHECK_FALSE(kernels.cuda_graph_modules.attn);
  CHECK(kernels.moe.router_fusion);
  CHECK(kernels.moe.flex_backend == FlexBackend::hybridep);
  CHECK(kernels.moe.comm_sms == 32);
  const MegatronKernelOptions graphs = load_team_cuda_graphs(yaml, true);
  CHECK(graphs.cuda_graph_modules == kernels.cuda_graph_modules);
  CHECK_FALSE(graphs.moe.router_fusion);  // the graphs alone
  CHECK(contains(bridge.not_modelled, "model.bias_activation_fusion"));
  CHECK(contains(bridge.not_modelled, "logger (section)"));
  CHECK(contains(bridge.not_modelled, "mixed_precision.fp8_recipe tensorwise (fp8 None"));

  const BridgeConfigArgs args = bridge_config_args(fixture(), "qwen3.yaml");
  CHECK(contains(args.mapped, "model.num_moe_experts 128 → --num-experts"));
  CHECK(contains(args.mapped, "ddp.grad_reduce_in_fp32 False → --accumulate-allreduce-grads-in-fp32"));

  // The transpose-cache setting that Megatron-LM's arguments cannot say.
  const MegatronRun cache_off = read_bridge_config(
      replaced(fixture(), "disable_parameter_transpose_cache: false", "disable_parameter_transpose_cache: true"), config,
      16, "qwen3.yaml");
  CHECK(cache_off.bridge.parameter_transpose_cache_disabled);
  CHECK(contains(cache_off.read, "model.disable_parameter_transpose_cache true: read, not modelled"));
  // An enum member as to_yaml writes it (yaml_utils.py:159-170): attention_backend unfused.
  const MegatronRun unfused = read_bridge_config(
      replaced(fixture(), "  attention_backend: null\n",
               "  attention_backend:\n    _args_:\n    - 3\n    _call_: true\n    _name_: unfused\n"
               "    _target_: megatron.core.transformer.enums.AttnBackend\n"),
      config, 16, "qwen3.yaml");
  CHECK_FALSE(unfused.layout.flash_attention);
}

TEST_CASE("interop: a Megatron-Bridge config prices the same as its Megatron-LM arguments (Qwen3-30B-A3B, 16 H100)",
          "[interop][bridge]") {
  // The two run lines of qwen3_runs.jsonl: the same run given by its Megatron-LM arguments and by the
  // Bridge YAML. Within 0.1% is the acceptance; both read to one layout, so they agree exactly.
  const std::vector<MeasuredRun> runs = load_measured_runs(bridge_dir + "/qwen3_runs.jsonl");
  REQUIRE(runs.size() == 2);
  const CalibrationProfile profile =
      load_calibration_profile(std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/h100-sxm-published.json");
  const double from_args = predict_measured_run(profile, runs[0]);
  const double from_yaml = predict_measured_run(profile, runs[1]);
  CHECK(from_args > 0.0);
  CHECK(std::abs(from_yaml / from_args - 1.0) < 1e-3);
  CHECK(runs[1].cuda_graphs == runs[0].cuda_graphs);
  CHECK(main_grad_bytes(runs[1].layout) == main_grad_bytes(runs[0].layout));
  CHECK(runs[1].moe.flex_backend == FlexBackend::hybridep);
  CHECK(runs[1].moe.comm_sms == 32);
  CHECK(runs[1].bridge.given);
  CHECK_FALSE(runs[0].bridge.given);
  CHECK(runs[1].bridge.env_vars.size() == 3);
  const double memory_args = training_memory(runs[0].config, runs[0].layout, runs[0].cluster).peak_bytes;
  const double memory_yaml = training_memory(runs[1].config, runs[1].layout, runs[1].cluster).peak_bytes;
  CHECK(std::abs(memory_yaml / memory_args - 1.0) < 1e-3);
  CHECK(std::any_of(runs[1].notes.begin(), runs[1].notes.end(),
                    [](const std::string& n) { return n.rfind("env_vars.CUDA_DEVICE_MAX_CONNECTIONS", 0) == 0; }));
}

TEST_CASE("interop: a Megatron-Bridge config that is not fully understood is refused", "[interop][bridge]") {
  const ArchConfig config = qwen3_30b();
  interop_detail::check_bridge_field_rows();  // every row names a field at 067f987d and a Megatron-LM destination
  REQUIRE_THROWS_WITH(read_bridge_config(replaced(fixture(), "  tensor_model_parallel_size: 1",
                                                  "  tensor_model_paralel_size: 1"), config, 16, "q.yaml"),
                      Catch::Contains("q.yaml") && Catch::Contains("model.tensor_model_paralel_size") &&
                          Catch::Contains("did you mean model.tensor_model_parallel_size?"));
  REQUIRE_THROWS_WITH(read_bridge_config(replaced(fixture(), "\nmodel:\n", "\nmodle:\n"), config, 16, "q.yaml"),
                      Catch::Contains("modle") && Catch::Contains("did you mean model?"));
  REQUIRE_THROWS_WITH(read_bridge_config(replaced(fixture(), "  seq_length: 4096\n  split", "  seq_length: 8192\n  split"),
                                         config, 16, "q.yaml"),
                      Catch::Contains("dataset.seq_length") && Catch::Contains("8192 disagrees with model.seq_length 4096"));
  REQUIRE_THROWS_WITH(read_bridge_config(replaced(fixture(), "  split: 9999,8,2", "  seq_length: 4096"), config, 16,
                                         "q.yaml"),
                      Catch::Contains("dataset.seq_length") && Catch::Contains("appears twice"));
  REQUIRE_THROWS_WITH(read_bridge_config(replaced(fixture(), "  hidden_size: 2048", "  hidden_size: {a: 1}"), config,
                                         16, "q.yaml"),
                      Catch::Contains("model.hidden_size") && Catch::Contains("a mapping is not a value"));
  REQUIRE_THROWS_WITH(read_bridge_config("model: [unclosed", config, 16, "q.yaml"),
                      Catch::Contains("q.yaml") && Catch::Contains("does not parse"));
  REQUIRE_THROWS_WITH(read_bridge_config(replaced(fixture(), "  hidden_size: 2048", "  hidden_size: 4096"), config, 16,
                                         "q.yaml"),
                      Catch::Contains("--hidden-size") && Catch::Contains("4096 disagrees with the config's hidden size"));
  REQUIRE_THROWS_WITH(read_bridge_config(replaced(fixture(), "mixed_precision:\n  _target_", "mixed_precision: bf16_with_fp8_delayed_scaling_mixed\nunused:\n  _target_"),
                                         config, 16, "q.yaml"),
                      Catch::Contains("unused"));
  // A value argparse would read as an option cannot follow its flag (fuzz_bridge_config's finding:
  // fp8_recipe "--ep-otensorwise"); a negative number and a value with a space can.
  REQUIRE_THROWS_WITH(read_bridge_config(replaced(fixture(), "  moe_router_load_balancing_type: aux_loss", "  moe_router_load_balancing_type: --aux"),
                                         config, 16, "q.yaml"),
                      Catch::Contains("q.yaml") && Catch::Contains("moe_router_load_balancing_type") && Catch::Contains("\"--aux\"") &&
                          Catch::Contains("reads a word that begins with '-' as an option"));
  REQUIRE_THROWS_WITH(read_bridge_config(replaced(fixture(), "  moe_router_load_balancing_type: aux_loss", "  moe_router_load_balancing_type: -x"),
                                         config, 16, "q.yaml"),
                      Catch::Contains("\"-x\""));
  const std::vector<std::string> negative =
      bridge_config_args(replaced(fixture(), "  moe_aux_loss_coeff: 0.001", "  moe_aux_loss_coeff: -1.5"), "q.yaml").words;
  const auto coeff = std::find(negative.begin(), negative.end(), "--moe-aux-loss-coeff");
  REQUIRE(coeff != negative.end());
  CHECK(*(coeff + 1) == "-1.5");
}
