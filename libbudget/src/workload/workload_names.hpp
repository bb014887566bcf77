#pragma once
// Private: the names of the workload domain's enums (base/enum_names.hpp), written once: to_string()
// prints from these tables and the workload reader (workload.cpp) and the length-file parser
// read with them.

#include "budget/attention_cost.hpp"
#include "budget/doc_lengths.hpp"
#include "budget/workload.hpp"
#include "base/enum_names.hpp"

namespace budget::detail {

inline constexpr auto attention_mask_names =
    enum_names<AttentionMask::document>({{AttentionMask::causal, "causal"}, {AttentionMask::document, "document"}});

inline constexpr auto attention_launch_names = enum_names<AttentionLaunch::dense_masked>({
    {AttentionLaunch::none, "none"}, {AttentionLaunch::varlen, "varlen"},
    {AttentionLaunch::dense_masked, "dense_masked"}});

inline constexpr auto packing_order_names =
    enum_names<PackingOrder::shuffled>({{PackingOrder::given, "given"}, {PackingOrder::shuffled, "shuffled"}});

inline constexpr auto cost_method_names = enum_names<CostMethod::simulation>({
    {CostMethod::expectation, "expectation"}, {CostMethod::simulation, "simulation"}});

/// The kind's name as a workload file's doc_lengths object spells its key ("lengths": a file).
inline constexpr auto length_source_kind_names = enum_names<LengthSourceKind::lengths_file>({
    {LengthSourceKind::distribution, "distribution"}, {LengthSourceKind::histogram, "histogram"},
    {LengthSourceKind::lengths_file, "lengths"}});

inline constexpr auto length_file_format_names = enum_names<LengthFileFormat::u64>({
    {LengthFileFormat::automatic, "auto"}, {LengthFileFormat::text, "text"}, {LengthFileFormat::u32, "u32"},
    {LengthFileFormat::u64, "u64"}});

}  // namespace budget::detail
