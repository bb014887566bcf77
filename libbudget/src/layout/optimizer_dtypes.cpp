// Gradient and optimizer dtypes (docs/cluster.md, "Gradient and optimizer dtypes"): the checks of a
// layout's OptimizerDtypes (their bytes per parameter: time/training_recipe.cpp). Sources at
// Megatron-LM d98e8a64, as cited.
#include "layout/optimizer_dtypes.hpp"

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget {

std::string optimizer_dtypes_error(const ParallelLayout& l) {
  const OptimizerDtypes& d = l.optimizer_dtypes;
  if (d.bf16_main_grads && l.precision != TrainingPrecision::bf16) {
    return fmt::format("bf16 main gradients (--grad-reduce-in-bf16, --main-grads-dtype bf16) apply to bf16 training, "
                       "not {}",
                       to_string(l.precision));
  }
  const bool reduced = d.main_params != StateDtype::fp32 || d.exp_avg != StateDtype::fp32 ||
                       d.exp_avg_sq != StateDtype::fp32;
  if (reduced && !d.precision_aware) {
    return "optimizer states in other dtypes than fp32 need the precision-aware optimizer "
           "(--use-precision-aware-optimizer)";
  }
  if (d.main_params != StateDtype::fp32 && d.main_params != StateDtype::fp16) {
    return fmt::format("main parameters in {}: Megatron allows fp32 or fp16 (--main-params-dtype)",
                       to_string(d.main_params));
  }
  if (!d.precision_aware) return {};
  if (l.fsdp == FsdpKind::torch_fsdp2) return "the precision-aware optimizer with torch FSDP2 is not modelled";
  if (!l.distributed_optimizer && l.fsdp != FsdpKind::megatron_fsdp) {
    // megatron/core/optimizer/__init__.py:1057-1060 at d98e8a64.
    return "the precision-aware optimizer needs the distributed optimizer (Megatron raises it)";
  }
  return {};
}

}  // namespace budget
