#pragma once
// Private to the interop domain: the Megatron-Bridge config reader's tables (bridge_mapping.cpp) and
// its YAML walk (bridge_config.cpp).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "interop/megatron_reader.hpp"

namespace budget::interop_detail {

enum class BridgeFieldKind {
  argument,      ///< the value is the Megatron-LM argument `dest`'s
  negated_flag,  ///< a boolean whose negation is the flag `dest`
  grad_reduce,   ///< grad_reduce_in_fp32: true → --accumulate-allreduce-grads-in-fp32, false → --grad-reduce-in-bf16
  bridge_only,   ///< no Megatron-LM argument says it: recorded in BridgeOnlySettings
  true_sets,     ///< true sets the flag `dest` (over the other sections); false says nothing
};

/// One row of the mapping table.
struct BridgeFieldRow {
  std::string_view section, field, dest;
  BridgeFieldKind kind;
  std::string_view source;  ///< where the field's meaning is defined
};

/// Every field of the ConfigContainer's sections read here, by section, with its declaring file:line.
const std::map<std::string, std::map<std::string, std::string>>& bridge_fields();
/// The table's row of `section`.`field`, or nullptr.
const BridgeFieldRow* bridge_field_row(const std::string& section, const std::string& field);
/// The table's rows (for tests and docs).
std::vector<BridgeFieldRow> bridge_mapping_table();
/// budget::Error (an internal error) unless every row names a field of the TSV and a Megatron-LM
/// destination of the argument table.
void check_bridge_field_rows();

}  // namespace budget::interop_detail
