#include "budget_render/memory.hpp"

#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace budget::render {

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
    // Only where the recipe has some (the flex dispatcher's buffers): the keys are absent otherwise.
    if (s.outside_allocator_bytes > 0.0) {
      const DispatcherBufferBytes& b = s.dispatcher_buffers;
      stages.back()["outside_allocator_bytes"] = s.outside_allocator_bytes;
      stages.back()["dispatcher_buffers"] = {
          {"nvlink_bytes", b.nvlink}, {"rdma_bytes", b.rdma}, {"workspace_bytes", b.workspace}};
    }
  }
  return stages;
}

}  // namespace

nlohmann::ordered_json layout_json(const ParallelLayout& layout, const LayoutDerivation& derivation) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [name, value] : layout_field_values(layout, derivation)) {
    out[std::string(name)] = std::visit([](const auto& v) { return nlohmann::ordered_json(v); }, value);
  }
  return out;
}

nlohmann::ordered_json training_memory_json(const TrainingMemory& mem) {
  return {{"layout", layout_json(mem.layout, {mem.padded_vocab})},
          {"memory",
           {{"peak_bytes", mem.peak_bytes},
            {"peak_stage", mem.peak_stage},
            {"capacity_bytes", mem.capacity_bytes},
            {"headroom_bytes", mem.headroom_bytes},
            {"fits", mem.fits},
            {"stages", stages_json(mem)}}},
          {"notes", mem.notes}};
}

}  // namespace budget::render
