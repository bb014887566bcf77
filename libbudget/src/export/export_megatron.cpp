// ArchConfig → Megatron-LM (megatron/training/arguments.py) model arguments, one per line, in a
// fixed order; comment lines ("# ...") say what the target cannot express. The list is pasteable
// into a bash array: MODEL_ARGS=( $(grep -v '^#' args.txt) ).
//
// Besides the shapes, three flags make Megatron's model count what budget counts
// (docs/accounting.md): --disable-bias-linear (no biases), --normalization RMSNorm (one H-vector
// per norm: 2H per layer + H final) and --position-embedding-type rope (no learned position
// table). --swiglu selects the gated 3-matrix MLP; without it Megatron's MLP has 2 matrices.

#include <fmt/format.h>

#include "budget/error.hpp"
#include "export/export_targets.hpp"

namespace budget::detail {

std::string export_megatron(const ArchConfig& c, std::vector<std::string>& not_expressed) {
  refuse_unexpressed_features(c, "Megatron-LM", true);
  const AttentionConfig& a = c.attention;
  const FfnConfig& f = c.ffn;
  std::vector<std::string> args;
  const auto arg = [&](const std::string& flag, auto value) { args.push_back(fmt::format("{} {}", flag, value)); };
  arg("--num-layers", c.num_layers);
  arg("--hidden-size", c.hidden_size);
  // Dense layers' width; MoE layers use --moe-ffn-hidden-size. A pure MoE model has no dense
  // layer, and Megatron still wants the argument: the expert width.
  arg("--ffn-hidden-size", f.is_moe() && f.first_dense_layers == 0 ? f.expert_dim : f.dense_dim);
  arg("--num-attention-heads", a.num_heads);
  if (a.num_kv_heads != a.num_heads) {
    args.emplace_back("--group-query-attention");
    arg("--num-query-groups", a.num_kv_heads);
  }
  arg("--kv-channels", a.head_dim);
  // Megatron's --qk-layernorm normalises each head's queries and keys (one head_dim vector each).
  if (a.qk_norm == QkNorm::per_head) args.emplace_back("--qk-layernorm");
  if (f.gated) args.emplace_back("--swiglu");
  args.emplace_back("--disable-bias-linear");
  args.emplace_back("--normalization RMSNorm");
  args.emplace_back("--position-embedding-type rope");
  if (!c.tie_embeddings) args.emplace_back("--untie-embeddings-and-output-weights");
  if (c.vocab_size > 0) {
    arg("--vocab-size", c.vocab_size);
  } else {
    not_expressed.push_back("vocab_size is 0 (embeddings not modelled): add --vocab-size or a tokenizer");
  }
  if (f.is_moe()) {
    arg("--num-experts", f.num_experts);
    arg("--moe-router-topk", f.top_k);
    arg("--moe-ffn-hidden-size", f.expert_dim);
    // Megatron's shared experts are one MLP of this total width (n experts of width w ≡ one of n·w).
    if (f.num_shared_experts > 0) {
      arg("--moe-shared-expert-intermediate-size", f.num_shared_experts * f.shared_expert_dim);
    }
    if (f.first_dense_layers > 0) {
      arg("--moe-layer-freq", fmt::format("'([0]*{}+[1]*{})'", f.first_dense_layers, c.num_layers - f.first_dense_layers));
    }
  }
  if (c.loop) {
    not_expressed.push_back(fmt::format(
        "the loop ({}): Megatron-LM has no weight-shared layer loop; these arguments build the {} stored layers "
        "unlooped, so its FLOPs and KV cache are those of {} layers, not {}",
        describe_loop(c), c.num_layers, c.num_layers, c.executed_layers()));
  }
  std::string out = fmt::format("# Megatron-LM model arguments for {} (budget-match export; docs/export.md)\n",
                                c.name.empty() ? "the config" : c.name);
  for (const auto& note : not_expressed) out += "# NOT EXPRESSED: " + note + "\n";
  for (const auto& line : args) out += line + "\n";
  return out;
}

}  // namespace budget::detail
