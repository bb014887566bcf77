// The one JSON form of what Megatron-LM arguments gave a command (budget_render/megatron.hpp).
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

}  // namespace budget::render
