#pragma once
// Rendering of Budgets and configs for budget-match outputs (JSON objects and text tables).
// The JSON layout is part of the versioned output schema (docs/cli.md): change it only with a
// schema_version bump.

#include <string>

#include <nlohmann/json.hpp>

#include "budget/accounting.hpp"
#include "budget/config.hpp"
#include "budget/workload.hpp"

namespace budget::cli {

/// Version of every JSON document budget-match writes.
inline constexpr int output_schema_version = 1;

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

}  // namespace budget::cli
