// The time of one collective over one link (budget/cluster.hpp): bus factors from nccl-tests
// doc/PERFORMANCE.md (NVIDIA/nccl-tests), the latency-bound steps of the ring and pairwise algorithms.
#include "budget/cluster.hpp"

#include "hardware/collective_names.hpp"

namespace budget {

std::string_view to_string(CollectiveKind kind) { return detail::name_of(detail::collective_kind_names, kind); }

double bus_factor(CollectiveKind kind, std::int64_t ranks) {
  if (kind == CollectiveKind::send_recv) return 1.0;
  if (ranks <= 1) return 0.0;
  const double n = static_cast<double>(ranks);
  // nccl-tests PERFORMANCE.md: AllReduce busBw = algBw · 2(n−1)/n; ReduceScatter and AllGather
  // (n−1)/n; AlltoAll (n−1)/n (src/alltoall.cu, AlltoAllGetBw).
  return kind == CollectiveKind::all_reduce ? 2.0 * (n - 1.0) / n : (n - 1.0) / n;
}

std::int64_t latency_steps(CollectiveKind kind, std::int64_t ranks) {
  if (kind == CollectiveKind::send_recv) return 1;
  if (ranks <= 1) return 0;
  return kind == CollectiveKind::all_reduce ? 2 * (ranks - 1) : ranks - 1;
}

double collective_seconds(CollectiveKind kind, double size_bytes, std::int64_t ranks, const LinkSpec& link) {
  const double steps = static_cast<double>(latency_steps(kind, ranks));
  const double volume = size_bytes * bus_factor(kind, ranks);
  if (volume <= 0.0 && steps <= 0.0) return 0.0;
  return volume / link.bandwidth_bytes_per_s + steps * link.latency_s;
}

}  // namespace budget
