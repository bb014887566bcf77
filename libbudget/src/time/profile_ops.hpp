#pragma once
// Private: the op names of calibration profiles (CalibrationRow::op, calibration_ops(), the
// "op" of profile files and torch measurement lines): one name table for TimeQuery::Op, the enum of
// the profile's ops, in base/enum_names.hpp's style. Every test of a row's op name spells the name
// through this table, never as a literal.
#include <optional>
#include <string_view>

#include "budget/time_model.hpp"
#include "base/enum_names.hpp"

namespace budget::detail {

using ProfileOp = TimeQuery::Op;

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

/// True when `name` (a row's or a query's op) is the name of `op`.
inline bool is_op(std::string_view name, ProfileOp op) { return name == name_of(profile_op_names, op); }

/// The op called `name`, or nothing for a name outside the table.
inline std::optional<ProfileOp> profile_op_named(std::string_view name) { return enum_named(profile_op_names, name); }

}  // namespace budget::detail
