#pragma once
/// \file
/// Exporting a config to the trainers people use: Hugging Face `config.json`, Megatron-LM's
/// command-line arguments (a bash array file), a torchtitan model config (a Python module), or the
/// native format, each for the framework version named below (megatron_target_commit, ...). What each
/// target receives, which defaults it implies and what it cannot express: docs/export.md.
///
/// A target that cannot express a feature of the config exactly either refuses it (budget::Error
/// naming the field, e.g. a non-gated MLP for Hugging Face) or, for the loop, which no trainer
/// expresses natively, exports the physical layer stack and says so in
/// ExportedConfig::not_expressed (and inside the exported text: a comment line for Megatron-LM, a
/// comment line and the NOT_EXPRESSED list for torchtitan). Nothing is approximated silently.
///
/// Thread safety: every function here is reentrant (no shared state); calls on different objects
/// may run concurrently.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "budget/config.hpp"
#include "budget/config_hf.hpp"  // hf_loop_key, the loop key an hf export writes

namespace budget {

enum class ExportTarget {
  native,      ///< budget's own JSON (config_io.hpp)
  hf,          ///< Hugging Face transformers config.json
  megatron,    ///< Megatron-LM model arguments, a bash array file (MODEL_ARGS=( ... )) to `source`
  torchtitan,  ///< a Python module returning torchtitan's Qwen3Model.Config (per-layer configs)
  torch,       ///< a Python file building budget.torch's reference PyTorch module (docs/torch.md)
};

/// "native", "hf", "megatron", "torchtitan", "torch".
std::string_view to_string(ExportTarget target);
/// Parses a target name (case-insensitive; "huggingface" is accepted for hf); budget::Error
/// naming `source` and the allowed names otherwise.
ExportTarget parse_export_target(std::string_view name, const std::string& source = {});

/// The framework versions the megatron and torchtitan targets are written for (docs/export.md).
inline constexpr std::string_view megatron_target_commit = "NVIDIA/Megatron-LM d98e8a64";
inline constexpr std::string_view torchtitan_target_commit = "pytorch/torchtitan b5bcd76c";
/// Sequence length written when ExportOptions::seq_length is 0: the default workload's (4096).
inline constexpr std::int64_t default_export_seq_length = 4096;

struct ExportOptions {
  /// Training sequence length (the workload's seq_len): Megatron-LM's --seq-length, and its
  /// --max-position-embeddings and torchtitan's RoPE max_context_length when the config gives no
  /// max_position_embeddings. 0: default_export_seq_length.
  std::int64_t seq_length = 0;
  /// Text of the Hugging Face config.json the config derives from (typically the matched
  /// baseline's). When set, an hf export keeps every key of it and changes only the shape keys
  /// (and the loop key); empty: a fresh config.json of the family that fits the config.
  std::string hf_template;
  /// Names hf_template in errors (its file path).
  std::string hf_template_source;
  /// megatron: the training run's arguments, one "--flag value" a line (megatron_layout_args() of a
  /// layout, budget/megatron_args.hpp), written as a second array TRAINING_ARGS; empty: none.
  std::vector<std::string> megatron_training_args;
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
