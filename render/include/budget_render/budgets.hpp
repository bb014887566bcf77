#pragma once
// Budgets, configs and workloads as JSON objects and short texts (budget-match outputs and the
// Python module's dicts).
// The JSON layout is part of the versioned output schema (docs/cli.md): change it only with a
// schema_version bump.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "budget/accounting.hpp"
#include "budget/config.hpp"
#include "budget/workload.hpp"
#include "budget_render/schema.hpp"

namespace budget::render {

/// {"flops_per_token": {...}, "params": {...}, "kv_cache": {...}, "effective_layers", ...}
nlohmann::ordered_json budgets_json(const Budgets& budgets);

/// The config in native form (as arch_config_to_json writes it).
nlohmann::ordered_json config_json(const ArchConfig& config);

nlohmann::ordered_json workload_json(const Workload& workload);

/// "10×128 (KV 2)" style head description.
std::string heads_text(const AttentionConfig& attention);

/// "192×432 (top 8)" style FFN description; "dense 4096" for dense models.
std::string ffn_text(const FfnConfig& ffn);

/// "4–9 ×2" or "none".
std::string loop_text(const ArchConfig& config);

}  // namespace budget::render
