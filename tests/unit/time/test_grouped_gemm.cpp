// Issue 32: the Megatron-Core stack's grouped expert GEMM (time_step.cpp, grouped_gemm_stack_terms())
// against an independent reference: Transformer Engine's grouped GEMMs measured in training on a
// B200 node by SimuMax v1.2 (MooreThreads/SimuMax@4dcaae513ba7679d56c116a17cd4a691ec41e252:
// configs/system/b200_bf16_ceperm.json, accelerator.op.group_matmul.accurate_efficient_factor: the
// share of 2250 TFLOP/s each pass reached; main gradients fp32), on the same machine whose dense
// cuBLAS GEMMs the same file gives at 0.49 of 2250 TFLOP/s at large shapes (matmul, m 4096, k 8192,
// n 28672: 0.494; 14336: 0.494; 57344: 0.487). A profile whose GEMMs run at that rate at every
// shape and whose copy bandwidth is the B200 published profile's stands for the machine; the
// model's routed-expert time of one MoE layer (forward, input and weight gradient of both matrices)
// is compared with the sum of the measured passes.

#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/config.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"

using namespace budget;

namespace {

constexpr double simumax_dense_rate = 0.49 * 2250e12;  // FLOP/s

CalibrationProfile machine_profile() {
  CalibrationProfile p;
  p.device.name = "B200 (SimuMax's node, dense rate)";
  p.peaks.bf16_gemm_tflops = simumax_dense_rate * 1e-12;
  p.peaks.copy_gbytes_per_s = 8000.0 * 0.803;  // b200-published.json: datasheet HBM × cuDNN RMSNorm's reach
  p.source.tool = "test fixture";
  p.source.stack = "megatron-core-te";
  for (std::int64_t M : {2048, 8192, 32768, 131072}) {
    for (std::int64_t K : {1024, 2048, 4096, 8192}) {
      for (std::int64_t N : {1024, 2048, 4096, 8192, 16384}) {
        CalibrationRow r;
        r.op = ProfileOp::gemm;
        r.pass = "forward";
        r.shape = {{"M", M}, {"K", K}, {"N", N}};
        r.ms = 2.0 * double(M) * double(K) * double(N) / simumax_dense_rate * 1e3;
        p.rows.push_back(r);
      }
    }
  }
  return p;
}

struct GroupedCase {
  std::int64_t groups, rows, hidden, expert_dim, top_k;
  double up[3], down[3];  // measured efficiency, forward / input grad / weight grad (of 2250 TFLOP/s)
};

/// One MoE layer of `g.groups` experts whose groups hold `g.rows` rows: the routed experts' seconds.
double model_seconds(const TimeModel& model, const GroupedCase& g) {
  ArchConfig c;
  c.hidden_size = g.hidden;
  c.num_layers = 1;
  c.vocab_size = 0;
  c.attention.num_heads = 8;
  c.attention.num_kv_heads = 8;
  c.attention.head_dim = 128;
  c.ffn.num_experts = g.groups;
  c.ffn.top_k = g.top_k;
  c.ffn.expert_dim = g.expert_dim;
  c.ffn.gated = true;
  Workload w = causal_workload(4096);
  w.tokens_per_step = g.rows * g.groups / g.top_k;
  w.training_passes = 3;
  const StepTime st = predict_step_time(model, c, w);
  double s = 0;
  for (const OpStepTime& op : st.by_op) s += op.kind == OpKind::routed_experts ? op.seconds_per_step : 0.0;
  return s;
}

double measured_seconds(const GroupedCase& g) {
  const double up_flops = 2.0 * double(g.groups) * double(g.rows) * double(g.hidden) * 2.0 * double(g.expert_dim);
  const double down_flops = 2.0 * double(g.groups) * double(g.rows) * double(g.expert_dim) * double(g.hidden);
  double s = 0;
  for (int pass = 0; pass < 3; ++pass) s += up_flops / (g.up[pass] * 2250e12) + down_flops / (g.down[pass] * 2250e12);
  return s;
}

}  // namespace

TEST_CASE("grouped GEMM: TE's grouped GEMMs on a B200 from its dense GEMM rate, weights and main gradients",
          "[time][grouped]") {
  TimeModelOptions o;
  o.cuda_graphs = true;  // kernel time alone, as SimuMax timed it
  o.recipe.optimizer_dtypes.bf16_main_grads = false;  // fp32 main gradients: 4 bytes
  const TimeModel model(machine_profile(), o);
  // SimuMax's rows (ng, M, N, K): DeepSeek-V3 at EP 8 (32 × 1024) and EP 1 (256 × 128), DeepSeek-V2 at
  // EP 8 (20 × 1232) and EP 1 (160 × 154). The up matrix is N = 2·expert_dim, K = H; the down one
  // N = H, K = expert_dim.
  const GroupedCase cases[] = {
      {32, 1024, 7168, 2048, 8, {0.457, 0.435, 0.289}, {0.384, 0.430, 0.274}},
      {256, 128, 7168, 2048, 8, {0.208, 0.226, 0.0775}, {0.178, 0.151, 0.080}},
      {20, 1232, 5120, 1536, 6, {0.513, 0.422, 0.328}, {0.397, 0.389, 0.320}},
      {160, 154, 5120, 1536, 6, {0.1997, 0.1947, 0.0937}, {0.1158, 0.1228, 0.0828}},
  };
  for (const GroupedCase& g : cases) {
    CAPTURE(g.groups, g.rows);
    const double predicted = model_seconds(model, g), measured = measured_seconds(g);
    CAPTURE(predicted, measured);
    CHECK(std::abs(predicted / measured - 1.0) < 0.15);
    // One GEMM of all the rows alone (the weights read once, a 2-byte gradient pass) would be far too
    // fast where the groups are small: the 3 passes at the dense rate.
    const double flops = 3.0 * 2.0 * double(g.groups) * double(g.rows) * 3.0 * double(g.hidden) * double(g.expert_dim);
    if (g.rows < 256) CHECK(flops / simumax_dense_rate < 0.5 * measured);
  }
}

TEST_CASE("grouped GEMM: the weight-gradient pass reads and writes the recipe's main gradients (bf16: fewer bytes)",
          "[time][grouped][recipe]") {
  // The recipe's one main-gradient field prices time as it prices memory (main_grad_bytes(), budget/
  // training_recipe.hpp): 2 × main_grad_bytes per weight in the weight-gradient pass, 4 → 2 with bf16
  // main gradients, so each case's time falls and nothing else changes.
  TimeModelOptions fp32_grads, bf16_grads;
  fp32_grads.cuda_graphs = bf16_grads.cuda_graphs = true;
  bf16_grads.recipe.optimizer_dtypes.bf16_main_grads = true;
  REQUIRE(main_grad_bytes(fp32_grads.recipe) == 4.0);
  REQUIRE(main_grad_bytes(bf16_grads.recipe) == 2.0);
  const TimeModel fp32_model(machine_profile(), fp32_grads), bf16_model(machine_profile(), bf16_grads);
  const GroupedCase g{256, 128, 7168, 2048, 8, {0.208, 0.226, 0.0775}, {0.178, 0.151, 0.080}};
  CHECK(model_seconds(bf16_model, g) < model_seconds(fp32_model, g));
}
