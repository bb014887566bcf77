// The layer kinds a loop re-runs in a hybrid stack (docs/matching.md, "Hybrid stacks").

#include "match/loop_kinds.hpp"

#include <map>
#include <optional>

#include <fmt/format.h>

namespace budget::match_detail {

namespace {
/// "linear_attention + moe", "attention (sliding) + moe", "mamba", "dense".
std::string layer_kind_name(const ArchConfig& c, std::int64_t layer) {
  std::string mixer;
  switch (c.mixer_of_layer(layer)) {
    case LayerMixer::attention: mixer = fmt::format("attention ({})", to_string(c.attention_of_layer(layer))); break;
    case LayerMixer::none: break;
    default: mixer = std::string(to_string(c.mixer_of_layer(layer))); break;
  }
  const LayerFfn ffn = c.ffn_of_layer(layer);
  const std::string ffn_name = ffn == LayerFfn::none ? std::string() : std::string(to_string(ffn));
  if (mixer.empty()) return ffn_name;
  return ffn_name.empty() ? mixer : mixer + " + " + ffn_name;
}
}  // namespace

std::string loop_kinds_note(const ArchConfig& baseline, const LoopSpec& loop) {
  const std::optional<LoopConfig> resolved = loop.resolve(baseline.num_layers);
  if (!resolved) return {};
  std::map<std::string, std::int64_t> counts;
  std::vector<std::string> order;
  for (std::int64_t layer = resolved->first; layer <= resolved->last; ++layer) {
    const std::string name = layer_kind_name(baseline, layer);
    if (counts[name]++ == 0) order.push_back(name);
  }
  std::string kinds;
  for (const auto& name : order) kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", counts[name], name);
  const std::int64_t pattern = baseline.layer_pattern_period();
  std::string span;
  if (loop.first > 0) {
    span = "as given";
  } else if (loop.period > 1) {
    span = fmt::format("{} whole periods of the {}-layer pattern", resolved->span() / loop.period, loop.period);
  } else if (pattern == 0) {
    span = "layer by layer: the layer pattern does not repeat within the stack";
  } else {
    span = "layer by layer";
  }
  return fmt::format("loop: layers {}–{} ×{} ({}) re-run {} layers: {}; each run adds their FLOPs, the KV cache of "
                     "their full-attention layers and the recurrent state of their linear-attention and Mamba-2 layers",
                     resolved->first, resolved->last, resolved->repeats, span, resolved->span(), kinds);
}

}  // namespace budget::match_detail
