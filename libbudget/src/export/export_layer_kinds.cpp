// The layer kinds of the 2025 families (docs/export.md, "The 2025 layer kinds") per target: a
// Hugging Face export with the family's own config.json as its template writes them (the template
// keeps the family's keys; export_hf.cpp's read-back check proves the file is the config); every
// other target refuses them in one error that names each kind's native field and says, per target,
// why: what the target's named version lacks, or which of its arguments would hold it but are not
// written yet. `native` expresses all of them.

#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "export/export_targets.hpp"

namespace budget::detail {

namespace {

/// One 2025 layer kind the config uses: its native field, what it is, and, for Megatron-LM at
/// d98e8a64, what its arguments (the table megatron_arguments_d98e8a64.tsv, from arguments.py and
/// transformer_config.py at that commit) have for it.
struct LayerKindUse {
  const char* field;
  std::string what;
  const char* megatron;
};

// Megatron-LM d98e8a64 (A = megatron/training/arguments.py, TC = megatron/core/transformer/
// transformer_config.py): "no argument" where the table has none, else the arguments that exist and
// that this writer does not write yet (not done: each needs its semantics checked against ours).
constexpr const char* megatron_linear_attention =
    "not written yet: Megatron-LM has Gated DeltaNet layers (--experimental-attention-variant gated_delta_net "
    "TC:301, --linear-attention-freq A:3579, --linear-num-key-heads/--linear-num-value-heads/--linear-key-head-dim/"
    "--linear-value-head-dim/--linear-conv-kernel-dim TC:370-382)";
constexpr const char* megatron_hybrid =
    "not written yet: Megatron-LM's hybrid models take a layer pattern (--hybrid-layer-pattern A:3652, "
    "pretrain_mamba.py), not the GPT arguments this export writes";
constexpr const char* megatron_layer_ffns =
    "not written yet: --moe-layer-freq (A:3520) takes a per-layer pattern; this writer writes leading dense "
    "layers only";
constexpr const char* megatron_chunked = "no argument: Megatron-LM d98e8a64 has sliding windows (--window-size "
                                         "A:2384) but no chunked attention";
constexpr const char* megatron_sinks = "not written yet: --softmax-type learnable (TC:170)";
constexpr const char* megatron_output_gate = "not written yet: --attention-output-gate (TC:278)";
constexpr const char* megatron_indexer = "not written yet: --experimental-attention-variant dsa (TC:301)";
constexpr const char* megatron_partial_rotary = "not written yet: --rotary-percent (A:2420)";
constexpr const char* megatron_nope_layers = "not written yet: --no-rope-freq (A:2428)";

std::vector<LayerKindUse> layer_kinds_used(const ArchConfig& c) {
  const AttentionConfig& a = c.attention;
  const LayerCounts n = c.layer_counts();
  std::vector<LayerKindUse> out;
  if (n.linear_attention.physical > 0) {
    out.push_back({"/linear_attention", "linear-attention (Gated DeltaNet) layers", megatron_linear_attention});
  }
  if (n.mamba.physical > 0) out.push_back({"/mamba", "Mamba-2 layers", megatron_hybrid});
  if (!c.layer_mixers.empty()) {
    out.push_back({"/layer_mixers", "per-layer mixers (single-block layers)", megatron_hybrid});
  }
  if (!c.layer_ffns.empty()) out.push_back({"/layer_ffns", "per-layer FFN kinds", megatron_layer_ffns});
  if (n.chunked_attention.physical > 0) out.push_back({"/attention/chunk_size", "chunked attention", megatron_chunked});
  if (a.sinks) out.push_back({"/attention/sinks", "attention sinks", megatron_sinks});
  if (a.output_gate) {
    out.push_back({"/attention/output_gate", "gated attention (an output gate)", megatron_output_gate});
  }
  if (a.indexer) {
    out.push_back({"/attention/indexer", "DeepSeek-V3.2's indexer (sparse attention)", megatron_indexer});
  }
  if (c.settings.partial_rotary_factor) {
    out.push_back({"/settings/partial_rotary_factor", "partial rotary embeddings", megatron_partial_rotary});
  }
  if (!c.settings.nope_layers.empty()) {
    out.push_back({"/settings/nope_layers", "layers without rotary embeddings", megatron_nope_layers});
  }
  return out;
}

/// Why `target` does not write the kind (hf: without a template only).
std::string reason(const LayerKindUse& use, ExportTarget target) {
  switch (target) {
    case ExportTarget::megatron: return use.megatron;
    case ExportTarget::torchtitan:
      return fmt::format("{}'s qwen3 and deepseek_v3 models, the two this export writes, have none of these",
                         torchtitan_target_commit);
    case ExportTarget::torch: return "budget.torch (docs/torch.md) has no module for these";
    case ExportTarget::hf:
      return "the families a fresh config.json is written in (Llama, Qwen2/3, Mixtral, Qwen-MoE, OLMoE, DeepSeek) "
             "have no key for these";
    case ExportTarget::native: break;
  }
  return {};
}

std::string hint(ExportTarget target) {
  if (target == ExportTarget::hf) {
    return "give the family's own config.json as the template (export --template HF.json; `export HF.json --to hf` "
           "and a match of a Hugging Face baseline use that file), or export to native";
  }
  return "export to native (every budget reads back), or to hf with the family's config.json as the template";
}

}  // namespace

void refuse_unexpressed_layer_kinds(const ArchConfig& c, ExportTarget target, bool hf_template) {
  if (target == ExportTarget::native || (target == ExportTarget::hf && hf_template)) return;
  const std::vector<LayerKindUse> used = layer_kinds_used(c);
  if (used.empty()) return;
  // Megatron-LM's reason differs per kind; the other targets' is one for all.
  const bool per_kind = target == ExportTarget::megatron;
  std::string kinds;
  for (const LayerKindUse& use : used) {
    kinds += fmt::format("{}{} ({}{}{})", kinds.empty() ? "" : per_kind ? "; " : ", ", use.what, use.field, per_kind ? ": " : "",
                         per_kind ? reason(use, target) : std::string());
  }
  throw Error(fmt::format("{} cannot be expressed in a {} export{}: {}{}{}; {}", used.front().what, to_string(target),
                          target == ExportTarget::hf ? " without a template" : "", kinds, per_kind ? "" : ": ",
                          per_kind ? std::string() : reason(used.front(), target), hint(target)),
              c.name.empty() ? "<config>" : c.name, used.front().field);
}

}  // namespace budget::detail
