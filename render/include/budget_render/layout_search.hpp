#pragma once
// A layout search (budget/layout_search.hpp) as JSON: the document of `budget-match layout CFG
// --cluster C --gpus N --format json` without its schema keys, which Python's budget.layout_search()
// returns as a dict (docs/cluster.md, "Layout search"), and the recipe every searched layout holds.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "budget/cluster.hpp"
#include "budget/layout_search.hpp"

namespace budget::render {

/// What every layout of a search holds (LayoutRecipe): precision, fp8, fp8_param_gather,
/// bf16_main_grads, precision_aware_optimizer, the three state dtypes, micro_batch_size, recompute and
/// distributed_optimizer (null where searched), fsdp, cpu_offload_layers, dispatcher,
/// moe_permute_fusion, cross_entropy_fusion, capacity_factor, each as the layout's field table writes
/// it. In layout_search_json() and the cluster ranking's JSON.
nlohmann::ordered_json layout_recipe_json(const LayoutRecipe& recipe);

/// `config` (`config_name`), `cluster` (its name, else its GPU's), nodes, gpus_per_node, `gpus`,
/// `global_batch_tokens`, seq_len, attended_keys, attention, min_headroom_bytes, run_tokens,
/// `enumerated`, `valid`, `fitting`, batch_skipped, `recipe` (layout_recipe_json()), no_valid_layout
/// and no_layout where so, and `layouts`, best first, each training_memory_json()'s object with the
/// `time` of cluster_step_time_json() (and its `run` with run tokens).
nlohmann::ordered_json layout_search_json(const LayoutSearchResult& found, const std::string& config_name,
                                          const ClusterSpec& cluster, const LayoutSearchOptions& options);

}  // namespace budget::render
