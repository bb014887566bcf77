// FP8 training recipes (budget/fp8_recipe.hpp): their names, the run-fit precision names and the
// kernel target's precision of each.
#include "budget/fp8_recipe.hpp"

#include <array>
#include <cstddef>
#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "base/enum_names.hpp"

namespace budget {

namespace {
// The FP8 recipes by Megatron-LM's --fp8-recipe names ("none": no --fp8-format); each recipe's
// precision, and so its run-fit and kernel-target name, is the row of fp8_recipe_precisions below.
constexpr auto fp8_recipe_names = detail::enum_names<Fp8Recipe::mxfp8>(
    {{Fp8Recipe::none, "none"}, {Fp8Recipe::delayed, "delayed"}, {Fp8Recipe::tensorwise, "tensorwise"},
     {Fp8Recipe::blockwise, "blockwise"}, {Fp8Recipe::mxfp8, "mxfp8"}});
/// The one map of FP8 recipes to the one precision enum (budget/kernel_stack.hpp, Precision and its
/// name table), in Fp8Recipe's order; fp8_recipe_of() reads it backwards (bf16 and nvfp4: none).
constexpr std::array<Precision, 5> fp8_recipe_precisions{Precision::bf16, Precision::fp8_delayed,
                                                         Precision::fp8_tensorwise, Precision::fp8_blockwise,
                                                         Precision::mxfp8};
static_assert(fp8_recipe_precisions.size() == fp8_recipe_names.size(), "one precision per FP8 recipe");
}  // namespace

std::string_view to_string(Fp8Recipe recipe) { return detail::name_of(fp8_recipe_names, recipe); }

/// The kernel target's spelling (budget/kernel_stack.hpp, Precision's names): one name per precision.
std::string_view precision_name(Fp8Recipe recipe) { return to_string(kernel_precision(recipe)); }

Fp8Recipe parse_fp8_recipe(std::string_view text, const std::string& where) {
  for (const auto& row : fp8_recipe_names) {
    if (text == row.name || text == precision_name(row.value)) return row.value;
  }
  throw Error(fmt::format("FP8 recipe \"{}\" is not known; allowed: none (bf16), delayed, tensorwise, blockwise, "
                          "mxfp8 (or bf16, fp8-delayed, fp8-tensorwise, fp8-blockwise)",
                          text),
              where);
}

Precision kernel_precision(Fp8Recipe recipe) {
  const auto i = static_cast<std::size_t>(recipe);
  return i < fp8_recipe_precisions.size() ? fp8_recipe_precisions[i] : Precision::bf16;
}

Fp8Recipe fp8_recipe_of(Precision precision) {
  for (std::size_t i = 0; i < fp8_recipe_precisions.size(); ++i) {
    if (fp8_recipe_precisions[i] == precision) return static_cast<Fp8Recipe>(i);
  }
  return Fp8Recipe::none;  // nvfp4: NVFP4 GEMMs are not timed
}

}  // namespace budget
