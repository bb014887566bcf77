// Issue 32: profiles from published kernel tables (their rebuild, provenance, FP8) and the
// Megatron-Core/TE stack in the step time (the indexed path bit for bit the row path's).

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/config_hf.hpp"
#include "budget/error.hpp"
#include "budget/run_fit.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"

using namespace budget;

namespace {
const std::string source_dir = BUDGET_SOURCE_DIR;
const std::string kernels = source_dir + "/data/kernels/kernels.json";

ArchConfig llama_70b() {
  return parse_hf_config(R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":8192,
    "num_hidden_layers":2,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":28672,
    "hidden_act":"silu","vocab_size":128256,"tie_word_embeddings":false})",
                         "llama");
}

Workload step_of(std::int64_t tokens) {
  Workload w = causal_workload(8192);
  w.tokens_per_step = tokens;
  return w;
}
}  // namespace

TEST_CASE("published profiles: the shipped files are the builder's output (and the run fits of the runs file)",
          "[time][published]") {
  struct Case { const char* key; const char* file; bool runs; };
  for (const Case c : {Case{"A100_SXM4_80GB", "a100-80gb", false}, Case{"H100_SXM", "h100-sxm", true},
                       Case{"H200_SXM", "h200", false}, Case{"B200", "b200", true}, Case{"GB200", "gb200", true},
                       Case{"B300", "b300", false}, Case{"GB300", "gb300", false}}) {
    CAPTURE(c.key);
    const CalibrationProfile shipped =
        load_calibration_profile(source_dir + "/cuda_profiler/profiles/" + c.file + "-published.json");
    CalibrationProfile built = load_published_kernels_profile(kernels, c.key);
    if (c.runs) {
      const std::string runs = "data/runs/measured_runs.jsonl";
      for (const RunFitResult& r : fit_measured_runs(built, load_measured_runs(source_dir + "/" + runs), runs)) {
        built.run_fits.push_back(r.fit);
      }
    }
    built.source.created = shipped.source.created;
    built.source.notes = shipped.source.notes;
    CHECK(built.rows == shipped.rows);
    CHECK(built.peaks == shipped.peaks);
    CHECK(built.run_fits.size() == shipped.run_fits.size());
    CHECK(shipped.source.kind == "published");
    CHECK(shipped.source.stack == "megatron-core-te");
    CHECK_FALSE(shipped.source.references.empty());
  }
}

TEST_CASE("published profiles: the 8192³ GEMM peak is the table's row, GB200 is B200's carried by the best-shape ratio",
          "[time][published]") {
  const CalibrationProfile b200 = load_published_kernels_profile(kernels, "B200");
  const CalibrationProfile gb200 = load_published_kernels_profile(kernels, "GB200");
  // The best-shape bf16 GEMM rates measured the same way (ml-engineering's MAMF rows of kernels.json):
  // B200 1745, GB200 1822 TFLOP/s (the datasheets' 2250 and 2500 are not what the runs show).
  CHECK(gb200.peaks.bf16_gemm_tflops == Approx(b200.peaks.bf16_gemm_tflops * 1822.0 / 1745.0).epsilon(1e-12));
  CHECK(gb200.device.sm_count == 148);
  std::size_t carried = 0;
  for (const CalibrationRow& r : gb200.rows) carried += r.carried_from == "NVIDIA B200" ? 1 : 0;
  CHECK(carried > 500);  // every GEMM row of the three tables
  REQUIRE_THROWS_WITH(load_published_kernels_profile(kernels, "MI300X"), Catch::Contains("has no published profile"));
}

TEST_CASE("published profiles: B300 and GB300 read their own GEMM tables and carry B200's cuDNN attention",
          "[time][published]") {
  const CalibrationProfile b200 = load_published_kernels_profile(kernels, "B200");
  // Each GPU's own 8192³ bf16 cuBLAS row of aiconfigurator's table (kernels.json): B300 709.135 µs,
  // GB300 565.006 µs, i.e. 2·8192³ / t = 1550.50 and 1946.02 TFLOP/s.
  const CalibrationProfile b300 = load_published_kernels_profile(kernels, "B300");
  const CalibrationProfile gb300 = load_published_kernels_profile(kernels, "GB300");
  CHECK(b300.peaks.bf16_gemm_tflops == Approx(1550.497).epsilon(1e-5));
  CHECK(gb300.peaks.bf16_gemm_tflops == Approx(1946.018).epsilon(1e-5));
  CHECK(b300.device.name == "NVIDIA B300");
  CHECK(gb300.device.compute_capability == "10.3");
  CHECK(b300.peaks.datasheet_peak_tflops == 2250.0);
  CHECK(gb300.peaks.datasheet_fp8_tflops == 5000.0);
  // The attention factors, computed by hand from kernels.json's trtllm_mha bf16 prefill rows (24
  // shapes each; median of the per-shape time ratios, the even count's two middles averaged):
  // GB300 / B200 at SGLang 0.5.14 = 0.809124; B300 / GB300 at 0.5.10 = 1.073672.
  const double gb300_factor = 0.8091236689, b300_factor = 0.8091236689 * 1.0736717514;
  std::vector<double> b200_attention;
  for (const CalibrationRow& r : b200.rows) {
    if (r.op == ProfileOp::attention) b200_attention.push_back(r.ms);
  }
  REQUIRE(b200_attention.size() == 18);  // cuDNN forward and backward, 9 shapes each
  for (const auto& [profile, factor] : {std::pair{&b300, b300_factor}, std::pair{&gb300, gb300_factor}}) {
    std::vector<double> carried;
    std::size_t gemms = 0;
    for (const CalibrationRow& r : profile->rows) {
      if (r.op == ProfileOp::attention) {
        CHECK(r.carried_from == "NVIDIA B200");
        CHECK(r.backend == "cudnn");
        carried.push_back(r.ms);
      } else if (r.op == ProfileOp::gemm) {
        CHECK(r.carried_from.empty());  // its own table
        ++gemms;
      }
    }
    CHECK(gemms == 534);  // 384 bf16 + 75 FP8 per-token + 75 FP8 block-scaled
    REQUIRE(carried.size() == b200_attention.size());
    for (std::size_t i = 0; i < carried.size(); ++i) CHECK(carried[i] == Approx(b200_attention[i] * factor).epsilon(1e-9));
    CHECK_THAT(profile->source.method, Catch::Contains("cuDNN attention carried from B200"));
  }
  // A table without GB300's prefill rows cannot carry them: refused, not guessed.
  REQUIRE_THROWS_WITH(profile_from_published_kernels(
                          R"({"gpus": {"B300": {"bf16_dense_tflops": 2250, "hbm_tb_per_s": 7.75}, "B200": {}},
                              "rows": [{"gpu": "B300", "op": "gemm", "dtype": "bf16", "library": "torch F.linear",
                                        "shape": {"m": 8192, "n": 8192, "k": 8192}, "measured": {"time_us": 709}}]})",
                          "k.json", "B300"),
                      Catch::Contains("trtllm_mha prefill rows that carry B200's"));
}

TEST_CASE("published profiles: FP8 GEMMs beat bf16 where rows exist, without FP8 rows the datasheet ratio, A100 refuses",
          "[time][published]") {
  TimeModelOptions fp8;
  fp8.recipe.fp8 = Fp8Recipe::tensorwise;
  const TimeModel h100(load_published_kernels_profile(kernels, "H100_SXM"));
  TimeQuery q;
  q.op = TimeQuery::Op::gemm;
  q.dims = {8192, 8192, 8192, 0, 0, 0};
  const double bf16 = h100.predict_ms(q);
  q.dtype = TimeQuery::Dtype::fp8;
  const double f8 = h100.predict_ms(q);
  CHECK(f8 < bf16);
  CHECK(h100.predict(to_row(q)).ms == f8);
  // GB200's mxfp8 GEMMs: no mxfp8 rows, carried from its FP8 rows (themselves carried from B200).
  const TimeModel gb200(load_published_kernels_profile(kernels, "GB200"));
  q.dtype = TimeQuery::Dtype::mxfp8;
  const TimePrediction mx = gb200.predict(to_row(q));
  CHECK(mx.provenance == TimeProvenance::carried);
  q.dtype = TimeQuery::Dtype::fp8;
  CHECK(mx.ms == gb200.predict(to_row(q)).ms);
  const TimeModel a100(load_published_kernels_profile(kernels, "A100_SXM4_80GB"));
  REQUIRE_THROWS_WITH(a100.predict_ms(q), Catch::Contains("no fp8 rows and no datasheet FP8 peak"));
}

TEST_CASE("Megatron-Core stack: the step's provenance shares sum to it, the indexed path equals the row path",
          "[time][published]") {
  const CalibrationProfile profile = load_published_kernels_profile(kernels, "B200");
  for (const Fp8Recipe recipe : {Fp8Recipe::none, Fp8Recipe::tensorwise, Fp8Recipe::mxfp8}) {
    for (const bool graphs : {false, true}) {
      TimeModelOptions o;
      o.recipe.fp8 = recipe;
      o.cuda_graphs = graphs;
      const TimeModel model(profile, o);
      const ArchConfig c = llama_70b();
      const Workload w = step_of(8192);
      const StepTime st = predict_step_time(model, c, w);
      CHECK(st.stack == "megatron-core-te");
      double sum = 0;
      for (double s : st.provenance_seconds) sum += s;
      CHECK(sum == Approx(st.seconds_per_step).epsilon(1e-9));
      CHECK(predict_step_seconds(model, c, w) == st.seconds_per_step);
    }
  }
}

TEST_CASE("Megatron-Core stack: no eager layout copies, the fused RoPE and cross-entropy add time",
          "[time][published]") {
  const CalibrationProfile profile = load_published_kernels_profile(kernels, "H100_SXM");
  TimeModelOptions eager;
  eager.stack = KernelStack::pytorch_eager;
  const StepTime e = predict_step_time(TimeModel(profile, eager), llama_70b(), step_of(8192));
  const StepTime te = predict_step_time(TimeModel(profile), llama_70b(), step_of(8192));
  bool eager_layout = false, te_layout = false;
  for (const OpStepTime& op : e.by_op) eager_layout = eager_layout || op.kind == OpKind::attention_layout;
  for (const OpStepTime& op : te.by_op) te_layout = te_layout || op.kind == OpKind::attention_layout;
  CHECK(eager_layout);
  CHECK_FALSE(te_layout);
  // The LM head gains the fused cross-entropy: 6 bytes a logit, V = 128256, T = 8192, at the copy
  // bandwidth (a hand count), plus at most the CPU launch gap of its two kernels.
  double head_e = 0, head_te = 0;
  for (const OpStepTime& op : e.by_op) head_e += op.kind == OpKind::lm_head ? op.seconds_per_step : 0;
  for (const OpStepTime& op : te.by_op) head_te += op.kind == OpKind::lm_head ? op.seconds_per_step : 0;
  const double ce = 6.0 * 128256 * 8192 / (profile.peaks.copy_gbytes_per_s * 1e9);
  CHECK(head_te - head_e == Approx(ce).epsilon(1e-9));
}
