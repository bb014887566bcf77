// Whole layers (issue 21; docs/calibration.md, "Layer rows", "Layer glue", "Layer correction"):
// the glue ops' bytes by hand, layer rows read and written, the correction fit recovering known
// factors, the attention backend chosen by the layer rows, and leave-one-cell-out validation on the
// measured H200 layers (tests/data/time/h200_torch_layers.jsonl; docs/calibration.md,
// "Layer rows").

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "support/accounting_fixtures.hpp"
#include "budget/accounting.hpp"
#include "budget/calibration.hpp"
#include "budget/error.hpp"
#include "budget/ops.hpp"
#include "budget/time_model.hpp"

using namespace budget;

namespace {

const std::string torch_jsonl = std::string(BUDGET_TEST_DATA_DIR) + "/h200_torch_ops.jsonl";
const std::string layers_jsonl = std::string(BUDGET_TEST_DATA_DIR) + "/time/h200_torch_layers.jsonl";

CalibrationProfile h200_with_layers() {
  CalibrationProfile p = load_calibration_profile(torch_jsonl);
  p.layers = load_layer_measurements(layers_jsonl);
  return p;
}

const std::string good_line =
    R"({"run": 1, "cell": "c", "tag": "baseline", "config": {"name": "x", "hidden_size": 672, "num_layers": 10, )"
    R"("attention": {"num_heads": 6, "head_dim": 112, "num_kv_heads": 2}, "ffn": {"num_experts": 64, "top_k": 8, )"
    R"("expert_dim": 544, "gated": true}}, "tokens": 32759, "doc_len": 799, "executed_layers": 10, "layer_ms": 11.7, )"
    R"("attention_backend_ms": {"flash": 1.8, "cudnn": "refused: no kernel"}})";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("layer glue: residual adds, attention layout, routing weights, combine zeroing, fp32 router (bytes by hand)",
          "[time][ops]") {
  const ArchConfig c = test::toy_moe();  // H 64, 4 layers, 4 heads × 16 (KV 2), 8 experts top 2
  const auto ops = layer_ops(c, test::toy_workload());
  std::map<OpKind, const Op*> by_kind;
  for (const Op& op : ops) by_kind[op.kind] = &op;
  CHECK(by_kind.at(OpKind::residual_add)->forward_bytes == 2 * 3 * 2 * 64);          // 2 adds: read 2 rows, write 1
  CHECK(by_kind.at(OpKind::attention_layout)->forward_bytes == 4 * 16 * (4 + 2 * 2) + 4 * 64);  // q, k, v + output
  CHECK(by_kind.at(OpKind::attention_layout)->in_features == 16);
  CHECK(by_kind.at(OpKind::routing_weights)->forward_bytes == 4 * 2 * 64 + 6 * 2);
  CHECK(by_kind.at(OpKind::combine_zero)->forward_bytes == 2 * 64);
  CHECK(by_kind.at(OpKind::router_softmax_fp32)->forward_bytes == 14 * 8);
  for (OpKind k : {OpKind::residual_add, OpKind::attention_layout, OpKind::routing_weights, OpKind::combine_zero,
                   OpKind::router_softmax_fp32}) {
    CHECK(is_layer_glue(k));
    CHECK(is_memory_bound(k));
    CHECK(time_class_of(k) == TimeClass::glue);
    CHECK(by_kind.at(k)->forward_flops == 0);
    CHECK(by_kind.at(k)->params_per_layer == 0);
    CHECK(by_kind.at(k)->executed_layers == 4);
  }
  // A dense model has residual adds and the layout, no routing glue.
  const auto dense = layer_ops(test::toy_dense(), test::toy_workload());
  CHECK(std::count_if(dense.begin(), dense.end(), [](const Op& op) { return is_layer_glue(op.kind); }) == 2);
  // Budgets are unchanged by the glue: FLOPs and parameters are those of the other ops.
  double glue_flops = 0, other_flops = 0;
  for (const Op& op : ops) (is_layer_glue(op.kind) ? glue_flops : other_flops) += op.total_forward_flops();
  CHECK(glue_flops == 0);
  CHECK(account(c, test::toy_workload()).forward_flops_per_token == Approx(other_flops));
}

TEST_CASE("layer glue: timed from bytes at the copy bandwidth with their backward and launches", "[time]") {
  CalibrationProfile p = load_calibration_profile(torch_jsonl);
  const TimeModel model(p);
  Workload w = test::toy_workload();
  w.tokens_per_step = 4096;
  const StepTime t = predict_step_time(model, test::toy_moe(), w);
  CHECK_FALSE(t.layer_corrected);
  CHECK(t.launch_seconds_per_step == 0);
  const double bw = p.peaks.copy_gbytes_per_s * 1e9;
  std::map<OpKind, const OpStepTime*> by_kind;
  for (const auto& op : t.by_op) by_kind[op.kind] = &op;
  // residual: forward + the same bytes backward; routing weights: backward twice the forward;
  // combine zeroing: forward only; 4 layers.
  CHECK(by_kind.at(OpKind::residual_add)->seconds_per_step == Approx(4 * 768.0 * 4096 * 2 / bw));
  CHECK(by_kind.at(OpKind::routing_weights)->seconds_per_step == Approx(4 * (4 * 2 * 64 + 12.0) * 4096 * 3 / bw));
  CHECK(by_kind.at(OpKind::combine_zero)->seconds_per_step == Approx(4 * 128.0 * 4096 / bw));
  CHECK(by_kind.at(OpKind::combine_zero)->launches_per_step == 4);
  CHECK(by_kind.at(OpKind::attention_layout)->launches_per_step == 4 * 8);
  CHECK(by_kind.at(OpKind::qkv_projection)->launches_per_step == 4 * 3);
}

TEST_CASE("gradient pass: an op with weights adds 2 bytes a weight at the copy bandwidth, in training only",
          "[time]") {
  // docs/calibration.md ("Gradient pass"). Hand sum for the toy's qkv projection (H 64 → q + 2·kv =
  // 64 + 2·32 = 128, T = 4096): its three GEMM passes as the model predicts them, plus 64·128 weights
  // × 2 bytes / copy bandwidth, per layer (4 layers); a forward-only step has no gradient pass.
  const CalibrationProfile p = load_calibration_profile(torch_jsonl);  // no layer rows: no correction
  const TimeModel model(p);
  const ArchConfig c = test::toy_moe();
  Workload w = test::toy_workload();
  w.tokens_per_step = 4096;
  const auto qkv_seconds = [&](const Workload& workload) {
    for (const auto& op : predict_step_time(model, c, workload).by_op) {
      if (op.kind == OpKind::qkv_projection) return op.seconds_per_step;
    }
    FAIL("no qkv_projection op");
    return 0.0;
  };
  const auto gemm_ms = [&](const char* pass, std::int64_t m, std::int64_t k, std::int64_t n) {
    CalibrationRow q;
    q.op = ProfileOp::gemm;
    q.pass = pass;
    q.shape = {{"M", m}, {"K", k}, {"N", n}};
    return model.predict(q).ms;
  };
  const double gemms_s = (gemm_ms("forward", 4096, 64, 128) + gemm_ms("input_grad", 4096, 64, 128) +
                          gemm_ms("weight_grad", 4096, 64, 128)) * 1e-3;
  const double gradient_s = 64.0 * 128.0 * 2.0 / (p.peaks.copy_gbytes_per_s * 1e9);
  CHECK(qkv_seconds(w) == Approx(4 * (gemms_s + gradient_s)).epsilon(1e-12));
  Workload forward_only = w;
  forward_only.training_passes = 1;
  CHECK(qkv_seconds(forward_only) == Approx(4 * gemm_ms("forward", 4096, 64, 128) * 1e-3).epsilon(1e-12));
  // Said in the op's note.
  for (const auto& op : predict_step_time(model, c, w).by_op) {
    if (op.kind == OpKind::qkv_projection) CHECK_THAT(op.note, Catch::Contains("gradient pass (2 bytes a weight"));
  }
}

TEST_CASE("layer rows: the shared layer file loads, malformed lines name the line and field", "[time][calibration]") {
  const auto rows = load_layer_measurements(layers_jsonl);
  REQUIRE(rows.size() == 48);
  CHECK(rows[0].cell == "100M-E64");
  CHECK(rows[0].tag == "baseline");
  CHECK(rows[0].run == 1);
  CHECK(rows[0].config.hidden_size == 672);
  CHECK(rows[0].tokens == 32759);
  CHECK(rows[0].doc_len == 799);
  CHECK(rows[0].layer_ms == Approx(11.703343868255615));
  CHECK(rows[0].attention_backend_ms.at("efficient") == 0);  // refused
  CHECK(rows[0].attention_backend_ms.at("cudnn") == Approx(1.517903983592987));
  CHECK(rows[1].config.executed_layers() == 15);

  const auto error_of = [](const std::string& text) {
    try {
      (void)parse_layer_measurements(text, "l.jsonl");
    } catch (const Error& e) {
      return e.source() + ": " + e.path() + ": " + e.message();
    }
    return std::string("no error");
  };
  CHECK(error_of(good_line) == "no error");
  CHECK_THAT(error_of("\n" + replaced(good_line, "\"layer_ms\": 11.7", "\"layer_ms\": 0")),
             Catch::StartsWith("l.jsonl: line 2/layer_ms: value 0 is out of range; allowed: a number in [1e-06"));
  CHECK_THAT(error_of(replaced(good_line, "\"executed_layers\": 10", "\"executed_layers\": 15")),
             Catch::Contains("line 1/executed_layers: value 15 disagrees with the config"));
  CHECK_THAT(error_of(replaced(good_line, "\"hidden_size\": 672", "\"hidden_size\": -1")),
             Catch::StartsWith("l.jsonl: line 1/config/hidden_size"));
  CHECK_THAT(error_of(replaced(good_line, "\"flash\": 1.8", "\"flash\": -1")),
             Catch::Contains("line 1/attention_backend_ms/flash: value -1 is not allowed"));
  CHECK_THAT(error_of(replaced(good_line, "\"tokens\"", "\"tokenz\"")), Catch::Contains("unknown key \"tokenz\""));
  // first_dense_layers is a key of the config's ffn object (docs/config.md).
  CHECK_THAT(error_of(replaced(good_line, "\"gated\": true}", "\"gated\": true, \"first_dense_layers\": 1, \"dense_dim\": 1024}")),
             Catch::Contains("all layers alike"));
  CHECK_THAT(error_of(R"({"op": "device", "device": "NVIDIA H200"})"), Catch::Contains("no layer lines"));
}

TEST_CASE("layer rows: a profile with layer rows writes and reads back equal", "[time][calibration]") {
  CalibrationProfile p = h200_with_layers();
  p.rows.resize(40);
  const std::string json = calibration_profile_to_json(p);
  CHECK(json.find("\n  \"layers\": [\n    {\"run\":1,\"cell\":\"100M-E64\",\"tag\":\"baseline\",\"config\":{") != std::string::npos);
  const CalibrationProfile back = parse_calibration_profile(json, "p.json");
  CHECK(back == p);
  CHECK(back.layers.size() == 48);
  // A per-op profile is written without the key, as before.
  p.layers.clear();
  CHECK(calibration_profile_to_json(p).find("layers") == std::string::npos);
  // A bad layer row in a profile names its pointer.
  const std::string bad = replaced(json, "\"layer_ms\":11.703343868255615", "\"layer_ms\":-3");
  try {
    (void)parse_calibration_profile(bad, "p.json");
    FAIL("accepted a negative layer time");
  } catch (const Error& e) {
    CHECK(e.path() == "/layers/0/layer_ms");
  }
}

TEST_CASE("layer correction: known class factors and launch cost are recovered from exact layer times", "[time]") {
  CalibrationProfile p = h200_with_layers();
  const TimeModel plain([&] {
    CalibrationProfile q = p;
    q.layers.clear();
    return q;
  }());
  CHECK_FALSE(plain.layer_correction().fitted);
  // Targets made by the correction's own form with known factors: the fit must find them.
  // Classes layer_fitted() does not fit keep 1 (gemm, expert_gemms, elementwise).
  const std::array<double, time_class_count> factor{{1.0, 0.8, 1.2, 1.0, 0.7, 1.0, 2.0}};
  const double launch_ms = 0.004;
  // The backends the layer rows show are part of the model: time the targets with them.
  CalibrationProfile with_backends = p;
  for (auto& row : with_backends.layers) row.layer_ms = 1.0;  // placeholder: backends use only the block times
  const TimeModel backend_model(with_backends);
  for (auto& row : p.layers) {
    const LayerTime t = predict_layer_time(backend_model, row.config, row.tokens, row.doc_len);
    double ms = launch_ms * t.launches;
    for (std::size_t k = 0; k < time_class_count; ++k) ms += factor[k] * t.class_ms[k];
    row.layer_ms = ms;
  }
  const TimeModel fitted(p);
  const LayerCorrection& c = fitted.layer_correction();
  REQUIRE(c.fitted);
  CHECK(c.layer_rows == 48);
  for (std::size_t k = 0; k < time_class_count; ++k) {
    INFO(to_string(static_cast<TimeClass>(k)));
    CHECK(c.factor[k] == Approx(factor[k]).epsilon(1e-6));
  }
  CHECK(c.launch_ms == Approx(launch_ms).epsilon(1e-6));
  CHECK(c.max_relative_error < 1e-9);
}

TEST_CASE("layer correction: which classes are fitted, and the classes of attention and of ops without rows",
          "[time]") {
  CHECK_FALSE(layer_fitted(TimeClass::gemm));
  CHECK_FALSE(layer_fitted(TimeClass::expert_gemms));
  CHECK_FALSE(layer_fitted(TimeClass::elementwise));
  CHECK(layer_fitted(TimeClass::attention_aligned));
  CHECK(layer_fitted(TimeClass::attention_unaligned));
  CHECK(layer_fitted(TimeClass::indexed));
  CHECK(layer_fitted(TimeClass::glue));
  const TimeModel model(load_calibration_profile(torch_jsonl));
  const auto rows = load_layer_measurements(layers_jsonl);
  const ArchConfig& aligned = rows[3].config;    // head_dim 80
  const ArchConfig& unaligned = rows[2].config;  // head_dim 76
  const LayerTime a = predict_layer_time(model, aligned, 32759, 799);
  const LayerTime u = predict_layer_time(model, unaligned, 32759, 799);
  const auto ms = [](const LayerTime& t, TimeClass k) { return t.class_ms[static_cast<std::size_t>(k)]; };
  CHECK(ms(a, TimeClass::attention_aligned) > 0);
  CHECK(ms(a, TimeClass::attention_unaligned) == 0);
  CHECK(ms(u, TimeClass::attention_aligned) == 0);
  CHECK(ms(u, TimeClass::attention_unaligned) > 0);
  // The H200 file has no router_softmax_topk rows: the top-k is timed from bytes, in the glue class
  // with the layer glue (the plain model: no correction).
  Workload w;
  w.seq_len = 799;
  w.attention_mask = AttentionMask::causal;
  w.attended_keys = 400;
  w.training_passes = 3;
  w.tokens_per_step = 32759;
  const StepTime t = predict_step_time(model, aligned, w);
  double glue_s = 0;
  bool topk_seen = false;
  for (const auto& op : t.by_op) {
    if (op.kind == OpKind::router_topk) {
      CHECK(op.no_rows);
      topk_seen = true;
    }
    if (is_layer_glue(op.kind) || op.kind == OpKind::router_topk) glue_s += op.seconds_per_step;
  }
  CHECK(topk_seen);
  CHECK(ms(a, TimeClass::glue) == Approx(glue_s * 1e3 / static_cast<double>(aligned.executed_layers())));
  CHECK(ms(a, TimeClass::glue) > 0);
  CHECK(ms(a, TimeClass::elementwise) > 0);
}

TEST_CASE("layer rows: the attention backend per head_dim class is the one the layer rows show, and said",
          "[time]") {
  const TimeModel model(h200_with_layers());
  const auto& backends = model.layer_correction().backend_by_head_dim_class;
  CHECK(backends.at("head_dim a multiple of 8, 65–128") == "cudnn");
  CHECK(backends.at("head_dim not a multiple of 8, 65–128") == "flash");
  const ArchConfig aligned = load_layer_measurements(layers_jsonl)[3].config;   // head_dim 80
  const ArchConfig unaligned = load_layer_measurements(layers_jsonl)[2].config;  // head_dim 76
  REQUIRE(aligned.attention.head_dim == 80);
  REQUIRE(unaligned.attention.head_dim == 76);
  Workload w = paper_workload();
  StepTime t = predict_step_time(model, aligned, w);
  CHECK(t.attention_backend == "cudnn");
  CHECK_THAT(t.attention_backend_reason, Catch::Contains("as the layer rows show for head_dim a multiple of 8"));
  CHECK(t.layer_corrected);
  CHECK(t.launch_seconds_per_step >= 0);
  t = predict_step_time(model, unaligned, w);
  CHECK(t.attention_backend == "flash");
  // Asking for a backend still gets it (the layer rows choose only under "auto").
  const TimeModel asked(h200_with_layers(), TimeModelOptions{"flash"});
  CHECK(predict_step_time(asked, aligned, w).attention_backend == "flash");
}

TEST_CASE("layer rows: leave-one-cell-out on the measured H200 layers stays within the documented bounds",
          "[time][data]") {
  const LayerValidation v = validate_layers_leave_one_cell_out(h200_with_layers());
  CHECK(v.cells == 6);
  REQUIRE(v.entries.size() == 48);
  INFO("layer error median " << v.median_layer_error << " max " << v.max_layer_error << "; ratio error median "
                             << v.median_ratio_error << " max " << v.max_ratio_error << "; baseline max "
                             << v.max_baseline_error);
  // The numbers of docs/calibration.md ("Validation on whole layers"), with a little room.
  CHECK(v.median_layer_error <= 0.015);
  CHECK(v.max_layer_error <= 0.045);  // issue 21: within 5%
  CHECK(v.median_ratio_error <= 0.020);
  CHECK(v.max_ratio_error <= 0.048);  // issue 21: within 0.05
  CHECK(v.max_baseline_error <= 0.020);
  for (const auto& e : v.entries) {
    CHECK(e.measured_ratio > 0);
    if (e.tag == "baseline") CHECK(e.predicted_ratio == 1.0);
  }
  // Held out means held out: the fit on all cells is closer in-sample than out of sample.
  const TimeModel all(h200_with_layers());
  CHECK(all.layer_correction().median_relative_error < v.median_layer_error);
}

namespace {

/// Fit on the layer rows whose cell starts with `fit_prefix`, predict the others: worst layer error
/// |predicted/measured − 1| and worst time-ratio error (layer ms × executed layers / the cell's
/// baseline's, same run) over the predicted rows.
std::pair<double, double> carried_errors(const std::string& fit_prefix) {
  CalibrationProfile fit = h200_with_layers();
  const std::vector<CalibrationLayerRow> all = fit.layers;
  fit.layers.erase(std::remove_if(fit.layers.begin(), fit.layers.end(),
                                  [&](const auto& r) { return r.cell.rfind(fit_prefix, 0) != 0; }),
                   fit.layers.end());
  const TimeModel model(fit);
  double max_layer = 0, max_ratio = 0;
  const auto ms = [&](const CalibrationLayerRow& r) { return predict_layer_time(model, r.config, r.tokens, r.doc_len).ms; };
  for (const auto& r : all) {
    if (r.cell.rfind(fit_prefix, 0) == 0) continue;
    max_layer = std::max(max_layer, std::abs(ms(r) / r.layer_ms - 1.0));
    const auto base = std::find_if(all.begin(), all.end(), [&](const auto& b) {
      return b.cell == r.cell && b.run == r.run && b.tag == "baseline";
    });
    REQUIRE(base != all.end());
    const double layers = static_cast<double>(r.config.executed_layers()) / static_cast<double>(base->config.executed_layers());
    const double measured = r.layer_ms / base->layer_ms * layers, predicted = ms(r) / ms(*base) * layers;
    max_ratio = std::max(max_ratio, std::abs(predicted - measured));
  }
  return {max_layer, max_ratio};
}

}  // namespace

TEST_CASE("layer rows: the correction fitted on one model size carries to the other (H200 layers)", "[time][data]") {
  // docs/calibration.md ("Validation on whole layers"): fit on the 100M cells only, predict the
  // 600M cells, and the reverse.
  const auto [layer_600, ratio_600] = carried_errors("100M");
  const auto [layer_100, ratio_100] = carried_errors("600M");
  INFO("100M -> 600M: layer " << layer_600 << " ratio " << ratio_600 << "; 600M -> 100M: layer " << layer_100
                              << " ratio " << ratio_100);
  CHECK(layer_600 <= 0.031);
  CHECK(ratio_600 <= 0.045);
  CHECK(layer_100 <= 0.057);
  CHECK(ratio_100 <= 0.053);
}

TEST_CASE("layer rows: validation needs two cells", "[time]") {
  CalibrationProfile p = h200_with_layers();
  p.layers.erase(std::remove_if(p.layers.begin(), p.layers.end(), [](const auto& r) { return r.cell != "100M-E64"; }),
                 p.layers.end());
  CHECK_THROWS_WITH(validate_layers_leave_one_cell_out(p), Catch::Contains("at least two cells"));
}
