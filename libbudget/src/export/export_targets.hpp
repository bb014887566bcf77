#pragma once
// Private: one function per export target (export.cpp dispatches). Each receives a validated
// config and appends to `not_expressed` what its target cannot express (the loop).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "budget/config.hpp"
#include "budget/export.hpp"

namespace budget::detail {

std::string export_hf(const ArchConfig& config, const ExportOptions& options, std::vector<std::string>& not_expressed);
std::string export_megatron(const ArchConfig& config, const ExportOptions& options,
                            std::vector<std::string>& not_expressed);
std::string export_torchtitan(const ArchConfig& config, const ExportOptions& options,
                              std::vector<std::string>& not_expressed);
std::string export_torch(const ArchConfig& config, std::vector<std::string>& not_expressed);  // export_torch.cpp
/// An hf export's template read strictly in key order; one holding Python's non-finite numbers is
/// refused by key (export.cpp).
nlohmann::ordered_json read_hf_template(const std::string& text, const std::string& source);

/// Refuses, naming the native field of the first and, per target, why for each, the 2025 layer kinds
/// (linear attention, Mamba-2, per-layer mixers and FFNs, chunked attention, sinks, the output gate,
/// the indexer, partial and absent rotary embeddings) a target does not write; nothing for `native`,
/// nor for `hf` with a template (`hf_template`: the family's own config.json keeps them, and the
/// export's read-back check proves it) (export_layer_kinds.cpp).
void refuse_unexpressed_layer_kinds(const ArchConfig& config, ExportTarget target, bool hf_template);

/// The Hugging Face export `text` read back by the Hugging Face reader must be `config` (canonically:
/// no name, shared experts as one MLP of their total width; settings compared where the config gives
/// them); budget::Error naming the first field that differs, or why it would not read
/// (export_hf_read_back.cpp).
void check_hf_reads_back(const ArchConfig& config, const std::string& text);

/// DeepSeek's router keys of a Hugging Face document (`deepseek`: a family that has them, DeepSeek
/// V2/V3 and Kimi-K2): routed_scaling_factor, n_group, topk_group and, in DeepSeek-V2 files,
/// topk_method (group_limited_greedy for groups scored by their highest expert, noaux_tc for the
/// sum of two), from settings.router_scaling_factor and settings.router_groups; a template's
/// grouping the config's experts cannot take is set to ungrouped (export_hf_router.cpp). A setting
/// the family cannot hold is caught by the export's read-back check, which names it.
void write_hf_router_settings(const ArchConfig& config, bool deepseek, nlohmann::ordered_json& doc);

/// "layers 4–9 run 2 times with shared weights (18 executed layers from 12 stored)".
std::string describe_loop(const ArchConfig& config);

/// Shared experts as a number of routed-width experts: n·shared_dim / expert_dim when that is an
/// integer (n experts of width w and one of width n·w are the same computation: concatenating
/// their matrices along the width gives one MLP whose output is the sum), else -1.
std::int64_t shared_experts_in_routed_widths(const FfnConfig& ffn);

/// The router score function an export writes: the config's (settings.router_score), else sigmoid
/// when the config has a router expert bias (the DeepSeek-V3 / Kimi-K2 router, the only one budget
/// reads with that bias), else softmax (the other MoE families, and both trainers' usual choice).
RouterScore router_score_of(const ArchConfig& config);

}  // namespace budget::detail
