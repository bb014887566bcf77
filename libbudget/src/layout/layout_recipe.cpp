// The training recipe a layout search holds (budget/parallel_layout.hpp, LayoutRecipe;
// docs/cluster.md, "The recipe held").
#include "budget/parallel_layout.hpp"

#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "layout/layout_recipe.hpp"

namespace budget {

ParallelLayout recipe_template(const LayoutRecipe& recipe) {
  ParallelLayout l = recipe.base;
  const ParallelLayout defaults;
  // What the search sets for every layout: the parallel sizes, the GPUs, the batch, the sequence and
  // an even pipeline split.
  l.tp = defaults.tp;
  l.sequence_parallel = defaults.sequence_parallel;
  l.pp = defaults.pp;
  l.virtual_stages = defaults.virtual_stages;
  l.ep = defaults.ep;
  l.etp = defaults.etp;
  l.cp = defaults.cp;
  l.gpus = defaults.gpus;
  l.dp = defaults.dp;
  l.micro_batches = defaults.micro_batches;
  l.seq_len = defaults.seq_len;
  l.imbalance = defaults.imbalance;
  l.split = defaults.split;
  l.embedding_in_split = defaults.embedding_in_split;
  l.loss_in_split = defaults.loss_in_split;
  if (!recipe.hold_micro_batch_size) l.micro_batch_size = defaults.micro_batch_size;
  if (!recipe.hold_recompute) l.recompute = defaults.recompute;
  if (!recipe.hold_distributed_optimizer) l.distributed_optimizer = defaults.distributed_optimizer;
  if (!recipe.hold_loop_placement) l.loop_placement = defaults.loop_placement;
  return l;
}

void detail::check_one_fp8_recipe(const TimeModel& model, Fp8Recipe layout_fp8) {
  if (model.options().fp8 == layout_fp8) return;
  throw Error(fmt::format("the time model times {} GEMMs while the layout's memory is priced with FP8 recipe {}: one "
                          "recipe prices both (give the layout's recipe to the time model, or the time model's to the "
                          "layout)",
                          model.options().fp8 == Fp8Recipe::none ? std::string("bf16")
                                                                 : "FP8 " + std::string(to_string(model.options().fp8)),
                          to_string(layout_fp8)),
              "fp8");
}

}  // namespace budget
