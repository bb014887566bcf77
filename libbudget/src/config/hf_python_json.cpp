// Hugging Face configs that hold Python's JSON extensions (docs/config.md, "Hugging Face configs"):
// Python's json module writes float('inf') as Infinity, and transformers reads it back, so released
// files hold it (nvidia/Nemotron-H-56B-Base-8K's time_step_limit). Read only here; native configs
// and every other input stay strict JSON.
#include <fmt/format.h>

#include "base/json_reader.hpp"
#include "config/config_hf_json.hpp"

namespace budget::detail {

std::optional<ArchConfig> read_hf_config_with_python_nonfinite(std::string_view text, const std::string& source) {
  std::vector<PythonNonfinite> found;
  const std::optional<nlohmann::json> document = parse_json_text_with_python_nonfinite(text, source, found);
  if (!document || !looks_like_hf_config(*document)) return std::nullopt;
  ArchConfig c = read_hf_config(*document, source);
  for (const PythonNonfinite& value : found) {
    c.notes.push_back(fmt::format("{}: {} is Python's JSON extension for a non-finite number (not JSON; transformers "
                                  "reads it): read as one; no count or setting is read from this key",
                                  value.pointer, value.token));
  }
  return c;
}

}  // namespace budget::detail
