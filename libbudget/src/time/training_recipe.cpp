// The training recipe (budget/training_recipe.hpp): the names of its enums, the recompute grammar,
// and the bytes per parameter of its precision and gradient and optimizer dtypes (docs/cluster.md,
// "Gradient and optimizer dtypes"). Sources at Megatron-LM d98e8a64 and TransformerEngine v2.11
// (c188b533), as cited.
#include "budget/training_recipe.hpp"

#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "base/enum_names.hpp"

namespace budget {

namespace {

// One table per enum (base/enum_names.hpp): to_string() prints from it and the parsers read with it.
constexpr auto recompute_names = detail::enum_names<RecomputeKind::full>({
    {RecomputeKind::none, "none"}, {RecomputeKind::selective, "selective"}, {RecomputeKind::full, "full"}});
constexpr auto precision_names = detail::enum_names<TrainingPrecision::fp32>({
    {TrainingPrecision::bf16, "bf16"}, {TrainingPrecision::fp16, "fp16"}, {TrainingPrecision::fp32, "fp32"}});
constexpr auto recompute_method_names = detail::enum_names<RecomputeMethod::uniform>(
    {{RecomputeMethod::block, "block"}, {RecomputeMethod::uniform, "uniform"}});
constexpr auto recompute_module_names = detail::enum_names<RecomputeModule::shared_experts>({
    {RecomputeModule::core_attn, "core_attn"}, {RecomputeModule::moe_act, "moe_act"},
    {RecomputeModule::layernorm, "layernorm"}, {RecomputeModule::mla_up_proj, "mla_up_proj"},
    {RecomputeModule::mlp, "mlp"}, {RecomputeModule::moe, "moe"}, {RecomputeModule::shared_experts, "shared_experts"}});
constexpr auto fsdp_kind_names = detail::enum_names<FsdpKind::torch_fsdp2>(
    {{FsdpKind::none, "none"}, {FsdpKind::megatron_fsdp, "megatron_fsdp"}, {FsdpKind::torch_fsdp2, "torch_fsdp2"}});
constexpr auto fsdp_sharding_names = detail::enum_names<FsdpSharding::optim_grads_params>(
    {{FsdpSharding::optim, "optim"}, {FsdpSharding::optim_grads, "optim_grads"},
     {FsdpSharding::optim_grads_params, "optim_grads_params"}});
constexpr auto dispatcher_names = detail::enum_names<MoeDispatcher::flex>(
    {{MoeDispatcher::alltoall, "alltoall"}, {MoeDispatcher::allgather, "allgather"}, {MoeDispatcher::flex, "flex"}});
constexpr auto loop_placement_names = detail::enum_names<LoopPlacement::replicated>(
    {{LoopPlacement::in_chunk, "in_chunk"}, {LoopPlacement::wrap, "wrap"}, {LoopPlacement::replicated, "replicated"}});

}  // namespace

std::string_view to_string(LoopPlacement placement) { return detail::name_of(loop_placement_names, placement); }

LoopPlacement parse_loop_placement(std::string_view text, const std::string& where) {
  if (const std::optional<LoopPlacement> p = detail::enum_named(loop_placement_names, text)) return *p;
  throw Error(fmt::format("loop placement \"{}\" is not known; allowed: {}", text, detail::names_list(loop_placement_names)),
              where);
}

std::string_view to_string(RecomputeKind kind) { return detail::name_of(recompute_names, kind); }

std::string_view to_string(TrainingPrecision precision) { return detail::name_of(precision_names, precision); }
std::string_view to_string(RecomputeMethod method) { return detail::name_of(recompute_method_names, method); }
std::string_view to_string(RecomputeModule module) { return detail::name_of(recompute_module_names, module); }
std::string_view to_string(FsdpKind kind) { return detail::name_of(fsdp_kind_names, kind); }
std::string_view to_string(FsdpSharding sharding) { return detail::name_of(fsdp_sharding_names, sharding); }
std::string_view to_string(MoeDispatcher dispatcher) { return detail::name_of(dispatcher_names, dispatcher); }

RecomputeModule parse_recompute_module(std::string_view text, const std::string& where) {
  if (const std::optional<RecomputeModule> m = detail::enum_named(recompute_module_names, text)) return *m;
  throw Error(fmt::format("recompute module \"{}\" is not modelled; modelled: {}", text,
                          detail::names_list(recompute_module_names)),
              where);
}

bool RecomputeSpec::recomputes(RecomputeModule module) const {
  if (kind != RecomputeKind::selective) return false;
  if (modules.empty()) return module == RecomputeModule::core_attn;  // Megatron's default list
  return std::find(modules.begin(), modules.end(), module) != modules.end();
}

namespace {

/// N ≥ 1 of at most 15 decimal digits, or 0 when `digits` is not that.
std::int64_t recompute_count(std::string_view digits) {
  if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789") != std::string_view::npos) return 0;
  std::int64_t n = 0;
  for (const char d : digits) n = n * 10 + (d - '0');
  return n;
}

}  // namespace

RecomputeSpec parse_recompute(std::string_view text, const std::string& where) {
  RecomputeSpec spec;
  if (const std::optional<RecomputeKind> kind = detail::enum_named(recompute_names, text)) {
    spec.kind = *kind;
    return spec;
  }
  // full:N (block, N ≥ 1 layers per chunk), full-uniform:N (groups of N), selective:m1,m2,...
  constexpr std::string_view full_prefix = "full:", uniform_prefix = "full-uniform:", selective_prefix = "selective:";
  if (text.substr(0, full_prefix.size()) == full_prefix) {
    spec = {RecomputeKind::full, recompute_count(text.substr(full_prefix.size())), RecomputeMethod::block, {}};
    if (spec.full_layers >= 1) return spec;
  } else if (text.substr(0, uniform_prefix.size()) == uniform_prefix) {
    spec = {RecomputeKind::full, recompute_count(text.substr(uniform_prefix.size())), RecomputeMethod::uniform, {}};
    if (spec.full_layers >= 1) return spec;
  } else if (text.substr(0, selective_prefix.size()) == selective_prefix) {
    spec.kind = RecomputeKind::selective;
    std::string_view rest = text.substr(selective_prefix.size());
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      spec.modules.push_back(parse_recompute_module(rest.substr(0, comma), where));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (!spec.modules.empty()) return spec;
  }
  throw Error(fmt::format("value \"{}\" is not allowed; allowed: none, selective, selective:MODULE[,MODULE...] "
                          "(Megatron's recompute modules: {}), full, full:N (the first N layers of each model chunk, "
                          "block method), full-uniform:N (every layer, in groups of N)",
                          text, detail::names_list(recompute_module_names)),
              where);
}

TrainingPrecision parse_training_precision(std::string_view text, const std::string& where) {
  if (const std::optional<TrainingPrecision> precision = detail::enum_named(precision_names, text)) return *precision;
  throw Error(fmt::format("value \"{}\" is not allowed; allowed: {}", text, detail::names_list(precision_names)),
              where);
}

ParameterBytes parameter_bytes(TrainingPrecision precision) {
  // Megatron-LM docs/user-guide/features/dist_optimizer.md lines 16-20 (commit d98e8a64): bytes per
  // parameter 20 / 18 / 16 without the distributed optimizer, 4 + 16/d / 6 + 12/d / 8 + 8/d with it.
  // The part that stays whole is weights + gradient buffer; the part divided by d is optimizer state.
  switch (precision) {
    case TrainingPrecision::bf16: return {2.0, 4.0, 12.0};  // bf16 weights, fp32 main grads | fp32 master, m, v
    case TrainingPrecision::fp16: return {2.0, 2.0, 16.0};  // fp16 weights, fp16 grads | fp32 grads, master, m, v
    case TrainingPrecision::fp32: return {4.0, 4.0, 8.0};   // fp32 weights = master, fp32 grads | m, v
  }
  return {};
}

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
ParameterBytes parameter_bytes(const TrainingRecipe& l) {
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

double main_grad_bytes(const TrainingRecipe& recipe) { return parameter_bytes(recipe).gradients; }

}  // namespace budget
