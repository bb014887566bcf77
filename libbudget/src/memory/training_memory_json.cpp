// The JSON form of a TrainingMemory (docs/cluster.md, `budget-match layout --format json`).
#include <nlohmann/json.hpp>

#include "budget/training_memory.hpp"
#include "layout/layout_fields_json.hpp"

namespace budget {

namespace {

/// Each pipeline stage's memory: its layers, in-flight micro-batches and bytes by component.
nlohmann::ordered_json stages_json(const TrainingMemory& mem) {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageMemory& s : mem.stages) {
    const MemoryComponents& c = s.by_component;
    stages.push_back({{"pipeline_rank", s.pipeline_rank},
                      {"layers", s.stored_layers},
                      {"executed_layers", s.executed_layers},
                      {"in_flight_micro_batches", s.in_flight_micro_batches},
                      {"params", s.dense_params + s.expert_params},
                      {"expert_params", s.expert_params},
                      {"peak_bytes", s.peak_bytes},
                      {"by_component",
                       {{"weights", c.weights},
                        {"gradients", c.gradients},
                        {"optimizer_states", c.optimizer_states},
                        {"activations", c.activations},
                        {"logits", c.logits},
                        {"buffers", c.buffers}}},
                      {"te_dummy_wgrad_bytes", s.te_dummy_wgrad_bytes}});
    // Only where the recipe has some (HybridEP): the key is absent otherwise.
    if (s.outside_allocator_bytes > 0.0) stages.back()["outside_allocator_bytes"] = s.outside_allocator_bytes;
  }
  return stages;
}

}  // namespace

std::string training_memory_json(const TrainingMemory& mem, int indent) {
  // The layout's keys, in the field table's order (budget/layout_fields.hpp): a run file's "layout" reads them back.
  const nlohmann::ordered_json layout = detail::layout_fields_json(mem.layout, {mem.padded_vocab});
  const nlohmann::ordered_json stages = stages_json(mem);
  nlohmann::ordered_json out{{"layout", layout},
                             {"memory",
                              {{"peak_bytes", mem.peak_bytes},
                               {"peak_stage", mem.peak_stage},
                               {"capacity_bytes", mem.capacity_bytes},
                               {"headroom_bytes", mem.headroom_bytes},
                               {"fits", mem.fits},
                               {"stages", stages}}},
                             {"notes", mem.notes}};
  return out.dump(indent);
}

}  // namespace budget
