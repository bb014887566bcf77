// DeepSeek's router settings in a Hugging Face config.json (export_targets.hpp): transformers'
// DeepseekV3Config / DeepseekV2Config keys routed_scaling_factor, n_group, topk_group and
// DeepSeek-V2's topk_method ("greedy" ignores the groups; "group_limited_greedy" scores a group by
// its highest expert; "noaux_tc" by the sum of its two highest, as DeepSeek-V3 always does).

#include <cstdint>
#include <string>

#include "export/export_targets.hpp"

namespace budget::detail {

void write_hf_router_settings(const ArchConfig& c, bool deepseek, nlohmann::ordered_json& doc) {
  if (!deepseek || !c.ffn.is_moe()) return;
  const ModelSettings& s = c.settings;
  if (s.router_scaling_factor) doc["routed_scaling_factor"] = *s.router_scaling_factor;
  const auto type = doc.find("model_type");
  const bool v2 = type != doc.end() && *type == "deepseek_v2";
  if (s.router_groups) {
    doc["n_group"] = s.router_groups->groups;
    doc["topk_group"] = s.router_groups->top_groups;
    if (v2) doc["topk_method"] = s.router_groups->score_top == 1 ? "group_limited_greedy" : "noaux_tc";
    return;
  }
  // A template's groups that the config's experts do not split (a matched candidate's count):
  // ungrouped, as the candidate routes.
  const auto groups = doc.find("n_group");
  if (groups != doc.end() && groups->is_number_integer() && groups->get<std::int64_t>() > 1 &&
      c.ffn.num_experts % groups->get<std::int64_t>() != 0) {
    doc["n_group"] = 1;
    doc["topk_group"] = 1;
  }
}

}  // namespace budget::detail
