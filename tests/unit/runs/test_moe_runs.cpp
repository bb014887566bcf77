// Issue 42: the handed-over MoE runs (megatron_moe_runs.json, sources cited per run), priced from their
// exact Megatron-LM arguments (data/runs/moe_runs.jsonl, scripts/convert_measured_runs.py), and
// what the model reaches on them today (docs/calibration.md, "Validation on the MoE runs"). These
// guard today's figures, with the tolerances the figures have: they are not the issue's targets,
// which the memory figure does not meet (−11.7% against "within 3%").
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/run_fit.hpp"
#include "runs/runs_test_support.hpp"

using namespace budget;

namespace {

const std::string moe_runs_dir = BUDGET_SOURCE_DIR;

const RunFitResult& moe_fit_of(const std::vector<RunFitResult>& fits, const std::string& precision) {
  for (const RunFitResult& f : fits) {
    if (to_string(f.fit.precision) == precision) return f;
  }
  FAIL("no fit of " << precision);
  return fits.front();
}

const RunPrediction& moe_run_named(const RunFitResult& fit, const std::string& id) {
  return test::with_id(fit.runs, id);
}

std::vector<RunFitResult> moe_fits(const std::string& profile) {
  return fit_measured_runs(load_calibration_profile(moe_runs_dir + "/cuda_profiler/profiles/" + profile),
                           load_measured_runs(moe_runs_dir + "/data/runs/moe_runs.jsonl"), "moe_runs.jsonl");
}

}  // namespace

TEST_CASE("MoE runs: Qwen3-30B-A3B on 16 H100, the published peak memory against the model's", "[runs][moe]") {
  const std::vector<RunFitResult> fits = moe_fits("h100-sxm-published.json");
  const RunFitResult& bf16 = moe_fit_of(fits, "bf16");
  const RunPrediction& run = moe_run_named(bf16, "mbcard-qwen3-30b-h100-bf16-n16-perf");
  REQUIRE(run.skipped.empty());
  CHECK(run.measured_memory_gib == Approx(62.166));
  // Today: 54.92 GiB, −11.7% (54.21, −12.8%, before issue 42's terms: EP overlap's extra layer
  // +0.46 GiB, grouped-GEMM workspaces +0.13 GiB, HybridEP's routing handles of 49 layer executions
  // +0.13 GiB; HybridEP's 0.35 GiB of NVLink and RDMA buffers lie outside the allocator). The remaining 7.2 GiB has
  // no source-backed term yet (docs/cluster.md, "MoE memory terms": the candidates sized at source).
  // The figure is guarded as the data file states it (GiB); Megatron-Bridge prints its memory line in
  // 10⁹ B (train_utils.py:1160-1210 at 067f987d), which would make it 57.90 GiB and the error −5.1%.
  const double error = run.predicted_memory_gib / run.measured_memory_gib - 1.0;
  CHECK(error > -0.12);
  CHECK(error < -0.113);
  // A run without a published peak has no memory figure.
  CHECK(moe_run_named(bf16, "mbcard-qwen3-30b-h100-bf16-n16-functional").predicted_memory_gib == -1.0);
  // The newest releases' step times (fitted, leave-one-run-out): 4 runs, median 2.9%, worst 7.0%.
  CHECK(bf16.fit.fitted_on.size() == 4);
  CHECK(bf16.fit.loo_median_error < 0.035);
  CHECK(bf16.fit.loo_max_error < 0.08);
}

TEST_CASE("MoE runs: GB300 and B300 MXFP8 on the Blackwell Ultra profiles", "[runs][moe]") {
  // GB300: 6 newest-release runs fitted (8 to 256 GPUs); before any fit +7.1% to +8.2%, leave-one-
  // run-out median 2.9%, worst 3.4% (with TE's MXFP8 quantize kernels, fp8_quantize.cpp; before them
  // +5.5 to +6.6%, 2.4% / 2.9%).
  const std::vector<RunFitResult> gb300_fits = moe_fits("gb300-published.json");
  const RunFitResult& gb300 = moe_fit_of(gb300_fits, "mxfp8");
  CHECK(gb300.fit.fitted_on.size() == 6);
  CHECK(gb300.before_max_error < 0.25);  // the oldest release (25.11) is 23% slower than predicted
  CHECK(gb300.fit.loo_median_error < 0.035);
  CHECK(gb300.fit.loo_max_error < 0.04);
  const RunPrediction& newest = moe_run_named(gb300, "mb-26.08-pretrain-qwen3-30b-a3b-gb300-mxfp8-n8");
  CHECK(std::abs(newest.before_s / newest.measured_s - 1.0) < 0.08);
  // B300: one newest-release run, predicted by the profile alone within 5% (+4.1%; +2.6% before TE's
  // MXFP8 quantize kernels).
  const std::vector<RunFitResult> b300_fits = moe_fits("b300-published.json");
  const RunFitResult& b300 = moe_fit_of(b300_fits, "mxfp8");
  const RunPrediction& run = moe_run_named(b300, "mb-26.06-pretrain-qwen3-30b-a3b-b300-mxfp8-n8");
  CHECK(std::abs(run.before_s / run.measured_s - 1.0) < 0.05);
}

TEST_CASE("MoE runs: H100 FP8 current scaling, TE's quantize kernels priced, still 21% fast", "[runs][moe][fp8]") {
  // The newest release's Qwen3-30B-A3B FP8 (tensorwise) run on 16 H100: 29.70 s measured. TE's
  // current-scaling quantize kernels (amax, cast, transposed copy: 6 bytes an element of each FP8
  // GEMM's input and output gradient, less the 3 the published rows time; fp8_quantize.cpp) move the
  // profile's prediction from 22.92 s (-22.8%) to 23.53 s (-20.8%): the terms from TE's source close 2
  // of the 23 points. A guard of today's figure, not a target.
  const std::vector<RunFitResult> fits = moe_fits("h100-sxm-published.json");
  const RunPrediction& run =
      moe_run_named(moe_fit_of(fits, "fp8-tensorwise"), "mb-26.06-pretrain-qwen3-30b-a3b-h100-sxm-fp8-cs-n16");
  CHECK(run.before_s / run.measured_s - 1.0 == Approx(-0.208).margin(0.005));
}

namespace {
/// A hand-written run file line: a two-layer Llama on one 8-GPU H100 node, a 1 s step, with `recipe`
/// (its "megatron_args" or "layout" and "time" keys) in between.
std::string tiny_run_line(const std::string& recipe) {
  return R"({"id": "r", "role": "fit", "source": "hand-written", "gpu": "NVIDIA H100 SXM5 80GB",
    "hf_config": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
      "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 2816,
      "hidden_act": "silu", "vocab_size": 32000},
    "cluster": {"schema": "budget.cluster", "schema_version": 1, "name": "c", "gpu": {"name": "g", "memory_GiB": 80,
      "compute": {"datasheet": {"bf16_dense_TFLOPs": 989, "source": "datasheet"}}}, "gpus_per_node": 8, "nodes": 1,
      "intra_node": {"bandwidth_GBps": 450, "latency_us": 3}, "inter_node": {"bandwidth_GBps": 50, "latency_us": 5}},
    )" + recipe + R"(, "step_time_s": 1})";
}

}  // namespace

TEST_CASE("MoE runs: a run's main gradients are the bytes Megatron's arguments resolve, as its memory prices them",
          "[runs][megatron]") {
  // arguments.py:1207-1216 at d98e8a64: --bf16 accumulates and reduces in fp32 by default (4 bytes);
  // --grad-reduce-in-bf16 or --main-grads-dtype bf16 keep the buffer in bf16 (2 bytes). Before issue
  // 42 a run without --accumulate-allreduce-grads-in-fp32 was timed with 2 bytes whatever it said.
  const std::string line =
      tiny_run_line(R"("megatron_args": "--micro-batch-size 1 --global-batch-size 8 --seq-length 1024 --bf16 ARGS")");
  const auto bytes_of = [&](const std::string& extra) {
    std::string text = line;
    text.replace(text.find("ARGS"), 4, extra);
    std::replace(text.begin(), text.end(), '\n', ' ');  // one run a line
    return main_grad_bytes(parse_measured_runs(text, "runs.jsonl").front().layout);
  };
  CHECK(bytes_of("") == 4.0);
  CHECK(bytes_of("--accumulate-allreduce-grads-in-fp32") == 4.0);
  CHECK(bytes_of("--grad-reduce-in-bf16") == 2.0);
  CHECK(bytes_of("--main-grads-dtype bf16") == 2.0);
}

TEST_CASE("MoE runs: a run file's main_grad_bytes is the recipe's one main-gradient field, priced by memory and time",
          "[runs][recipe]") {
  // One field (OptimizerDtypes::bf16_main_grads) and one rule (main_grad_bytes(): the gradient bytes of
  // parameter_bytes(), Megatron's dist_optimizer.md table: bf16 4 → 2 with bf16 main gradients, fp16 2,
  // fp32 4). Before, "time": {"main_grad_bytes": 2} timed 2 bytes while memory priced 4.
  const std::string line =
      tiny_run_line(R"("layout": {"micro_batch_size": 1, "micro_batches": 8, "precision": "PRECISION"}, "time": {TIME})");
  const auto run_of = [&](const std::string& precision, const std::string& time) {
    std::string text = line;
    text.replace(text.find("PRECISION"), 9, precision);
    text.replace(text.find("{TIME}"), 6, "{" + time + "}");
    std::replace(text.begin(), text.end(), '\n', ' ');  // one run a line
    return parse_measured_runs(text, "runs.jsonl").front();
  };
  const MeasuredRun plain = run_of("bf16", "");
  CHECK_FALSE(plain.layout.optimizer_dtypes.bf16_main_grads);
  CHECK(main_grad_bytes(plain.layout) == 4.0);
  CHECK(parameter_bytes(plain.layout).gradients == 4.0);
  const MeasuredRun bf16_grads = run_of("bf16", R"("main_grad_bytes": 2)");
  CHECK(bf16_grads.layout.optimizer_dtypes.bf16_main_grads);
  CHECK(main_grad_bytes(bf16_grads.layout) == 2.0);
  CHECK(parameter_bytes(bf16_grads.layout).gradients == 2.0);  // the memory model's bytes, the same field
  CHECK_FALSE(run_of("bf16", R"("main_grad_bytes": 4)").layout.optimizer_dtypes.bf16_main_grads);
  CHECK(main_grad_bytes(run_of("fp16", R"("main_grad_bytes": 2)").layout) == 2.0);
  CHECK(main_grad_bytes(run_of("fp32", "").layout) == 4.0);
  // A main-gradient size the precision does not have is refused, naming the field.
  CHECK_THROWS_WITH(run_of("fp16", R"("main_grad_bytes": 4)"),
                    Catch::Contains("main_grad_bytes") && Catch::Contains("fp16 training, whose main gradients are 2"));
  CHECK_THROWS_WITH(run_of("fp32", R"("main_grad_bytes": 2)"),
                    Catch::Contains("fp32 training, whose main gradients are 4"));
  CHECK_THROWS_WITH(run_of("bf16", R"("main_grad_bytes": 3)"), Catch::Contains("3 is not allowed"));
  // The FP8 recipe of "time" is the layout's, which memory and time both read.
  CHECK(run_of("bf16", R"("fp8_recipe": "tensorwise")").layout.fp8 == Fp8Recipe::tensorwise);
}
