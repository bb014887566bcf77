// The stack-level part of the op list: norms, the multi-token-prediction module, embedding and
// LM head.

#include "accounting/op_builders.hpp"

namespace budget::accounting_detail {

/// Two norms per layer (before the mixer, before the FFN); each reads and writes one row of H (4·H
/// bytes per norm, bf16). The q/k and MLA latent norms are counted in the parameters of attention
/// layers, the gated norms of linear-attention (value_head_dim) and Mamba-2 (inner) layers in theirs,
/// but not in the bytes. A layer that is a single block (Nemotron-H) has one norm. Layers with the
/// same norms share one op.
void add_norm_ops(std::vector<Op>& ops, const OpListContext& x) {
  const ArchConfig& c = x.c;
  const auto& a = c.attention;
  const std::int64_t H = x.H;
  const std::int64_t attention_norms = a.qk_norm_params() + (a.mla ? a.mla->q_lora_rank + a.mla->kv_lora_rank : 0);
  const auto add = [&](std::int64_t blocks, std::int64_t params, std::int64_t physical, std::int64_t executed) {
    Op& norms = add_parameters(ops, OpKind::norms, params, physical, executed);
    norms.in_features = H;
    norms.matrices = blocks;
    norms.forward_bytes = static_cast<double>(blocks) * 4.0 * static_cast<double>(H);
  };
  if (!c.has_per_layer_kinds()) {
    add(2, 2 * c.norm_params(H) + attention_norms, x.L, x.executed);
  } else {
    struct Group {
      std::int64_t blocks, params, physical, executed;
    };
    std::vector<Group> groups;
    for (std::int64_t layer = 1; layer <= x.L; ++layer) {
      const LayerMixer mixer = c.mixer_of_layer(layer);
      const std::int64_t blocks = (mixer != LayerMixer::none ? 1 : 0) + (c.ffn_of_layer(layer) != LayerFfn::none ? 1 : 0);
      const std::int64_t params = blocks * c.norm_params(H) + (mixer == LayerMixer::attention ? attention_norms : 0) +
                                  (mixer == LayerMixer::linear_attention ? c.linear_attention->value_head_dim : 0) +
                                  (mixer == LayerMixer::mamba ? c.mamba->inner() : 0);
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const Group& g) { return g.blocks == blocks && g.params == params; });
      if (it == groups.end()) it = groups.insert(groups.end(), Group{blocks, params, 0, 0});
      it->physical += 1;
      it->executed += c.executions_of_layer(layer);
    }
    for (const Group& g : groups) add(g.blocks, g.params, g.physical, g.executed);
  }
  Op& final_norm = add_parameters(ops, OpKind::final_norm, c.norm_params(H), 1, 1);
  final_norm.in_features = H;
  final_norm.matrices = 1;
  final_norm.forward_bytes = 4.0 * static_cast<double>(H);
}

/// A multi-token-prediction module (DeepSeek-V3 §2.2): one decoder layer like the stack's last
/// (its ops already in the list, full attention), a 2H × H projection of [norm(h); norm(embedding)]
/// and three norms (the two inputs and the shared head's). Embedding and LM head are shared (not
/// counted).
void add_mtp_op(std::vector<Op>& ops, const OpListContext& x) {
  const ArchConfig& c = x.c;
  const std::int64_t H = x.H;
  const bool last_is_moe = x.moe_physical > 0;
  Op mtp{OpKind::mtp_module};
  mtp.in_features = 2 * H;
  mtp.out_features = H;
  bool scores_seen = false;
  for (const Op& op : ops) {
    const bool ffn = op.kind == OpKind::router || op.kind == OpKind::routed_experts ||
                     op.kind == OpKind::shared_experts || op.kind == OpKind::dense_ffn;
    const bool moe_op = op.kind != OpKind::dense_ffn;
    if (op.kind == OpKind::final_norm || (ffn && moe_op != last_is_moe)) continue;
    if (op.kind == OpKind::attention_scores && scores_seen) continue;  // the full-attention op only
    scores_seen = scores_seen || op.kind == OpKind::attention_scores;
    mtp.params_per_layer += op.params_per_layer;
    mtp.active_params_per_layer += op.active_params_per_layer;
    mtp.forward_flops += op.forward_flops;
    mtp.kernel_forward_flops += op.kernel_forward_flops;
    mtp.kernel_training_flops += op.kernel_training_flops;
  }
  const std::int64_t projection = 2 * H * H;
  const std::int64_t norms = 3 * c.norm_params(H);
  mtp.params_per_layer += projection + norms;
  mtp.active_params_per_layer += projection + norms;
  mtp.forward_flops += 2.0 * static_cast<double>(projection);
  mtp.kernel_forward_flops += 2.0 * static_cast<double>(projection);
  mtp.kernel_training_flops += x.passes * 2.0 * static_cast<double>(projection);
  mtp.matrices = 1;
  mtp.physical_layers = c.mtp_layers;
  mtp.executed_layers = c.mtp_layers;
  ops.push_back(mtp);
}

void add_head_ops(std::vector<Op>& ops, const OpListContext& x) {
  const ArchConfig& c = x.c;
  add_parameters(ops, OpKind::embedding, c.vocab_size * x.H, 1, 1);
  Op& head = add_matmul(ops, OpKind::lm_head, x.H, c.vocab_size, c.tie_embeddings ? 0 : 1, 1, 1, 1, x.passes);
  head.active_params_per_layer = c.tie_embeddings ? 0 : head.active_params_per_layer;
  if (c.lm_head_bias) add_bias(head, c.vocab_size, c.vocab_size);
}

}  // namespace budget::accounting_detail
