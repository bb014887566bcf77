// The read-back check of every Hugging Face export (export_hf.cpp): the file read by the Hugging
// Face reader must be the config itself, canonically, so that nothing is dropped silently.

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "config/config_hf_json.hpp"
#include "config/config_json.hpp"
#include "export/export_targets.hpp"

namespace budget::detail {
namespace {

/// The config in a canonical native form for comparison: no name, and shared experts as one MLP
/// of their total width (n experts of width w and one of n·w are the same computation, and the
/// families spell them differently).
nlohmann::ordered_json canonical_for_read_back(ArchConfig c) {
  c.name.clear();
  if (c.ffn.num_shared_experts > 0) {
    c.ffn.shared_expert_dim *= c.ffn.num_shared_experts;
    c.ffn.num_shared_experts = 1;
  }
  return arch_config_json(c);
}

}  // namespace

/// The export read back by the Hugging Face reader must be the config itself (canonically): a
/// field the reader (or this writer) does not carry through would otherwise be dropped silently.
void check_hf_reads_back(const ArchConfig& c, const std::string& text) {
  ArchConfig back;
  try {
    back = read_hf_config(nlohmann::json::parse(text), "<hf export>");
  } catch (const Error& e) {
    throw Error("the Hugging Face export would not read back (" + e.message() + " at " + e.path() +
                    "); this config cannot be expressed as a config.json of its family",
                c.name.empty() ? "<config>" : c.name, e.path());
  }
  // Settings are compared where the config gives them: a family's reader fills in its own router
  // (softmax, say) where a native config says nothing.
  ModelSettings& b = back.settings;
  const ModelSettings& w = c.settings;
  if (!w.rope_theta) b.rope_theta.reset();
  if (!w.norm_epsilon) b.norm_epsilon.reset();
  if (w.max_position_embeddings == 0) b.max_position_embeddings = 0;
  if (!w.router_score) b.router_score.reset();
  if (!w.router_normalize_top_k) b.router_normalize_top_k.reset();
  if (!w.rope_scaling) b.rope_scaling.reset();
  if (!w.router_scaling_factor) b.router_scaling_factor.reset();
  if (!w.router_groups) b.router_groups.reset();
  const nlohmann::json want = canonical_for_read_back(c);
  const nlohmann::json got = canonical_for_read_back(back);
  if (want != got) {
    const nlohmann::json patch = nlohmann::json::diff(want, got);
    const std::string field = patch.empty() ? "/" : patch.front().value("path", "/");
    const std::string wanted = want.contains(nlohmann::json::json_pointer(field))
                                   ? want.at(nlohmann::json::json_pointer(field)).dump()
                                   : "absent";
    const std::string read = got.contains(nlohmann::json::json_pointer(field))
                                 ? got.at(nlohmann::json::json_pointer(field)).dump()
                                 : "absent";
    throw Error(fmt::format("cannot be expressed in a Hugging Face config.json of this family: it would read back as "
                            "{} instead of {}", read, wanted),
                c.name.empty() ? "<config>" : c.name, field);
  }
}

}  // namespace budget::detail
