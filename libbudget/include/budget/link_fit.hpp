#pragma once
/// \file
/// Measured collectives and the link they imply (docs/cluster.md, "Measuring your links"):
/// `budget-profile collectives` times NCCL all-reduce, all-gather, reduce-scatter, all-to-all and
/// send/recv over message sizes on the GPUs of one machine; this header holds the measurements,
/// fits the cluster file's link figures (bandwidth, latency) to them, and reads and writes them
/// (schema "budget.collectives", version 1).
///
/// Model: the one the planner uses, collective_seconds() in cluster.hpp,
///   t(kind, S, n) = S·f(kind, n)/B + steps(kind, n)·α
/// (S the nccl-tests size, f the bus factor, steps the latency-bound steps of the algorithm).
/// The fit is linear in u = 1/B and α: weighted least squares with the design columns
/// x = S·f(kind, n) and s = steps(kind, n) and weights 1/t², i.e. it minimises the sum of squared
/// relative residuals Σ ((x·u + s·α − t)/t)², so every message size counts alike: the small
/// messages fix α, the large ones B. An unconstrained α below 0 (noise on a link whose latency is
/// below the resolution) is refitted with α = 0 and flagged (`latency_at_zero`), never hidden.
///
/// Thread safety: every function here is reentrant.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "budget/cluster.hpp"

namespace budget {

/// One timed collective: `size_bytes` is the nccl-tests size (cluster.hpp) and `seconds`
/// the time of one call (the median of the timed launches; the slowest rank's).
struct CollectiveMeasurement {
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::int64_t ranks = 2;
  double size_bytes = 0.0;
  double seconds = 0.0;
};

/// Empty when `m` can be fitted (ranks in [2, 2^20], size and seconds positive and finite),
/// else what is wrong (one line).
std::string validation_error(const CollectiveMeasurement& m);

/// Link figures fitted to measurements, with how well the model describes them.
struct LinkFit {
  LinkSpec link;                       ///< fitted bandwidth and latency; `source` says from what
  std::vector<CollectiveKind> kinds;   ///< the collectives fitted (one for a per-collective fit)
  std::size_t measurements = 0;
  double rms_relative_residual = 0.0;  ///< sqrt(mean ((t̂ − t)/t)²)
  double max_relative_residual = 0.0;  ///< max |t̂ − t|/t
  bool latency_at_zero = false;        ///< the unconstrained fit's latency was negative; refitted with α = 0
  /// One line: "all_reduce: 412.3 GB/s, 9.8 us (12 measurements, rms 1.2%, max 3.4%)".
  std::string brief() const;
};

/// Fits one link to `measurements` (any mix of collectives and rank counts). budget::Error naming
/// `source` when a measurement is invalid (its index and what is wrong), when there are fewer than
/// two, when they cannot separate bandwidth from latency (a single message size per rank count and
/// collective), or when the fitted bandwidth is not positive (times that do not grow with size).
LinkFit fit_link(const std::vector<CollectiveMeasurement>& measurements, const std::string& source);

/// One fit per collective present in `measurements` (in CollectiveKind order), then the joint fit
/// of all of them last (kinds lists every one): the joint one is what a cluster file holds, since
/// the planner applies one link to every collective.
std::vector<LinkFit> fit_links(const std::vector<CollectiveMeasurement>& measurements, const std::string& source);

/// A measurement file: what produced it and the rows (schema "budget.collectives", version 1).
struct CollectiveMeasurements {
  std::string tool;     ///< e.g. "budget-profile 0.1.0"
  std::string created;  ///< ISO 8601 UTC
  std::string device;   ///< the GPUs and the interconnect as the timer describes them
  std::string method;   ///< how each time was taken
  bool simulated = false;  ///< times from a fake timer, not a measurement
  std::vector<CollectiveMeasurement> rows;
};

/// JSON text of `m` with, beside each row, the time the joint fit predicts, and the fits of
/// fit_links() (docs/cluster.md). `fits` may be empty.
std::string collective_measurements_json(const CollectiveMeasurements& m, const std::vector<LinkFit>& fits);
/// Strict reader of that text: unknown keys, wrong types, invalid rows are budget::Error naming
/// `source` and the JSON pointer. The fits in the file are not read (they are refitted).
CollectiveMeasurements parse_collective_measurements(std::string_view json_text, const std::string& source);
CollectiveMeasurements load_collective_measurements(const std::string& path);

/// `kind` from its to_string() name; budget::Error naming `where` and the allowed names otherwise.
CollectiveKind collective_kind_from_string(std::string_view name, const std::string& where);

}  // namespace budget
