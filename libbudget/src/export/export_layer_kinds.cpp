// What no trainer target (hf, megatron, torchtitan, torch) writes yet: the layer kinds of the 2025
// families (docs/export.md, "Hybrid stacks"). Each is refused by its native field rather than
// written as a different model; `native` expresses all of them.

#include <fmt/format.h>

#include "budget/error.hpp"
#include "export/export_targets.hpp"

namespace budget::detail {

namespace {

[[noreturn]] void refuse_layer_kind(const ArchConfig& c, ExportTarget target, const char* field,
                                    const std::string& what) {
  throw Error(fmt::format("{} cannot be expressed in a {} export (the writer of this target has no form for it); "
                          "export to native instead, which reads back with every budget",
                          what, to_string(target)),
              c.name.empty() ? "<config>" : c.name, field);
}

}  // namespace

void refuse_unexpressed_layer_kinds(const ArchConfig& c, ExportTarget target) {
  if (target == ExportTarget::native) return;
  const AttentionConfig& a = c.attention;
  const LayerCounts n = c.layer_counts();
  if (n.linear_attention.physical > 0) {
    refuse_layer_kind(c, target, "/linear_attention", "linear-attention (Gated DeltaNet) layers");
  }
  if (n.mamba.physical > 0) refuse_layer_kind(c, target, "/mamba", "Mamba-2 layers");
  if (!c.layer_mixers.empty()) refuse_layer_kind(c, target, "/layer_mixers", "per-layer mixers (single-block layers)");
  if (!c.layer_ffns.empty()) refuse_layer_kind(c, target, "/layer_ffns", "per-layer FFN kinds");
  if (n.chunked_attention.physical > 0) refuse_layer_kind(c, target, "/attention/chunk_size", "chunked attention");
  if (a.sinks) refuse_layer_kind(c, target, "/attention/sinks", "attention sinks");
  if (a.output_gate) refuse_layer_kind(c, target, "/attention/output_gate", "gated attention (an output gate)");
  if (a.indexer) refuse_layer_kind(c, target, "/attention/indexer", "DeepSeek-V3.2's indexer (sparse attention)");
  if (c.settings.partial_rotary_factor) {
    refuse_layer_kind(c, target, "/settings/partial_rotary_factor", "partial rotary embeddings");
  }
  if (!c.settings.nope_layers.empty()) {
    refuse_layer_kind(c, target, "/settings/nope_layers", "layers without rotary embeddings");
  }
}

}  // namespace budget::detail
