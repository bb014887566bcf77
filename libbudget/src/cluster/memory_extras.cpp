// Memory terms beyond activations and bytes per parameter (docs/cluster.md, "Memory to the
// allocator's peak"); sources in cluster/memory_extras.hpp.
#include "cluster/memory_extras.hpp"

#include <set>
#include <utility>

namespace budget {

namespace {

using WeightShape = std::pair<std::int64_t, std::int64_t>;  // (output rows, input columns) of one GPU's shard

/// The attention block's TE linear weights on one GPU, (out, in), TP-sharded as Megatron builds
/// them (MLA down projections duplicated, multi_latent_attention.py:526-527, 573-574).
void add_attention_weight_shapes(const ArchConfig& c, std::int64_t t, std::set<WeightShape>& shapes) {
  const AttentionConfig& a = c.attention;
  const std::int64_t H = c.hidden_size;
  if (a.mla) {
    const MlaConfig& m = *a.mla;
    const std::int64_t q_out = a.num_heads * m.qk_head_dim() / t;
    if (m.q_lora_rank > 0) {
      shapes.insert({m.q_lora_rank, H});
      shapes.insert({q_out, m.q_lora_rank});
    } else {
      shapes.insert({q_out, H});
    }
    shapes.insert({m.kv_lora_rank + m.qk_rope_head_dim, H});
    shapes.insert({a.num_heads * (m.qk_nope_head_dim + m.v_head_dim) / t, m.kv_lora_rank});
  } else {
    shapes.insert({(a.query_width() + 2 * a.kv_width()) / t, H});
  }
  shapes.insert({H, a.value_width() / t});
}

/// One MLP's fc1 (gate and up fused when gated) and fc2 on one GPU, `width` already sharded.
void add_mlp_weight_shapes(const ArchConfig& c, std::int64_t width, std::set<WeightShape>& shapes) {
  if (width <= 0) return;
  shapes.insert({(c.ffn.gated ? 2 : 1) * width, c.hidden_size});
  shapes.insert({c.hidden_size, width});
}

}  // namespace

double te_dummy_wgrad_bytes(const ArchConfig& c, const ParallelLayout& l, const StageContents& stage,
                            std::int64_t padded_vocab) {
  if (!l.gradient_accumulation_fusion || l.precision == TrainingPrecision::fp32) return 0.0;
  const std::int64_t t = l.tp;
  std::set<WeightShape> shapes;
  if (stage.attention_layers) add_attention_weight_shapes(c, t, shapes);
  if (stage.dense_ffn_layers) add_mlp_weight_shapes(c, c.ffn.dense_dim / t, shapes);
  if (stage.moe_layers) {
    add_mlp_weight_shapes(c, c.ffn.num_shared_experts * c.ffn.shared_expert_dim / t, shapes);
    add_mlp_weight_shapes(c, c.ffn.expert_dim / l.expert_tp(), shapes);
  }
  if (stage.lm_head && padded_vocab > 0) shapes.insert({padded_vocab / t, c.hidden_size});
  double elements = 0.0;
  for (const WeightShape& s : shapes) elements += static_cast<double>(s.first) * static_cast<double>(s.second);
  return 2.0 * elements;  // the weights' dtype: bf16 or fp16
}

double context_parallel_logits_copy_bytes(const ParallelLayout& l, double tokens, std::int64_t padded_vocab) {
  if (l.cp <= 1 || padded_vocab <= 0) return 0.0;
  return 2.0 * static_cast<double>(padded_vocab) / static_cast<double>(l.tp) * tokens;
}

}  // namespace budget
