#pragma once
// What a command read from Megatron-LM arguments or a Megatron-Bridge config (budget/megatron_args.hpp,
// MegatronRun): the one JSON form of `megatron_args` in `layout`, `layout --search`, the cluster
// ranking (`--baseline ... --megatron-args`) and Python's layout(), layout_search() and match().

#include <string>
#include <string_view>
#include <vector>

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

/// One note on what Megatron-LM arguments gave: a label and its arguments ("modelled", the names
/// the model reads; "checked against the config", ...). The one note form of the text outputs.
struct MegatronNote {
  std::string label;
  std::vector<std::string> arguments;
};

/// "<label>: <arguments joined by "; ">" ("none" when there are none): the one printer of a note.
std::string note_line(const MegatronNote& note);

/// The notes of `run` (its MegatronRun lists), in order: modelled, checked against
/// `checked_against`, read (effect not modelled), not modelled (change nothing here).
std::vector<MegatronNote> megatron_notes(const MegatronRun& run, std::string_view checked_against);

/// What was read: "Megatron-Bridge config" or "Megatron-LM arguments".
std::string_view megatron_source_kind(const MegatronRun& run);

}  // namespace budget::render
