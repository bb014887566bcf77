#pragma once
/// \file
/// The documented sweep of `budget-profile sweep` (README.md, "The sweep"): shape lists per op,
/// chosen to span the configs budget-match plans (hidden 512–8192, expert widths 256–2048, 8–256
/// experts, head_dim 64–128 plus one not a multiple of 8, documents 128–4096 tokens) across the
/// alignment classes that change GEMM speed, and sized to finish in under 4 minutes on an H200
/// (estimate_sweep_seconds()).

#include <cstdint>
#include <vector>

#include "budget/profiler/op_case.hpp"
#include "budget/profiler/timer.hpp"

namespace budget::profiler {

struct SweepOptions {
  /// Tokens per step (GEMM M, attention tokens, memory-bound rows); each is swept.
  std::vector<std::int64_t> tokens = {8192, 32768};
  bool gemms = true, expert_gemms = true, attention = true, memory_bound = true;
  bool skewed_routing = true;  ///< add skewed-routing expert GEMMs beside the balanced ones
};

/// Every case of the sweep, in a fixed order (GEMMs, expert GEMMs, attention, memory-bound).
/// Deterministic: the same options give the same list.
std::vector<OpCase> sweep_cases(const SweepOptions& options = {});

/// Launches per timed case: warm-up launches, then `repeats` timed ones (the median is kept).
struct LaunchPlan {
  int warmup = 3;
  int repeats = 9;
};

/// Fixed setup seconds per case of an op (allocation, random fill, plan/graph building; cuDNN
/// graph finalisation dominates attention), used by the estimate.
double setup_seconds(const OpCase& c);

/// Estimated wall seconds of timing `cases` at `rates`: Σ (warmup + repeats)·ms/1000 +
/// setup_seconds, plus the peaks and checks (a fixed 10 s). A lead, not a promise: it prints with
/// --dry-run so the sweep can be sized before a GPU is lent.
double estimate_sweep_seconds(const std::vector<OpCase>& cases, const RooflineRates& rates, const LaunchPlan& plan);

/// The rates the estimate assumes: half of an H200's measured peaks (760 TFLOP/s bf16, 4160 GB/s
/// copy), since real kernels reach 50–80% of them, and a 10 µs launch: a conservative lead.
inline constexpr RooflineRates estimate_rates{380.0, 2080.0, 10.0};

}  // namespace budget::profiler
