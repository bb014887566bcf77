// Megatron-Core's 1F1B schedules simulated per pipeline rank (budget/pipeline_schedule.hpp: the
// schedule and its source lines).

#include "budget/pipeline_schedule.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "base/checked_math.hpp"
#include "budget/error.hpp"
#include "layout/pipeline_schedule_rank.hpp"

namespace budget {
namespace {

constexpr const char* kWhere = "peak_saved_layer_executions";

void check_schedule_arguments(const std::vector<std::int64_t>& chunk_layers, int pp, std::int64_t m) {
  if (pp < 1) throw Error(fmt::format("pp = {} is not allowed; allowed: pp >= 1", pp), kWhere);
  if (m < 1) throw Error(fmt::format("micro_batches = {} is not allowed; allowed: >= 1", m), kWhere);
  const std::size_t ranks = static_cast<std::size_t>(pp);
  if (chunk_layers.empty() || chunk_layers.size() % ranks != 0) {
    throw Error(fmt::format("chunk_layers has {} entries; allowed: a positive multiple of pp = {} (pp x vp chunks)",
                            chunk_layers.size(), pp),
                kWhere);
  }
  for (std::size_t c = 0; c < chunk_layers.size(); ++c) {
    if (chunk_layers[c] < 0) {
      throw Error(fmt::format("chunk_layers[{}] = {} is not allowed; allowed: >= 0", c, chunk_layers[c]), kWhere);
    }
  }
  const std::size_t vp = chunk_layers.size() / ranks;
  if (vp > 1 && pp == 1) {
    // schedules.py:750 (forward_backward_no_pipelining): "non-pipeline-parallel schedule does not
    // support model chunking".
    throw Error(fmt::format("{} model chunks with pp = 1; allowed: one chunk without pipeline parallelism", vp),
                kWhere);
  }
  if (vp > 1 && m % pp != 0) {
    throw Error(fmt::format("micro_batches = {} with pp = {} and {} chunks a rank; allowed: a multiple of pp "
                            "(Megatron's interleaved schedule, schedules.py:1160-1180 at d98e8a64)",
                            m, pp, vp),
                kWhere);
  }
}

/// The interleaved schedule's warm-up forwards on rank s (schedules.py:964-977), at most m·V.
std::int64_t warmup_forwards(std::int64_t pp, std::int64_t vp, std::int64_t rank, std::int64_t m) {
  const std::int64_t total = detail::checked_mul(m, vp, "micro-batches x model chunks");
  const std::int64_t warmup = vp == 1 ? pp - rank - 1 : 2 * (pp - rank - 1) + (vp - 1) * pp;
  return std::min(warmup, total);
}

std::int64_t add_saved(std::int64_t a, std::int64_t b) { return detail::checked_add(a, b, "saved layer executions"); }
double add_saved(double a, double b) { return a + b; }

/// Peak on one rank; weights[v] = what chunk v·PP + rank saves per forward. Forward k runs chunk
/// (k mod PP·V) / PP, backward k chunk V − 1 − that. The saved weight after steady step k's
/// forward, S_f(W + k + 1) − S_b(k) (S_x(n): the weights of the first n steps), repeats with period
/// PP·V: both sequences repeat with that period (every group holds PP micro-batches) and each period
/// of either adds PP·Σ_v weights[v]. So the warm-up and the first PP·V steady steps hold the peak;
/// the cool-down only frees.
template <typename Weight>
Weight rank_peak(const std::vector<Weight>& weights, std::int64_t pp, std::int64_t rank, std::int64_t m) {
  const std::int64_t vp = static_cast<std::int64_t>(weights.size());
  if (pp == 1) return weights.front();  // forward_backward_no_pipelining: one micro-batch at a time
  if (vp == 1) {
    // 1F1B, every forward the same weight: W = min(PP − s − 1, m) warm-up forwards and, while any
    // remain, one more before each backward: min(m, PP − s) saved (the loop below gives the same).
    Weight peak{};
    for (std::int64_t k = 0; k < std::min(m, pp - rank); ++k) peak = add_saved(peak, weights.front());
    return peak;
  }
  const auto weight = [&](std::int64_t step, bool forward) {
    const std::int64_t v = (step % (pp * vp)) / pp;
    return weights[static_cast<std::size_t>(forward ? v : vp - 1 - v)];
  };
  const std::int64_t total = detail::checked_mul(m, vp, "micro-batches x model chunks");
  const std::int64_t warmup = warmup_forwards(pp, vp, rank, m);
  Weight saved{};
  Weight peak{};
  for (std::int64_t k = 0; k < warmup; ++k) {
    saved = add_saved(saved, weight(k, true));
    peak = std::max(peak, saved);
  }
  const std::int64_t steady = std::min(total - warmup, pp * vp);
  for (std::int64_t k = 0; k < steady; ++k) {
    saved = add_saved(saved, weight(warmup + k, true));
    peak = std::max(peak, saved);
    saved -= weight(k, false);
  }
  return peak;
}

}  // namespace

std::vector<std::int64_t> peak_saved_layer_executions(const std::vector<std::int64_t>& chunk_layers, int pp,
                                                      std::int64_t micro_batches) {
  check_schedule_arguments(chunk_layers, pp, micro_batches);
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(pp));
  for (std::int64_t rank = 0; rank < pp; ++rank) {
    std::vector<std::int64_t> own;
    for (std::size_t c = static_cast<std::size_t>(rank); c < chunk_layers.size(); c += static_cast<std::size_t>(pp)) {
      own.push_back(chunk_layers[c]);
    }
    out.push_back(rank_peak(own, pp, rank, micro_batches));
  }
  return out;
}

namespace schedule_detail {

double rank_peak_saved(const std::vector<double>& weights, std::int64_t pp, std::int64_t rank, std::int64_t m) {
  return rank_peak(weights, pp, rank, m);
}

std::int64_t rank_peak_saved(const std::vector<std::int64_t>& weights, std::int64_t pp, std::int64_t rank,
                             std::int64_t m) {
  return rank_peak(weights, pp, rank, m);
}

}  // namespace schedule_detail
}  // namespace budget
