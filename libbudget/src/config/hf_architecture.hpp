#pragma once
// Private to the config domain: the Hugging Face file's `architectures` checked against its
// model_type's family (hf_architecture.cpp), used by the reader (config_hf.cpp).
#include <nlohmann/json.hpp>

#include "base/json_reader.hpp"
#include "config/hf_families.hpp"

namespace budget::detail {

/// `architectures[0]` names the class transformers builds; `model_type` decides how the config is
/// read. A class of another family, or one that is not a causal language model (a sequence
/// classifier or reward model has a score head, not the LM head counted here), is refused rather
/// than counted as the model_type's causal LM. Any other `...ForCausalLM` name (remote code under
/// its own class name) is read through model_type.
void check_architecture_agrees(const nlohmann::json& object, const ObjectReader& root, const HfFamily& family);

}  // namespace budget::detail
