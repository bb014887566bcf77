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
#include "budget/error.hpp"
#include "budget/run_fit.hpp"
#include "budget/time_model.hpp"
#include "runs/runs_test_support.hpp"
#include "time/step_terms.hpp"

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
  // The newest releases' step times (fitted, leave-one-run-out): 4 runs, median 2.9%, worst 7.8%
  // (7.0% at 5 µs a launch, with the router's graphs not modelled).
  CHECK(bf16.fit.fitted_on.size() == 4);
  CHECK(bf16.fit.loo_median_error < 0.035);
  CHECK(bf16.fit.loo_max_error < 0.08);
}

TEST_CASE("MoE runs: GB300 and B300 MXFP8 on the Blackwell Ultra profiles", "[runs][moe]") {
  // GB300: 6 newest-release runs fitted (8 to 256 GPUs); before any fit +7.0% to +8.1%, leave-one-
  // run-out median 2.9%, worst 3.4% (with TE's MXFP8 quantize kernels, fp8_quantize.cpp; before them
  // +5.5 to +6.6%, 2.4% / 2.9%; no host synchronisation under full-iteration graphs).
  const std::vector<RunFitResult> gb300_fits = moe_fits("gb300-published.json");
  const RunFitResult& gb300 = moe_fit_of(gb300_fits, "mxfp8");
  CHECK(gb300.fit.fitted_on.size() == 6);
  CHECK(gb300.before_max_error < 0.25);  // the oldest release (25.11) is 23% slower than predicted
  CHECK(gb300.fit.loo_median_error < 0.035);
  CHECK(gb300.fit.loo_max_error < 0.04);
  const RunPrediction& newest = moe_run_named(gb300, "mb-26.08-pretrain-qwen3-30b-a3b-gb300-mxfp8-n8");
  CHECK(std::abs(newest.before_s / newest.measured_s - 1.0) < 0.08);
  // B300: one newest-release run, predicted by the profile alone within 5% (+4.0%; +2.6% before TE's
  // MXFP8 quantize kernels).
  const std::vector<RunFitResult> b300_fits = moe_fits("b300-published.json");
  const RunFitResult& b300 = moe_fit_of(b300_fits, "mxfp8");
  const RunPrediction& run = moe_run_named(b300, "mb-26.06-pretrain-qwen3-30b-a3b-b300-mxfp8-n8");
  CHECK(std::abs(run.before_s / run.measured_s - 1.0) < 0.05);
}

TEST_CASE("MoE runs: H100 FP8 current scaling is launch-bound without CUDA graphs, its older releases validate the "
          "host time per launch",
          "[runs][moe][fp8]") {
  // The newest release's Qwen3-30B-A3B FP8 (tensorwise) run on 16 H100, without CUDA graphs: 29.70 s
  // measured, slower than BF16 (24.71 s). At 5 µs a launch (the estimate before) the model said
  // 23.53 s (−20.8%): TE's per-expert quantize kernels (3 a group and tensor, 8 local experts) are
  // shorter than their launches, and at 30 µs (megatron_host_launch_seconds) their CPU time decides
  // the op: +2.0%.
  const std::vector<RunFitResult> fits = moe_fits("h100-sxm-published.json");
  const RunFitResult& fp8 = moe_fit_of(fits, "fp8-tensorwise");
  const RunPrediction& newest = moe_run_named(fp8, "mb-26.06-pretrain-qwen3-30b-a3b-h100-sxm-fp8-cs-n16");
  CHECK(std::abs(newest.before_s / newest.measured_s - 1.0) < 0.05);
  // Validation: the same configuration's older releases, not fitted (25.09 at another layout, PP 2 of
  // 24 virtual stages, EP 8, micro-batch 2: −17.3% at 5 µs, +4.8% now). 26.02.01 (+19%), 26.02 and 25.11
  // (−33%, −50%) measure their releases' software and are not checked here.
  for (const char* id : {"mb-26.04.01-pretrain-qwen3-30b-a3b-h100-sxm-fp8-cs-n16",
                         "mb-26.04-pretrain-qwen3-30b-a3b-h100-sxm-fp8-cs-n16",
                         "mb-25.09-pretrain-qwen3-30b-a3b-h100-sxm-fp8-cs-n16"}) {
    CAPTURE(id);
    const RunPrediction& run = moe_run_named(fp8, id);
    CHECK(std::abs(run.before_s / run.measured_s - 1.0) < 0.06);
  }
  // The launches are what moves it: at the old 5 µs the run is 21% fast again.
  CalibrationProfile profile = load_calibration_profile(moe_runs_dir + "/cuda_profiler/profiles/h100-sxm-published.json");
  profile.run_fits.clear();
  const std::vector<MeasuredRun> runs = load_measured_runs(moe_runs_dir + "/data/runs/moe_runs.jsonl");
  const MeasuredRun& run = test::with_id(runs, "mb-26.06-pretrain-qwen3-30b-a3b-h100-sxm-fp8-cs-n16");
  CHECK(predict_measured_run(profile, run, RunPricing{5e-6}) / run.step_time_s - 1.0 == Approx(-0.208).margin(0.005));
  CHECK(predict_measured_run(profile, run) == Approx(newest.before_s).epsilon(1e-12));
}

TEST_CASE("MoE runs: the host time per launch lies in the flat minimum of the fitted runs' error", "[runs][moe]") {
  // Root-mean-square log error, before any run fit, of the 20 fitted (newest-release) runs on the five
  // published profiles, at a host time per launch: 17.28% at 5 µs, 15.47% at 30 µs, 0.19 points above
  // the grid's least (15.28% at 40 µs, where the one run the launches decide is +16.6%), rising again
  // past 45 µs (15.59% at 50). The value itself is that run's (docs/calibration.md).
  const std::vector<MeasuredRun> runs = load_measured_runs(moe_runs_dir + "/data/runs/moe_runs.jsonl");
  std::vector<std::pair<CalibrationProfile, std::vector<const MeasuredRun*>>> groups;
  for (const char* name : {"h100-sxm", "b200", "gb200", "b300", "gb300"}) {
    CalibrationProfile p =
        load_calibration_profile(moe_runs_dir + "/cuda_profiler/profiles/" + std::string(name) + "-published.json");
    p.run_fits.clear();  // the profile's own fits (dense runs) are not the model's
    std::vector<const MeasuredRun*> fitted;
    for (const MeasuredRun& r : runs) {
      if (r.role == "fit" && r.gpu == p.device.name) fitted.push_back(&r);
    }
    groups.emplace_back(std::move(p), std::move(fitted));
  }
  const auto rms_log_error = [&](double launch_seconds) {
    double sum = 0;
    std::size_t n = 0;
    for (const auto& [profile, fitted] : groups) {
      for (const MeasuredRun* r : fitted) {
        const double e = std::log(predict_measured_run(profile, *r, RunPricing{launch_seconds}) / r->step_time_s);
        sum += e * e;
        ++n;
      }
    }
    REQUIRE(n == 20);
    return std::sqrt(sum / static_cast<double>(n));
  };
  const double shipped = rms_log_error(megatron_host_launch_seconds);
  CHECK(megatron_host_launch_seconds == 30e-6);
  CHECK(shipped < rms_log_error(5e-6) - 0.015);
  double least = shipped;
  for (const double us : {20.0, 25.0, 35.0, 40.0, 45.0, 50.0}) least = std::min(least, rms_log_error(us * 1e-6));
  CHECK(shipped <= least + 0.003);
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

TEST_CASE("MoE runs: CUDA graphs of some modules take those modules' launches, the rest is launched by the CPU",
          "[runs][megatron]") {
  // The H100 BF16 run graphs the router and the dispatcher's preprocessing (--cuda-graph-modules
  // moe_router moe_preprocess): priced between no graphs and graphs of whole layers.
  CalibrationProfile profile = load_calibration_profile(moe_runs_dir + "/cuda_profiler/profiles/h100-sxm-published.json");
  profile.run_fits.clear();
  const std::vector<MeasuredRun> runs = load_measured_runs(moe_runs_dir + "/data/runs/moe_runs.jsonl");
  MeasuredRun run = test::with_id(runs, "mbcard-qwen3-30b-h100-bf16-n16-perf");
  REQUIRE_FALSE(run.cuda_graphs);
  REQUIRE(run.cuda_graph_modules.moe_router);
  const double partial = predict_measured_run(profile, run);
  MeasuredRun eager = run;
  eager.cuda_graph_modules = {};
  MeasuredRun attention_too = run;
  attention_too.cuda_graph_modules.attn = true;
  MeasuredRun whole = run;
  whole.cuda_graphs = true;
  whole.cuda_graph_modules = {};
  CHECK(predict_measured_run(profile, eager) > partial);
  CHECK(predict_measured_run(profile, attention_too) < partial);
  CHECK(predict_measured_run(profile, whole) < predict_measured_run(profile, attention_too));
  // The share of an op's launches each module replays (Megatron's submodules under graphs).
  CudaGraphModules router;
  router.moe_router = true;
  CHECK(detail::graphed_launch_share(router, OpKind::router_topk) == 1.0);
  CHECK(detail::graphed_launch_share(router, OpKind::routed_experts) == 0.0);
  CHECK(detail::graphed_launch_share(router, OpKind::norms) == 0.5);
  CHECK(detail::graphed_launch_share(router, OpKind::qkv_projection) == 0.0);
  CudaGraphModules moe;
  moe.moe = moe.attn = true;
  CHECK(detail::graphed_launch_share(moe, OpKind::norms) == 1.0);
  CHECK(detail::graphed_launch_share(moe, OpKind::residual_add) == 1.0);
  CHECK(detail::graphed_launch_share(moe, OpKind::lm_head) == 0.0);
  CHECK(detail::graphed_launch_share(moe, OpKind::routed_experts) == 1.0);
  CHECK(detail::graphed_launch_share(moe, OpKind::dense_ffn) == 0.0);  // mlp: dense layers only
  CudaGraphModules dense_mlp;
  dense_mlp.mlp = true;
  CHECK(detail::graphed_launch_share(dense_mlp, OpKind::dense_ffn) == 1.0);
  CHECK(detail::graphed_launch_share(dense_mlp, OpKind::routed_experts) == 0.0);
  CHECK(detail::graphed_launch_share(dense_mlp, OpKind::router) == 0.0);

  // A run file says the same as "cuda_graph_modules" in "time"; refused beside "cuda_graphs": true,
  // empty, or naming a module Megatron-LM does not have.
  const std::string line = tiny_run_line(R"("layout": {"micro_batch_size": 1, "micro_batches": 8}, "time": {TIME})");
  const auto parse_time = [&](const std::string& time) {
    std::string text = line;
    text.replace(text.find("{TIME}"), 6, "{" + time + "}");
    std::replace(text.begin(), text.end(), '\n', ' ');
    return parse_measured_runs(text, "runs.jsonl").front();
  };
  const MeasuredRun read = parse_time(R"("cuda_graph_modules": ["attn", "moe_router"])");
  CHECK(read.cuda_graph_modules.attn);
  CHECK(read.cuda_graph_modules.moe_router);
  CHECK_FALSE(read.cuda_graph_modules.mlp);
  CHECK_THROWS_WITH(parse_time(R"("cuda_graphs": true, "cuda_graph_modules": ["attn"])"),
                    Catch::Contains("cuda_graph_modules") && Catch::Contains("give one"));
  CHECK_THROWS_WITH(parse_time(R"("cuda_graph_modules": ["attention"])"),
                    Catch::Contains("\"attention\"") && Catch::Contains("\"moe_router\""));
  CHECK_THROWS_WITH(parse_time(R"("cuda_graph_modules": [])"), Catch::Contains("non-empty list"));
  // The time model refuses a host time per launch outside [0, 1 ms].
  TimeModelOptions bad;
  bad.host_launch_seconds = -1e-6;
  CHECK_THROWS_WITH(TimeModel(profile, bad), Catch::Contains("host_launch_seconds"));
}
