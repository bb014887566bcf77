#pragma once
// The matcher's enum name tables (base/enum_names.hpp): to_string() prints from them and the
// constraints file reads "order" with them.

#include "base/enum_names.hpp"
#include "budget/match.hpp"

namespace budget::match_detail {

inline constexpr auto row_order_names = detail::enum_names<RowOrder::predicted_time_within_accuracy>({
    {RowOrder::proportions, "proportions"},
    {RowOrder::shown_deviation, "shown_deviation"},
    {RowOrder::weighted_objective, "weighted_objective"},
    {RowOrder::predicted_time, "predicted_time"},
    {RowOrder::predicted_time_within_accuracy, "predicted_time_within_accuracy"}});

inline constexpr auto match_order_names = detail::enum_names<MatchOrder::tightest>(
    {{MatchOrder::proportions, "proportions"}, {MatchOrder::tightest, "tightest"}});

inline constexpr auto shape_space_names = detail::enum_names<ShapeSpace::portable>(
    {{ShapeSpace::trainable, "trainable"}, {ShapeSpace::free, "free"}, {ShapeSpace::portable, "portable"}});

}  // namespace budget::match_detail
