#pragma once
// Private: one function per export target (export.cpp dispatches). Each receives a validated
// config and appends to `not_expressed` what its target cannot express (the loop).

#include <string>
#include <string_view>
#include <vector>

#include "budget/config.hpp"
#include "budget/export.hpp"

namespace budget::detail {

std::string export_hf(const ArchConfig& config, const ExportOptions& options, std::vector<std::string>& not_expressed);
std::string export_megatron(const ArchConfig& config, std::vector<std::string>& not_expressed);
std::string export_torchtitan(const ArchConfig& config, std::vector<std::string>& not_expressed);
std::string export_torch(const ArchConfig& config, std::vector<std::string>& not_expressed);  // export_torch.cpp

/// "layers 4–9 run 2 times with shared weights (18 executed layers from 12 stored)".
std::string describe_loop(const ArchConfig& config);

/// Shared experts as a number of routed-width experts: n·shared_dim / expert_dim when that is an
/// integer (n experts of width w and one of width n·w are the same computation: concatenating
/// their matrices along the width gives one MLP whose output is the sum), else -1.
std::int64_t shared_experts_in_routed_widths(const FfnConfig& ffn);

/// Throws budget::Error naming the native field (e.g. "/attention/mla") of the first feature of
/// `config` that target `target` does not express: MLA, attention/MLP/router/LM-head biases, the
/// shared-expert gate, q/k norms (per-head ones pass when `per_head_qk_norm` is true), sliding-window
/// layers, LayerNorm, multi-token-prediction modules. A target that cannot write a feature refuses
/// the whole config rather than exporting a model with other budgets.
void refuse_unexpressed_features(const ArchConfig& config, std::string_view target, bool per_head_qk_norm);

}  // namespace budget::detail
