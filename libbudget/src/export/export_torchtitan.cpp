// ArchConfig → torchtitan model arguments as JSON: the fields of its qwen3 model
// (torchtitan/models/qwen3/model/args.py: Qwen3ModelArgs, with MoEArgs from
// torchtitan/models/moe), the torchtitan model that has grouped-query attention, an explicit
// head_dim and explicit dense/expert widths. Written:
//   {"model": "qwen3", "model_args": {...}, "not_expressed": [...]}
// qk_norm is true exactly when the config has per-head q/k norms (counted, docs/accounting.md).
// torchtitan's shared experts are one FeedForward of width num_shared_experts·moe_inter_dim.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "export/export_targets.hpp"

namespace budget::detail {

std::string export_torchtitan(const ArchConfig& c, std::vector<std::string>& not_expressed) {
  using Json = nlohmann::ordered_json;
  const std::string source = c.name.empty() ? "<config>" : c.name;
  refuse_unexpressed_features(c, "torchtitan", true);
  const AttentionConfig& a = c.attention;
  const FfnConfig& f = c.ffn;
  if (!f.gated) {
    throw Error("/ffn/gated: false (a 2-matrix MLP) cannot be expressed: torchtitan's FeedForward is always SwiGLU",
                source);
  }
  if (f.first_dense_layers > 0) {
    throw Error(fmt::format("/ffn/first_dense_layers: {} leading dense layers cannot be expressed in torchtitan's "
                            "qwen3 model (moe_enabled applies to every layer)", f.first_dense_layers),
                source);
  }
  Json args;
  args["dim"] = c.hidden_size;
  args["n_layers"] = c.num_layers;
  args["n_heads"] = a.num_heads;
  args["n_kv_heads"] = a.num_kv_heads;
  args["head_dim"] = a.head_dim;
  if (c.vocab_size > 0) {
    args["vocab_size"] = c.vocab_size;
  } else {
    not_expressed.push_back("vocab_size is 0 (embeddings not modelled): set vocab_size to your tokenizer's");
  }
  args["enable_weight_tying"] = c.tie_embeddings;
  args["qk_norm"] = a.qk_norm == QkNorm::per_head;  // qwen3's q/k RMSNorms are per head (head_dim each)
  if (f.is_moe()) {
    const std::int64_t shared = shared_experts_in_routed_widths(f);
    if (shared < 0) {
      throw Error(fmt::format("/ffn: {} shared experts of width {} are not a whole number of routed-width ({}) "
                              "experts, which is how torchtitan sizes shared experts",
                              f.num_shared_experts, f.shared_expert_dim, f.expert_dim),
                  source);
    }
    args["hidden_dim"] = f.expert_dim;  // unused by MoE layers; torchtitan wants a value
    args["moe_enabled"] = true;
    args["moe_inter_dim"] = f.expert_dim;
    args["moe_args"] = Json{{"num_experts", f.num_experts}, {"num_shared_experts", shared}, {"top_k", f.top_k}};
  } else {
    args["hidden_dim"] = f.dense_dim;
    args["moe_enabled"] = false;
  }
  if (c.loop) {
    not_expressed.push_back(fmt::format(
        "the loop ({}): torchtitan's models have no weight-shared layer loop; these arguments build the {} stored "
        "layers unlooped", describe_loop(c), c.num_layers));
  }
  Json out;
  out["model"] = "qwen3";
  out["model_args"] = std::move(args);
  out["not_expressed"] = not_expressed;
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace budget::detail
