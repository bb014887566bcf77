// FP8 training recipes (budget/fp8_recipe.hpp): their names, the run-fit precision names and the
// kernel target's precision of each.
#include "budget/fp8_recipe.hpp"

#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "base/enum_names.hpp"

namespace budget {

namespace {
constexpr auto fp8_recipe_names = detail::enum_names<Fp8Recipe::mxfp8>(
    {{Fp8Recipe::none, "none"}, {Fp8Recipe::delayed, "delayed"}, {Fp8Recipe::tensorwise, "tensorwise"},
     {Fp8Recipe::blockwise, "blockwise"}, {Fp8Recipe::mxfp8, "mxfp8"}});
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
  switch (recipe) {
    case Fp8Recipe::none: return Precision::bf16;
    case Fp8Recipe::delayed: return Precision::fp8_delayed;
    case Fp8Recipe::tensorwise: return Precision::fp8_tensorwise;
    case Fp8Recipe::blockwise: return Precision::fp8_blockwise;
    case Fp8Recipe::mxfp8: return Precision::mxfp8;
  }
  return Precision::bf16;
}

Fp8Recipe fp8_recipe_of(Precision precision) {
  switch (precision) {
    case Precision::fp8_delayed: return Fp8Recipe::delayed;
    case Precision::fp8_tensorwise: return Fp8Recipe::tensorwise;
    case Precision::fp8_blockwise: return Fp8Recipe::blockwise;
    case Precision::mxfp8: return Fp8Recipe::mxfp8;
    case Precision::bf16:
    case Precision::nvfp4: return Fp8Recipe::none;
  }
  return Fp8Recipe::none;
}

}  // namespace budget
