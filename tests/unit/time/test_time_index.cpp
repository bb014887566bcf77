// The indexed fast path of the time model (TimeModel::predict_ms(), predict_step_seconds()) against
// the row path it replaces for ranking (TimeModel::predict(), predict_step_time()): the same
// numbers bit for bit, on random shapes of every op, pass and matrix (aligned and not, inside and
// far outside the measured range), under every attention backend option and neighbour count, on
// profiles with passes, ops or layer rows removed (the derivation and peak fallbacks), and on
// step times of many configs.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/config.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/grid.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"
#include "time/shipped_profile.hpp"

using namespace budget;

namespace {

const CalibrationProfile& shipped() { return test::shipped_h200_profile(); }

/// A random shape of `op`: each dim drawn log-uniformly over [lo, hi] (beyond the profile's range
/// on purpose), sometimes nudged off a multiple of 8.
TimeQuery random_query(std::mt19937_64& rng, TimeQuery::Op op) {
  const auto draw = [&rng](std::int64_t lo, std::int64_t hi) {
    const double u = static_cast<double>(rng() % 1000000) / 1e6;
    auto v = static_cast<std::int64_t>(std::exp(std::log(static_cast<double>(lo)) +
                                                u * (std::log(static_cast<double>(hi)) - std::log(static_cast<double>(lo)))));
    if (rng() % 2 == 0) v = std::max<std::int64_t>(8, v / 8 * 8);
    return std::max<std::int64_t>(1, v);
  };
  TimeQuery q;
  q.op = op;
  using P = TimeQuery::Pass;
  const bool gemm_like = op == TimeQuery::Op::gemm || op == TimeQuery::Op::expert_gemms;
  const std::array<P, 3> gemm_passes{P::forward, P::input_grad, P::weight_grad};
  const std::array<P, 3> fused_passes{P::forward_backward, P::forward, P::backward};
  q.pass = (gemm_like ? gemm_passes : fused_passes)[rng() % 3];
  switch (op) {
    case TimeQuery::Op::gemm: q.dims = {draw(64, 200000), draw(16, 40000), draw(16, 200000), 0, 0, 0}; break;
    case TimeQuery::Op::expert_gemms: {
      const std::int64_t E = draw(2, 512), T = draw(1, 60000), top_k = 1 + static_cast<std::int64_t>(rng() % 8);
      q.dims = {E, T, draw(64, 12000), draw(32, 20000), top_k, T * E / top_k};
      q.matrix = std::array<TimeQuery::Matrix, 3>{TimeQuery::Matrix::up, TimeQuery::Matrix::up_gate,
                                                  TimeQuery::Matrix::down}[rng() % 3];
      break;
    }
    case TimeQuery::Op::attention: {
      const std::int64_t L = draw(16, 32768), docs = draw(1, 64), heads = draw(1, 128);
      const std::int64_t hd = std::array<std::int64_t, 9>{60, 64, 84, 96, 100, 128, 192, 200, 256}[rng() % 9];
      q.dims = {docs, L, docs * L, heads, std::max<std::int64_t>(1, heads / (1 + static_cast<std::int64_t>(rng() % 8))), hd};
      if (rng() % 4 == 0) q.v_head_dim = 128;
      break;
    }
    case TimeQuery::Op::router_softmax_topk: q.dims = {draw(64, 200000), draw(2, 512), 1 + static_cast<std::int64_t>(rng() % 8), 0, 0, 0}; break;
    default: q.dims = {draw(64, 400000), draw(16, 30000), 0, 0, 0, 0}; break;
  }
  return q;
}

void require_same_ms(const TimeModel& model, std::uint64_t seed, int per_op) {
  std::mt19937_64 rng(seed);
  for (std::size_t o = 0; o < TimeQuery::op_count; ++o) {
    for (int i = 0; i < per_op; ++i) {
      const TimeQuery q = random_query(rng, static_cast<TimeQuery::Op>(o));
      const double by_rows = model.predict(to_row(q)).ms;
      const double indexed = model.predict_ms(q);
      INFO(to_string(to_row(q).op) << " " << to_row(q).pass << " " << q.dims[0] << " " << q.dims[1] << " " << q.dims[2] << " "
                        << q.dims[3] << " " << q.dims[4] << " " << q.dims[5]);
      REQUIRE(indexed == by_rows);
    }
  }
}

CalibrationProfile without(const CalibrationProfile& p, ProfileOp op, const std::string& pass) {
  CalibrationProfile out = p;
  out.rows.clear();
  for (const auto& r : p.rows) {
    if (!(r.op == op && (pass.empty() || r.pass == pass))) out.rows.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("time index: predict_ms equals predict on random shapes of every op, pass and matrix", "[time][index]") {
  for (const int k : {0, 1, 6, 25}) {
    for (const std::string backend : {"auto", "cudnn", "flash", "default", "fallback-none"}) {
      TimeModelOptions options;
      options.neighbours = k;
      options.attention_backend = backend;
      INFO("neighbours " << k << ", backend " << backend);
      require_same_ms(TimeModel(shipped(), options), 17 + static_cast<std::uint64_t>(k), k == 6 ? 400 : 60);
    }
  }
}

TEST_CASE("time index: the pass derivation and peak fallbacks agree with the row path", "[time][index]") {
  CalibrationProfile no_layers = shipped();
  no_layers.layers.clear();
  require_same_ms(TimeModel(no_layers), 3, 100);
  // A pass without rows (derived from the others), an op without rows (its peak), attention with
  // only one backend's rows.
  require_same_ms(TimeModel(without(no_layers, ProfileOp::gemm, "weight_grad")), 4, 60);
  require_same_ms(TimeModel(without(no_layers, ProfileOp::rms_norm, "")), 5, 60);
  require_same_ms(TimeModel(without(without(no_layers, ProfileOp::expert_gemms, ""), ProfileOp::attention, "")), 6, 60);
  CalibrationProfile one_backend = no_layers;
  one_backend.rows.clear();
  for (const auto& r : no_layers.rows) {
    if (r.op != ProfileOp::attention || r.backend == "flash") one_backend.rows.push_back(r);
  }
  require_same_ms(TimeModel(one_backend), 7, 100);
}

TEST_CASE("time index: predict_step_seconds equals predict_step_time on many configs", "[time][index]") {
  const TimeModel model(shipped());
  std::vector<ArchConfig> configs;
  for (const auto& cell : paper_grid().cells) configs.push_back(cell.baseline);
  configs.push_back(load_arch_config(std::string(BUDGET_TEST_DATA_DIR) + "/hf/qwen3-30b-a3b.json"));
  const std::size_t originals = configs.size();
  for (std::size_t i = 0; i < originals; ++i) {
    for (const std::int64_t hd : {60, 84, 128, 200}) {
      ArchConfig c = configs[i];
      c.attention.head_dim = hd;
      configs.push_back(c);
    }
    ArchConfig wide = configs[i];
    wide.hidden_size += 4;  // off the 8-alignment
    if (wide.ffn.expert_dim > 0) wide.ffn.expert_dim = wide.ffn.expert_dim * 3 + 1;
    configs.push_back(wide);
  }
  std::size_t compared = 0;
  for (const auto& c : configs) {
    try {
      validate(c);
    } catch (const Error&) {
      continue;
    }
    for (const std::int64_t passes : {1, 2, 3, 4}) {
      for (const std::int64_t tokens : {4096, 1 << 20}) {
        Workload w = paper_workload();
        w.training_passes = passes;
        w.tokens_per_step = tokens;
        INFO(c.name << " passes " << passes << " tokens " << tokens);
        REQUIRE(predict_step_seconds(model, c, w) == predict_step_time(model, c, w).seconds_per_step);
        ++compared;
      }
    }
  }
  CHECK(compared >= 100);
}

TEST_CASE("profile: the optional datasheet peak is read, written and checked against the measured peak",
          "[time][calibration]") {
  CHECK(shipped().peaks.datasheet_peak_tflops == 989.0);
  CHECK(shipped().peaks.datasheet_peak_source.find("H200") != std::string::npos);
  const CalibrationProfile round = parse_calibration_profile(calibration_profile_to_json(shipped()), "<round trip>");
  CHECK(round.peaks == shipped().peaks);

  CalibrationProfile low = shipped();
  low.peaks.datasheet_peak_tflops = 500;  // below the measured 760: a datasheet cannot be beaten
  try {
    (void)parse_calibration_profile(calibration_profile_to_json(low), "low.json");
    FAIL("a datasheet peak below the measured GEMM peak was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("datasheet_peak_tflops") != std::string::npos);
  }
  CalibrationProfile none = shipped();
  none.peaks.datasheet_peak_tflops = 0;
  none.peaks.datasheet_peak_source.clear();
  CHECK(calibration_profile_to_json(none).find("datasheet_peak") == std::string::npos);

  // MFU against both denominators: the same FLOPs, so the ratio of the two is the peaks' ratio.
  const TimeModel model(shipped());
  const StepTime t = predict_step_time(model, paper_grid().cells[6].baseline, paper_workload());
  CHECK(t.mfu_peak_tflops == shipped().peaks.bf16_gemm_tflops);
  CHECK(t.mfu_datasheet == Approx(t.mfu * shipped().peaks.bf16_gemm_tflops / 989.0).epsilon(1e-12));
  const StepTime t0 = predict_step_time(TimeModel(none), paper_grid().cells[6].baseline, paper_workload());
  CHECK(t0.mfu_datasheet == 0.0);
}

TEST_CASE("time model: an out-of-range note names the dim, the factor and the edge", "[time][range]") {
  const TimeModel model(shipped());
  TimeQuery q;
  q.op = TimeQuery::Op::gemm;
  q.pass = TimeQuery::Pass::forward;
  q.dims = {32768, 2048, 1, 0, 0, 0};
  // N = 1 lies below every measured N: the note gives the smallest measured and the factor.
  const TimePrediction p = model.predict(to_row(q));
  REQUIRE(p.out_of_range);
  CHECK(p.note.find("N 1 is ") != std::string::npos);
  CHECK(p.note.find("× below the smallest measured (") != std::string::npos);
}
