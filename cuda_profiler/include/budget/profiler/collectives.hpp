#pragma once
/// \file
/// `budget-profile collectives`: NCCL collectives timed over message sizes on the GPUs of one
/// machine, fitted to the cluster file's intra-node link (libbudget's budget/link_fit.hpp; the
/// model is collective_seconds() of budget/communication.hpp, written once there).
///
/// The sweep and the fit talk only to CollectiveTimer, so everything but NCCL is tested without a
/// GPU:
///  - make_nccl_collective_timer(): NCCL in one process over the first n visible GPUs
///    (ncclCommInitAll), built only when CMake found NCCL (BUDGET_PROFILER_HAS_NCCL);
///  - FakeCollectiveTimer: a deterministic synthetic alpha-beta device, for tests and --simulate.
///
/// Sizes follow nccl-tests (communication.hpp): all-reduce the whole tensor, all-gather the
/// gathered output, reduce-scatter the whole input, all-to-all one rank's send buffer, send/recv
/// the message each rank sends to the next in a ring. Elements are bf16.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "budget/communication.hpp"
#include "budget/link_fit.hpp"
#include "budget/profiler/sweep.hpp"

namespace budget::profiler {

struct CollectiveCase {
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::int64_t ranks = 2;
  std::int64_t size_bytes = 0;  ///< the nccl-tests size, a multiple of ranks · 16 bytes
  std::string label() const;    ///< "all_reduce n=8 1048576 B"
};

struct CollectiveSweepOptions {
  std::vector<CollectiveKind> kinds = {CollectiveKind::all_reduce, CollectiveKind::all_gather,
                                       CollectiveKind::reduce_scatter, CollectiveKind::all_to_all,
                                       CollectiveKind::send_recv};
  /// Rank counts; empty: 2, 4, 8, ... up to the GPUs available, and that count itself.
  std::vector<std::int64_t> ranks;
  std::int64_t min_bytes = std::int64_t{1} << 10;  ///< 1 KiB: latency-bound on NVLink
  std::int64_t max_bytes = std::int64_t{1} << 30;  ///< 1 GiB: bandwidth-bound
  std::int64_t size_factor = 4;                    ///< sizes min, min·f, min·f², ... ≤ max

  /// Empty when valid for a machine of `gpus` GPUs, else what is wrong (one line).
  std::string validation_error(std::int64_t gpus) const;
  /// Throws budget::Error (source "budget-profile collectives") when validation_error() is not empty.
  void validate(std::int64_t gpus) const;
};

/// The cases of the sweep, in a fixed order (kind, then ranks, then size). Each size is rounded
/// down to a multiple of ranks · 16 bytes (every rank's chunk 16-byte aligned); sizes that round
/// to the same value appear once. Validates `options` first.
std::vector<CollectiveCase> collective_sweep_cases(const CollectiveSweepOptions& options, std::int64_t gpus);

/// What times one collective. seconds() is the time of one call: the median over timed launches
/// (after warm-ups) of the slowest rank's time.
class CollectiveTimer {
 public:
  virtual ~CollectiveTimer() = default;
  virtual std::int64_t gpus() const = 0;
  virtual std::string device() const = 0;  ///< the GPUs and their interconnect, one line
  virtual std::string method() const = 0;  ///< how a time is taken, one line
  virtual bool simulated() const = 0;      ///< true when the times are not measurements
  virtual double seconds(const CollectiveCase& c) = 0;
};

/// Deterministic synthetic device: t = collective_seconds(kind, S, n, link) · (1 + noise · d),
/// d ∈ [−1, 1] a fixed pseudo-random number of the case (the same case always gets the same d).
class FakeCollectiveTimer final : public CollectiveTimer {
 public:
  /// `relative_noise` in [0, 0.5); `gpus` ≥ 2. budget::Error otherwise.
  FakeCollectiveTimer(LinkSpec link, std::int64_t gpus, double relative_noise = 0.0);
  std::int64_t gpus() const override { return gpus_; }
  std::string device() const override;
  std::string method() const override;
  bool simulated() const override { return true; }
  double seconds(const CollectiveCase& c) override;
  std::int64_t timed_cases() const { return timed_; }

 private:
  LinkSpec link_;
  std::int64_t gpus_;
  double noise_;
  std::int64_t timed_ = 0;
};

/// Times every case in order (each must fit the timer's GPUs: budget::Error otherwise).
/// `progress` (optional) is called after each case with (index, count, measurement).
std::vector<CollectiveMeasurement> measure_collectives(
    const std::vector<CollectiveCase>& cases, CollectiveTimer& timer,
    const std::function<void(std::size_t, std::size_t, const CollectiveMeasurement&)>& progress = {});

/// Estimated seconds to time `cases` on `link`: Σ (warmup + repeats) · model time, plus 2 s per
/// rank count (NCCL communicator setup) — a lead printed by --dry-run, not a promise.
double estimate_collective_seconds(const std::vector<CollectiveCase>& cases, const LinkSpec& link,
                                   const LaunchPlan& plan);

/// `base` with its intra-node link replaced by `fit`'s (the joint fit of fit_links()), its source
/// naming the device and saying "simulated" when the times were; the name says it was measured.
ClusterSpec measured_cluster(const ClusterSpec& base, const LinkFit& fit, const std::string& device, bool simulated);

/// True when this build contains the NCCL timer.
bool nccl_collectives_built();

/// NCCL over the first visible GPUs (at most `max_gpus` when > 0): `plan.warmup` launches, then
/// the median of `plan.repeats`. Throws NoGpuError (cuda_timer.hpp) whose what() begins
/// "collectives need NCCL and ≥ 2 GPUs: " and says which is missing.
std::unique_ptr<CollectiveTimer> make_nccl_collective_timer(const LaunchPlan& plan = {}, std::int64_t max_gpus = 0);

/// The sentence's start, shared by every refusal (tested).
inline constexpr const char* collectives_refusal = "collectives need NCCL and ≥ 2 GPUs: ";

}  // namespace budget::profiler
