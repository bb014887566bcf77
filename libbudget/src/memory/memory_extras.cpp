// Memory terms beyond activations and bytes per parameter (docs/cluster.md, "Memory to the
// allocator's peak"); sources in memory/memory_extras.hpp.
#include "memory/memory_extras.hpp"

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

namespace {

/// Bytes of the FP8 copies of one linear weight element: rowwise + columnwise.
double fp8_weight_copy_bytes(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::none: return 0.0;
    case Fp8Recipe::tensorwise:
    case Fp8Recipe::delayed: return 2.0;
    case Fp8Recipe::blockwise: return 2.0 * (1.0 + 4.0 / (128.0 * 128.0));
    case Fp8Recipe::mxfp8: return 2.0 * (1.0 + 1.0 / 32.0);
  }
  return 0.0;
}

}  // namespace

ParameterMemory parameter_memory(const ParallelLayout& l, double dense, double expert, double fp8_linear,
                                 double largest_layer) {
  const ParameterBytes per = parameter_bytes(l);
  const double instances = static_cast<double>(l.distributed_optimizer_instances);
  const double d_dense = static_cast<double>(l.data_parallel() * l.cp) / instances;
  const double d_expert = static_cast<double>(l.expert_data_parallel()) / instances;
  const bool optimizer_sharded = l.distributed_optimizer || l.fsdp != FsdpKind::none;
  const bool grads_sharded = l.fsdp == FsdpKind::torch_fsdp2 ||
                             (l.fsdp == FsdpKind::megatron_fsdp && l.fsdp_sharding != FsdpSharding::optim);
  const bool params_sharded = l.fsdp == FsdpKind::torch_fsdp2 ||
                              (l.fsdp == FsdpKind::megatron_fsdp && l.fsdp_sharding == FsdpSharding::optim_grads_params);
  // Bytes a parameter of each kind, as (weights, gradients, optimizer) before sharding.
  double w = per.weights, g = per.gradients, o = per.optimizer;
  if (l.fsdp == FsdpKind::torch_fsdp2) w = 4.0, g = 4.0, o = 8.0;  // fp32 sharded params are the master copy
  const auto sharded = [&](double bytes, bool on, double d) { return on ? bytes / d : bytes; };
  ParameterMemory out;
  out.weights = dense * sharded(w, params_sharded, d_dense) + expert * sharded(w, params_sharded, d_expert);
  out.gradients = dense * sharded(g, grads_sharded, d_dense) + expert * sharded(g, grads_sharded, d_expert);
  out.optimizer = dense * sharded(o, optimizer_sharded, d_dense) + expert * sharded(o, optimizer_sharded, d_expert);
  if (params_sharded) out.gather_buffers = largest_layer * (2.0 * 2.0 + g);
  else if (grads_sharded) out.gather_buffers = largest_layer * g;
  if (l.fp8 != Fp8Recipe::none) {
    out.weights += fp8_linear * fp8_weight_copy_bytes(l.fp8);
    if (l.fp8_param_gather) {
      // The rowwise copy is the parameter: its bf16 weight is not kept (sharded as the weights).
      const double share = dense + expert > 0.0 ? fp8_linear / (dense + expert) : 0.0;
      out.weights -= share * (dense * sharded(2.0, params_sharded, d_dense) + expert * sharded(2.0, params_sharded, d_expert));
    }
  }
  return out;
}

double fp8_scaling_state_bytes(const ParallelLayout& l, double fp8_gemms) {
  if (l.fp8 != Fp8Recipe::delayed) return 0.0;
  return fp8_gemms * 3.0 * (static_cast<double>(l.fp8_amax_history) + 2.0) * 4.0;
}

}  // namespace budget
