#pragma once
// Private (layout domain): the checks of a layout's gradient and optimizer dtypes
// (optimizer_dtypes.cpp), run by ParallelLayout::validation_error().
#include <string>

#include "budget/parallel_layout.hpp"

namespace budget {

/// Why `layout`'s OptimizerDtypes cannot be priced, or empty: bf16 main gradients without bf16
/// training; state dtypes other than fp32 without the precision-aware optimizer; main parameters
/// other than fp32 or fp16; the precision-aware optimizer without the distributed optimizer (or
/// Megatron-FSDP), or with torch FSDP2.
std::string optimizer_dtypes_error(const ParallelLayout& layout);

}  // namespace budget
