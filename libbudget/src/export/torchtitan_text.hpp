#pragma once
// Private to the torchtitan export: what export_torchtitan.cpp (refusals, Python text helpers,
// RoPE text, notes, dispatch) and export_torchtitan_modules.cpp (the module writer and the qwen3
// and deepseek_v3 families) share.

#include <string>
#include <vector>

#include "budget/config.hpp"
#include "budget/export.hpp"

namespace budget::detail {

/// Throws budget::Error naming `field`: `what` cannot be written in torchtitan's model configs.
[[noreturn]] void refuse_in_torchtitan(const ArchConfig& c, const char* field, const std::string& what);

/// A Python float literal: "1e-06", "1000000.0".
std::string py_float(double value);

/// A flavor name for qwen3_configs: the config's name in [A-Za-z0-9._-].
std::string flavor_of(const ArchConfig& c);

/// "True" or "False".
const char* py_bool(bool value);

/// The RoPE config of the export (see rope_text in export_torchtitan.cpp for the mapping of
/// settings.rope_scaling): `format` is "CosSinRoPE" or "ComplexRoPE".
struct RopeText {
  std::string format;
  std::string keywords;  ///< ", scaling=..., ..." after dim, max_context_length, theta
  double attention_mscale = 1.0;
};

/// The RoPE text for the qwen3 (`deepseek` false) or deepseek_v3 model; refuses what RoPE.Config
/// cannot express and appends the defaults it writes to `not_expressed`.
RopeText rope_text(const ArchConfig& c, bool deepseek, std::vector<std::string>& not_expressed);

// What both models cannot express, noted the same way (appended to `not_expressed`).

/// The defaults written where the config is silent: vocabulary, rope theta, norm epsilon.
void note_defaults(const ArchConfig& c, std::vector<std::string>& not_expressed);
/// The router's score function and top-k renormalisation where the config does not give them.
void note_router(const ArchConfig& c, RouterScore score, bool route_norm, std::vector<std::string>& not_expressed);
/// The router's expert bias as torchtitan's aux-loss-free expert_bias_E.
void note_router_bias(const ArchConfig& c, std::vector<std::string>& not_expressed);
/// The loop, built unlooped.
void note_loop(const ArchConfig& c, std::vector<std::string>& not_expressed);
/// What deepseek_v3 does not express, after the defaults and the RoPE notes: the router, the
/// expert groups, the expert bias, the MTP count model_registry passes, the loop.
void note_deepseek_v3(const ArchConfig& c, RouterScore score, bool route_norm, std::vector<std::string>& not_expressed);

/// The qwen3 module for a GQA config (export_torchtitan_modules.cpp).
std::string export_torchtitan_qwen3(const ArchConfig& c, const ExportOptions& options,
                                    std::vector<std::string>& not_expressed);
/// The deepseek_v3 module for a config with multi-head latent attention (export_torchtitan_modules.cpp).
std::string export_torchtitan_deepseek_v3(const ArchConfig& c, const ExportOptions& options,
                                          std::vector<std::string>& not_expressed);

}  // namespace budget::detail
