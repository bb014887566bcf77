// The `architectures` check of a Hugging Face config (config/hf_architecture.hpp).
#include "config/hf_architecture.hpp"

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace budget::detail {

void check_architecture_agrees(const nlohmann::json& object, const ObjectReader& root, const HfFamily& family) {
  if (!object.contains("architectures") || !object.at("architectures").is_array() ||
      object.at("architectures").empty() || !object.at("architectures").at(0).is_string()) {
    return;
  }
  const std::string architecture = object.at("architectures").at(0).get<std::string>();
  if (architecture == family.architecture) return;
  if (const HfFamily* other = find_hf_family_by_architecture(architecture);
      other != nullptr && other->architecture != family.architecture) {
    root.fail("architectures", fmt::format("architecture \"{}\" is family \"{}\"'s class, but model_type is \"{}\" "
                                             "(whose class is {}); the file contradicts itself: correct one of them",
                                             architecture, other->model_type, family.model_type,
                                             family.architecture));
  }
  constexpr std::string_view causal_lm = "ForCausalLM";
  if (architecture.size() < causal_lm.size() ||
      architecture.compare(architecture.size() - causal_lm.size(), causal_lm.size(), causal_lm) != 0) {
    root.fail("architectures",
              fmt::format("architecture \"{}\" is not a causal language model (its head is not the LM head "
                          "counted here); allowed: {} or another ...ForCausalLM class of family \"{}\"",
                          architecture, family.architecture, family.model_type));
  }
}

}  // namespace budget::detail
