// The training recipe a layout search holds (budget/parallel_layout.hpp, LayoutRecipe;
// docs/cluster.md, "The recipe held").
#include "budget/parallel_layout.hpp"

#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "layout/layout_recipe.hpp"

namespace budget {

ParallelLayout recipe_template(const LayoutRecipe& recipe) {
  // The search sets the parallel sizes, the GPUs, the batch, the sequence and an even pipeline
  // split for every layout; the recipe is the held one, its unheld settings at their defaults.
  ParallelLayout l;
  static_cast<TrainingRecipe&>(l) = recipe.base;
  const TrainingRecipe defaults;
  if (!recipe.hold_micro_batch_size) l.micro_batch_size = defaults.micro_batch_size;
  if (!recipe.hold_recompute) l.recompute = defaults.recompute;
  if (!recipe.hold_distributed_optimizer) l.distributed_optimizer = defaults.distributed_optimizer;
  if (!recipe.hold_loop_placement) l.loop_placement = defaults.loop_placement;
  return l;
}

void detail::check_one_recipe(const TimeModel& model, const TrainingRecipe& layout) {
  const Fp8Recipe timed = model.options().recipe.fp8;
  if (timed != layout.fp8) {
    throw Error(fmt::format("the time model times {} GEMMs while the layout's memory is priced with FP8 recipe {}: "
                            "one recipe prices both (give the layout's recipe to the time model, or the time model's "
                            "to the layout)",
                            timed == Fp8Recipe::none ? std::string("bf16") : "FP8 " + std::string(to_string(timed)),
                            to_string(layout.fp8)),
                "fp8");
  }
  const double timed_grads = main_grad_bytes(model.options().recipe), priced_grads = main_grad_bytes(layout);
  if (timed_grads != priced_grads) {
    throw Error(fmt::format("the time model accumulates {:g}-byte main gradients while the layout's memory holds "
                            "{:g}-byte ones: one recipe prices both (give the layout's recipe to the time model)",
                            timed_grads, priced_grads),
                "main_grad_bytes");
  }
}

}  // namespace budget
