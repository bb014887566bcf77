// Hugging Face config.json → ArchConfig. Only keys that change the budgets are read; everything
// else (rope, dropout, initialiser ranges, ...) is ignored. Features the op list does not model
// are refused rather than approximated silently.

#include "budget/config_hf.hpp"

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/export.hpp"
#include "config_hf_json.hpp"
#include "json_reader.hpp"

namespace budget {
namespace detail {

bool looks_like_hf_config(const nlohmann::json& document) {
  return document.is_object() && document.contains("num_hidden_layers") && !document.contains("num_layers");
}

namespace {
/// True when `key` is present with a value other than null, false, 0 or an empty array.
bool is_set(const nlohmann::json& object, const char* key) {
  if (!object.contains(key)) return false;
  const auto& v = object.at(key);
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0.0;
  if (v.is_array()) return !v.empty();
  return true;
}
}  // namespace

ArchConfig read_hf_config(const nlohmann::json& document, const std::string& source) {
  const ObjectReader root(document, source, "");
  const auto refuse = [&](const char* key, const std::string& why) { root.fail(key, why); };
  // Architecture features the accounting does not model.
  if (is_set(document, "kv_lora_rank") || is_set(document, "q_lora_rank")) {
    refuse(is_set(document, "kv_lora_rank") ? "kv_lora_rank" : "q_lora_rank",
           "multi-head latent attention (DeepSeek-V2/V3) is not modelled: its projections and KV cache differ "
           "from grouped-query attention; write a native config instead");
  }
  if (document.contains("decoder_sparse_step") && root.integer("decoder_sparse_step", 0, 1 << 20) > 1) {
    refuse("decoder_sparse_step", "MoE on only every k-th layer is not modelled; allowed: 1 (every layer)");
  }
  if (is_set(document, "mlp_only_layers")) refuse("mlp_only_layers", "dense layers at arbitrary positions are not modelled");
  if (document.contains("moe_layer_freq") && root.integer("moe_layer_freq", 0, 1 << 20) > 1) {
    refuse("moe_layer_freq", "MoE on only every k-th layer is not modelled; allowed: 1");
  }
  if (document.contains("hidden_act")) {
    const std::string act = root.string("hidden_act");
    if (act != "silu" && act != "swiglu" && act != "gelu" && act != "gelu_new" && act != "gelu_pytorch_tanh") {
      refuse("hidden_act", fmt::format("activation \"{}\" is not one of the gated-MLP families read here (silu, "
                                       "swiglu, gelu, gelu_new, gelu_pytorch_tanh)", act));
    }
  }

  ArchConfig c;
  c.name = root.string_or("_name_or_path", root.string_or("model_type", "hf-config"));
  c.hidden_size = root.integer("hidden_size", 1, max_dimension);
  c.num_layers = root.integer("num_hidden_layers", 1, 1'000'000);
  c.vocab_size = root.integer_or("vocab_size", 0, 0, max_dimension);
  c.tie_embeddings = root.boolean_or("tie_word_embeddings", false);

  auto& a = c.attention;
  a.num_heads = root.integer("num_attention_heads", 1, max_dimension);
  a.num_kv_heads = root.integer_or("num_key_value_heads", a.num_heads, 1, max_dimension);
  if (root.has("head_dim")) {
    a.head_dim = root.integer("head_dim", 1, max_dimension);
  } else {
    if (c.hidden_size % a.num_heads != 0) {
      refuse("num_attention_heads", fmt::format("no head_dim given and hidden_size {} is not a multiple of "
                                                "num_attention_heads {}", c.hidden_size, a.num_heads));
    }
    a.head_dim = c.hidden_size / a.num_heads;
  }

  auto& f = c.ffn;
  f.gated = true;  // every family read here uses a gated (SwiGLU/GeGLU) MLP
  const char* expert_key = nullptr;
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (is_set(document, key)) {
      expert_key = key;
      break;
    }
  }
  if (expert_key == nullptr) {
    f.dense_dim = root.integer("intermediate_size", 1, max_dimension);
  } else {
    f.num_experts = root.integer(expert_key, 1, max_dimension);
    f.top_k = root.integer("num_experts_per_tok", 1, f.num_experts);
    f.expert_dim = root.has("moe_intermediate_size") ? root.integer("moe_intermediate_size", 1, max_dimension)
                                                     : root.integer("intermediate_size", 1, max_dimension);
    if (is_set(document, "n_shared_experts")) {  // DeepSeek-MoE: shared experts as wide as routed ones
      f.num_shared_experts = root.integer("n_shared_experts", 1, max_dimension);
      f.shared_expert_dim = f.expert_dim;
    } else if (is_set(document, "shared_expert_intermediate_size")) {  // Qwen-MoE: one wide shared expert
      f.num_shared_experts = 1;
      f.shared_expert_dim = root.integer("shared_expert_intermediate_size", 1, max_dimension);
    }
    if (is_set(document, "first_k_dense_replace")) {  // DeepSeek-MoE: leading dense layers
      f.first_dense_layers = root.integer("first_k_dense_replace", 0, c.num_layers);
      f.dense_dim = root.integer("intermediate_size", 1, max_dimension);
    }
  }
  // The loop key written by export (export.hpp, hf_loop_key); transformers ignores it.
  if (root.has(hf_loop_key)) {
    const ObjectReader loop = root.object(hf_loop_key);
    loop.reject_unknown_keys({"first", "last", "repeats"});
    LoopConfig l;
    l.first = loop.integer("first", 1, c.num_layers);
    l.last = loop.integer("last", 1, c.num_layers);
    l.repeats = loop.integer("repeats", 1, 1024);
    c.loop = l;
  }
  try {
    validate(c, source);
  } catch (const Error& e) {
    throw Error(e.message() + " (as read from the Hugging Face config; docs/config.md lists the key mapping)",
                source, e.path());
  }
  return c;
}

}  // namespace detail

ArchConfig parse_hf_config(std::string_view json_text, const std::string& source) {
  return detail::read_hf_config(detail::parse_json_text(json_text, source), source);
}

}  // namespace budget
