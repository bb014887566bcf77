// The collectives sweep, the synthetic alpha-beta timer and the measured cluster file
// (collectives.hpp). The time model is libbudget's collective_seconds() (communication.hpp).
#include "budget/profiler/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::profiler {
namespace {

constexpr const char* sweep_source = "budget-profile collectives";
constexpr std::int64_t max_sweep_bytes = std::int64_t{8} << 30;  // 8 GiB: nccl-tests' usual top

/// The default rank counts: 2, 4, 8, ... ≤ gpus, and gpus itself.
std::vector<std::int64_t> default_ranks(std::int64_t gpus) {
  std::vector<std::int64_t> ranks;
  for (std::int64_t n = 2; n <= gpus; n *= 2) ranks.push_back(n);
  if (ranks.empty() || ranks.back() != gpus) ranks.push_back(gpus);
  return ranks;
}

/// splitmix64: a fixed pseudo-random number per case for the fake timer's noise.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::string CollectiveCase::label() const {
  return fmt::format("{} n={} {} B", to_string(kind), ranks, size_bytes);
}

std::string CollectiveSweepOptions::validation_error(std::int64_t gpus) const {
  if (gpus < 2) return fmt::format("{} GPU(s): collectives need at least 2", gpus);
  if (kinds.empty()) return "no collective to measure (kinds is empty)";
  for (std::int64_t n : ranks) {
    if (n < 2 || n > gpus) return fmt::format("ranks {} is not in [2, {}] (the GPUs of this machine)", n, gpus);
  }
  if (min_bytes < 16 || min_bytes > max_sweep_bytes) {
    return fmt::format("min bytes {} is not in [16, {}]", min_bytes, max_sweep_bytes);
  }
  if (max_bytes < min_bytes || max_bytes > max_sweep_bytes) {
    return fmt::format("max bytes {} is not in [min bytes {}, {}]", max_bytes, min_bytes, max_sweep_bytes);
  }
  if (size_factor < 2 || size_factor > 1024) return fmt::format("size factor {} is not in [2, 1024]", size_factor);
  if (max_bytes / size_factor < min_bytes) {
    return fmt::format("sizes {}..{} bytes by ×{} give one size; the fit needs at least two", min_bytes, max_bytes,
                       size_factor);
  }
  return {};
}

void CollectiveSweepOptions::validate(std::int64_t gpus) const {
  const std::string error = validation_error(gpus);
  if (!error.empty()) throw Error(error, sweep_source);
}

std::vector<CollectiveCase> collective_sweep_cases(const CollectiveSweepOptions& options, std::int64_t gpus) {
  options.validate(gpus);
  std::vector<std::int64_t> ranks = options.ranks.empty() ? default_ranks(gpus) : options.ranks;
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<CollectiveKind> kinds = options.kinds;
  std::sort(kinds.begin(), kinds.end());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  std::vector<CollectiveCase> cases;
  for (CollectiveKind kind : kinds) {
    for (std::int64_t n : ranks) {
      std::set<std::int64_t> seen;
      for (std::int64_t s = options.min_bytes; s <= options.max_bytes; s *= options.size_factor) {
        const std::int64_t unit = n * 16;
        const std::int64_t size = std::max<std::int64_t>(unit, s / unit * unit);
        if (seen.insert(size).second) cases.push_back(CollectiveCase{kind, n, size});
        if (s > options.max_bytes / options.size_factor) break;
      }
    }
  }
  return cases;
}

FakeCollectiveTimer::FakeCollectiveTimer(LinkSpec link, std::int64_t gpus, double relative_noise)
    : link_(std::move(link)), gpus_(gpus), noise_(relative_noise) {
  if (gpus_ < 2) throw Error(fmt::format("the fake timer needs at least 2 GPUs (got {})", gpus_), sweep_source);
  if (!(noise_ >= 0.0 && noise_ < 0.5)) throw Error(fmt::format("noise {} is not in [0, 0.5)", noise_), sweep_source);
  if (!(link_.bandwidth_bytes_per_s > 0.0) || !(link_.latency_s >= 0.0)) {
    throw Error("the fake timer's link needs a positive bandwidth and a latency ≥ 0", sweep_source);
  }
}

std::string FakeCollectiveTimer::device() const {
  return fmt::format("simulated: {} GPUs on a synthetic alpha-beta link of {} GB/s, {} us (no GPU)", gpus_,
                     link_.bandwidth_bytes_per_s * 1e-9, link_.latency_s * 1e6);
}

std::string FakeCollectiveTimer::method() const {
  return fmt::format("simulated: t = S·busfactor/B + steps·latency (communication.hpp) times (1 ± {}) fixed per case; "
                     "not a measurement",
                     noise_);
}

double FakeCollectiveTimer::seconds(const CollectiveCase& c) {
  ++timed_;
  const std::uint64_t key = mix(mix(mix(static_cast<std::uint64_t>(c.kind)) ^ static_cast<std::uint64_t>(c.ranks)) ^
                                static_cast<std::uint64_t>(c.size_bytes));
  const double d = static_cast<double>(key >> 11) * 0x1.0p-53 * 2.0 - 1.0;  // [−1, 1)
  return collective_seconds(c.kind, static_cast<double>(c.size_bytes), c.ranks, link_) * (1.0 + noise_ * d);
}

std::vector<CollectiveMeasurement> measure_collectives(
    const std::vector<CollectiveCase>& cases, CollectiveTimer& timer,
    const std::function<void(std::size_t, std::size_t, const CollectiveMeasurement&)>& progress) {
  for (const CollectiveCase& c : cases) {
    if (c.ranks < 2 || c.ranks > timer.gpus()) {
      throw Error(fmt::format("case {} needs {} GPUs; the timer has {}", c.label(), c.ranks, timer.gpus()), sweep_source);
    }
  }
  std::vector<CollectiveMeasurement> out;
  out.reserve(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CollectiveCase& c = cases[i];
    out.push_back(CollectiveMeasurement{c.kind, c.ranks, static_cast<double>(c.size_bytes), timer.seconds(c)});
    if (progress) progress(i, cases.size(), out.back());
  }
  return out;
}

double estimate_collective_seconds(const std::vector<CollectiveCase>& cases, const LinkSpec& link,
                                   const LaunchPlan& plan) {
  std::set<std::int64_t> groups;
  double seconds = 0.0;
  for (const CollectiveCase& c : cases) {
    groups.insert(c.ranks);
    seconds += static_cast<double>(plan.warmup + plan.repeats) *
               collective_seconds(c.kind, static_cast<double>(c.size_bytes), c.ranks, link);
  }
  return seconds + 2.0 * static_cast<double>(groups.size());
}

ClusterSpec measured_cluster(const ClusterSpec& base, const LinkFit& fit, const std::string& device, bool simulated) {
  ClusterSpec c = base;
  c.intra_node = fit.link;
  c.intra_node.source = fmt::format("{}{} on {}", simulated ? "SIMULATED (not a measurement): " : "measured: ",
                                    fit.link.source, device);
  c.name = base.name + (simulated ? " (intra-node link from simulated collectives)"
                                  : " (intra-node link measured by budget-profile collectives)");
  c.validate("measured cluster");
  return c;
}

}  // namespace budget::profiler
