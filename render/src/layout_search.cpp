#include "budget_render/layout_search.hpp"

#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "budget/cluster_time.hpp"
#include "budget/layout_fields.hpp"
#include "budget/training_memory.hpp"
#include "budget_render/cluster_time.hpp"
#include "budget_render/memory.hpp"

namespace budget::render {

nlohmann::ordered_json layout_recipe_json(const LayoutRecipe& r) {
  using json = nlohmann::ordered_json;
  // The recipe's fields by the layout's field table (budget/layout_fields.hpp), in this order; the
  // micro-batch size, recompute (its kind) and distributed optimizer are null where not held.
  ParallelLayout base;
  static_cast<TrainingRecipe&>(base) = r.base;
  json out = json::object();
  for (const char* name :
       {"precision", "fp8", "fp8_param_gather", "bf16_main_grads", "precision_aware_optimizer", "main_params_dtype",
        "exp_avg_dtype", "exp_avg_sq_dtype", "micro_batch_size", "recompute", "distributed_optimizer", "fsdp",
        "cpu_offload_layers", "dispatcher", "moe_permute_fusion", "cross_entropy_fusion", "capacity_factor"}) {
    const std::string_view key = name;
    const bool held = (key != "micro_batch_size" || r.hold_micro_batch_size) &&
                      (key != "recompute" || r.hold_recompute) &&
                      (key != "distributed_optimizer" || r.hold_distributed_optimizer);
    out[std::string(key)] =
        held ? std::visit([](const auto& v) { return json(v); }, find_layout_field(key)->get(base, {})) : json();
  }
  return out;
}

nlohmann::ordered_json layout_search_json(const LayoutSearchResult& found, const std::string& config_name,
                                          const ClusterSpec& cluster, const LayoutSearchOptions& options) {
  nlohmann::ordered_json out{{"config", config_name},
                             {"cluster", cluster.name.empty() ? cluster.gpu_name : cluster.name},
                             {"nodes", cluster.nodes},
                             {"gpus_per_node", cluster.gpus_per_node},
                             {"gpus", options.gpus},
                             {"global_batch_tokens", options.global_batch_tokens},
                             {"seq_len", options.seq_len},
                             {"attended_keys", options.time.attended_keys > 0.0
                                                   ? options.time.attended_keys
                                                   : (static_cast<double>(options.seq_len) + 1.0) / 2.0},
                             {"attention", attended_keys_text(options.time.attended_keys, options.seq_len)},
                             {"min_headroom_bytes", options.min_headroom_bytes},
                             {"run_tokens", options.run_tokens > 0.0 ? nlohmann::ordered_json(options.run_tokens)
                                                                     : nlohmann::ordered_json(nullptr)},
                             {"enumerated", found.enumerated},
                             {"valid", found.valid},
                             {"fitting", found.fitting},
                             {"batch_skipped", found.batch_skipped},
                             {"recipe", layout_recipe_json(options.recipe)}};
  if (found.valid == 0) out["no_valid_layout"] = no_layout_reason(found, options);
  if (found.layouts.empty()) out["no_layout"] = no_layout_reason(found, options);
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (const RankedLayout& r : found.layouts) {
    nlohmann::ordered_json item = training_memory_json(r.memory);
    item["time"] = cluster_step_time_json(r.time);
    if (options.run_tokens > 0.0) {
      item["time"]["run"] = run_cost_json(run_cost(r.time, r.memory.layout.gpus, options.run_tokens));
    }
    layouts.push_back(item);
  }
  out["layouts"] = layouts;
  return out;
}

}  // namespace budget::render
