// The layout search's options (docs/cluster.md, "Layout search"): their checks, the cluster
// ranking's options from a workload, the one attended-keys default, and why a search found nothing.
#include "search/layout_search_options.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget {

namespace detail {

void check_layout_search_options(const LayoutSearchOptions& o, const ClusterSpec& cluster) {
  if (o.gpus < 1 || o.gpus > cluster.total_gpus()) {
    throw Error(fmt::format("{} GPUs: the cluster has {} ({} node{} of {}); set more nodes (nodes)", o.gpus,
                            cluster.total_gpus(), cluster.nodes, cluster.nodes == 1 ? "" : "s", cluster.gpus_per_node),
                "gpus");
  }
  if (o.seq_len < 1 || o.seq_len > (std::int64_t{1} << 32)) {
    throw Error(fmt::format("seq_len = {} is not in [1, 2^32]", o.seq_len), "seq_len");
  }
  if (o.global_batch_tokens > (std::int64_t{1} << 50)) {
    throw Error(fmt::format("global batch of {} tokens is more than 2^50", o.global_batch_tokens),
                "global_batch_tokens");
  }
  if (o.global_batch_tokens < o.seq_len) {
    throw Error(fmt::format("global batch of {} tokens is less than one sequence of {}", o.global_batch_tokens,
                            o.seq_len),
                "global_batch_tokens");
  }
  if (o.keep < 1) throw Error("keep at least one layout", "keep");
  if (!(o.min_headroom_bytes >= 0.0) || !std::isfinite(o.min_headroom_bytes)) {
    throw Error(fmt::format("headroom of {} bytes is not allowed; allowed: a finite number ≥ 0", o.min_headroom_bytes),
                "min_headroom");
  }
  if (!(o.run_tokens >= 0.0) || !std::isfinite(o.run_tokens)) {
    throw Error(fmt::format("{} run tokens are not allowed; allowed: a finite number ≥ 0 (0: no run)", o.run_tokens),
                "run_tokens");
  }
}

}  // namespace detail

double layout_attended_keys(const Workload& workload) {
  return workload.attention_mask == AttentionMask::document ? workload.attended_keys : 0.0;
}

std::string attended_keys_text(double attended_keys, std::int64_t seq_len) {
  if (attended_keys > 0.0) return fmt::format("{:g} mean attended keys a query", attended_keys);
  return fmt::format("causal, (s + 1)/2 = {:g} keys a query", (static_cast<double>(seq_len) + 1.0) / 2.0);
}

LayoutSearchOptions cluster_rank_search_options(const Workload& workload, std::int64_t gpus,
                                                std::int64_t global_batch_tokens, std::int64_t max_nodes_per_token) {
  LayoutSearchOptions o;
  o.gpus = gpus;
  o.seq_len = workload.seq_len;
  o.global_batch_tokens = global_batch_tokens;
  o.keep = 1;
  o.time.communication.max_nodes_per_token = max_nodes_per_token;
  o.time.attended_keys = layout_attended_keys(workload);
  return o;
}

std::string no_layout_reason(const LayoutSearchResult& found, const LayoutSearchOptions& o) {
  if (!found.layouts.empty()) return {};
  // The global batch is the cause of the combinations it rules out; named first, as a layout that
  // was enumerated and refused may be refused for a reason the batch never let it reach.
  std::string batch;
  if (found.batch_skipped > 0) {
    const auto [b, dp] = found.first_batch_skip;
    batch = fmt::format("the global batch of {} tokens divides into no micro-batch of b x seq_len x DP tokens for {} "
                        "of the combinations (e.g. b {} x {} x DP {}); set --global-batch-tokens to a multiple of "
                        "seq_len x DP",
                        o.global_batch_tokens, found.batch_skipped, b, o.seq_len, dp);
  }
  if (found.valid == 0) {
    if (found.enumerated == 0) return "no layout: " + batch;
    std::string out = fmt::format("no layout is valid on {} GPUs: ", o.gpus);
    if (!batch.empty()) out += batch + "; the other " + std::to_string(found.enumerated) + " refused, the first: ";
    else out += "the first refused: ";
    return out + found.first_rejection;
  }
  std::string out = fmt::format("no layout fits: none of the {} valid layouts leaves {}", found.valid,
                                o.min_headroom_bytes > 0.0
                                    ? fmt::format("the {:g} GiB of headroom asked for (--min-headroom)",
                                                  o.min_headroom_bytes / (1024.0 * 1024.0 * 1024.0))
                                    : std::string("room in the GPU's usable memory"));
  if (!batch.empty()) out += "; also, " + batch;
  return out;
}

}  // namespace budget
