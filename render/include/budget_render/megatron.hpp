#pragma once
// What a command read from Megatron-LM arguments or a Megatron-Bridge config (budget/megatron_args.hpp,
// MegatronRun): the one JSON form of `megatron_args` in `layout`, `layout --search`, the cluster
// ranking (`--baseline ... --megatron-args`) and Python's layout(), layout_search() and match().

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "budget/megatron_args.hpp"

namespace budget::render {

/// {file, commit, global_batch_size, modelled, checked_against_<what>, read_not_modelled, not_modelled,
/// attention_mask}: `file` the file read (left out when empty: `layout` names it in its notes),
/// `checked_against` what the model-shape arguments were checked
/// against ("config" for a layout, "baseline" for the ranking of matched candidates), the commit of
/// Megatron-LM's argument table, the attention mask "document" or "causal" (megatron_attention()).
nlohmann::ordered_json megatron_read_json(const MegatronRun& run, const std::string& file,
                                          std::string_view checked_against);

}  // namespace budget::render
