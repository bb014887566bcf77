#pragma once
// Private to the layout domain and those above it: the check that one FP8 recipe prices a layout's
// memory and its time (layout_recipe.cpp; docs/cluster.md, "The recipe held").
#include "budget/fp8_recipe.hpp"
#include "budget/time_model.hpp"

namespace budget {

namespace detail {
/// budget::Error ("fp8") unless `model` times the GEMMs with `layout_fp8`, the FP8 recipe the
/// layout's memory is priced with: one recipe prices memory and time (the search's recipe, a fixed
/// layout's fp8).
void check_one_fp8_recipe(const TimeModel& model, Fp8Recipe layout_fp8);
}  // namespace detail

}  // namespace budget
