// Cluster files (`--cluster FILE`, docs/cluster.md): parse_cluster_spec(). An accepted cluster must
// validate, print its names as printable text (they reach terminals), survive the documented round
// trip cluster_spec_json() → parse (the text reads back to the same text), and plan a fixed layout
// of the paper baseline: training_memory() on one GPU returns finite, non-negative bytes or refuses
// by name (a memory or a link absurd enough for a number to overflow is a finding).
#include <cmath>

#include "budget/cluster.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/text_escape.hpp"
#include "budget/training_memory.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_cluster", [&] {
    const ClusterSpec cluster = parse_cluster_spec(fuzz::as_text(data, size), "<fuzz>", "/nonexistent-dir");
    fuzz::must_succeed("fuzz_cluster", "validation and round trip", [&] {
      cluster.validate("<fuzz>");
      fuzz::require(printable_text(cluster.gpu_name) == cluster.gpu_name, "fuzz_cluster",
                    "an accepted GPU name holds control characters");
      const std::string text = cluster_spec_json(cluster);
      fuzz::require(cluster_spec_json(parse_cluster_spec(text, "<round trip>")) == text, "fuzz_cluster",
                    "the cluster's JSON does not read back to itself");
    });
    ParallelLayout one;
    one.dp = 1;
    one.seq_len = 4096;
    const TrainingMemory m = training_memory(fuzz::paper_baseline(), one, cluster, "<fuzz>");
    fuzz::require(std::isfinite(m.peak_bytes) && m.peak_bytes >= 0 && std::isfinite(m.headroom_bytes),
                  "fuzz_cluster", "the memory of a fixed layout is not finite");
  });
  return 0;
}
