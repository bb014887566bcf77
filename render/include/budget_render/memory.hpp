#pragma once
// A layout and its memory (budget/training_memory.hpp, budget/layout_fields.hpp) as JSON: the
// `layout` and `memory` objects of `budget-match layout --format json`, of each layout a search keeps,
// of the cluster ranking's candidates, of `report --cluster` and of Python's budget.layout().

#include <nlohmann/json_fwd.hpp>

#include "budget/layout_fields.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/training_memory.hpp"

namespace budget::render {

/// Every field of the layout's field table in its order, each under its JSON name with its value's
/// own JSON type: the object a run file's "layout" reads back
/// (runs/run_reader.cpp).
nlohmann::ordered_json layout_json(const ParallelLayout& layout, const LayoutDerivation& derivation);

/// {"layout": layout_json(), "memory": {"peak_bytes", "peak_stage", "capacity_bytes",
/// "headroom_bytes", "fits", "stages": [{"pipeline_rank", "layers", "executed_layers",
/// "in_flight_micro_batches", "params", "expert_params", "peak_bytes", "by_component": {"weights",
/// "gradients", "optimizer_states", "activations", "logits", "buffers"}, "te_dummy_wgrad_bytes"
/// [, "outside_allocator_bytes" and "dispatcher_buffers": {"nvlink_bytes", "rdma_bytes",
/// "workspace_bytes"} where the flex dispatcher has buffers outside PyTorch's allocator]}]}, "notes"}
/// (docs/cluster.md).
nlohmann::ordered_json training_memory_json(const TrainingMemory& memory);

}  // namespace budget::render
