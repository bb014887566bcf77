// Export to Hugging Face / Megatron-LM / torchtitan (budget/export.hpp). References: the exact
// Megatron argument list of the paper's 200M pair (shapes from examples/configs, flags from
// docs/export.md), and round trips import → export hf → import giving identical budgets for every
// family the Hugging Face reader supports (Llama, Mixtral, Qwen-MoE, OLMoE, DeepSeek-MoE).

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "budget/accounting.hpp"
#include "budget/config_hf.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/match.hpp"

using namespace budget;

namespace {
const std::string source_dir = BUDGET_SOURCE_DIR;

/// Published config.json values (Meta's Llama-3.2-1B and AllenAI's OLMoE-1B-7B-0924), the keys
/// that matter plus a few the export must keep untouched.
const std::string llama_json = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
  "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
  "head_dim": 64, "intermediate_size": 8192, "vocab_size": 128256, "tie_word_embeddings": true,
  "rope_theta": 500000.0, "rope_scaling": {"factor": 32.0, "rope_type": "llama3"}, "torch_dtype": "bfloat16"})";
const std::string olmoe_json = R"({
  "architectures": ["OlmoeForCausalLM"], "model_type": "olmoe", "hidden_act": "silu",
  "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 16,
  "intermediate_size": 1024, "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304,
  "tie_word_embeddings": false, "rope_theta": 10000.0, "router_aux_loss_coef": 0.01})";

struct Family {
  std::string name;
  std::string text;
};

std::vector<Family> hf_families() {
  std::vector<Family> out{{"llama", llama_json}, {"olmoe", olmoe_json}};
  for (const char* file : {"mixtral-8x7b.json", "qwen1.5-moe-a2.7b.json", "deepseek-moe-16b.json"}) {
    const std::string path = source_dir + "/examples/hf/" + file;
    std::ifstream in(path);
    REQUIRE(in);
    out.push_back({file, std::string(std::istreambuf_iterator<char>(in), {})});
  }
  return out;
}

/// Every budget the accounting reports that depends on the config.
void check_same_budgets(const ArchConfig& a, const ArchConfig& b) {
  const Budgets x = account(a, paper_workload());
  const Budgets y = account(b, paper_workload());
  CHECK(x.training_flops_per_token == y.training_flops_per_token);
  CHECK(x.non_embedding_params_total == y.non_embedding_params_total);
  CHECK(x.non_embedding_params_active == y.non_embedding_params_active);
  CHECK(x.embedding_params == y.embedding_params);
  CHECK(x.kv_elements_per_token == y.kv_elements_per_token);
  CHECK(x.executed_layers == y.executed_layers);
  CHECK(x.physical_layers == y.physical_layers);
  CHECK(x.sparsity == y.sparsity);
}

ExportOptions with_template(const std::string& text) {
  ExportOptions o;
  o.hf_template = text;
  o.hf_template_source = "template";
  return o;
}

ArchConfig best_match(const ArchConfig& base) {
  const MatchResult r = match(base, LoopSpec{}, paper_workload(), default_constraints(base), 1);
  REQUIRE(r.summary.feasible);
  return r.candidates.front().config;
}
}  // namespace

TEST_CASE("export: Megatron-LM arguments of the paper's 200M baseline, exactly", "[export][megatron]") {
  const ArchConfig base = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-baseline.json");
  const ExportedConfig e = export_config(base, ExportTarget::megatron);
  // 192 experts of width 432, top 8; GQA 10 heads × 128, 2 KV groups; vocab_size 0 (not modelled).
  CHECK(e.text ==
        "# Megatron-LM model arguments for paper-200M-S95-baseline (budget-match export; docs/export.md)\n"
        "# NOT EXPRESSED: vocab_size is 0 (embeddings not modelled): add --vocab-size or a tokenizer\n"
        "--num-layers 12\n--hidden-size 1280\n--ffn-hidden-size 432\n--num-attention-heads 10\n"
        "--group-query-attention\n--num-query-groups 2\n--kv-channels 128\n--swiglu\n--disable-bias-linear\n"
        "--normalization RMSNorm\n--position-embedding-type rope\n--untie-embeddings-and-output-weights\n"
        "--num-experts 192\n--moe-router-topk 8\n--moe-ffn-hidden-size 432\n");
  REQUIRE(e.not_expressed.size() == 1);
}

TEST_CASE("export: Megatron-LM arguments of the paper's matched 200M configs, loop stated", "[export][megatron]") {
  const ArchConfig paper = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-smelt.json");
  const ExportedConfig e = export_config(paper, ExportTarget::megatron);
  CHECK(e.text ==
        "# Megatron-LM model arguments for paper-200M-S95-smelt (budget-match export; docs/export.md)\n"
        "# NOT EXPRESSED: vocab_size is 0 (embeddings not modelled): add --vocab-size or a tokenizer\n"
        "# NOT EXPRESSED: the loop (layers 4-9 run 2 times in a row with shared weights (18 executed layers from 12 "
        "stored)): Megatron-LM has no weight-shared layer loop; these arguments build the 12 stored layers unlooped, "
        "so its FLOPs and KV cache are those of 12 layers, not 18\n"
        "--num-layers 12\n--hidden-size 1056\n--ffn-hidden-size 352\n--num-attention-heads 12\n"
        "--group-query-attention\n--num-query-groups 2\n--kv-channels 88\n--swiglu\n--disable-bias-linear\n"
        "--normalization RMSNorm\n--position-embedding-type rope\n--untie-embeddings-and-output-weights\n"
        "--num-experts 288\n--moe-router-topk 8\n--moe-ffn-hidden-size 352\n");
  CHECK(e.not_expressed.size() == 2);

  // budget's own match of the baseline (README: 1008, 12×84 KV 2, 288×368 top 8, loop 4–9 ×2).
  const ArchConfig base = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-baseline.json");
  const ArchConfig matched = best_match(base);
  REQUIRE(matched.hidden_size == 1008);
  REQUIRE(matched.attention.num_heads == 12);
  REQUIRE(matched.attention.head_dim == 84);
  REQUIRE(matched.ffn.num_experts == 288);
  REQUIRE(matched.ffn.expert_dim == 368);
  const std::string text = export_config(matched, ExportTarget::megatron).text;
  const std::string args = text.substr(text.find("\n--") + 1);
  CHECK(args ==
        "--num-layers 12\n--hidden-size 1008\n--ffn-hidden-size 368\n--num-attention-heads 12\n"
        "--group-query-attention\n--num-query-groups 2\n--kv-channels 84\n--swiglu\n--disable-bias-linear\n"
        "--normalization RMSNorm\n--position-embedding-type rope\n--untie-embeddings-and-output-weights\n"
        "--num-experts 288\n--moe-router-topk 8\n--moe-ffn-hidden-size 368\n");
}

TEST_CASE("export: Megatron-LM shared experts, leading dense layers, plain MLP, vocab", "[export][megatron]") {
  const ArchConfig deepseek = load_arch_config(source_dir + "/examples/hf/deepseek-moe-16b.json");
  const std::string text = export_config(deepseek, ExportTarget::megatron).text;
  // 2 shared experts of width 1408 = one Megatron shared MLP of 2816; first layer dense (10944).
  CHECK(text.find("--ffn-hidden-size 10944\n") != std::string::npos);
  CHECK(text.find("--moe-shared-expert-intermediate-size 2816\n") != std::string::npos);
  CHECK(text.find("--moe-layer-freq '([0]*1+[1]*27)'\n") != std::string::npos);
  CHECK(text.find("--vocab-size 102400\n") != std::string::npos);
  CHECK(text.find("NOT EXPRESSED") == std::string::npos);
  ArchConfig plain = deepseek;
  plain.ffn.gated = false;
  plain.attention.num_kv_heads = plain.attention.num_heads;
  plain.tie_embeddings = true;
  const std::string plain_text = export_config(plain, ExportTarget::megatron).text;
  CHECK(plain_text.find("--swiglu") == std::string::npos);
  CHECK(plain_text.find("--group-query-attention") == std::string::npos);
  CHECK(plain_text.find("--untie-embeddings") == std::string::npos);
}

TEST_CASE("export: torchtitan model args of the paper's 200M pair", "[export][torchtitan]") {
  const ArchConfig paper = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-smelt.json");
  const ExportedConfig e = export_config(paper, ExportTarget::torchtitan);
  const auto j = nlohmann::json::parse(e.text);
  CHECK(j.at("model") == "qwen3");
  const auto& a = j.at("model_args");
  CHECK(a.at("dim") == 1056);
  CHECK(a.at("n_layers") == 12);
  CHECK(a.at("n_heads") == 12);
  CHECK(a.at("n_kv_heads") == 2);
  CHECK(a.at("head_dim") == 88);
  CHECK(a.at("moe_enabled") == true);
  CHECK(a.at("moe_inter_dim") == 352);
  CHECK(a.at("qk_norm") == false);
  CHECK(a.at("moe_args") == nlohmann::json{{"num_experts", 288}, {"num_shared_experts", 0}, {"top_k", 8}});
  CHECK_FALSE(a.contains("vocab_size"));
  REQUIRE(j.at("not_expressed").size() == 2);
  CHECK(j.at("not_expressed").at(1).get<std::string>().rfind("the loop (layers 4-9 run 2 times", 0) == 0);
  CHECK(e.not_expressed == j.at("not_expressed").get<std::vector<std::string>>());

  ArchConfig qwen = load_arch_config(source_dir + "/examples/hf/qwen1.5-moe-a2.7b.json");
  // Qwen1.5-MoE has q/k/v biases and a shared-expert gate, which torchtitan's qwen3 model lacks:
  // refused by name. Without them, one shared expert of 5632 = 4 routed-width (1408) experts.
  CHECK_THROWS_WITH(export_config(qwen, ExportTarget::torchtitan), Catch::Contains("/attention/qkv_bias"));
  qwen.attention.qkv_bias = false;
  qwen.ffn.shared_expert_gate = false;
  CHECK(nlohmann::json::parse(export_config(qwen, ExportTarget::torchtitan).text)
            .at("model_args").at("moe_args").at("num_shared_experts") == 4);
  const ArchConfig deepseek = load_arch_config(source_dir + "/examples/hf/deepseek-moe-16b.json");
  CHECK_THROWS_WITH(export_config(deepseek, ExportTarget::torchtitan), Catch::Contains("first_dense_layers"));
}

TEST_CASE("export: hf round trip with the original file as template, every family", "[export][hf]") {
  for (const Family& family : hf_families()) {
    INFO(family.name);
    const SourcedConfig in = parse_sourced_config(family.text, family.name);
    REQUIRE(in.hf_text == family.text);
    // Unchanged config: the same document back (tie_word_embeddings made explicit).
    const ExportedConfig same = export_config(in.config, ExportTarget::hf, with_template(in.hf_text));
    CHECK(same.not_expressed.empty());
    auto original = nlohmann::json::parse(family.text);
    if (!original.contains("tie_word_embeddings")) original["tie_word_embeddings"] = false;
    CHECK(nlohmann::json::parse(same.text) == original);
    check_same_budgets(parse_hf_config(same.text, "export"), in.config);

    // A matched, looped config: shapes change, the loop travels in budget_loop, the rest is kept.
    ArchConfig matched = best_match(in.config);
    REQUIRE(matched.loop.has_value());
    if (matched.ffn.num_shared_experts > 0 && nlohmann::json::parse(family.text).contains("n_shared_experts") &&
        matched.ffn.shared_expert_dim % matched.ffn.expert_dim != 0) {
      // DeepSeek spells shared experts as a count of routed-width experts: a match whose shared
      // width differs is refused, and one with the widths tied exports.
      CHECK_THROWS_WITH(export_config(matched, ExportTarget::hf, with_template(in.hf_text)),
                        Catch::Contains("not a whole number of routed-width"));
      MatchConstraints tied = default_constraints(in.config);
      tied.expert_dim = VariableRange::fixed(in.config.ffn.expert_dim);
      tied.shared_expert_dim = VariableRange::fixed(in.config.ffn.shared_expert_dim);
      const MatchResult r = match(in.config, LoopSpec{}, paper_workload(), tied, 1);
      REQUIRE(r.summary.feasible);
      matched = r.candidates.front().config;
    }
    const ExportedConfig looped = export_config(matched, ExportTarget::hf, with_template(in.hf_text));
    const auto doc = nlohmann::json::parse(looped.text);
    for (const auto& [key, value] : original.items()) {
      if (key == "rope_theta" || key == "model_type" || key == "architectures" || key == "rope_scaling") {
        CHECK(doc.at(key) == value);
      }
    }
    CHECK(doc.at("budget_loop") ==
          nlohmann::json{{"first", matched.loop->first}, {"last", matched.loop->last}, {"repeats", matched.loop->repeats}});
    REQUIRE(looped.not_expressed.size() == 1);
    const ArchConfig back = parse_hf_config(looped.text, "export");
    REQUIRE(back.loop.has_value());
    CHECK(back.loop->first == matched.loop->first);
    check_same_budgets(back, matched);

    // And without a template: a fresh config.json of the family that holds the config, or a
    // refusal naming why no fresh family can (OLMoE's full-width q/k norms): never other budgets.
    try {
      const ExportedConfig fresh = export_config(matched, ExportTarget::hf);
      check_same_budgets(parse_hf_config(fresh.text, "fresh"), matched);
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Catch::Contains("no Hugging Face family written here can express the config"));
      CHECK(matched.attention.qk_norm != QkNorm::none);
    }
  }
}

TEST_CASE("export: hf from native configs picks Llama, Mixtral, Qwen2-MoE or DeepSeek", "[export][hf]") {
  ArchConfig c = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-smelt.json");
  c.vocab_size = 50304;
  auto model_type = [](const ArchConfig& x) {
    return nlohmann::json::parse(export_config(x, ExportTarget::hf).text).at("model_type").get<std::string>();
  };
  CHECK(model_type(c) == "mixtral");
  ArchConfig shared = c;
  shared.ffn.num_shared_experts = 2;
  shared.ffn.shared_expert_dim = 500;  // not a multiple of 352: one Qwen shared expert of 1000
  // Qwen2-MoE always has q/k/v biases and a shared-expert gate: without them no family fits.
  CHECK_THROWS_WITH(export_config(shared, ExportTarget::hf), Catch::Contains("qwen2_moe: /attention/qkv_bias"));
  shared.attention.qkv_bias = true;
  shared.ffn.shared_expert_gate = true;
  CHECK(model_type(shared) == "qwen2_moe");
  check_same_budgets(parse_hf_config(export_config(shared, ExportTarget::hf).text, "x"), shared);
  ArchConfig leading = c;
  leading.ffn.first_dense_layers = 2;
  leading.ffn.dense_dim = 2816;
  leading.ffn.num_shared_experts = 1;
  leading.ffn.shared_expert_dim = 704;  // 2 routed-width experts
  CHECK(model_type(leading) == "deepseek");
  check_same_budgets(parse_hf_config(export_config(leading, ExportTarget::hf).text, "x"), leading);
  ArchConfig dense = c;
  dense.ffn = FfnConfig{};
  dense.ffn.dense_dim = 4096;
  CHECK(model_type(dense) == "llama");
  check_same_budgets(parse_hf_config(export_config(dense, ExportTarget::hf).text, "x"), dense);
  // head_dim is explicit: 1056 / 12 = 88 happens to hold, 12 × 100 does not.
  ArchConfig wide = c;
  wide.attention.head_dim = 100;
  check_same_budgets(parse_hf_config(export_config(wide, ExportTarget::hf).text, "x"), wide);
}

TEST_CASE("export: what a target cannot express is an error, never a silent change", "[export][hf]") {
  ArchConfig c = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-baseline.json");
  ArchConfig plain = c;
  plain.ffn.gated = false;
  CHECK_THROWS_WITH(export_config(plain, ExportTarget::hf), Catch::Contains("/ffn/gated"));
  CHECK_THROWS_WITH(export_config(plain, ExportTarget::torchtitan), Catch::Contains("/ffn/gated"));
  const std::string mixtral = hf_families()[2].text;
  ArchConfig m = load_arch_config(source_dir + "/examples/hf/mixtral-8x7b.json");
  m.ffn.num_shared_experts = 1;
  m.ffn.shared_expert_dim = 1024;
  CHECK_THROWS_WITH(export_config(m, ExportTarget::hf, with_template(mixtral)), Catch::Contains("num_shared_experts"));
  CHECK_THROWS_WITH(export_config(c, ExportTarget::hf, with_template(llama_json)), Catch::Contains("dense model"));
  // A per-layer list that differs between layers cannot follow a depth change.
  const std::string typed = R"({"model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128, "sliding_window": 16, "max_position_embeddings": 4096,
    "layer_types": ["sliding_attention", "full_attention"]})";
  ArchConfig small = parse_hf_config(typed, "typed");
  small.num_layers = 3;
  CHECK_THROWS_WITH(export_config(small, ExportTarget::hf, with_template(typed)), Catch::Contains("/layer_types"));
  const std::string uniform = R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "intermediate_size": 128, "layer_types": ["full_attention", "full_attention"]})";
  ArchConfig grown = parse_hf_config(uniform, "uniform");
  grown.num_layers = 3;
  if (!grown.attention.layer_types.empty()) grown.attention.layer_types.assign(3, LayerAttention::full);
  const auto resized = nlohmann::json::parse(export_config(grown, ExportTarget::hf, with_template(uniform)).text);
  CHECK(resized.at("layer_types").size() == 3);
  CHECK_THROWS_WITH(export_config(c, ExportTarget::hf, with_template(R"({"num_layers": 2})")),
                    Catch::Contains("not a Hugging Face config"));
  // No fresh family holds leading dense layers with a shared width that is not a multiple of the
  // routed one (Mixtral and Qwen2-MoE have no dense layers, DeepSeek counts shared experts).
  ArchConfig odd = c;
  odd.ffn.first_dense_layers = 1;
  odd.ffn.dense_dim = 1024;
  odd.ffn.num_shared_experts = 1;
  odd.ffn.shared_expert_dim = 500;
  CHECK_THROWS_WITH(export_config(odd, ExportTarget::hf),
                    Catch::Contains("no Hugging Face family written here can express the config (mixtral: ") &&
                        Catch::Contains("deepseek: /ffn: 1 shared experts of width 500"));
  CHECK_NOTHROW(export_config(odd, ExportTarget::megatron));
  // A template whose model_type is null (the reader takes the family from "architectures") is kept
  // as it is; it used to escape as nlohmann's type_error.302 (an internal error).
  auto null_type = nlohmann::json::parse(mixtral);
  null_type["model_type"] = nullptr;
  const ArchConfig from_null = parse_hf_config(null_type.dump(), "null-type");
  const auto kept = nlohmann::json::parse(export_config(from_null, ExportTarget::hf, with_template(null_type.dump())).text);
  CHECK(kept.at("model_type").is_null());
  check_same_budgets(parse_hf_config(kept.dump(), "kept"), from_null);
  ArchConfig dense_from_null = from_null;
  dense_from_null.ffn = FfnConfig{};
  dense_from_null.ffn.gated = true;
  dense_from_null.ffn.dense_dim = 1024;
  CHECK_THROWS_WITH(export_config(dense_from_null, ExportTarget::hf, with_template(null_type.dump())),
                    Catch::Contains("MoE model (model_type \"unknown\")"));
  // Template text given to the library unread is read strictly: a number beyond double escaped as
  // nlohmann's out_of_range.406, and a duplicate key was taken silently (last one wins).
  ArchConfig moe = load_arch_config(source_dir + "/examples/hf/mixtral-8x7b.json");
  auto overflow = nlohmann::json::parse(mixtral);
  const std::string overflow_text = overflow.dump().substr(0, overflow.dump().size() - 1) + ", \"x\": 1e400}";
  CHECK_THROWS_WITH(export_config(moe, ExportTarget::hf, with_template(overflow_text)),
                    Catch::Contains("outside the range of a double"));
  const std::string duplicate_text = overflow.dump().substr(0, overflow.dump().size() - 1) + ", \"hidden_size\": 1}";
  CHECK_THROWS_WITH(export_config(moe, ExportTarget::hf, with_template(duplicate_text)),
                    Catch::Contains("duplicate key \"hidden_size\""));
  CHECK_THROWS_WITH(parse_export_target("onnx", "--to"), Catch::Contains("allowed: native, hf, megatron, torchtitan"));
  CHECK(parse_export_target("HF") == ExportTarget::hf);
}

TEST_CASE("export: native is the config_io format", "[export]") {
  const ArchConfig c = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-smelt.json");
  const ExportedConfig e = export_config(c, ExportTarget::native);
  CHECK(e.text == arch_config_to_json(c) + "\n");
  CHECK(e.not_expressed.empty());
}

TEST_CASE("export: hf round trip of every released config (tests/data/hf, examples/hf), changed shapes too",
          "[export][hf][families]") {
  // import → export hf (the file as template) → import gives identical budgets, for every family
  // the reader supports (MLA, sliding windows, q/k norms, biases, MTP included); and with a changed
  // hidden size (every other key kept) the export reads back as the changed config.
  std::vector<std::string> files;
  for (const char* dir : {"/tests/data/hf/", "/examples/hf/"}) {
    for (const auto& entry : std::filesystem::directory_iterator(source_dir + dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
    }
  }
  REQUIRE(files.size() >= 20);
  std::size_t exported = 0;
  for (const std::string& file : files) {
    INFO(file);
    const SourcedConfig in = load_sourced_config(file);
    REQUIRE_FALSE(in.hf_text.empty());
    if (nlohmann::json::parse(in.hf_text).contains("text_config")) {
      // A multimodal wrapper is not used as an export template (its text model is nested): refused.
      CHECK_THROWS_WITH(export_config(in.config, ExportTarget::hf, with_template(in.hf_text)),
                        Catch::Contains("not a Hugging Face config.json"));
      continue;
    }
    if (!in.config.ffn.gated) {
      // GPT-NeoX's plain MLP: the hf exporter writes gated families only and says so.
      CHECK_THROWS_WITH(export_config(in.config, ExportTarget::hf, with_template(in.hf_text)),
                        Catch::Contains("/ffn/gated"));
      continue;
    }
    const ExportedConfig same = export_config(in.config, ExportTarget::hf, with_template(in.hf_text));
    check_same_budgets(parse_hf_config(same.text, "export"), in.config);
    ++exported;

    ArchConfig wider = in.config;
    wider.hidden_size += 64;
    ArchConfig back;
    try {
      back = parse_hf_config(export_config(wider, ExportTarget::hf, with_template(in.hf_text)).text, "wider");
    } catch (const Error& e) {
      // A template whose family cannot hold the change says so by name; it never exports other budgets.
      CHECK_FALSE(std::string(e.what()).empty());
      continue;
    }
    check_same_budgets(back, wider);
  }
  CHECK(exported + 3 >= files.size());  // all but the two Pythia (GPT-NeoX) files and the wrapper
}

TEST_CASE("export: Megatron-LM and torchtitan refuse features they do not write, naming the field",
          "[export][megatron][torchtitan][families]") {
  const ArchConfig v3 = load_sourced_config(source_dir + "/tests/data/hf/deepseek-v3.json").config;
  for (ExportTarget target : {ExportTarget::megatron, ExportTarget::torchtitan}) {
    try {
      (void)export_config(v3, target);
      FAIL("DeepSeek-V3 (MLA) exported to " << to_string(target));
    } catch (const Error& e) {
      CHECK(e.path() == "/attention/mla");
      CHECK_THAT(e.what(), Catch::Contains("multi-head latent attention"));
    }
  }
  ArchConfig biased = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-baseline.json");
  biased.attention.qkv_bias = true;
  CHECK_THROWS_WITH(export_config(biased, ExportTarget::megatron), Catch::Contains("/attention/qkv_bias"));
  // Per-head q/k norms are written: Megatron --qk-layernorm, torchtitan qwen3 qk_norm.
  ArchConfig normed = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-baseline.json");
  normed.attention.qk_norm = QkNorm::per_head;
  CHECK_THAT(export_config(normed, ExportTarget::megatron).text, Catch::Contains("--qk-layernorm\n"));
  CHECK(nlohmann::json::parse(export_config(normed, ExportTarget::torchtitan).text)["model_args"]["qk_norm"] == true);
  normed.attention.qk_norm = QkNorm::full;
  CHECK_THROWS_WITH(export_config(normed, ExportTarget::torchtitan), Catch::Contains("/attention/qk_norm"));
}
