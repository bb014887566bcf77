// The JSON form of a TrainingMemory (docs/cluster.md, `budget-match layout --format json`).
#include <nlohmann/json.hpp>

#include "budget/training_memory.hpp"

namespace budget {

namespace {

/// Selective recompute's modules as named (Megatron's default list when none are given).
std::vector<std::string> recompute_modules_of_json(const RecomputeSpec& r) {
  std::vector<std::string> names;
  if (r.kind != RecomputeKind::selective) return names;
  if (r.modules.empty()) return {"core_attn"};
  for (const RecomputeModule m : r.modules) names.emplace_back(to_string(m));
  return names;
}

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
  const ParallelLayout& l = mem.layout;
  nlohmann::ordered_json layout{
      {"gpus", l.gpus},
      {"tp", l.tp},
      {"sequence_parallel", l.sequence_parallel_active()},
      {"pp", l.pp},
      {"virtual_stages", l.virtual_stages},
      {"ep", l.ep},
      {"etp", l.expert_tp()},
      {"cp", l.cp},
      {"dp", l.data_parallel()},
      {"expert_dp", l.expert_data_parallel()},
      {"micro_batch_size", l.micro_batch_size},
      {"micro_batches", l.micro_batches},
      {"seq_len", l.seq_len},
      {"recompute", std::string(to_string(l.recompute.kind))},
      {"recompute_full_layers", l.recompute.full_layers},
      {"distributed_optimizer", l.distributed_optimizer},
      {"precision", std::string(to_string(l.precision))},
      {"cross_entropy_fusion", l.cross_entropy_fusion},
      {"capacity_factor", l.capacity_factor},
      {"imbalance", l.imbalance},
      {"padded_vocab", mem.padded_vocab},
      {"replicate_loop_weights", l.loop_placement == LoopPlacement::replicated},
      {"loop_placement", std::string(to_string(l.loop_placement))},
      {"flash_attention", l.flash_attention},
      {"dropout", l.dropout},
      {"gradient_accumulation_fusion", l.gradient_accumulation_fusion},
      {"pipeline_layout", l.split.layout},
      {"first_stage_layers", l.split.first_stage_layers.value_or(-1)},  // schema 1: -1 when not given
      {"last_stage_layers", l.split.last_stage_layers.value_or(-1)},
      {"embedding_in_split", l.embedding_in_split},
      {"loss_in_split", l.loss_in_split},
      {"recompute_method", std::string(to_string(l.recompute.method))},
      {"recompute_modules", recompute_modules_of_json(l.recompute)},
      {"fsdp", std::string(to_string(l.fsdp))},
      {"fsdp_sharding", std::string(to_string(l.fsdp_sharding))},
      {"distributed_optimizer_instances", l.distributed_optimizer_instances},
      {"fp8", std::string(to_string(l.fp8))},
      {"fp8_param_gather", l.fp8_param_gather},
      {"cpu_offload_layers", l.cpu_offload_layers},
      {"dispatcher", std::string(to_string(l.dispatcher))},
      {"moe_permute_fusion", l.moe_permute_fusion},
      {"bf16_main_grads", l.optimizer_dtypes.bf16_main_grads},
      {"precision_aware_optimizer", l.optimizer_dtypes.precision_aware},
      {"main_params_dtype", std::string(to_string(l.optimizer_dtypes.main_params))},
      {"exp_avg_dtype", std::string(to_string(l.optimizer_dtypes.exp_avg))},
      {"exp_avg_sq_dtype", std::string(to_string(l.optimizer_dtypes.exp_avg_sq))}};
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
