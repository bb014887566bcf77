// Gradient and optimizer dtypes (docs/cluster.md, "Gradient and optimizer dtypes"): the bytes per
// parameter of a layout and the checks of its OptimizerDtypes. Sources at Megatron-LM d98e8a64 and
// TransformerEngine v2.11 (c188b533), as cited.
#include "layout/optimizer_dtypes.hpp"

#include <optional>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "base/enum_names.hpp"

namespace budget {

namespace {

constexpr auto state_dtype_names = detail::enum_names<StateDtype::fp8>(
    {{StateDtype::fp32, "fp32"}, {StateDtype::bf16, "bf16"}, {StateDtype::fp16, "fp16"}, {StateDtype::fp8, "fp8"}});

/// Bytes an element of an Adam moment (TE FusedAdam stores fp8 moments with one fp32 scale per
/// tensor, not counted).
double state_dtype_bytes(StateDtype dtype) {
  switch (dtype) {
    case StateDtype::fp32: return 4.0;
    case StateDtype::bf16:
    case StateDtype::fp16: return 2.0;
    case StateDtype::fp8: return 1.0;
  }
  return 4.0;
}

}  // namespace

std::string_view to_string(StateDtype dtype) { return detail::name_of(state_dtype_names, dtype); }

StateDtype parse_state_dtype(std::string_view text, const std::string& where) {
  if (const std::optional<StateDtype> d = detail::enum_named(state_dtype_names, text)) return *d;
  throw Error(fmt::format("value \"{}\" is not allowed; allowed: {}", text, detail::names_list(state_dtype_names)),
              where);
}

// Bytes per parameter (weights, gradient buffer, optimizer states before sharding):
//   gradients: bf16 training keeps the gradient buffer (main_grad) in fp32 unless bf16_main_grads
//     (Megatron's DDP buffer dtype is fp32 iff grad_reduce_in_fp32, param_and_grad_buffer.py:924;
//     training.py:2635 passes --accumulate-allreduce-grads-in-fp32, which arguments.py:1207-1216
//     sets for --bf16 unless --grad-reduce-in-bf16 or --main-grads-dtype bf16): 4 → 2 bytes;
//   optimizer with --use-precision-aware-optimizer (optimizer/__init__.py:564-588): Transformer
//     Engine's FusedAdam holds the master weights and the moments, exp_avg and exp_avg_sq in their
//     dtypes (4, 2, 2 or 1 bytes), the master weights in main_params_dtype when TE holds them
//     (no FP8, delayed FP8 or main_params fp16: optimizer_config.py:404-412; otherwise Megatron's own
//     fp32 shard, distrib_optimizer.py:422-445, 4 bytes); TE stores an fp32 master of bf16 parameters
//     as its 16-bit remainder, 2 bytes (store_param_remainders, default True: optimizer_config.py:192;
//     TE fused_adam.py:206-207, 375-376, 541), fp16 masters in 2 bytes, others in 4. The gradients
//     go to the optimizer as they are (decoupled_grad, distrib_optimizer.py:2790): fp16's fp32
//     gradient copy is not made.
// Not counted at the activation peak: without the precision-aware optimizer, bf16 main gradients are
// copied to an fp32 shard (4/d bytes) for the optimizer step (distrib_optimizer.py:2792), when the
// activations are freed.
ParameterBytes parameter_bytes(const ParallelLayout& l) {
  ParameterBytes p = parameter_bytes(l.precision);
  const OptimizerDtypes& d = l.optimizer_dtypes;
  if (d.bf16_main_grads && l.precision == TrainingPrecision::bf16) p.gradients = 2.0;
  if (!d.precision_aware) return p;
  const bool te_holds_master =
      d.main_params != StateDtype::fp32 || l.fp8 == Fp8Recipe::none || l.fp8 == Fp8Recipe::delayed;
  const bool bf16_params = l.precision == TrainingPrecision::bf16 && !l.fp8_param_gather;
  double master = 4.0;
  if (te_holds_master && d.main_params == StateDtype::fp16) master = 2.0;
  else if (te_holds_master && bf16_params) master = 2.0;
  p.optimizer = master + state_dtype_bytes(d.exp_avg) + state_dtype_bytes(d.exp_avg_sq);
  return p;
}

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
