// The one JSON form and the one note form of what Megatron-LM arguments gave a command
// (budget_render/megatron.hpp).
#include "budget_render/megatron.hpp"

#include <nlohmann/json.hpp>

namespace budget::render {

nlohmann::ordered_json megatron_read_json(const MegatronRun& run, const std::string& file,
                                          std::string_view checked_against) {
  nlohmann::ordered_json out;
  if (!file.empty()) out["file"] = file;
  out.update(nlohmann::ordered_json{
          {"commit", std::string(megatron_arguments_commit())},
          {"global_batch_size", run.global_batch_size},
          {"modelled", run.modelled},
          {"checked_against_" + std::string(checked_against), run.checked},
          {"read_not_modelled", run.read},
          {"not_modelled", run.not_modelled},
          {"attention_mask", run.document_mask ? "document" : "causal"}});
  return out;
}

std::string note_line(const MegatronNote& note) {
  std::string list;
  for (const std::string& a : note.arguments) list += (list.empty() ? "" : "; ") + a;
  return note.label + ": " + (list.empty() ? std::string("none") : list);
}

std::vector<MegatronNote> megatron_notes(const MegatronRun& run, std::string_view checked_against) {
  return {{"modelled", run.modelled},
          {"checked against the " + std::string(checked_against), run.checked},
          {"read, effect not modelled", run.read},
          {"not modelled (change nothing here)", run.not_modelled}};
}

std::string_view megatron_source_kind(const MegatronRun& run) {
  return run.bridge.given ? "Megatron-Bridge config" : "Megatron-LM arguments";
}

}  // namespace budget::render
