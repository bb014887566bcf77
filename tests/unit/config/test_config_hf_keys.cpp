// Hugging Face reading never guesses (config/config_hf.cpp, config/hf_families.cpp): the released
// configs of tests/data/hf/ and examples/hf/ mutated as a user or another tool might write them.
// A key that decides a count (found here by changing its value and watching the budgets, not
// from the reader's table) is, misspelt, an error naming it; removed, an error naming it, or read
// with a note naming it, or read exactly as transformers reads its absence (listed below with the
// transformers source). The three misreads of issue 17 are errors with a did-you-mean.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "budget/accounting.hpp"
#include "budget/config_hf.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"

using namespace budget;
using nlohmann::json;

namespace {
const std::string hf_data = std::string(BUDGET_TEST_DATA_DIR) + "/hf/";

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

/// The budgets that depend on the config, as one comparable tuple.
std::vector<double> fingerprint(const ArchConfig& c) {
  const Budgets b = account(c, paper_workload());
  return {b.training_flops_per_token,
          static_cast<double>(b.non_embedding_params_total),
          static_cast<double>(b.non_embedding_params_active),
          static_cast<double>(b.embedding_params),
          static_cast<double>(b.kv_elements_per_token),
          static_cast<double>(b.kv_window_elements_per_sequence),
          static_cast<double>(b.mtp_params)};
}

/// The outcome of reading `doc`: its budgets, or the error message.
struct Outcome {
  bool ok = false;
  std::vector<double> budgets;
  std::vector<std::string> notes;
  std::string error;
};
Outcome read(const json& doc) {
  Outcome o;
  try {
    const ArchConfig c = parse_hf_config(doc.dump(), "mutated.json");
    o.ok = true;
    o.budgets = fingerprint(c);
    o.notes = c.notes;
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

std::vector<std::string> released_files() {
  std::vector<std::string> files;
  for (const auto& dir : {hf_data, std::string(BUDGET_SOURCE_DIR) + "/examples/hf/"}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// The object holding the model's keys (the text model of a multimodal wrapper).
json& model_object(json& doc) { return doc.contains("text_config") ? doc["text_config"] : doc; }
const json& model_view(const json& doc) { return doc.contains("text_config") ? doc.at("text_config") : doc; }

/// A changed value of the same kind, or null where none is made (strings, arrays, null).
json changed(const json& v) {
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number_integer()) return v.get<std::int64_t>() == 0 ? json(1) : json(2 * v.get<std::int64_t>());
  return nullptr;
}

/// Keys whose change changes the budgets (or makes the file an error): the keys that decide a count.
std::vector<std::string> counting_keys_of(const json& doc) {
  const Outcome base = read(doc);
  REQUIRE(base.ok);
  std::vector<std::string> keys;
  for (const auto& [key, value] : model_view(doc).items()) {
    const json other = changed(value);
    if (other.is_null()) continue;
    json mutated = doc;
    model_object(mutated)[key] = other;
    const Outcome o = read(mutated);
    // A key the family does not read is refused when it matters ("... which this family's layers do
    // not have"); its absence and its typos are what transformers does too: it is not counted here.
    if (!o.ok && o.error.find("this family's layers do not have") != std::string::npos) continue;
    if (!o.ok || o.budgets != base.budgets) keys.push_back(key);
  }
  return keys;
}

/// Keys whose absence transformers reads as "feature off" or as a rule of other keys, checked in
/// the transformers config classes (commit 008e5743): sliding_window = None in MixtralConfig,
/// Phi3Config, PhimoeConfig; MistralConfig.__post_init__: head_dim = hidden_size // heads.
/// Llama4TextConfig (at 008e5743): interleave_moe_layer_step = 1 (MoE on every layer).
const std::set<std::pair<std::string, std::string>> absent_means_off{
    {"mixtral", "sliding_window"}, {"phi3", "sliding_window"}, {"phimoe", "sliding_window"}, {"mistral", "head_dim"},
    {"llama4_text", "interleave_moe_layer_step"}};
}  // namespace

TEST_CASE("hf keys: the three misreads of issue 17 are errors with a did-you-mean", "[config][hf][keys]") {
  const auto message_of = [](const std::string& file) {
    try {
      load_arch_config(hf_data + "mutated/" + file);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(read without an error)");
  };
  // Qwen3-30B-A3B with num_expert: was read as a dense model of 2.72 G non-embedding parameters.
  CHECK_THAT(message_of("qwen3-30b-a3b-num_expert.json"),
             Catch::Contains("/num_expert: unknown key \"num_expert\"") && Catch::Contains("did you mean \"num_experts\"?"));
  // with moe_intermediate: was read as 128 experts of width 6144 (intermediate_size).
  CHECK_THAT(message_of("qwen3-30b-a3b-moe_intermediate.json"),
             Catch::Contains("/moe_intermediate:") && Catch::Contains("did you mean \"moe_intermediate_size\"?"));
  // DeepSeek-V3 spelt as inference simulators do: was read as a dense 35.6 B model.
  CHECK_THAT(message_of("deepseek-v3-num_routed_experts.json"),
             Catch::Contains("is another spelling of \"n_routed_experts\"") &&
                 Catch::Contains("did you mean \"n_routed_experts\"?"));
}

TEST_CASE("hf keys: a misspelt counting key of any released config is an error naming it", "[config][hf][keys]") {
  std::size_t checked = 0;
  for (const auto& file : released_files()) {
    const json doc = read_json(file);
    for (const auto& key : counting_keys_of(doc)) {
      // Two slips each: the last letter dropped, and one letter doubled in the middle.
      const std::string dropped = key.substr(0, key.size() - 1);
      const std::string doubled = key.substr(0, key.size() / 2) + key[key.size() / 2] + key.substr(key.size() / 2);
      for (const auto& typo : {dropped, doubled}) {
        // A slip that spells another key of the file (Nemotron-H's n_groups dropped is its n_group,
        // the routing groups) is not a misspelling to catch.
        if (model_view(doc).contains(typo)) continue;
        INFO(file << ": " << key << " spelt " << typo);
        json mutated = doc;
        json& object = model_object(mutated);
        object[typo] = object.at(key);
        object.erase(key);
        const Outcome o = read(mutated);
        CHECK_FALSE(o.ok);
        CHECK_THAT(o.error, Catch::Contains("did you mean \"" + key + "\"?"));
        ++checked;
      }
    }
  }
  CHECK(checked > 200);
}

TEST_CASE("hf keys: a removed counting key is required, a said default, or transformers' own absence",
          "[config][hf][keys]") {
  std::map<std::string, int> outcomes;
  for (const auto& file : released_files()) {
    const json doc = read_json(file);
    const Outcome base = read(doc);
    const std::string family = model_view(doc).value("model_type", "");
    for (const auto& key : counting_keys_of(doc)) {
      INFO(file << ": " << key << " removed");
      json mutated = doc;
      model_object(mutated).erase(key);
      const Outcome o = read(mutated);
      if (!o.ok) {
        // Required, or a said default the config then fails validation with (the message says it).
        CHECK_THAT(o.error, Catch::Contains("/" + key + ": required key is missing") ||
                                Catch::Contains("taken for keys the file does not give: " + key + ": absent"));
        ++outcomes["required"];
      } else if (std::any_of(o.notes.begin(), o.notes.end(),
                             [&](const std::string& n) { return n.rfind(key + ": absent", 0) == 0; })) {
        ++outcomes["noted"];
      } else if (o.budgets == base.budgets) {
        ++outcomes["same"];
      } else {
        CHECK(absent_means_off.count({family, key}) == 1);
        ++outcomes["off"];
      }
    }
  }
  CHECK(outcomes["required"] > 50);
  CHECK(outcomes["noted"] > 10);
}

TEST_CASE("hf keys: a said default reads as the file with the default written in", "[config][hf][keys]") {
  // Qwen3-30B-A3B without attention_bias and num_key_value_heads: Qwen3MoeConfig's defaults are
  // attention_bias = False, num_key_value_heads = 4 (the released values too).
  const ArchConfig c = load_arch_config(hf_data + "mutated/qwen3-30b-a3b-no-attention-bias-no-kv-heads.json");
  const ArchConfig released = load_arch_config(hf_data + "qwen3-30b-a3b.json");
  CHECK(fingerprint(c) == fingerprint(released));
  REQUIRE(c.notes.size() == 2);
  CHECK_THAT(c.notes[0], Catch::StartsWith("num_key_value_heads: absent, taken as 4 (the default of transformers "
                                           "Qwen3MoeConfig"));
  CHECK_THAT(c.notes[1], Catch::StartsWith("attention_bias: absent, taken as false"));
  CHECK(released.notes.empty());
  // Mistral-7B without sliding_window: MistralConfig's default window is 4096 (the released value).
  json mistral = read_json(hf_data + "mistral-7b-v0.1.json");
  mistral.erase("sliding_window");
  const Outcome o = read(mistral);
  REQUIRE(o.ok);
  CHECK(o.budgets == fingerprint(load_arch_config(hf_data + "mistral-7b-v0.1.json")));
  CHECK(std::any_of(o.notes.begin(), o.notes.end(), [](const std::string& n) {
    return n.rfind("sliding_window: absent, taken as 4096 (the default of transformers MistralConfig", 0) == 0;
  }));
  // A rule, not a value: Llama without num_key_value_heads is multi-head (LlamaConfig: None → heads).
  json llama = read_json(hf_data + "llama-3.1-8b.json");
  llama.erase("num_key_value_heads");
  const ArchConfig mha = parse_hf_config(llama.dump(), "llama-mha.json");
  CHECK(mha.attention.num_kv_heads == 32);
  CHECK_THAT(mha.notes.at(0), Catch::StartsWith("num_key_value_heads: absent, taken as num_attention_heads"));
}

TEST_CASE("hf keys: an MoE family never reads a missing expert count as a dense model", "[config][hf][keys]") {
  for (const char* file : {"qwen3-30b-a3b.json", "olmoe-1b-7b-0924.json", "deepseek-v3.json", "deepseek-v2-lite.json",
                           "phi-3.5-moe.json", "granite-3.0-3b-a800m.json", "kimi-k2.json"}) {
    json doc = read_json(hf_data + file);
    for (const char* key : {"num_experts", "n_routed_experts", "num_local_experts"}) doc.erase(key);
    INFO(file);
    const Outcome o = read(doc);
    CHECK_FALSE(o.ok);
    CHECK_THAT(o.error, Catch::Contains("required key is missing: the family"));
  }
  // The transformers default is named where the family has a class, so the user sees what
  // transformers would have built instead.
  json qwen = read_json(hf_data + "qwen3-30b-a3b.json");
  qwen.erase("moe_intermediate_size");
  CHECK_THAT(read(qwen).error, Catch::Contains("Qwen3MoeConfig") && Catch::Contains("would take 768"));
}

TEST_CASE("hf keys: transformers' attribute_map spellings are read with a note, both given is an error",
          "[config][hf][keys]") {
  const ArchConfig alias = load_arch_config(hf_data + "mutated/mixtral-8x7b-num_experts-alias.json");
  const ArchConfig released = load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/examples/hf/mixtral-8x7b.json");
  CHECK(fingerprint(alias) == fingerprint(released));
  REQUIRE(alias.notes.size() == released.notes.size() + 1);
  CHECK_THAT(alias.notes[0], Catch::Contains("\"num_experts\" read as \"num_local_experts\""));
  json both = read_json(std::string(BUDGET_SOURCE_DIR) + "/examples/hf/mixtral-8x7b.json");
  both["num_experts"] = 4;
  CHECK_THAT(read(both).error, Catch::Contains("both \"num_experts\" and \"num_local_experts\" are given"));
  // Kimi-K2 has no transformers class: DeepseekV3Config's num_mtp_layers alias is not its own.
  json kimi = read_json(hf_data + "kimi-k2.json");
  kimi["num_mtp_layers"] = kimi["num_nextn_predict_layers"];
  kimi.erase("num_nextn_predict_layers");
  CHECK_THAT(read(kimi).error, Catch::Contains("did you mean \"num_nextn_predict_layers\"?"));
}

TEST_CASE("hf keys: keys no family counts and keys of other families keep their own treatment", "[config][hf][keys]") {
  // An unknown key far from every counting key is ignored, as transformers ignores it.
  json llama = read_json(hf_data + "llama-3.1-8b.json");
  llama["my_training_note"] = "run 7";
  CHECK(read(llama).ok);
  // A counting key of another family is refused as such, not as a typo.
  llama.erase("my_training_note");
  llama["v_head_dim"] = 128;
  CHECK_THAT(read(llama).error, Catch::Contains("sets multi-head latent attention, which this family's layers do not have"));
  // GPT-NeoX reads no num_key_value_heads (transformers ignores it): set, it is refused.
  json pythia = read_json(hf_data + "pythia-160m.json");
  pythia["num_key_value_heads"] = 4;
  CHECK_THAT(read(pythia).error, Catch::Contains("/num_key_value_heads: sets grouped-query attention"));
  // Qwen2-MoE's use_sliding_window applies to other layers in other transformers versions: refused.
  json qwen_moe = read_json(std::string(BUDGET_SOURCE_DIR) + "/examples/hf/qwen1.5-moe-a2.7b.json");
  qwen_moe["use_sliding_window"] = true;
  CHECK_THAT(read(qwen_moe).error, Catch::Contains("/use_sliding_window: use_sliding_window: true is not read"));
  // Qwen2-MoE's qkv_bias (Qwen2MoeConfig, default True) is read: false drops the q/k/v biases.
  qwen_moe["use_sliding_window"] = false;
  const Outcome with_bias = read(qwen_moe);
  qwen_moe["qkv_bias"] = false;
  const Outcome without = read(qwen_moe);
  REQUIRE(with_bias.ok);
  REQUIRE(without.ok);
  // 24 layers · 3 · 2048 biases.
  CHECK(with_bias.budgets[1] - without.budgets[1] == 24.0 * 3 * 2048);
}

TEST_CASE("hf keys: DeepSeek's scoring_func is read as the router score, and a value budget does not know is refused",
          "[config][hf]") {
  json doc = read_json(hf_data + "deepseek-v3.json");
  REQUIRE(doc.at("scoring_func") == "sigmoid");
  CHECK(parse_hf_config(doc.dump(), "v3.json").settings.router_score == RouterScore::sigmoid);
  doc["scoring_func"] = "softmax";
  CHECK(parse_hf_config(doc.dump(), "v3.json").settings.router_score == RouterScore::softmax);
  doc.erase("scoring_func");  // DeepseekV3Config's default
  CHECK(parse_hf_config(doc.dump(), "v3.json").settings.router_score == RouterScore::sigmoid);
  doc["scoring_func"] = "sigmoidd";  // once read silently as softmax
  const Outcome o = read(doc);
  CHECK_FALSE(o.ok);
  CHECK(o.error ==
        "mutated.json: /scoring_func: value \"sigmoidd\" is not allowed; allowed: \"softmax\", \"sigmoid\" (did you "
        "mean \"sigmoid\"?)");
  doc["scoring_func"] = 1;
  CHECK_FALSE(read(doc).ok);
}

TEST_CASE("hf keys: DeepSeek-V2's topk_method decides the router bias, a method it does not run is refused",
          "[config][hf]") {
  json doc = read_json(hf_data + "deepseek-v2.json");
  REQUIRE(doc.at("topk_method") == "group_limited_greedy");
  const ArchConfig grouped = parse_hf_config(doc.dump(), "v2.json");
  CHECK_FALSE(grouped.ffn.router_bias);
  doc["topk_method"] = "noaux_tc";
  const ArchConfig biased = parse_hf_config(doc.dump(), "v2.json");
  CHECK(biased.ffn.router_bias);
  // e_score_correction_bias: E = 160 parameters in each of the 59 MoE layers.
  CHECK(account(biased, paper_workload()).non_embedding_params_total -
            account(grouped, paper_workload()).non_embedding_params_total ==
        59 * 160);
  doc["topk_method"] = "greedy";
  CHECK_FALSE(parse_hf_config(doc.dump(), "v2.json").ffn.router_bias);
  doc["topk_method"] = nullptr;  // as absent: DeepseekV2Config's greedy
  CHECK_FALSE(parse_hf_config(doc.dump(), "v2.json").ffn.router_bias);
  doc["topk_method"] = "noaux_tcc";  // once read silently as no bias
  const Outcome o = read(doc);
  CHECK_FALSE(o.ok);
  CHECK(o.error.find("mutated.json: /topk_method: routing method \"noaux_tcc\" is not one DeepSeek-V2 runs; allowed: "
                     "greedy, group_limited_greedy, noaux_tc") == 0);
  doc["topk_method"] = 3;
  CHECK_FALSE(read(doc).ok);
}

TEST_CASE("hf keys: norm_topk_prob is a boolean or refused, never dropped", "[config][hf]") {
  json doc = read_json(hf_data + "qwen3-30b-a3b.json");
  REQUIRE(doc.at("norm_topk_prob") == true);
  CHECK(parse_hf_config(doc.dump(), "q.json").settings.router_normalize_top_k == true);
  doc["norm_topk_prob"] = false;
  CHECK(parse_hf_config(doc.dump(), "q.json").settings.router_normalize_top_k == false);
  doc["norm_topk_prob"] = "true";  // once ignored, leaving the default
  const Outcome o = read(doc);
  CHECK_FALSE(o.ok);
  CHECK(o.error == "mutated.json: /norm_topk_prob: value \"true\" is not allowed; allowed: true or false");
  doc["norm_topk_prob"] = 1;
  CHECK_FALSE(read(doc).ok);
}

TEST_CASE("hf keys: rope_parameters is an object or refused, never dropped", "[config][hf]") {
  json doc = read_json(hf_data + "qwen3-8b.json");
  doc.erase("rope_theta");
  doc["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 1e6}};
  const ArchConfig c = parse_hf_config(doc.dump(), "q.json");
  REQUIRE(c.settings.rope_theta);
  CHECK(*c.settings.rope_theta == 1e6);
  doc["rope_parameters"] = nullptr;  // as absent
  CHECK(read(doc).ok);
  doc["rope_parameters"] = 1e6;  // once ignored
  const Outcome o = read(doc);
  CHECK_FALSE(o.ok);
  CHECK(o.error.find("mutated.json: /rope_parameters: value 1000000") == 0);
}
