#pragma once
// Private: the layout's JSON object read by the field table (budget/layout_fields.hpp). A run file's
// "layout" reads it (runs/run_reader.cpp); `layout --format json` writes it (layout_field_values(),
// render/'s layout_json()), so that the written object reads back as the layout it was written from.

#include <cstdint>

#include <nlohmann/json.hpp>

#include "base/json_reader.hpp"
#include "budget/layout_fields.hpp"

namespace budget::detail {

/// The layout of the object `r`: every key a field's name or alias (else budget::Error with the nearest
/// name, or the names allowed), a field given by both its name and its alias refused, each value of its
/// row's type and range (budget::Error naming the field and the range or the names allowed), the
/// required fields present; a field not given keeps ParallelLayout's default, and with neither "gpus"
/// nor "dp" DP is 1. Both given must agree (gpus = TP·CP·DP·PP). A recompute with its details inline
/// (full:N, selective:M,...) excludes recompute_full_layers, recompute_method and recompute_modules.
/// Derived fields (expert_dp, padded_vocab of `vocab_size`, replicate_loop_weights) are accepted only
/// when they equal what the layout derives; else budget::Error naming the field, the value given and
/// the value derived.
ParallelLayout read_layout_fields(const ObjectReader& r, std::int64_t vocab_size);

}  // namespace budget::detail
