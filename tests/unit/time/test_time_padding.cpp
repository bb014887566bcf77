// Issue 43 item 3: the time model charges what the kernels run. A head dim the target runs padded
// is priced at the padded size, and each expert's grouped GEMM at its padded token count.

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/grid.hpp"
#include "budget/kernel_stack.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"

using namespace budget;

namespace {
const std::string shipped_profile = std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/h200-torch-eager.json";

double op_seconds(const StepTime& t, OpKind kind) {
  double s = 0;
  for (const auto& op : t.by_op) {
    if (op.kind == kind) s += op.seconds_per_step;
  }
  return s;
}

TimeModel model_for(const CalibrationProfile& profile, std::optional<KernelTarget> kernels) {
  TimeModelOptions options;
  options.kernels = std::move(kernels);
  return TimeModel(profile, options);
}
}  // namespace

TEST_CASE("time model: a padded head dim is priced at the head dim the kernel runs", "[time][kernels]") {
  const CalibrationProfile profile = load_calibration_profile(shipped_profile);
  const TimeModel plain = model_for(profile, std::nullopt);
  const TimeModel fa3 = model_for(profile, KernelTarget{"h100-sxm", GpuArch::sm90, AttentionBackend::fa3, Precision::bf16});
  const Workload w = paper_workload();
  ArchConfig d168 = paper_grid().cells[6].baseline;  // 200M, 12 layers, 10 heads (KV 2)
  d168.attention.head_dim = 168;                     // query width 1680, free of hidden
  validate(d168);
  ArchConfig d192 = d168;
  d192.attention.head_dim = 192;
  // By hand: FlashAttention-3 runs 168 on its 192 kernel (hopper/flash_api.cpp:492-509
  // round_up_headdim), so the padded price of 168 is the unpadded model's price of the same
  // attention at 192, every other op alike; and that is more than the unpadded price at 168.
  const double padded = op_seconds(predict_step_time(fa3, d168, w), OpKind::attention_scores);
  const double at_192 = op_seconds(predict_step_time(plain, d192, w), OpKind::attention_scores);
  const double unpadded = op_seconds(predict_step_time(plain, d168, w), OpKind::attention_scores);
  CHECK(padded == Approx(at_192).epsilon(1e-12));
  CHECK(padded > unpadded);
  // A native head dim is priced as without a target.
  const ArchConfig d128 = paper_grid().cells[6].baseline;
  CHECK(op_seconds(predict_step_time(fa3, d128, w), OpKind::attention_scores) ==
        Approx(op_seconds(predict_step_time(plain, d128, w), OpKind::attention_scores)).epsilon(1e-12));
  CHECK(executed_attention_head_dims(fa3.options().kernels, 168, 168) == std::pair<std::int64_t, std::int64_t>{192, 192});
}

TEST_CASE("time model: grouped GEMMs are priced at padded tokens per expert", "[time][kernels]") {
  // TE quantization.py:262-278: MXFP8 pads each expert's rows to 32: 100 rows -> 128, 4 -> 32.
  const std::optional<KernelTarget> mx = KernelTarget{"b200", GpuArch::sm100, AttentionBackend::te_default, Precision::mxfp8};
  CHECK(padded_expert_rows(mx, 100) == 128);
  CHECK(padded_expert_rows(mx, 4) == 32);
  CHECK(padded_expert_rows(mx, 64) == 64);
  CHECK(padded_expert_rows(std::nullopt, 100) == 100);
  const CalibrationProfile profile = load_calibration_profile(shipped_profile);
  const Workload w = paper_workload();
  ArchConfig c = paper_grid().cells[6].baseline;
  // Many small experts: the mean rows per expert are far from a multiple of 32, so padding costs.
  c.ffn.num_experts = 1000;
  validate(c);
  const double padded = op_seconds(predict_step_time(model_for(profile, mx), c, w), OpKind::routed_experts);
  const double unpadded = op_seconds(predict_step_time(model_for(profile, std::nullopt), c, w), OpKind::routed_experts);
  CHECK(padded > unpadded);
}

TEST_CASE("time model: an FP8 recipe pads the grouped GEMMs without a kernel target", "[time][kernels]") {
  // Megatron pads each expert's rows under FP8 whatever GPU is named (moe/experts.py:890-903), so a
  // layout's FP8 recipe alone (layout --fp8-recipe, no --gpu) prices the rows a kernel target of the
  // same precision does: MXFP8 32 (TE quantization.py:262-278). 1000 experts of the 200M cell: their
  // mean rows are off 32 (the test above: padded > unpadded), so without the recipe's padding the
  // two prices would differ.
  // b200-published: B200's published table, with FP8 (MXFP8) GEMM rows.
  const CalibrationProfile profile =
      load_calibration_profile(std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/b200-published.json");
  const Workload w = paper_workload();
  ArchConfig c = paper_grid().cells[6].baseline;
  c.ffn.num_experts = 1000;
  validate(c);
  TimeModelOptions recipe_only;
  recipe_only.recipe.fp8 = Fp8Recipe::mxfp8;
  // The eager stack times each expert's rows (the Megatron-Core stack rounds each group to 128 rows,
  // which a 32-row padding never changes).
  recipe_only.stack = KernelStack::pytorch_eager;
  TimeModelOptions with_target = recipe_only;
  with_target.kernels = KernelTarget{"b200", GpuArch::sm100, AttentionBackend::te_default, Precision::mxfp8};
  const double by_recipe = op_seconds(predict_step_time(TimeModel(profile, recipe_only), c, w), OpKind::routed_experts);
  const double by_target = op_seconds(predict_step_time(TimeModel(profile, with_target), c, w), OpKind::routed_experts);
  CHECK(by_recipe == Approx(by_target).epsilon(1e-12));
  // BF16 pads nothing: with and without a BF16 target the rows are priced alike.
  TimeModelOptions bf16_target;
  bf16_target.kernels = KernelTarget{"h100-sxm", GpuArch::sm90, AttentionBackend::te_default, Precision::bf16};
  CHECK(op_seconds(predict_step_time(TimeModel(profile, bf16_target), c, w), OpKind::routed_experts) ==
        Approx(op_seconds(predict_step_time(TimeModel(profile, TimeModelOptions{}), c, w), OpKind::routed_experts))
            .epsilon(1e-12));
}
