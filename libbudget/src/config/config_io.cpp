#include "budget/config_io.hpp"

#include <optional>
#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "config/config_hf_json.hpp"
#include "config/config_names.hpp"
#include "config/config_json.hpp"
#include "config/config_layers_json.hpp"
#include "config/rope_scaling_json.hpp"
#include "base/json_reader.hpp"

namespace budget {
namespace detail {

namespace {

ModelSettings read_model_settings(const ObjectReader& settings) {
  settings.reject_unknown_keys(
      {"rope_theta", "norm_epsilon", "max_position_embeddings", "router_score", "router_normalize_top_k",
       "rope_scaling", "partial_rotary_factor", "nope_layers", "router_scaling_factor",
                               "router_groups"});
  ModelSettings s;
  if (settings.has("rope_theta")) s.rope_theta = settings.number("rope_theta", 1e-6, 1e15);
  if (settings.has("norm_epsilon")) s.norm_epsilon = settings.number("norm_epsilon", 1e-30, 0.5);
  s.max_position_embeddings = settings.integer_or("max_position_embeddings", 0, 0, std::int64_t{1} << 40);
  if (settings.has("router_score")) {
    s.router_score = settings.enum_or("router_score", RouterScore::softmax, router_score_names);
  }
  if (settings.has("router_normalize_top_k")) {
    if (!settings.raw("router_normalize_top_k").is_boolean()) {
      settings.fail("router_normalize_top_k", "expected true or false");
    }
    s.router_normalize_top_k = settings.raw("router_normalize_top_k").get<bool>();
  }
  if (settings.has("rope_scaling")) s.rope_scaling = read_rope_scaling(settings.object("rope_scaling"), nullptr);
  read_rope_layout_settings(settings, s);
  if (settings.has("router_scaling_factor")) s.router_scaling_factor = settings.number("router_scaling_factor", 1e-6, 1e6);
  if (settings.has("router_groups")) {
    // Each count checked against the experts by validate() (/settings/router_groups/...).
    const ObjectReader g = settings.object("router_groups");
    g.reject_unknown_keys({"groups", "top_groups", "score_top"});
    s.router_groups = RouterGroups{g.integer("groups", 2, max_dimension), g.integer("top_groups", 1, max_dimension),
                                   g.integer("score_top", 1, max_dimension)};
  }
  return s;
}

nlohmann::ordered_json model_settings_json(const ModelSettings& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (s.rope_theta) j["rope_theta"] = *s.rope_theta;
  if (s.norm_epsilon) j["norm_epsilon"] = *s.norm_epsilon;
  if (s.max_position_embeddings > 0) j["max_position_embeddings"] = s.max_position_embeddings;
  if (s.router_score) j["router_score"] = std::string(to_string(*s.router_score));
  if (s.router_normalize_top_k) j["router_normalize_top_k"] = *s.router_normalize_top_k;
  if (s.rope_scaling) j["rope_scaling"] = rope_scaling_json(*s.rope_scaling, "type");
  write_rope_layout_settings(s, j);
  if (s.router_scaling_factor) j["router_scaling_factor"] = *s.router_scaling_factor;
  if (s.router_groups) {
    j["router_groups"] = {{"groups", s.router_groups->groups}, {"top_groups", s.router_groups->top_groups},
                          {"score_top", s.router_groups->score_top}};
  }
  return j;
}

// The readers below fill one section of an ArchConfig each. read_arch_config() calls them in the
// order the keys were always read (top level, attention, ffn, loop, settings, then validate()), so
// the first error found, and its message, are those of the single reader they replace.

// Top-level scalar keys (and the check for unknown top-level keys), in reading order.
void read_arch_top_level(const ObjectReader& root, ArchConfig& c) {
  root.reject_unknown_keys({"name", "hidden_size", "num_layers", "vocab_size", "tie_embeddings", "lm_head_bias",
                            "norm", "mtp_layers", "attention", "ffn", "loop", "settings", "layer_mixers",
                            "layer_ffns", "linear_attention", "mamba"});
  c.name = root.string_or("name", "");
  c.hidden_size = root.integer("hidden_size", 1, max_dimension);
  c.num_layers = root.integer("num_layers", 1, 1'000'000);
  c.vocab_size = root.integer_or("vocab_size", 0, 0, max_dimension);
  c.tie_embeddings = root.boolean_or("tie_embeddings", false);
  c.lm_head_bias = root.boolean_or("lm_head_bias", false);
  c.norm = root.enum_or("norm", NormKind::rmsnorm, norm_kind_names);
  c.mtp_layers = root.integer_or("mtp_layers", 0, 0, 1024);
}

// attention.mla (all five keys; head_dim and num_kv_heads of the attention are read by the caller).
MlaConfig read_arch_mla(const ObjectReader& mla) {
  mla.reject_unknown_keys({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  MlaConfig m;
  m.q_lora_rank = mla.integer_or("q_lora_rank", 0, 0, max_dimension);
  m.kv_lora_rank = mla.integer("kv_lora_rank", 1, max_dimension);
  m.qk_nope_head_dim = mla.integer("qk_nope_head_dim", 0, max_dimension);
  m.qk_rope_head_dim = mla.integer("qk_rope_head_dim", 0, max_dimension);
  m.v_head_dim = mla.integer("v_head_dim", 1, max_dimension);
  return m;
}

// The "attention" object.
void read_arch_attention(const ObjectReader& attention, AttentionConfig& a) {
  attention.reject_unknown_keys({"num_heads", "head_dim", "num_kv_heads", "mla", "qkv_bias", "output_bias",
                                 "qk_norm", "sliding_window", "layer_types", "chunk_size", "sinks", "output_gate",
                                 "indexer"});
  a.num_heads = attention.integer("num_heads", 1, max_dimension);
  if (attention.has("mla")) {
    const MlaConfig m = read_arch_mla(attention.object("mla"));
    a.mla = m;
    // head_dim and num_kv_heads follow from MLA (validate() checks values given explicitly).
    a.head_dim = attention.integer_or("head_dim", m.qk_head_dim(), 1, max_dimension);
    a.num_kv_heads = attention.integer_or("num_kv_heads", 1, 1, max_dimension);
  } else {
    a.head_dim = attention.integer("head_dim", 1, max_dimension);
    // Absent num_kv_heads means plain multi-head attention (one KV head per query head).
    a.num_kv_heads = attention.integer_or("num_kv_heads", a.num_heads, 1, max_dimension);
  }
  a.qkv_bias = attention.boolean_or("qkv_bias", false);
  a.output_bias = attention.boolean_or("output_bias", false);
  a.qk_norm = attention.enum_or("qk_norm", QkNorm::none, qk_norm_names);
  a.sliding_window = attention.integer_or("sliding_window", 0, 0, max_dimension);
  read_attention_features(attention, a);
}

// The "ffn" object; first_dense_layers is bounded by num_layers (read before).
void read_arch_ffn(const ObjectReader& ffn, std::int64_t num_layers, FfnConfig& f) {
  ffn.reject_unknown_keys({"num_experts", "top_k", "expert_dim", "gated", "bias", "router_bias",
                           "shared_expert_gate", "num_shared_experts", "shared_expert_dim", "first_dense_layers",
                           "dense_dim"});
  f.num_experts = ffn.integer_or("num_experts", 0, 0, max_dimension);
  if (f.is_moe()) {
    f.top_k = ffn.integer("top_k", 1, max_dimension);
    f.expert_dim = ffn.integer("expert_dim", 1, max_dimension);
  } else {
    f.top_k = ffn.integer_or("top_k", 0, 0, max_dimension);
    f.expert_dim = ffn.integer_or("expert_dim", 0, 0, max_dimension);
  }
  f.gated = ffn.boolean_or("gated", true);
  f.bias = ffn.boolean_or("bias", false);
  f.router_bias = ffn.boolean_or("router_bias", false);
  f.shared_expert_gate = ffn.boolean_or("shared_expert_gate", false);
  f.num_shared_experts = ffn.integer_or("num_shared_experts", 0, 0, max_dimension);
  f.shared_expert_dim = ffn.integer_or("shared_expert_dim", 0, 0, max_dimension);
  f.first_dense_layers = ffn.integer_or("first_dense_layers", 0, 0, num_layers);
  f.dense_dim = ffn.integer_or("dense_dim", 0, 0, max_dimension);
}

// The "loop" object: repeats, then either span_fraction (a loop centred in the stack, via
// centred_loop(), whose errors are re-rooted below `pointer`) or first/last (1-based layers).
LoopConfig read_arch_loop(const ObjectReader& loop, std::int64_t num_layers, const std::string& source,
                          const std::string& pointer) {
  loop.reject_unknown_keys({"first", "last", "repeats", "span_fraction"});
  const std::int64_t repeats = loop.integer_or("repeats", 2, 1, 1024);
  if (loop.has("span_fraction")) {
    if (loop.has("first") || loop.has("last")) {
      loop.fail("span_fraction", "give either span_fraction or first/last, not both");
    }
    const double fraction = loop.number("span_fraction", 0.0, 1.0);
    try {
      return centred_loop(num_layers, fraction, repeats);
    } catch (const Error& e) {
      throw Error(e.message(), source, pointer + e.path());
    }
  }
  LoopConfig l;
  l.first = loop.integer("first", 1, num_layers);
  l.last = loop.integer("last", 1, num_layers);
  l.repeats = repeats;
  return l;
}

}  // namespace

ArchConfig read_arch_config(const nlohmann::json& object, const std::string& source,
                            const std::string& pointer) {
  ObjectReader root(object, source, pointer);
  ArchConfig c;
  read_arch_top_level(root, c);
  read_arch_attention(root.object("attention"), c.attention);
  read_arch_ffn(root.object("ffn"), c.num_layers, c.ffn);
  read_layer_kinds(root, c);
  if (root.has("loop")) c.loop = read_arch_loop(root.object("loop"), c.num_layers, source, pointer);
  if (root.has("settings")) c.settings = read_model_settings(root.object("settings"));

  try {
    validate(c, source);
  } catch (const Error& e) {
    // validate() reports whole-config faults at "/"; below `pointer` that is the object itself.
    std::string path = pointer + (e.path() == "/" ? "" : e.path());
    if (path.empty()) path = "/";
    throw Error(e.message(), source, path);
  }
  return c;
}

nlohmann::ordered_json arch_config_json(const ArchConfig& c) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["hidden_size"] = c.hidden_size;
  j["num_layers"] = c.num_layers;
  j["vocab_size"] = c.vocab_size;
  j["tie_embeddings"] = c.tie_embeddings;
  // Keys added for the Hugging Face families are written only when they differ from their defaults,
  // so configs that do not use them are written as before.
  if (c.lm_head_bias) j["lm_head_bias"] = true;
  if (c.norm != NormKind::rmsnorm) j["norm"] = std::string(to_string(c.norm));
  if (c.mtp_layers > 0) j["mtp_layers"] = c.mtp_layers;
  const auto& a = c.attention;
  nlohmann::ordered_json attention{{"num_heads", a.num_heads}, {"head_dim", a.head_dim},
                                   {"num_kv_heads", a.num_kv_heads}};
  if (a.mla) {
    attention["mla"] = nlohmann::ordered_json{{"q_lora_rank", a.mla->q_lora_rank},
                                              {"kv_lora_rank", a.mla->kv_lora_rank},
                                              {"qk_nope_head_dim", a.mla->qk_nope_head_dim},
                                              {"qk_rope_head_dim", a.mla->qk_rope_head_dim},
                                              {"v_head_dim", a.mla->v_head_dim}};
  }
  if (a.qkv_bias) attention["qkv_bias"] = true;
  if (a.output_bias) attention["output_bias"] = true;
  if (a.qk_norm != QkNorm::none) attention["qk_norm"] = std::string(to_string(a.qk_norm));
  if (a.sliding_window > 0) attention["sliding_window"] = a.sliding_window;
  write_attention_features(a, attention);
  j["attention"] = attention;
  nlohmann::ordered_json ffn{{"num_experts", c.ffn.num_experts},
                             {"top_k", c.ffn.top_k},
                             {"expert_dim", c.ffn.expert_dim},
                             {"gated", c.ffn.gated}};
  if (c.ffn.bias) ffn["bias"] = true;
  if (c.ffn.router_bias) ffn["router_bias"] = true;
  if (c.ffn.shared_expert_gate) ffn["shared_expert_gate"] = true;
  ffn["num_shared_experts"] = c.ffn.num_shared_experts;
  ffn["shared_expert_dim"] = c.ffn.shared_expert_dim;
  ffn["first_dense_layers"] = c.ffn.first_dense_layers;
  ffn["dense_dim"] = c.ffn.dense_dim;
  j["ffn"] = ffn;
  write_layer_kinds(c, j);
  if (c.loop) {
    j["loop"] = nlohmann::ordered_json{{"first", c.loop->first}, {"last", c.loop->last}, {"repeats", c.loop->repeats}};
  }
  // Written only when the input gave some: configs without settings are written as before.
  if (nlohmann::ordered_json settings = model_settings_json(c.settings); !settings.empty()) {
    j["settings"] = std::move(settings);
  }
  return j;
}

}  // namespace detail

namespace detail {

ReadConfig read_config_text(std::string_view json_text, const std::string& source) {
  nlohmann::json document;
  try {
    document = parse_json_text(json_text, source);
  } catch (const Error&) {
    // A Hugging Face config may hold Python's non-finite numbers (Infinity, NaN); nothing else may.
    if (auto hf = read_hf_config_with_python_nonfinite(json_text, source)) return {*std::move(hf), true};
    throw;
  }
  if (looks_like_hf_config(document)) return {read_hf_config(document, source), true};
  return {read_arch_config(document, source, ""), false};
}

}  // namespace detail

ArchConfig parse_arch_config(std::string_view json_text, const std::string& source) {
  return detail::read_config_text(json_text, source).config;
}

ArchConfig load_arch_config(const std::string& path) {
  return parse_arch_config(detail::read_text_file(path), path);
}

std::string arch_config_to_json(const ArchConfig& config, int indent) {
  return detail::arch_config_json(config).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace budget
