#pragma once
// Private to the layout domain and those above it: the check that one recipe prices a layout's
// memory and its time (layout_recipe.cpp; docs/cluster.md, "The recipe held").
#include "budget/fp8_recipe.hpp"
#include "budget/time_model.hpp"

namespace budget {

namespace detail {
/// budget::Error ("fp8", "main_grad_bytes") unless `model` times what `layout` prices memory with:
/// the GEMMs' FP8 recipe and the main-gradient bytes (main_grad_bytes()), the two parts of the
/// recipe the time model reads (TimeModelOptions::recipe). One recipe prices memory and time (the
/// search's recipe, a fixed layout's).
void check_one_recipe(const TimeModel& model, const TrainingRecipe& layout);
}  // namespace detail

}  // namespace budget
