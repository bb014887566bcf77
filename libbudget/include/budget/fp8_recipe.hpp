#pragma once
/// \file
/// FP8 training recipes, one enum for the time model (which GEMM kernels and quantize kernels run,
/// docs/calibration.md "FP8") and training memory (which FP8 weight copies, scales and saved
/// activations exist, docs/cluster.md "FP8").
///
/// Thread safety: every function here is reentrant.

#include <string>
#include <string_view>

#include "budget/kernel_stack.hpp"

namespace budget {

/// Transformer Engine's FP8 recipes as Megatron-Core selects them with --fp8-recipe (with --fp8-format):
/// none (bf16 GEMMs), delayed scaling (per-tensor scales from an amax history), tensorwise current
/// scaling (per-tensor, the amax of this step: one more read of each tensor), blockwise (1×128
/// activation / 128×128 weight blocks, Hopper's DeepSeek-V3 recipe) and MXFP8 (32-element blocks with
/// E8M0 scales, Blackwell only).
enum class Fp8Recipe { none, delayed, tensorwise, blockwise, mxfp8 };
/// "none", "delayed", "tensorwise", "blockwise", "mxfp8".
std::string_view to_string(Fp8Recipe recipe);
/// The run-fit precision name of a recipe: "bf16", "fp8-delayed", "fp8-tensorwise", "fp8-blockwise",
/// "mxfp8" (CalibrationRunFit::precision).
std::string_view precision_name(Fp8Recipe recipe);
/// none | delayed | tensorwise | blockwise | mxfp8 (and the precision names above); budget::Error
/// naming `where` otherwise.
Fp8Recipe parse_fp8_recipe(std::string_view text, const std::string& where);

/// The kernel target's precision of a recipe (budget/kernel_stack.hpp): none bf16, delayed
/// fp8-delayed, tensorwise fp8-tensorwise, blockwise fp8-blockwise, mxfp8 mxfp8.
Precision kernel_precision(Fp8Recipe recipe);
/// The recipe the time model times for a kernel target's precision (bf16 and nvfp4: none, NVFP4
/// GEMMs not being timed).
Fp8Recipe fp8_recipe_of(Precision precision);

}  // namespace budget
