// The JSON form of a LayoutSearchResult (docs/cluster.md, "Layout search"; `budget-match layout CFG --cluster C
// --gpus N --format json`): the search's counts, then each kept layout as training_memory_json() with the
// `time` of cluster_step_time_json() (budget/layout_search.hpp).
#include <nlohmann/json.hpp>

#include "budget/cluster_time.hpp"
#include "budget/layout_search.hpp"
#include "budget/training_memory.hpp"

namespace budget {

std::string layout_search_json(const LayoutSearchResult& found, const std::string& config_name,
                               const ClusterSpec& cluster, const LayoutSearchOptions& options, int indent) {
  nlohmann::ordered_json out{{"config", config_name},
                             {"cluster", cluster.name.empty() ? cluster.gpu_name : cluster.name},
                             {"gpus", options.gpus},
                             {"global_batch_tokens", options.global_batch_tokens},
                             {"enumerated", found.enumerated},
                             {"valid", found.valid},
                             {"fitting", found.fitting}};
  if (found.valid == 0) {
    out["no_valid_layout"] = found.enumerated == 0
                                 ? "no combination divides the global batch into b · seq_len · DP micro-batches"
                                 : "every layout is invalid, e.g.: " + found.first_rejection;
  }
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (const RankedLayout& r : found.layouts) {
    nlohmann::ordered_json item = nlohmann::ordered_json::parse(training_memory_json(r.memory, -1));
    item["time"] = nlohmann::ordered_json::parse(cluster_step_time_json(r.time, -1));
    layouts.push_back(item);
  }
  out["layouts"] = layouts;
  return out.dump(indent);
}

}  // namespace budget
