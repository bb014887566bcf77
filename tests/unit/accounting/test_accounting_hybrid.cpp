// The op list of hybrid stacks and of the 2025 attention features (accounting/ops_mixers.cpp,
// ops_attention.cpp, ops_stack.cpp; config/config_layers.cpp): native configs counted by hand, the
// bounded-key formulas against brute force, the state a loop multiplies, and the validation.

#include <string>

#include <catch2/catch.hpp>

#include <algorithm>

#include "budget/accounting.hpp"
#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/ops.hpp"
#include "budget/time_model.hpp"
#include "config/config_test_support.hpp"

using namespace budget;

namespace {
// Four layers: Mamba-2 block, MoE block, attention block, dense MLP block (Nemotron-H's M E * -).
const char* const nemotron_like = R"({"name": "nh", "hidden_size": 64, "num_layers": 4,
    "attention": {"num_heads": 4, "head_dim": 16, "num_kv_heads": 2},
    "ffn": {"num_experts": 8, "top_k": 2, "expert_dim": 32, "gated": false, "router_bias": true,
            "num_shared_experts": 1, "shared_expert_dim": 48, "dense_dim": 96},
    "layer_mixers": ["mamba", "none", "attention", "none"],
    "layer_ffns": ["none", "moe", "none", "dense"],
    "mamba": {"num_heads": 8, "head_dim": 16, "state_size": 8, "num_groups": 2, "conv_kernel": 4,
              "chunk_size": 32}})";

std::string error_of(const std::string& text) { return test::config_text_error(text, "c.json"); }

std::int64_t total_of(const std::vector<Op>& ops, OpKind kind) {
  std::int64_t n = 0;
  for (const Op& op : ops) n += op.kind == kind ? op.total_params() : 0;
  return n;
}
}  // namespace

TEST_CASE("hybrid: a Nemotron-like stack of single blocks, counted by hand", "[accounting][hybrid]") {
  const ArchConfig c = parse_arch_config(nemotron_like, "nh.json");
  const std::vector<Op> ops = layer_ops(c, paper_workload());
  // Mamba: inner 8·16 = 128, B/C 2·2·8 = 32: in_proj 64·(256 + 32 + 8) = 18,944; conv (128 + 32)·4
  // + 160 biases = 800; A_log, D, dt_bias 24; out_proj 128·64 = 8,192.
  CHECK(total_of(ops, OpKind::mixer_in_projection) == 18'944);
  CHECK(total_of(ops, OpKind::short_convolution) == 800);
  CHECK(total_of(ops, OpKind::ssd_scan) == 24);
  CHECK(total_of(ops, OpKind::mixer_out_projection) == 8'192);
  // Attention (one layer): 64·(64 + 64) + 64·64 = 12,288. MoE (one layer): router 8·64 + 8, 8 experts
  // of 2·64·32 = 4,096, shared 2·64·48 = 6,144: 39,432. Dense (one layer): 2·64·96 = 12,288.
  CHECK(total_of(ops, OpKind::qkv_projection) + total_of(ops, OpKind::output_projection) == 12'288);
  CHECK(total_of(ops, OpKind::router) + total_of(ops, OpKind::routed_experts) + total_of(ops, OpKind::shared_experts) ==
        39'432);
  CHECK(total_of(ops, OpKind::dense_ffn) == 12'288);
  // Norms: one a block (64) and the Mamba gated norm (128): 4·64 + 128, + the final 64.
  CHECK(total_of(ops, OpKind::norms) == 4 * 64 + 128);
  const Budgets b = account(c, paper_workload());
  CHECK(b.non_embedding_params_total == 18'944 + 800 + 24 + 8'192 + 12'288 + 39'432 + 12'288 + 4 * 64 + 128 + 64);
  CHECK(b.params_by_component.mixers == 18'944 + 800 + 24 + 8'192);
  // SSD FLOPs a token: 8 heads · (2·32·(8 + 16) + 4·8·16 + 2·8·16/32) = 8 · 2,056 = 16,448.
  for (const Op& op : ops) {
    if (op.kind == OpKind::ssd_scan) CHECK(op.forward_flops == 16'448.0);
  }
  // KV: one attention layer, 2·2·16 = 64 per token; state: 8·16·8 + 160·3 = 1,504 a sequence.
  CHECK(b.kv_elements_per_token == 64);
  CHECK(b.state_elements_per_sequence == 1'504);
  // Residual adds: one a block, four single-block layers.
  for (const Op& op : ops) {
    if (op.kind == OpKind::residual_add) CHECK(op.matrices == 1);
  }
}

TEST_CASE("hybrid: a loop multiplies the recurrent state as it does the KV cache", "[accounting][hybrid]") {
  ArchConfig c = parse_arch_config(nemotron_like, "nh.json");
  c.loop = LoopConfig{1, 3, 3};  // Mamba, MoE, attention blocks three times
  const Budgets b = account(c, paper_workload());
  CHECK(b.executed_layers == 4 + 2 * 3);
  CHECK(b.state_elements_per_sequence == 3 * 1'504);
  CHECK(b.kv_elements_per_token == 3 * 64);
  // Parameters once.
  c.loop.reset();
  CHECK(account(c, paper_workload()).non_embedding_params_total == b.non_embedding_params_total);
}

TEST_CASE("hybrid: native JSON round-trips every per-layer field", "[accounting][hybrid][config]") {
  const std::string text = R"({"name": "x", "hidden_size": 64, "num_layers": 4,
      "attention": {"num_heads": 4, "head_dim": 16, "num_kv_heads": 2, "chunk_size": 8, "sinks": true,
                    "output_gate": true, "layer_types": ["full", "chunked", "full", "full"]},
      "ffn": {"num_experts": 8, "top_k": 2, "expert_dim": 32, "dense_dim": 64},
      "layer_mixers": ["linear_attention", "attention", "attention", "linear_attention"],
      "layer_ffns": ["dense", "moe", "moe", "moe"],
      "linear_attention": {"num_key_heads": 2, "num_value_heads": 4, "key_head_dim": 8, "value_head_dim": 8},
      "settings": {"partial_rotary_factor": 0.25, "nope_layers": [3]}})";
  const ArchConfig c = parse_arch_config(text, "x.json");
  const std::string native = arch_config_to_json(c);
  const ArchConfig back = parse_arch_config(native, "back.json");
  CHECK(arch_config_to_json(back) == native);
  CHECK(back.layer_mixers == c.layer_mixers);
  CHECK(back.layer_ffns == c.layer_ffns);
  CHECK(*back.linear_attention == *c.linear_attention);
  CHECK(back.settings == c.settings);
  const Budgets a = account(c, paper_workload()), b = account(back, paper_workload());
  CHECK(a.training_flops_per_token == b.training_flops_per_token);
  CHECK(a.state_elements_per_sequence == b.state_elements_per_sequence);
  // Sinks: 4 heads on each of the two attention layers.
  const std::vector<Op> ops = layer_ops(c, paper_workload());
  CHECK(total_of(ops, OpKind::attention_scores) == 2 * 4);
}

TEST_CASE("hybrid: chunked and top-k key counts equal brute force on a causal window", "[accounting][hybrid]") {
  const Workload w = causal_workload(100);
  const auto scores_keys = [&](const std::string& attention) {
    const ArchConfig c = parse_arch_config(R"({"hidden_size": 64, "num_layers": 1, "attention": {)" + attention +
                                               R"(}, "ffn": {"dense_dim": 64}})",
                                           "c.json");
    for (const Op& op : layer_ops(c, w)) {
      if (op.kind == OpKind::attention_scores) return op.forward_flops / (2.0 * 4 * (16 + 16));
    }
    return -1.0;
  };
  // Chunks of 30 over 100 tokens: query i (1-based) sees ((i − 1) mod 30) + 1 keys.
  double chunked = 0;
  for (int i = 1; i <= 100; ++i) chunked += ((i - 1) % 30) + 1;
  CHECK(scores_keys(R"("num_heads": 4, "head_dim": 16, "chunk_size": 30, "layer_types": ["chunked"])") ==
        Approx(chunked / 100.0));
  // A sliding window of 30: min(i, 30) keys (the indexer's top-k bounds keys the same way).
  double window = 0;
  for (int i = 1; i <= 100; ++i) window += std::min(i, 30);
  CHECK(scores_keys(R"("num_heads": 4, "head_dim": 16, "sliding_window": 30, "layer_types": ["sliding"])") ==
        Approx(window / 100.0));
}

TEST_CASE("hybrid: invalid per-layer configs are refused with the field", "[accounting][hybrid][config]") {
  const std::string head = R"({"hidden_size": 64, "num_layers": 2, "attention": {"num_heads": 4, "head_dim": 16},
      "ffn": {"dense_dim": 64}, )";
  CHECK_THAT(error_of(head + R"("layer_mixers": ["none", "attention"], "layer_ffns": ["none", "dense"]})"),
             Catch::Contains("/layer_ffns: layer 1 has neither a mixer nor an FFN"));
  CHECK_THAT(error_of(head + R"("layer_mixers": ["linear_attention", "attention"]})"),
             Catch::Contains("/linear_attention: layer_mixers has \"linear_attention\" layers but linear_attention is absent"));
  CHECK_THAT(error_of(head + R"("layer_mixers": ["mamba"]})"),
             Catch::Contains("/layer_mixers: layer_mixers lists 1 layers but num_layers is 2"));
  CHECK_THAT(error_of(head + R"("layer_mixers": ["mamba", "attention"], "mamba": {"num_heads": 6, "head_dim": 8,
      "state_size": 4, "num_groups": 4}})"),
             Catch::Contains("/mamba/num_groups: num_groups 4 does not divide num_heads 6"));
  CHECK_THAT(error_of(head + R"("layer_ffns": ["moe", "dense"]})"), Catch::Contains("/layer_ffns: \"moe\" layers but num_experts is 0"));
  CHECK_THAT(error_of(R"({"hidden_size": 64, "num_layers": 2, "attention": {"num_heads": 4, "head_dim": 16,
      "layer_types": ["chunked", "full"]}, "ffn": {"dense_dim": 64}})"),
             Catch::Contains("/attention/chunk_size: layer_types has \"chunked\" layers but chunk_size is 0"));
  CHECK_THAT(error_of(R"({"hidden_size": 64, "num_layers": 2, "attention": {"num_heads": 4, "head_dim": 16,
      "indexer": {"num_heads": 2, "head_dim": 8, "top_k": 4}}, "ffn": {"dense_dim": 64}})"),
             Catch::Contains("/attention/indexer: an indexer needs multi-head latent attention"));
  CHECK_THAT(error_of(R"({"hidden_size": 64, "num_layers": 2, "attention": {"num_heads": 4, "head_dim": 16,
      "layer_types": ["full", "sliding"], "sliding_window": 8}, "ffn": {"dense_dim": 64},
      "layer_mixers": ["attention", "linear_attention"], "linear_attention": {"num_key_heads": 1, "num_value_heads": 1,
      "key_head_dim": 8, "value_head_dim": 8}})"),
             Catch::Contains("/attention/layer_types: layer 2 is \"sliding\" but its mixer is \"linear_attention\""));
  CHECK_THAT(error_of(head + R"("mtp_layers": 1, "layer_ffns": ["dense", "dense"]})"),
             Catch::Contains("/mtp_layers: mtp_layers 1 with per-layer mixers or FFNs is not modelled"));
}

TEST_CASE("hybrid: ops without profile rows are timed at the profile's peaks and flagged", "[time][hybrid]") {
  const ArchConfig c = load_arch_config(std::string(BUDGET_TEST_DATA_DIR) + "/hf/qwen3-next-80b-a3b-thinking.json");
  const TimeModel model(load_calibration_profile(std::string(BUDGET_SOURCE_DIR) +
                                                 "/cuda_profiler/profiles/h200-torch-eager.json"));
  Workload w = paper_workload();
  const StepTime st = predict_step_time(model, c, w);
  const CalibrationPeaks& peaks = model.profile().peaks;
  bool scan_seen = false;
  for (const OpStepTime& op : st.by_op) {
    if (op.kind != OpKind::delta_rule_scan) continue;
    scan_seen = true;
    CHECK(op.no_rows);
    CHECK_THAT(op.note, Catch::Contains("extrapolated: no profile rows for delta_rule_scan"));
    // The roofline: max(3·forward FLOPs / GEMM peak, 3·forward bytes / copy bandwidth) over 32,768
    // tokens and 36 layers, times the layer correction of its class, plus its launches and the
    // gradient pass of its 64 weights (checked: at least the roofline).
    const std::vector<Op> ops = layer_ops(c, w);
    for (const Op& o : ops) {
      if (o.kind != OpKind::delta_rule_scan) continue;
      const double T = 32'768.0;
      const double roofline = std::max(3.0 * o.forward_flops * T / (peaks.bf16_gemm_tflops * 1e12),
                                       3.0 * o.forward_bytes * T / (peaks.copy_gbytes_per_s * 1e9));
      CHECK(op.seconds_per_step > 0.5 * 36 * roofline);
    }
  }
  CHECK(scan_seen);
  // The step time of the indexed path (time ranking, cluster) is the same, bit for bit.
  CHECK(predict_step_seconds(model, c, w) == st.seconds_per_step);
}
