#include "budget/profiler/sweep.hpp"

#include <algorithm>
#include <utility>

namespace budget::profiler {
namespace {

// (K, N) pairs across alignment classes: multiples of 128, of 64 but not 128, of 8 but not 64,
// and one not a multiple of 8 (cuBLASLt then cannot use 16-byte aligned tensor-core loads).
// Values are widths budget-match configs use (hidden sizes, q+2kv, expert and FFN widths).
const std::vector<std::pair<std::int64_t, std::int64_t>> gemm_kn = {
    {1024, 1024}, {1024, 4096}, {4096, 1024}, {2048, 2048}, {2048, 8192}, {4096, 4096},  // ×128
    {1280, 1920}, {1280, 3456}, {3456, 1280}, {2560, 2560},                              // ×128 / ×64
    {1344, 2240}, {2240, 1344}, {960, 960},                                               // ×64 not ×128
    {1000, 1000}, {1336, 1336}, {1000, 4000},                                             // ×8 not ×64
    {1001, 1001}, {1280, 1001}, {1001, 1280},                                             // not ×8
    {1024, 8}, {2048, 64}, {1280, 192}, {2048, 256},                                      // routers
};

struct ExpertShape {
  std::int64_t experts, hidden, expert_dim;
};
const std::vector<ExpertShape> expert_shapes = {
    {8, 1024, 1024}, {8, 2048, 2048}, {64, 1024, 256}, {64, 1280, 432}, {64, 2048, 512},
    {192, 1280, 432}, {192, 2048, 256}, {256, 2048, 512}, {256, 4096, 1024}, {64, 4096, 2048},
};

struct AttentionShape {
  std::int64_t heads, kv_heads, head_dim;
};
const std::vector<AttentionShape> attention_shapes = {
    {8, 8, 64}, {16, 4, 64}, {10, 2, 128}, {16, 16, 128}, {32, 8, 128}, {12, 4, 100},
};
const std::vector<std::int64_t> doc_lengths = {128, 512, 1024, 4096};

const std::vector<std::int64_t> hidden_sizes = {1024, 1280, 2048, 4096, 8192};
const std::vector<std::int64_t> widths = {256, 432, 1024, 2048};
const std::vector<std::pair<std::int64_t, std::int64_t>> routers = {{8, 2}, {64, 8}, {192, 8}, {256, 8}};

}  // namespace

std::vector<OpCase> sweep_cases(const SweepOptions& options) {
  std::vector<OpCase> cases;
  const char* gemm_passes[] = {"forward", "input_grad", "weight_grad"};
  const char* passes[] = {"forward", "backward"};
  if (options.gemms) {
    for (const std::int64_t m : options.tokens)
      for (const auto& [k, n] : gemm_kn)
        for (const char* pass : gemm_passes) cases.push_back(gemm_case(m, k, n, pass));
  }
  if (options.expert_gemms) {
    constexpr std::int64_t top_k = 8;
    for (const std::int64_t t : options.tokens) {
      for (const auto& s : expert_shapes) {
        const std::int64_t per_expert = t * top_k / s.experts;
        if (per_expert < 1) continue;
        for (const char* matrix : {"up_gate", "down"}) {
          for (const char* pass : gemm_passes) {
            cases.push_back(expert_gemm_case(s.experts, per_expert, s.hidden, s.expert_dim, top_k, matrix, pass));
            if (options.skewed_routing && s.experts >= 64)
              cases.push_back(
                  expert_gemm_case(s.experts, per_expert, s.hidden, s.expert_dim, top_k, matrix, pass, "skewed"));
          }
        }
      }
    }
  }
  if (options.attention && !options.tokens.empty()) {
    // One token count (the largest): at a fixed document length attention time is linear in the
    // number of documents, and each new shape costs a cuDNN graph build (≈ 1 s).
    const std::int64_t t = *std::max_element(options.tokens.begin(), options.tokens.end());
    for (const auto& s : attention_shapes)
      for (const std::int64_t len : doc_lengths) {
        if (len > t) continue;
        for (const char* pass : passes) cases.push_back(attention_case(t / len, len, s.heads, s.kv_heads, s.head_dim, pass));
      }
  }
  if (options.memory_bound) {
    for (const std::int64_t t : options.tokens) {
      for (const std::int64_t h : hidden_sizes)
        for (const char* pass : passes) cases.push_back(rms_norm_case(t, h, pass));
      for (const std::int64_t w : widths)
        for (const char* pass : passes) cases.push_back(swiglu_case(t * 8, w, pass));
      for (const auto& [e, k] : routers)
        for (const char* pass : passes) cases.push_back(router_case(t, e, k, pass));
      for (const std::int64_t h : {std::int64_t{1024}, std::int64_t{2048}, std::int64_t{4096}})
        for (const char* pass : passes) {
          cases.push_back(gather_case(t * 8, h, pass));
          cases.push_back(scatter_add_case(t * 8, h, pass));
        }
    }
  }
  return cases;
}

double setup_seconds(const OpCase& c) {
  if (c.op == ProfileOp::attention) return 1.0;      // cuDNN graph build (runtime compilation), finalisation
  if (c.op == ProfileOp::expert_gemms) return 0.02;  // pointer arrays, allocation
  if (c.op == ProfileOp::gemm) return 0.02;          // cuBLASLt heuristic query, allocation
  return 0.005;
}

double estimate_sweep_seconds(const std::vector<OpCase>& cases, const RooflineRates& rates, const LaunchPlan& plan) {
  double seconds = 10.0;  // peaks (8192³ GEMM, copy) and the correctness checks
  for (const OpCase& c : cases) {
    double launches = plan.warmup + plan.repeats;
    // A refused cuDNN shape is timed again through the padded fallback.
    if (c.op == ProfileOp::attention && c.at("head_dim") % 8 != 0) launches *= 2;
    seconds += launches * rates.ms(c) / 1e3 + setup_seconds(c);
  }
  return seconds;
}

}  // namespace budget::profiler
