// Issue 32: the run file and the calibration from measured runs.

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/error.hpp"
#include "budget/run_fit.hpp"
#include "runs/runs_test_support.hpp"

using namespace budget;

namespace {
const std::string source_dir = BUDGET_SOURCE_DIR;
const std::string runs_file = source_dir + "/data/runs/measured_runs.jsonl";

const MeasuredRun& run_named(const std::vector<MeasuredRun>& runs, const std::string& id) {
  return test::with_id(runs, id);
}

const RunPrediction& prediction_named(const RunFitResult& fit, const std::string& id) {
  return test::with_id(fit.runs, id);
}
}  // namespace

TEST_CASE("run file: the handed-over runs read, unknown keys and half-given setups are refused by name", "[runs]") {
  const std::vector<MeasuredRun> runs = load_measured_runs(runs_file);
  CHECK(runs.size() == 86);
  CHECK(runs.front().gpu == "NVIDIA B200");
  CHECK(runs.front().layout.pp == 2);
  REQUIRE_THROWS_WITH(parse_measured_runs(R"({"id":"x","gpu":"NVIDIA B200","layout":{"tp":1},"hf_config":{},"bogus":1})",
                                          "r.jsonl"),
                      Catch::Contains("bogus"));
  // "time" belongs with "layout": Megatron-LM's arguments give those settings themselves.
  const MeasuredRun& dsv2 = run_named(runs, "deepseekv2_tp1_ep8_pp1_dp8_l4_mbc4_cef");
  CHECK(dsv2.moe.pad_to_capacity);
  CHECK(dsv2.layout.dispatcher == MoeDispatcher::alltoall);
  CHECK(dsv2.config.mtp_layers == 0);  // the runs have no MTP (the converter sets num_nextn_predict_layers 0)
}

TEST_CASE("run file: a run given by its Megatron-LM arguments reads as the same run given by its layout", "[runs]") {
  const std::vector<MeasuredRun> by_layout = load_measured_runs(runs_file);
  const std::vector<MeasuredRun> by_args = load_measured_runs(source_dir + "/tests/data/runs/megatron_args_runs.jsonl");
  REQUIRE(by_args.size() == 2);
  const CalibrationProfile profile = load_calibration_profile(source_dir + "/cuda_profiler/profiles/b200-published.json");
  for (const MeasuredRun& a : by_args) {
    CAPTURE(a.id);
    const MeasuredRun& l = run_named(by_layout, a.id);
    CHECK(a.layout.tp == l.layout.tp);
    CHECK(a.layout.pp == l.layout.pp);
    CHECK(a.layout.ep == l.layout.ep);
    CHECK(a.layout.data_parallel() == l.layout.data_parallel());
    CHECK(a.layout.micro_batches == l.layout.micro_batches);
    CHECK(a.layout.seq_len == l.layout.seq_len);
    CHECK(a.layout.capacity_factor == l.layout.capacity_factor);
    CHECK(a.moe.pad_to_capacity == l.moe.pad_to_capacity);
    CHECK(a.overlap.dp == l.overlap.dp);
    CHECK(a.layout.fp8 == l.layout.fp8);
    CHECK(main_grad_bytes(a.layout) == 4);  // --accumulate-allreduce-grads-in-fp32
    CHECK(predict_measured_run(profile, a) == Approx(predict_measured_run(profile, l)).epsilon(1e-12));
  }
  // A Megatron-LM argument the reader refuses names the run's field and the argument.
  const std::string bad =
      R"({"id":"x","gpu":"NVIDIA B200","hf_config":{"architectures":["LlamaForCausalLM"],"model_type":"llama",)"
      R"("hidden_size":1024,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":8,)"
      R"("intermediate_size":4096,"vocab_size":1000},"cluster":{"schema":"budget.cluster","schema_version":1,)"
      R"("gpu":{"name":"NVIDIA B200","memory_GiB":100,"compute":{"datasheet":{"bf16_dense_TFLOPs":2250,"source":"x"}}},)"
      R"("gpus_per_node":8,"nodes":1,"intra_node":{"bandwidth_GBps":900,"latency_us":3},)"
      R"("inter_node":{"bandwidth_GBps":50,"latency_us":5}},)"
      R"("megatron_args":"--tensor-model-paralel-size 2 --seq-length 1024","step_time_s":1})";
  REQUIRE_THROWS_WITH(parse_measured_runs(bad, "r.jsonl"),
                      Catch::Contains("megatron_args") && Catch::Contains("--tensor-model-paralel-size"));
}

TEST_CASE("Megatron-LM log: the arguments block, the iteration lines and the memory report of a constructed log",
          "[runs]") {
  const MegatronLog log = load_megatron_log(source_dir + "/tests/data/runs/deepseekv2_ep8_mbc4.log");
  REQUIRE(log.iterations.size() == 4);
  CHECK(log.iterations[2].iteration == 3);
  CHECK(log.iterations[2].elapsed_ms == 366.6);
  CHECK(log.iterations[0].global_batch_size == 32);
  CHECK(log.step_time_s() == Approx(0.3672));  // median of 372.9, 366.6, 367.2 (the first, start-up, left out)
  CHECK(log.max_allocated_mib == 46726.22);
  // Values Megatron derives after parsing are skipped and listed; None and default flags give no word.
  CHECK(std::find(log.derived.begin(), log.derived.end(), "world_size") != log.derived.end());
  CHECK(std::find(log.arguments.begin(), log.arguments.end(), "--fp8-format") == log.arguments.end());
  CHECK(std::find(log.arguments.begin(), log.arguments.end(), "--disable-bias-linear") != log.arguments.end());
  CHECK(std::find(log.arguments.begin(), log.arguments.end(), "--no-gradient-accumulation-fusion") == log.arguments.end());

  // The run the log describes: the layout of the same run given by its layout, the log's step time
  // and memory.
  const std::vector<MeasuredRun> runs = load_measured_runs(source_dir + "/tests/data/runs/log_runs.jsonl");
  const MeasuredRun& fromlog = runs.front();
  const std::vector<MeasuredRun> all_runs = load_measured_runs(runs_file);  // kept: run_named refers into it
  const MeasuredRun& listed = run_named(all_runs, fromlog.id);
  CHECK(fromlog.layout.ep == listed.layout.ep);
  CHECK(fromlog.layout.micro_batches == listed.layout.micro_batches);
  CHECK(fromlog.moe.pad_to_capacity);
  CHECK(fromlog.step_time_s == Approx(0.3672));
  CHECK(fromlog.memory_gib == Approx(46726.22 / 1024.0));

  // Malformed logs: the line and what is wrong.
  REQUIRE_THROWS_WITH(parse_megatron_log(" iteration 1/2 | elapsed time per iteration (ms): 5.0 |", "a.log"),
                      Catch::Contains("no arguments block"));
  const std::string head = "------------------------ arguments ------------------------\n  seq_length ....... 4096\n"
                           "-------------------- end of arguments ---------------------\n";
  REQUIRE_THROWS_WITH(parse_megatron_log(head, "a.log"), Catch::Contains("no \"elapsed time per iteration (ms)\" line"));
  REQUIRE_THROWS_WITH(parse_megatron_log(head + " iteration 1/2 | elapsed time per iteration (ms): fast |", "a.log"),
                      Catch::Contains("line 4") && Catch::Contains("not a non-negative number"));
  REQUIRE_THROWS_WITH(parse_megatron_log("------------------------ arguments ------------------------\n  seq_length 4096\n", "a.log"),
                      Catch::Contains("line 2") && Catch::Contains("dots"));
  REQUIRE_THROWS_WITH(parse_megatron_log("------------------------ arguments ------------------------\n", "a.log"),
                      Catch::Contains("no end line"));
  CHECK(parse_megatron_log(head + " iteration 1/2 | elapsed time per iteration (ms): 5.0 |", "a.log").step_time_s() < 0);

  // An empty value is Python's str(''): a string argument this tool does not model (--wandb-project,
  // whose default is '') is left out; a number or flag printed empty, found by fuzz_megatron_log,
  // was an empty command-line word and is now refused by line and name.
  const std::string open = "------------------------ arguments ------------------------\n";
  const std::string close = "-------------------- end of arguments ---------------------\n"
                            " iteration 1/2 | elapsed time per iteration (ms): 5.0 |\n";
  const MegatronLog wandb = parse_megatron_log(open + "  seq_length ....... 4096\n  wandb_project ........ \n" + close, "a.log");
  CHECK(wandb.arguments == std::vector<std::string>{"--seq-length", "4096"});
  REQUIRE_THROWS_WITH(parse_megatron_log(open + "  lr_warmup_iters ..........\n" + close, "a.log"),
                      Catch::Contains("a.log") && Catch::Contains("line 2") && Catch::Contains("\"lr_warmup_iters\" (type int) prints no value"));
  REQUIRE_THROWS_WITH(parse_megatron_log(open + "  bf16 ......  \n" + close, "a.log"),
                      Catch::Contains("\"bf16\" (a flag) prints no value"));
}

TEST_CASE("run fit: B200 BF16 runs, leave-one-run-out median |error| within issue 32's 8%, the MoE runs", "[runs]") {
  const CalibrationProfile profile =
      load_calibration_profile(source_dir + "/cuda_profiler/profiles/b200-published.json");
  const std::vector<RunFitResult> fits = fit_measured_runs(profile, load_measured_runs(runs_file), "data/runs/measured_runs.jsonl");
  REQUIRE(fits.front().fit.precision == Precision::bf16);
  const RunFitResult& bf16 = fits.front();
  CHECK(bf16.fit.fitted_on.size() == 31);
  CHECK(bf16.fit.validated_on.size() == 13);
  CHECK(bf16.fit.loo_median_error <= 0.08);
  CHECK(bf16.validation_median_error <= 0.08);
  // The grouped GEMMs are timed from the GEMM rows: one factor for both.
  CHECK(bf16.fit.expert_gemms == bf16.fit.gemm);
  // Before the fit the published B200 rows price these runs fast (the machine's GEMMs run at about
  // 0.7 of aiconfigurator's: SimuMax's own kernel table, docs/calibration.md): above 20%.
  CHECK(bf16.before_median_error > 0.2);
  // The DeepSeek-V2/V3 runs (EP 4 and 8, capacity factor 1 padded): within 13.5% after the fit (issue
  // 32's goal is 10% on other MoE runs; docs/calibration.md gives the table). The worst,
  // DeepSeek-V3 EP 4 PP 2 at 4 micro-batches, went from 11.3% to 13.1% with the fitted host time per
  // launch (30 µs, from 5: docs/calibration.md, "Host time per launch").
  for (const RunPrediction& p : bf16.runs) {
    if (p.id.rfind("deepseek", 0) != 0) continue;
    CAPTURE(p.id);
    CHECK(std::abs(p.predicted_s / p.measured_s - 1.0) < 0.135);
  }
  // The shipped profile carries this fit; a run predicted with it applies the same factors.
  REQUIRE(profile.run_fits.size() == fits.size());
  CHECK(profile.run_fits.front() == bf16.fit);
}

TEST_CASE("run fit: the published Qwen3-30B-A3B run on 16 H100 (HybridEP, EP overlap) and its A/B without overlap",
          "[runs]") {
  // Validation only (no H100 BF16 run is fitted): the profile's published rows and the MoE physics.
  const CalibrationProfile profile =
      load_calibration_profile(source_dir + "/cuda_profiler/profiles/h100-sxm-published.json");
  const std::vector<RunFitResult> fits = fit_measured_runs(profile, load_measured_runs(runs_file), "runs");
  const RunFitResult* bf16 = nullptr;
  for (const RunFitResult& f : fits) bf16 = f.fit.precision == Precision::bf16 ? &f : bf16;
  REQUIRE(bf16 != nullptr);
  CHECK(bf16->fit.fitted_on.empty());
  const RunPrediction& run = prediction_named(*bf16, "mbridge-qwen3-30b-a3b-h100-bf16-n16");
  const RunPrediction& ab = prediction_named(*bf16, "mbridge-qwen3-30b-a3b-h100-bf16-n16-no-ep-overlap");
  CHECK(std::abs(run.before_s / run.measured_s - 1.0) < 0.10);  // 20.15 s measured; issue 32 quotes 37.8 s before
  // No run fitted: the fit's prediction is the model's own (its factors 1, no constant), overlap and all.
  CHECK(run.predicted_s == Approx(run.before_s).epsilon(1e-9));
  CHECK(ab.predicted_s == Approx(ab.before_s).epsilon(1e-9));
  CHECK(std::abs(ab.before_s / ab.measured_s - 1.0) < 0.05);
  CHECK(ab.before_s > run.before_s);  // the overlap hides part of the all-to-all
}

TEST_CASE("run fit: a fit's precision is the one precision enum, read and written by its names", "[runs][recipe]") {
  // The shipped H100 profile carries a bf16 fit and an fp8-tensorwise one (Precision's names,
  // budget/kernel_stack.hpp): read as the enum, written back as the same names.
  const CalibrationProfile profile =
      load_calibration_profile(source_dir + "/cuda_profiler/profiles/h100-sxm-published.json");
  REQUIRE(profile.run_fits.size() == 2);
  CHECK(profile.run_fits[0].precision == Precision::bf16);
  CHECK(profile.run_fits[1].precision == Precision::fp8_tensorwise);
  const std::string text = calibration_profile_to_json(profile);
  CHECK(text.find("\"precision\": \"fp8-tensorwise\"") != std::string::npos);
  CHECK(parse_calibration_profile(text, "p.json").run_fits == profile.run_fits);
  // NVFP4 GEMMs are not timed: no run fit of it (refused, naming the field).
  std::string nvfp4 = text;
  nvfp4.replace(nvfp4.find("\"fp8-tensorwise\""), 16, "\"nvfp4\"");
  CHECK_THROWS_WITH(parse_calibration_profile(nvfp4, "p.json"), Catch::Contains("precision") && Catch::Contains("nvfp4"));
  // Each FP8 recipe is one precision and back (Megatron-LM's tensorwise: TE's current scaling,
  // fp8-tensorwise); bf16 and nvfp4 time no FP8 recipe.
  for (const Fp8Recipe r :
       {Fp8Recipe::none, Fp8Recipe::delayed, Fp8Recipe::tensorwise, Fp8Recipe::blockwise, Fp8Recipe::mxfp8}) {
    CHECK(fp8_recipe_of(kernel_precision(r)) == r);
    CHECK(precision_name(r) == to_string(kernel_precision(r)));
  }
  CHECK(kernel_precision(Fp8Recipe::tensorwise) == Precision::fp8_tensorwise);
  CHECK(kernel_precision(Fp8Recipe::none) == Precision::bf16);
  CHECK(fp8_recipe_of(Precision::nvfp4) == Fp8Recipe::none);
}
