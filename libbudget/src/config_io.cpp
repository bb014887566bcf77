#include "budget/config_io.hpp"

#include <string>

#include "budget/error.hpp"
#include "config_hf_json.hpp"
#include "config_json.hpp"
#include "json_reader.hpp"

namespace budget {
namespace detail {

ArchConfig read_arch_config(const nlohmann::json& object, const std::string& source,
                            const std::string& pointer) {
  ObjectReader root(object, source, pointer);
  root.reject_unknown_keys({"name", "hidden_size", "num_layers", "vocab_size", "tie_embeddings",
                            "attention", "ffn", "loop"});
  ArchConfig c;
  c.name = root.string_or("name", "");
  c.hidden_size = root.integer("hidden_size", 1, max_dimension);
  c.num_layers = root.integer("num_layers", 1, 1'000'000);
  c.vocab_size = root.integer_or("vocab_size", 0, 0, max_dimension);
  c.tie_embeddings = root.boolean_or("tie_embeddings", false);

  const ObjectReader attention = root.object("attention");
  attention.reject_unknown_keys({"num_heads", "head_dim", "num_kv_heads"});
  c.attention.num_heads = attention.integer("num_heads", 1, max_dimension);
  c.attention.head_dim = attention.integer("head_dim", 1, max_dimension);
  // Absent num_kv_heads means plain multi-head attention (one KV head per query head).
  c.attention.num_kv_heads = attention.integer_or("num_kv_heads", c.attention.num_heads, 1, max_dimension);

  const ObjectReader ffn = root.object("ffn");
  ffn.reject_unknown_keys({"num_experts", "top_k", "expert_dim", "gated", "num_shared_experts",
                           "shared_expert_dim", "first_dense_layers", "dense_dim"});
  auto& f = c.ffn;
  f.num_experts = ffn.integer_or("num_experts", 0, 0, max_dimension);
  if (f.is_moe()) {
    f.top_k = ffn.integer("top_k", 1, max_dimension);
    f.expert_dim = ffn.integer("expert_dim", 1, max_dimension);
  } else {
    f.top_k = ffn.integer_or("top_k", 0, 0, max_dimension);
    f.expert_dim = ffn.integer_or("expert_dim", 0, 0, max_dimension);
  }
  f.gated = ffn.boolean_or("gated", true);
  f.num_shared_experts = ffn.integer_or("num_shared_experts", 0, 0, max_dimension);
  f.shared_expert_dim = ffn.integer_or("shared_expert_dim", 0, 0, max_dimension);
  f.first_dense_layers = ffn.integer_or("first_dense_layers", 0, 0, c.num_layers);
  f.dense_dim = ffn.integer_or("dense_dim", 0, 0, max_dimension);

  if (root.has("loop")) {
    const ObjectReader loop = root.object("loop");
    loop.reject_unknown_keys({"first", "last", "repeats", "span_fraction"});
    const std::int64_t repeats = loop.integer_or("repeats", 2, 1, 1024);
    if (loop.has("span_fraction")) {
      if (loop.has("first") || loop.has("last")) {
        loop.fail("span_fraction", "give either span_fraction or first/last, not both");
      }
      const double fraction = loop.number("span_fraction", 0.0, 1.0);
      try {
        c.loop = centred_loop(c.num_layers, fraction, repeats);
      } catch (const Error& e) {
        throw Error(e.message(), source, pointer + e.path());
      }
    } else {
      LoopConfig l;
      l.first = loop.integer("first", 1, c.num_layers);
      l.last = loop.integer("last", 1, c.num_layers);
      l.repeats = repeats;
      c.loop = l;
    }
  }

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
  j["attention"] = nlohmann::ordered_json{{"num_heads", c.attention.num_heads},
                    {"head_dim", c.attention.head_dim},
                    {"num_kv_heads", c.attention.num_kv_heads}};
  j["ffn"] = nlohmann::ordered_json{{"num_experts", c.ffn.num_experts},
              {"top_k", c.ffn.top_k},
              {"expert_dim", c.ffn.expert_dim},
              {"gated", c.ffn.gated},
              {"num_shared_experts", c.ffn.num_shared_experts},
              {"shared_expert_dim", c.ffn.shared_expert_dim},
              {"first_dense_layers", c.ffn.first_dense_layers},
              {"dense_dim", c.ffn.dense_dim}};
  if (c.loop) {
    j["loop"] = nlohmann::ordered_json{{"first", c.loop->first}, {"last", c.loop->last}, {"repeats", c.loop->repeats}};
  }
  return j;
}

}  // namespace detail

ArchConfig parse_arch_config(std::string_view json_text, const std::string& source) {
  const nlohmann::json document = detail::parse_json_text(json_text, source);
  if (detail::looks_like_hf_config(document)) return detail::read_hf_config(document, source);
  return detail::read_arch_config(document, source, "");
}

ArchConfig load_arch_config(const std::string& path) {
  return parse_arch_config(detail::read_text_file(path), path);
}

std::string arch_config_to_json(const ArchConfig& config, int indent) {
  return detail::arch_config_json(config).dump(indent);
}

}  // namespace budget
