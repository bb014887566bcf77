// Model-shape arguments against the config (budget/megatron_args.hpp): a given shape argument must
// agree with the config or is refused naming both values. Arguments not given are not checked
// (Megatron's own defaults then build its model; docs/megatron.md says which matter).
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "interop/megatron_reader.hpp"

namespace budget::interop_detail {
namespace {

void check_megatron_int(const ParsedMegatronArgs& p, const std::string& dest, std::int64_t expected,
                        const std::string& what, MegatronRun& run) {
  const auto v = p.integer(dest);
  if (!v) return;
  if (*v != expected) p.fail(dest, fmt::format("{} disagrees with the config's {} ({})", *v, what, expected));
  run.checked.push_back(p.by_dest.at(dest).name);
}

void check_megatron_flag(const ParsedMegatronArgs& p, const std::string& dest, bool given_means, bool config_value,
                         const std::string& what, MegatronRun& run) {
  if (!p.has(dest)) return;
  if (given_means != config_value) p.fail(dest, fmt::format("disagrees with the config: {} is {}", what, config_value ? "on" : "off"));
  run.checked.push_back(p.by_dest.at(dest).name);
}

void check_megatron_attention_shapes(const ParsedMegatronArgs& p, const ArchConfig& c, MegatronRun& run) {
  const AttentionConfig& a = c.attention;
  check_megatron_int(p, "num_attention_heads", a.num_heads, "attention heads", run);
  check_megatron_flag(p, "multi_latent_attention", true, a.mla.has_value(), "multi-latent attention", run);
  if (a.mla) {
    check_megatron_int(p, "q_lora_rank", a.mla->q_lora_rank, "q_lora_rank", run);
    check_megatron_int(p, "kv_lora_rank", a.mla->kv_lora_rank, "kv_lora_rank", run);
    check_megatron_int(p, "qk_head_dim", a.mla->qk_nope_head_dim, "qk_nope_head_dim", run);
    check_megatron_int(p, "qk_pos_emb_head_dim", a.mla->qk_rope_head_dim, "qk_rope_head_dim", run);
    check_megatron_int(p, "v_head_dim", a.mla->v_head_dim, "v_head_dim", run);
    return;
  }
  check_megatron_flag(p, "group_query_attention", true, a.num_kv_heads != a.num_heads, "grouped-query attention", run);
  if (p.has("group_query_attention")) check_megatron_int(p, "num_query_groups", a.num_kv_heads, "KV heads", run);
  check_megatron_int(p, "kv_channels", a.head_dim, "head_dim", run);
}

void check_megatron_ffn_shapes(const ParsedMegatronArgs& p, const ArchConfig& c, MegatronRun& run) {
  const FfnConfig& f = c.ffn;
  if (c.dense_ffn_layers() > 0) check_megatron_int(p, "ffn_hidden_size", f.dense_dim, "dense FFN width", run);
  check_megatron_flag(p, "swiglu", true, f.gated, "a gated MLP", run);
  check_megatron_int(p, "num_experts", f.is_moe() ? f.num_experts : 0, "experts", run);
  if (!f.is_moe()) return;
  check_megatron_int(p, "moe_ffn_hidden_size", f.expert_dim, "expert width", run);
  check_megatron_int(p, "moe_router_topk", f.top_k, "top_k", run);
  check_megatron_int(p, "moe_shared_expert_intermediate_size", f.num_shared_experts * f.shared_expert_dim,
                     "total shared-expert width", run);
  if (const auto freq = p.text("moe_layer_freq")) {
    const std::vector<std::uint8_t> pattern = megatron_moe_layer_pattern(p, *freq, c.num_layers);
    std::vector<std::uint8_t> expected;
    for (std::int64_t i = 0; i < c.num_layers; ++i) expected.push_back(i < f.first_dense_layers ? 0 : 1);
    if (pattern != expected) {
      p.fail("moe_layer_freq", fmt::format("\"{}\" disagrees with the config ({} leading dense layers of {})",
                                           printable_text(*freq, 80), f.first_dense_layers, c.num_layers));
    }
    run.checked.push_back("--moe-layer-freq");
  }
}

}  // namespace

void check_megatron_shapes(const ParsedMegatronArgs& p, const ArchConfig& c, MegatronRun& run) {
  check_megatron_int(p, "num_layers", c.num_layers, "layers", run);
  check_megatron_int(p, "hidden_size", c.hidden_size, "hidden size", run);
  check_megatron_int(p, "mtp_num_layers", c.mtp_layers, "MTP layers", run);
  check_megatron_attention_shapes(p, c, run);
  check_megatron_ffn_shapes(p, c, run);
  check_megatron_flag(p, "untie_embeddings_and_output_weights", true, !c.tie_embeddings, "an untied LM head", run);
  if (const auto norm = p.text("normalization")) {
    const std::string expected = c.norm == NormKind::layernorm ? "LayerNorm" : "RMSNorm";
    if (*norm != expected) p.fail("normalization", fmt::format("{} disagrees with the config's {}", *norm, expected));
    run.checked.push_back("--normalization");
  }
  if (const auto vocab = p.integer("vocab_size")) {
    // NullTokenizer's vocabulary is --vocab-size + 1 (its end-of-document token).
    const bool null_tokenizer = p.text("tokenizer_type") == std::optional<std::string>("NullTokenizer");
    const std::int64_t tokens = *vocab + (null_tokenizer ? 1 : 0);
    if (tokens != c.vocab_size) {
      p.fail("vocab_size", fmt::format("{}{} disagrees with the config's vocabulary ({})", *vocab,
                                       null_tokenizer ? " (+1 for NullTokenizer)" : "", c.vocab_size));
    }
    run.checked.push_back("--vocab-size");
  }
}

}  // namespace budget::interop_detail
