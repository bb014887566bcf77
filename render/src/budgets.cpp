#include "budget_render/budgets.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/config_io.hpp"

namespace budget::render {

nlohmann::ordered_json budgets_json(const Budgets& b) {
  using json = nlohmann::ordered_json;
  const auto& f = b.forward_by_component;
  const auto& p = b.params_by_component;
  const auto& a = b.active_params_by_component;
  json flops{{"training", b.training_flops_per_token},
             {"forward", b.forward_flops_per_token},
             {"by_component",
              json{{"qkv_projection", f.qkv_projection},
                   {"attention_scores", f.attention_scores},
                   {"output_projection", f.output_projection},
                   {"router", f.router},
                   {"routed_experts", f.routed_experts},
                   {"shared_experts", f.shared_experts},
                   {"dense_ffn", f.dense_ffn}}},
             {"kernel_training", b.kernel_training_flops_per_token},
             {"kernel_forward", b.kernel_forward_flops_per_token},
             {"lm_head_forward", b.lm_head_forward_flops_per_token}};
  const auto components = [](const ParamsByComponent& c) {
    return json{{"attention", c.attention},           {"router", c.router},
                {"routed_experts", c.routed_experts}, {"shared_experts", c.shared_experts},
                {"dense_ffn", c.dense_ffn},           {"norms", c.norms}};
  };
  json params{{"non_embedding_total", b.non_embedding_params_total},
              {"non_embedding_active", b.non_embedding_params_active},
              {"embedding", b.embedding_params},
              {"executed_active", b.executed_active_params},
              {"by_component", components(p)},
              {"active_by_component", components(a)}};
  json kv{{"elements_per_token", b.kv_elements_per_token},
          {"bytes_per_token", b.kv_bytes_per_token},
          {"bytes_per_sequence", b.kv_bytes_per_sequence},
          {"window_elements_per_sequence", b.kv_window_elements_per_sequence}};
  json out{{"flops_per_token", flops},     {"params", params},
           {"kv_cache", kv},               {"effective_layers", b.executed_layers},
           {"physical_layers", b.physical_layers}, {"sparsity", b.sparsity},
           {"param_sparsity", b.param_sparsity}};
  // Linear-attention and Mamba-2 layers: the recurrent state of one sequence, beside the KV cache
  // (written only when there is one, so other configs' JSON is as before).
  if (b.state_elements_per_sequence > 0) {
    out["recurrent_state"] = json{{"elements_per_sequence", b.state_elements_per_sequence},
                                  {"bytes_per_sequence", b.state_bytes_per_sequence}};
  }
  if (b.mtp_params > 0) {
    out["mtp"] = json{{"params", b.mtp_params},
                      {"active_params", b.mtp_active_params},
                      {"forward_flops_per_token", b.mtp_forward_flops_per_token}};
  }
  return out;
}

nlohmann::ordered_json config_json(const ArchConfig& config) {
  return nlohmann::ordered_json::parse(arch_config_to_json(config, -1));
}

nlohmann::ordered_json workload_json(const Workload& w) {
  return nlohmann::ordered_json{{"seq_len", w.seq_len},
                                {"attention_mask", std::string(to_string(w.attention_mask))},
                                {"attended_keys", w.attended_keys},
                                {"kernel_attended_keys", w.executed_attended_keys()},
                                {"kernel_forward_attended_keys", w.kernel_forward_attended_keys},
                                {"kernel_backward_attended_keys", w.kernel_backward_attended_keys},
                                {"attention_kernel", std::string(to_string(w.attention_kernel))},
                                {"forward_tile", to_string(w.forward_tile)},
                                {"backward_tile", to_string(w.backward_tile)},
                                {"sliding_window", w.sliding_window},
                                {"training_passes", w.training_passes},
                                {"kv_bytes", w.kv_bytes},
                                {"tokens_per_step", w.tokens_per_step},
                                {"description", w.description}};
}

std::string heads_text(const AttentionConfig& a) {
  if (a.mla) return fmt::format("{}×{} (MLA {}+{})", a.num_heads, a.head_dim, a.mla->kv_lora_rank, a.mla->qk_rope_head_dim);
  return fmt::format("{}×{} (KV {})", a.num_heads, a.head_dim, a.num_kv_heads);
}

std::string ffn_text(const FfnConfig& f) {
  if (!f.is_moe()) return fmt::format("dense {}", f.dense_dim);
  std::string text = fmt::format("{}×{} (top {})", f.num_experts, f.expert_dim, f.top_k);
  if (f.num_shared_experts > 0) text += fmt::format(" + {}×{} shared", f.num_shared_experts, f.shared_expert_dim);
  if (f.first_dense_layers > 0) text += fmt::format(", first {} dense {}", f.first_dense_layers, f.dense_dim);
  return text;
}

std::string loop_text(const ArchConfig& c) {
  if (!c.loop) return "none";
  return fmt::format("{}–{} ×{}", c.loop->first, c.loop->last, c.loop->repeats);
}

}  // namespace budget::render
