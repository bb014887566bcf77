// The JSON form of a LayoutSearchResult (docs/cluster.md, "Layout search"; `budget-match layout CFG --cluster C
// --gpus N --format json`): the search's counts, then each kept layout as training_memory_json() with the
// `time` of cluster_step_time_json() (budget/layout_search.hpp).
#include <nlohmann/json.hpp>

#include "budget/cluster_time.hpp"
#include "budget/layout_search.hpp"
#include "budget/training_memory.hpp"

namespace budget {

std::string layout_recipe_json(const LayoutRecipe& r, int indent) {
  using json = nlohmann::ordered_json;
  const TrainingRecipe& b = r.base;
  const OptimizerDtypes& d = b.optimizer_dtypes;
  const json out{{"precision", std::string(to_string(b.precision))},
                 {"fp8", std::string(to_string(b.fp8))},
                 {"fp8_param_gather", b.fp8_param_gather},
                 {"bf16_main_grads", d.bf16_main_grads},
                 {"precision_aware_optimizer", d.precision_aware},
                 {"main_params_dtype", std::string(to_string(d.main_params))},
                 {"exp_avg_dtype", std::string(to_string(d.exp_avg))},
                 {"exp_avg_sq_dtype", std::string(to_string(d.exp_avg_sq))},
                 {"micro_batch_size", r.hold_micro_batch_size ? json(b.micro_batch_size) : json()},
                 {"recompute", r.hold_recompute ? json(std::string(to_string(b.recompute.kind))) : json()},
                 {"distributed_optimizer", r.hold_distributed_optimizer ? json(b.distributed_optimizer) : json()},
                 {"fsdp", std::string(to_string(b.fsdp))},
                 {"cpu_offload_layers", b.cpu_offload_layers},
                 {"dispatcher", std::string(to_string(b.dispatcher))},
                 {"moe_permute_fusion", b.moe_permute_fusion},
                 {"cross_entropy_fusion", b.cross_entropy_fusion},
                 {"capacity_factor", b.capacity_factor}};
  return out.dump(indent);
}

std::string layout_search_json(const LayoutSearchResult& found, const std::string& config_name,
                               const ClusterSpec& cluster, const LayoutSearchOptions& options, int indent) {
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
                             {"recipe", nlohmann::ordered_json::parse(layout_recipe_json(options.recipe, -1))}};
  if (found.valid == 0) out["no_valid_layout"] = no_layout_reason(found, options);
  if (found.layouts.empty()) out["no_layout"] = no_layout_reason(found, options);
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (const RankedLayout& r : found.layouts) {
    nlohmann::ordered_json item = nlohmann::ordered_json::parse(training_memory_json(r.memory, -1));
    item["time"] = nlohmann::ordered_json::parse(cluster_step_time_json(r.time, -1));
    if (options.run_tokens > 0.0) {
      const RunCost run = run_cost(r.time, r.memory.layout.gpus, options.run_tokens);
      item["time"]["run"] = {{"wall_clock_seconds", run.wall_clock_seconds}, {"gpu_hours", run.gpu_hours},
                             {"steps", run.steps}};
    }
    layouts.push_back(item);
  }
  out["layouts"] = layouts;
  return out.dump(indent);
}

}  // namespace budget
