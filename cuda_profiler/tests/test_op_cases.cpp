// Op cases: FLOP and byte conventions checked by hand; expert routing splits; the sweep's lists.

#include <algorithm>
#include <numeric>
#include <set>

#include <catch2/catch.hpp>

#include "budget/error.hpp"
#include "budget/profiler/op_case.hpp"
#include "budget/profiler/sweep.hpp"

using namespace budget::profiler;
using budget::ProfileOp;

TEST_CASE("gemm case: 2·M·K·N FLOPs and bf16 operand bytes in every pass", "[profiler][cases]") {
  // M=4096, K=1280, N=1920: 2·4096·1280·1920 = 20 132 659 200 FLOPs;
  // bytes 2·(4096·1280 + 1920·1280 + 4096·1920) = 2·(5 242 880 + 2 457 600 + 7 864 320) = 31 129 600.
  for (const char* pass : {"forward", "input_grad", "weight_grad"}) {
    const OpCase c = gemm_case(4096, 1280, 1920, pass);
    CHECK(c.flops == 20132659200.0);
    CHECK(c.bytes == 31129600.0);
    CHECK(c.at("M") == 4096);
  }
  CHECK_THROWS_AS(gemm_case(0, 1, 1, "forward"), budget::Error);
  CHECK_THROWS_WITH(gemm_case(1, 1, 1, "backward"), Catch::Contains("allowed: forward, input_grad, weight_grad"));
}

TEST_CASE("attention case: 4·heads·d·A·tokens forward, 2.5x backward", "[profiler][cases]") {
  // 8 documents of 1024: A = 1025/2 = 512.5; tokens 8192; heads 16, d 128:
  // 4·16·128·512.5·8192 = 34 393 292 800 FLOPs forward.
  const OpCase f = attention_case(8, 1024, 16, 4, 128, "forward");
  CHECK(f.flops == Approx(34393292800.0));
  CHECK(f.at("tokens") == 8192);
  const OpCase b = attention_case(8, 1024, 16, 4, 128, "backward");
  CHECK(b.flops == Approx(2.5 * 34393292800.0));
  // Bytes forward: Q and O 2·8192·16·128 each, K and V 2·8192·4·128 each, stats 4·8192·16.
  CHECK(f.bytes == Approx(2 * 33554432.0 + 2 * 8388608.0 + 524288.0));
  CHECK_THROWS_WITH(attention_case(1, 64, 10, 3, 64, "forward"), Catch::Contains("not a multiple"));
}

TEST_CASE("memory-bound cases count the fewest bytes", "[profiler][cases]") {
  // RMSNorm forward, T=1000, H=512: read x (1 024 000 B) and w (1024 B), write y (1 024 000 B) and
  // rstd (4000 B).
  CHECK(rms_norm_case(1000, 512, "forward").bytes == 1024000.0 * 2 + 1024 + 4000);
  // SwiGLU forward rows=10, d=100: read 2 matrices, write 1, 2000 B each.
  CHECK(swiglu_case(10, 100, "forward").bytes == 6000.0);
  CHECK(swiglu_case(10, 100, "backward").bytes == 10000.0);
  // Router forward T=100, E=64, k=8: logits 25 600 B, weights + indices 2·3200 B.
  CHECK(router_case(100, 64, 8, "forward").bytes == 25600.0 + 6400.0);
  CHECK_THROWS(router_case(100, 4, 8, "forward"));
  // Gather forward rows=16, H=8: read + write 2·256 B, indices 64 B.
  CHECK(gather_case(16, 8, "forward").bytes == 512.0 + 64.0);
  // Combine: read rows 256 B, weights + indices 128 B, write 2 token rows 32 B.
  CHECK(scatter_add_case(16, 8, "forward").bytes == 256.0 + 128.0 + 32.0);
  CHECK_THROWS_WITH(scatter_add_case(12, 8, "forward"), Catch::Contains("multiple of 8"));
  for (const OpCase& c : {rms_norm_case(8, 8, "forward"), swiglu_case(8, 8, "backward")}) CHECK(c.flops == 0.0);
}

TEST_CASE("expert rows: balanced equal, skewed Zipf-like with the same total", "[profiler][cases]") {
  CHECK(expert_rows(4, 10, "balanced") == std::vector<std::int64_t>{10, 10, 10, 10});
  // E=4, total 40, H_4 = 1 + 1/2 + 1/3 + 1/4 = 25/12: floor(40·12/25)=19, floor(9.6)=9, floor(6.4)=6,
  // floor(4.8)=4; the remainder 2 goes to expert 0: 21, 9, 6, 4.
  CHECK(expert_rows(4, 10, "skewed") == std::vector<std::int64_t>{21, 9, 6, 4});
  const auto rows = expert_rows(192, 683, "skewed");
  CHECK(std::accumulate(rows.begin(), rows.end(), std::int64_t{0}) == 192 * 683);
  CHECK(std::is_sorted(rows.rbegin(), rows.rend()));
  CHECK(*std::min_element(rows.begin(), rows.end()) >= 1);
  CHECK_THROWS_WITH(expert_rows(4, 10, "zipf"), Catch::Contains("balanced, skewed"));
  const OpCase c = expert_gemm_case(64, 512, 2048, 512, 8, "up_gate", "forward");
  // rows 64·512 = 32768; up_gate 2048 → 1024: 2·32768·2048·1024 FLOPs; tokens 32768/8 = 4096.
  CHECK(c.flops == 2.0 * 32768 * 2048 * 1024);
  CHECK(c.at("tokens") == 4096);
  CHECK_THROWS(expert_gemm_case(64, 512, 2048, 512, 8, "gate", "forward"));
}

TEST_CASE("the sweep is deterministic, spans alignment classes and fits 4 minutes on an H200", "[profiler][sweep]") {
  const auto a = sweep_cases(), b = sweep_cases();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].label() == b[i].label());
  std::set<std::string> ops;
  bool k_not_8 = false, k_128 = false, k_64 = false, k_8 = false, head_dim_not_8 = false, skewed = false;
  for (const OpCase& c : a) {
    ops.insert(std::string(to_string(c.op)));
    if (c.op == ProfileOp::gemm) {
      const auto k = c.at("K");
      k_128 = k_128 || k % 128 == 0;
      k_64 = k_64 || (k % 64 == 0 && k % 128 != 0);
      k_8 = k_8 || (k % 8 == 0 && k % 64 != 0);
      k_not_8 = k_not_8 || k % 8 != 0;
    }
    if (c.op == ProfileOp::attention) head_dim_not_8 = head_dim_not_8 || c.at("head_dim") % 8 != 0;
    if (c.op == ProfileOp::expert_gemms) skewed = skewed || c.routing == "skewed";
  }
  CHECK(ops == std::set<std::string>{"gemm", "expert_gemms", "attention", "rms_norm", "swiglu", "router_softmax_topk",
                                     "dispatch_gather", "combine_scatter_add"});
  CHECK((k_128 && k_64 && k_8 && k_not_8));
  CHECK(head_dim_not_8);
  CHECK(skewed);
  const double seconds = estimate_sweep_seconds(a, estimate_rates, LaunchPlan{});
  CHECK(seconds < 240.0);
  CHECK(seconds > 30.0);  // not trivially small: it does time hundreds of cases
  SweepOptions only_gemms;
  only_gemms.expert_gemms = only_gemms.attention = only_gemms.memory_bound = false;
  for (const OpCase& c : sweep_cases(only_gemms)) CHECK(c.op == ProfileOp::gemm);
}

TEST_CASE("roofline: the larger of compute and memory time plus the launch", "[profiler][timer]") {
  const RooflineRates r{1000.0, 1000.0, 10.0};  // 1 PFLOP/s, 1 TB/s, 10 µs
  OpCase c = gemm_case(1024, 1024, 1024, "forward");
  // 2·2^30 FLOPs / 1e15 = 2.147 µs; bytes 6·2^20 / 1e12 = 6.29 µs: memory-bound here.
  CHECK(r.ms(c) == Approx(6.0 * 1048576 / 1e12 * 1e3 + 0.01));
  CHECK(padded_head_dim(100) == 104);
  CHECK(padded_head_dim(128) == 128);
}
