#pragma once
// Private: the op names of calibration profiles (the "op" of profile files and torch measurement
// lines, calibration_ops()): one name table for ProfileOp (budget/calibration.hpp, also
// TimeQuery::Op), in base/enum_names.hpp's style. Rows and queries hold the enum; names are read
// and written through this table only (to_string(ProfileOp), profile_op_named()).

#include "budget/time_model.hpp"
#include "base/enum_names.hpp"

namespace budget::detail {

inline constexpr auto profile_op_names = enum_names<ProfileOp::combine_scatter_add>({
    {ProfileOp::gemm, "gemm"},
    {ProfileOp::expert_gemms, "expert_gemms"},
    {ProfileOp::attention, "attention"},
    {ProfileOp::rms_norm, "rms_norm"},
    {ProfileOp::swiglu, "swiglu"},
    {ProfileOp::router_softmax_topk, "router_softmax_topk"},
    {ProfileOp::dispatch_gather, "dispatch_gather"},
    {ProfileOp::combine_scatter_add, "combine_scatter_add"},
});
static_assert(profile_op_names.size() == TimeQuery::op_count);

/// The kernel input precisions of profile rows (CalibrationRow::dtype, "dtype" of a row; "" or
/// absent: bf16). The GEMM precision of an FP8 recipe is mapped to these in one place
/// (time/step_stack.cpp, stack_plan()); the recipes' own names are budget/fp8_recipe.hpp's, the
/// kernel targets' budget/kernel_stack.hpp's Precision.
inline constexpr auto profile_dtype_names = enum_names<TimeQuery::Dtype::mxfp8>({
    {TimeQuery::Dtype::bf16, "bf16"},
    {TimeQuery::Dtype::fp8, "fp8"},
    {TimeQuery::Dtype::fp8_block, "fp8_block"},
    {TimeQuery::Dtype::mxfp8, "mxfp8"},
});
static_assert(profile_dtype_names.size() == TimeQuery::dtype_count);

}  // namespace budget::detail
