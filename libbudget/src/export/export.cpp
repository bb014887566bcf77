// Export dispatch, target names, and the guard that keeps every target in step with ArchConfig.

#include "budget/export.hpp"

#include <algorithm>
#include <optional>
#include <cctype>

#include <fmt/format.h>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "config/config_hf_json.hpp"
#include "config/config_json.hpp"
#include "export/export_targets.hpp"
#include "base/json_reader.hpp"
#include "base/enum_names.hpp"

namespace budget {
namespace detail {
namespace {

// Every field of the config must be exported or refused by every target (the layer kinds of the
// 2025 families, layer_mixers … nope_layers, by refuse_unexpressed_layer_kinds()). When a field is added
// to ArchConfig, AttentionConfig, FfnConfig, ModelSettings or LoopConfig, the structured binding of that struct
// below stops compiling (the count of names no longer matches): handle the new field in
// export_hf.cpp, interop/megatron_model_writer.cpp and export_torchtitan.cpp (write it, or throw budget::Error
// naming it), add a test, then add its name here. `notes` say how a file was read, not what the
// model is: no target writes them.
void check_every_field_is_handled(const ArchConfig& c) {
  [[maybe_unused]] const auto& [name, hidden_size, num_layers, vocab_size, tie_embeddings, lm_head_bias, norm,
                                attention, ffn, mtp_layers, loop, layer_mixers, layer_ffns, linear_attention, mamba,
                                settings, notes] = c;
  [[maybe_unused]] const auto& [num_heads, head_dim, num_kv_heads, mla, qkv_bias, output_bias, qk_norm,
                                sliding_window, chunk_size, layer_types, sinks, output_gate, indexer] = c.attention;
  [[maybe_unused]] const auto& [num_experts, top_k, expert_dim, gated, bias, router_bias, shared_expert_gate,
                                num_shared_experts, shared_expert_dim, first_dense_layers, dense_dim] = c.ffn;
  [[maybe_unused]] const auto& [rope_theta, norm_epsilon, max_position_embeddings, router_score,
                                router_normalize_top_k, rope_scaling, partial_rotary_factor, nope_layers,
                                router_scaling_factor, router_groups] = c.settings;
  [[maybe_unused]] const LoopConfig l;
  [[maybe_unused]] const auto& [first, last, repeats] = l;
}

}  // namespace

std::string describe_loop(const ArchConfig& c) {
  if (!c.loop) return {};
  return fmt::format("layers {}-{} run {} times in a row with shared weights ({} executed layers from {} stored)",
                     c.loop->first, c.loop->last, c.loop->repeats, c.executed_layers(), c.num_layers);
}

RouterScore router_score_of(const ArchConfig& c) {
  return c.settings.router_score.value_or(c.ffn.router_bias ? RouterScore::sigmoid : RouterScore::softmax);
}

/// Megatron-LM's model arguments, written by interop's writer (megatron_model_args_file(),
/// interop/megatron_model_writer.cpp) with this domain's router score and loop description.
std::string export_megatron(const ArchConfig& c, const ExportOptions& options,
                            std::vector<std::string>& not_expressed) {
  MegatronModelArgsOptions m;
  m.seq_length = options.seq_length > 0 ? options.seq_length : default_export_seq_length;
  m.router_score = router_score_of(c);
  m.loop_description = describe_loop(c);
  m.training_args = options.megatron_training_args;
  return megatron_model_args_file(c, m, not_expressed);
}

std::int64_t shared_experts_in_routed_widths(const FfnConfig& f) {
  if (f.num_shared_experts == 0) return 0;
  const std::int64_t total = f.num_shared_experts * f.shared_expert_dim;
  return total % f.expert_dim == 0 ? total / f.expert_dim : -1;
}

}  // namespace detail

namespace {
constexpr auto export_target_names = detail::enum_names<ExportTarget::torch>({
    {ExportTarget::native, "native"}, {ExportTarget::hf, "hf"}, {ExportTarget::megatron, "megatron"},
    {ExportTarget::torchtitan, "torchtitan"}, {ExportTarget::torch, "torch"}});
}  // namespace

std::string_view to_string(ExportTarget target) { return detail::name_of(export_target_names, target, "unknown"); }

ExportTarget parse_export_target(std::string_view name, const std::string& source) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (const std::optional<ExportTarget> target = detail::enum_named(export_target_names, lower)) return *target;
  if (lower == "huggingface" || lower == "hugging-face") return ExportTarget::hf;  // aliases
  if (lower == "megatron-lm") return ExportTarget::megatron;
  if (lower == "pytorch") return ExportTarget::torch;
  throw Error(fmt::format("value \"{}\" is not an export target; allowed: {}", name,
                          detail::names_list(export_target_names)),
              source);
}

ExportedConfig export_config(const ArchConfig& config, ExportTarget target, const ExportOptions& options) {
  detail::check_every_field_is_handled(config);
  validate(config, config.name.empty() ? "<config>" : config.name);
  detail::refuse_unexpressed_layer_kinds(config, target, !options.hf_template.empty());
  ExportedConfig out;
  out.target = target;
  switch (target) {
    case ExportTarget::native: out.text = arch_config_to_json(config) + "\n"; break;
    case ExportTarget::hf: out.text = detail::export_hf(config, options, out.not_expressed); break;
    case ExportTarget::megatron: out.text = detail::export_megatron(config, options, out.not_expressed); break;
    case ExportTarget::torchtitan: out.text = detail::export_torchtitan(config, options, out.not_expressed); break;
    case ExportTarget::torch: out.text = detail::export_torch(config, out.not_expressed); break;
  }
  return out;
}

namespace detail {

/// The template read strictly, in key order. One that holds Python's non-finite numbers (read by
/// every surface where the reader uses no number: config_hf_json.hpp) is refused by key: an hf
/// export writes JSON, which has no such number, and a template is written back key for key.
nlohmann::ordered_json read_hf_template(const std::string& text, const std::string& source) {
  try {
    return detail::parse_ordered_json_text(text, source);
  } catch (const Error&) {
    std::vector<detail::PythonNonfinite> found;
    if (!detail::parse_json_text_with_python_nonfinite(text, source, found) || found.empty()) throw;
    throw Error(fmt::format("{} is Python's JSON extension for a non-finite number (read as one from the config, "
                            "where no count or setting is read from it): an hf export writes JSON, which cannot "
                            "hold it, and keeps every key of its template; give a template without it",
                            found.front().token),
                source, found.front().pointer);
  }
}

}  // namespace detail

SourcedConfig parse_sourced_config(std::string_view json_text, const std::string& source) {
  // The one reader of config files (parse_arch_config's), Python's non-finite numbers and all.
  detail::ReadConfig read = detail::read_config_text(json_text, source);
  SourcedConfig out;
  out.config = std::move(read.config);
  if (read.hugging_face) out.hf_text = std::string(json_text);
  return out;
}

SourcedConfig load_sourced_config(const std::string& path) {
  return parse_sourced_config(detail::read_text_file(path), path);
}

}  // namespace budget
