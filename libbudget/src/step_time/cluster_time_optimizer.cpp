// The optimizer step of a training step on one GPU of a stage (docs/cluster.md, "Optimizer step";
// step_time/step_compute.hpp).
//
// Megatron-Core's Adam over the parameters a rank owns (megatron/core/optimizer/distrib_optimizer.py
// at d98e8a64: with the distributed optimizer each rank updates its 1/(DP·CP / instances) shard of the
// dense parameters and 1/(EDP / instances) of the expert parameters; without it every parameter it
// holds): a memory-bound pass that, per parameter updated, reads its main gradient, reads and writes
// the optimizer states (fp32 master weights and both Adam moments for bf16 training), writes the
// model weight, and reads the gradient once more for the gradient norm (--clip-grad):
//   2·optimizer + 2·gradients + weights bytes (ParallelLayout's parameter_bytes(): bf16 2·12 + 2·4 + 2
//   = 34 bytes); and before the next step the whole local gradient buffer is zeroed (zero_grad_buffer:
//   gradients bytes per parameter held). At the profile's copy bandwidth, with the memory-bound
//   class's factor (the run fit's); the Adam kernels' own launches are not counted.
#include "step_time/step_compute.hpp"

namespace budget {

double optimizer_step_seconds(const TimeModel& model, const ParallelLayout& l, const StageMemory& stage) {
  const ParameterBytes b = parameter_bytes(l.precision);
  const bool sharded = l.distributed_optimizer || l.fsdp != FsdpKind::none;
  const double instances = static_cast<double>(std::max<std::int64_t>(1, l.distributed_optimizer_instances));
  const double dense_group = sharded ? static_cast<double>(l.data_parallel() * l.cp) / instances : 1.0;
  const double expert_group = sharded ? static_cast<double>(l.expert_data_parallel()) / instances : 1.0;
  const double owned = stage.dense_params / std::max(1.0, dense_group) + stage.expert_params / std::max(1.0, expert_group);
  const double held = stage.dense_params + stage.expert_params;
  const double bytes = (2.0 * b.optimizer + 2.0 * b.gradients + b.weights) * owned + b.gradients * held;
  const double copy_bytes_per_s = model.profile().peaks.copy_gbytes_per_s * 1e9;
  return bytes / copy_bytes_per_s * model.layer_correction().factor[static_cast<std::size_t>(TimeClass::elementwise)];
}

}  // namespace budget
