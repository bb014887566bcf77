#pragma once
/// \file
/// Exporting a config to the trainers people use: Hugging Face `config.json`, Megatron-LM's
/// command-line arguments, torchtitan's model arguments (JSON), or the native format. What each
/// target receives, which defaults it implies and what it cannot express: docs/export.md.
///
/// A target that cannot express a feature of the config exactly either refuses it (budget::Error
/// naming the field, e.g. a non-gated MLP for Hugging Face) or, for the loop, which no trainer
/// expresses natively, exports the physical layer stack and says so in
/// ExportedConfig::not_expressed (and inside the exported text: a comment line for Megatron-LM, a
/// "not_expressed" array for torchtitan). Nothing is approximated silently.
///
/// Thread safety: every function here is reentrant (no shared state); calls on different objects
/// may run concurrently.

#include <string>
#include <string_view>
#include <vector>

#include "budget/config.hpp"
#include "budget/config_hf.hpp"  // hf_loop_key, the loop key an hf export writes

namespace budget {

enum class ExportTarget {
  native,      ///< budget's own JSON (config_io.hpp)
  hf,          ///< Hugging Face transformers config.json
  megatron,    ///< Megatron-LM arguments, one per line
  torchtitan,  ///< torchtitan model arguments (its qwen3 model, which has GQA and MoE), JSON
  torch,       ///< a Python file building budget.torch's reference PyTorch module (docs/torch.md)
};

/// "native", "hf", "megatron", "torchtitan", "torch".
std::string_view to_string(ExportTarget target);
/// Parses a target name (case-insensitive; "huggingface" is accepted for hf); budget::Error
/// naming `source` and the allowed names otherwise.
ExportTarget parse_export_target(std::string_view name, const std::string& source = {});

struct ExportOptions {
  /// Text of the Hugging Face config.json the config derives from (typically the matched
  /// baseline's). When set, an hf export keeps every key of it and changes only the shape keys
  /// (and the loop key); empty: a fresh config.json of the family that fits the config.
  std::string hf_template;
  /// Names hf_template in errors (its file path).
  std::string hf_template_source;
};

struct ExportedConfig {
  ExportTarget target = ExportTarget::native;
  /// The file contents, ending in a newline.
  std::string text;
  /// What the target cannot express, one sentence each (empty when the export is exact). The
  /// same sentences appear inside `text` where the format allows (see the file comment).
  std::vector<std::string> not_expressed;
};

/// Exports `config` (validated first). Throws budget::Error when the target cannot express a
/// feature of the config other than the loop, or when `options.hf_template` is not a Hugging Face
/// config of a family that can hold the config (e.g. shared experts into a Mixtral template).
ExportedConfig export_config(const ArchConfig& config, ExportTarget target, const ExportOptions& options = {});

/// A config read together with its file text, so that an hf export can keep the original keys.
struct SourcedConfig {
  ArchConfig config;
  /// The JSON text when the input was a Hugging Face config.json, else empty.
  std::string hf_text;
};

/// Like load_arch_config() / parse_arch_config() (native or Hugging Face), keeping the text of a
/// Hugging Face file.
SourcedConfig load_sourced_config(const std::string& path);
SourcedConfig parse_sourced_config(std::string_view json_text, const std::string& source);

}  // namespace budget
