// The CPU references the GPU kernels are checked against: hand calculations, and every backward
// against central finite differences of its forward (an independent derivation).

#include <cmath>
#include <functional>
#include <random>

#include <catch2/catch.hpp>

#include "reference.hpp"

using namespace budget::profiler::reference;

namespace {

FVec random_vec(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  FVec v(n);
  for (float& x : v) x = u(rng);
  return v;
}

/// d/dx_i of L(x) = Σ_j weights_j · f(x)_j by central differences (step h).
Vec numeric_gradient(const std::function<Vec(const FVec&)>& f, const FVec& x, const FVec& weights, double h = 1e-3) {
  Vec g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    FVec plus = x, minus = x;
    plus[i] += static_cast<float>(h);
    minus[i] -= static_cast<float>(h);
    const Vec fp = f(plus), fm = f(minus);
    double d = 0;
    for (std::size_t j = 0; j < fp.size(); ++j) d += weights[j] * (fp[j] - fm[j]);
    // The float step actually taken (x ± h rounds in float).
    g[i] = d / (static_cast<double>(plus[i]) - static_cast<double>(minus[i]));
  }
  return g;
}

double max_abs_diff(const Vec& a, const Vec& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST_CASE("reference gemm passes by hand", "[profiler][reference]") {
  // x = [[1,2],[3,4]] (M=2,K=2), W = [[5,6]] (N=1,K=2), dy = [[1],[2]].
  const FVec x{1, 2, 3, 4}, w{5, 6}, dy{1, 2};
  CHECK(gemm("forward", 2, 2, 1, x, w, dy) == Vec{17, 39});               // x·Wᵀ
  CHECK(gemm("input_grad", 2, 2, 1, x, w, dy) == Vec{5, 6, 10, 12});      // dy·W
  CHECK(gemm("weight_grad", 2, 2, 1, x, w, dy) == Vec{7, 10});            // dyᵀ·x = [1·1+2·3, 1·2+2·4]
}

TEST_CASE("reference rms_norm, swiglu, router by hand", "[profiler][reference]") {
  Vec y, rstd;
  // x = [3, 4]: mean square 12.5, rstd = 1/sqrt(12.5) = 0.28284; w = [1, 2].
  rms_norm_forward({3, 4}, {1, 2}, 1, 2, 0.0, y, rstd);
  CHECK(rstd[0] == Approx(0.2828427));
  CHECK(y[0] == Approx(0.8485281));
  CHECK(y[1] == Approx(2.2627417));
  // swiglu: g=0 → 0; g=1, u=2 → 2·σ(1) = 1.4621172.
  const Vec s = swiglu_forward({0, 1, 1, 2}, 2, 1);  // rows (g, u): (0, 1), (1, 2)
  CHECK(s[0] == 0.0);
  CHECK(s[1] == Approx(1.4621172));
  // router: logits [0, ln 3, ln 6] → p = [0.1, 0.3, 0.6]; top-2 = experts 2, 1.
  Vec weights;
  std::vector<std::int32_t> indices;
  router_forward({0.0f, static_cast<float>(std::log(3.0)), static_cast<float>(std::log(6.0))}, 1, 3, 2, weights, indices);
  CHECK(indices == std::vector<std::int32_t>{2, 1});
  CHECK(weights[0] == Approx(0.6));
  CHECK(weights[1] == Approx(0.3));
}

TEST_CASE("reference gather and combine by hand", "[profiler][reference]") {
  // x rows [1,2], [3,4]; src = [1, 0, 1].
  CHECK(gather({1, 2, 3, 4}, {1, 0, 1}, 2) == Vec{3, 4, 1, 2, 3, 4});
  // 1 token, k = 2 rows [1,2] and [3,4], perm = [1, 0], weights [0.5, 2]: 0.5·[3,4] + 2·[1,2] = [3.5, 6].
  CHECK(combine({1, 2, 3, 4}, {1, 0}, {0.5f, 2.0f}, 1, 2, 2) == Vec{3.5, 6});
  CHECK(combine({1, 2, 3, 4}, {1, 0}, {}, 1, 2, 2) == Vec{4, 6});
  // backward: drows[perm[j]] = w_j · dout: row 1 gets 0.5·[1,1], row 0 gets 2·[1,1].
  CHECK(combine_backward({1, 1}, {1, 0}, {0.5f, 2.0f}, 1, 2, 2, 2) == Vec{2, 2, 0.5, 0.5});
}

TEST_CASE("reference backward passes match finite differences of the forwards", "[profiler][reference]") {
  SECTION("rms_norm") {
    const std::int64_t T = 3, H = 5;
    const FVec x = random_vec(T * H, 1), w = random_vec(H, 2), dy = random_vec(T * H, 3);
    Vec dx, dw;
    rms_norm_backward(x, dy, w, T, H, 1e-6, dx, dw);
    const auto f_x = [&](const FVec& xx) { Vec y, r; rms_norm_forward(xx, w, T, H, 1e-6, y, r); return y; };
    const auto f_w = [&](const FVec& ww) { Vec y, r; rms_norm_forward(x, ww, T, H, 1e-6, y, r); return y; };
    CHECK(max_abs_diff(dx, numeric_gradient(f_x, x, dy)) < 1e-3);
    CHECK(max_abs_diff(dw, numeric_gradient(f_w, w, dy)) < 1e-3);
  }
  SECTION("swiglu") {
    const std::int64_t R = 3, D = 4;
    const FVec gu = random_vec(R * 2 * D, 4, 3.0f), dy = random_vec(R * D, 5);
    const auto f = [&](const FVec& g) { return swiglu_forward(g, R, D); };
    CHECK(max_abs_diff(swiglu_backward(gu, dy, R, D), numeric_gradient(f, gu, dy)) < 1e-3);
  }
  SECTION("router (the top-k set fixed, as autograd sees it)") {
    const std::int64_t T = 2, E = 6, k = 3;
    const FVec logits = random_vec(T * E, 6, 2.0f), dweights = random_vec(T * k, 7);
    Vec w0;
    std::vector<std::int32_t> idx;
    router_forward(logits, T, E, k, w0, idx);
    // weights as a function of the logits with the selection held fixed.
    const auto f = [&](const FVec& l) {
      Vec w(static_cast<std::size_t>(T * k));
      for (std::int64_t t = 0; t < T; ++t) {
        double m = -1e30, s = 0;
        for (std::int64_t e = 0; e < E; ++e) m = std::max(m, double{l[static_cast<std::size_t>(t * E + e)]});
        for (std::int64_t e = 0; e < E; ++e) s += std::exp(l[static_cast<std::size_t>(t * E + e)] - m);
        for (std::int64_t j = 0; j < k; ++j)
          w[static_cast<std::size_t>(t * k + j)] =
              std::exp(l[static_cast<std::size_t>(t * E + idx[static_cast<std::size_t>(t * k + j)])] - m) / s;
      }
      return w;
    };
    CHECK(max_abs_diff(router_backward(logits, idx, dweights, T, E, k), numeric_gradient(f, logits, dweights)) < 1e-3);
  }
  SECTION("causal attention with grouped K/V heads") {
    const AttentionShape s{2, 5, 4, 2, 3};
    const std::size_t nq = static_cast<std::size_t>(s.docs * s.len * s.heads * s.head_dim);
    const std::size_t nk = static_cast<std::size_t>(s.docs * s.len * s.kv_heads * s.head_dim);
    const FVec q = random_vec(nq, 8), k = random_vec(nk, 9), v = random_vec(nk, 10), dout = random_vec(nq, 11);
    Vec dq, dk, dv;
    attention_backward(s, q, k, v, dout, dq, dk, dv);
    CHECK(max_abs_diff(dq, numeric_gradient([&](const FVec& x) { return attention_forward(s, x, k, v); }, q, dout)) < 1e-3);
    CHECK(max_abs_diff(dk, numeric_gradient([&](const FVec& x) { return attention_forward(s, q, x, v); }, k, dout)) < 1e-3);
    CHECK(max_abs_diff(dv, numeric_gradient([&](const FVec& x) { return attention_forward(s, q, k, x); }, v, dout)) < 1e-3);
  }
}

TEST_CASE("reference attention: the first query of a document sees only itself", "[profiler][reference]") {
  // len 2, 1 head, d 1: o_0 = v_0; o_1 = softmax([q1·k0, q1·k1])·v.
  const AttentionShape s{1, 2, 1, 1, 1};
  const Vec o = attention_forward(s, {1, 2}, {0.5f, -0.5f}, {10, 20});
  CHECK(o[0] == Approx(10.0));
  const double p0 = std::exp(1.0) / (std::exp(1.0) + std::exp(-1.0));  // scores 2·0.5, 2·(−0.5), scale 1
  CHECK(o[1] == Approx(p0 * 10 + (1 - p0) * 20));
}

TEST_CASE("relative error: NaN and size mismatches never pass", "[profiler][reference]") {
  CHECK(relative_error({1, 2}, {1, 2}) == 0.0);
  CHECK(relative_error({1, 2.1f}, {1, 2}) == Approx(0.1 / std::sqrt(5.0)).epsilon(1e-5));
  CHECK(std::isinf(relative_error({std::nanf("")}, {1})));
  CHECK(std::isinf(relative_error({1}, {1, 2})));
}
