// The megatron and torchtitan exports checked against the frameworks' own definitions at the commits
// they target: every flag, value and choice against megatron_flags.hpp (Megatron-LM d98e8a64), every
// import, call and keyword against torchtitan_symbols.hpp (torchtitan b5bcd76c), for the paper's
// configs, every released config the reader reads (tests/data/hf, examples/hf) and their matches.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/match.hpp"
#include "megatron_flags.hpp"
#include "torchtitan_symbols.hpp"

using namespace budget;

namespace {
const std::string source_dir = BUDGET_SOURCE_DIR;

std::vector<std::string> released_configs() {
  std::vector<std::string> files;
  for (const char* dir : {"/tests/data/hf/", "/examples/hf/", "/examples/configs/"}) {
    for (const auto& entry : std::filesystem::directory_iterator(source_dir + dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// --- Megatron-LM -------------------------------------------------------------------------------

/// Evaluates a --moe-layer-freq list expression the way Python's eval does for the grammar
/// _eval_pattern admits: expr = term ('+' term)*; term = atom ('*' int)*; atom = '(' expr ')' |
/// '[' int (',' int)* ']'. Returns false on anything else.
struct PatternParser {
  std::string_view text;
  std::size_t at = 0;
  bool integer(long& out) {
    const std::size_t start = at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
    if (at == start) return false;
    out = std::stol(std::string(text.substr(start, at - start)));
    return true;
  }
  bool atom(std::vector<long>& out) {
    if (at < text.size() && text[at] == '(') {
      ++at;
      if (!expr(out) || at >= text.size() || text[at] != ')') return false;
      ++at;
      return true;
    }
    if (at >= text.size() || text[at] != '[') return false;
    ++at;
    do {
      long v = 0;
      if (!integer(v)) return false;
      out.push_back(v);
    } while (at < text.size() && text[at] == ',' && ++at);
    if (at >= text.size() || text[at] != ']') return false;
    ++at;
    return true;
  }
  bool term(std::vector<long>& out) {
    std::vector<long> a;
    if (!atom(a)) return false;
    while (at < text.size() && text[at] == '*') {
      ++at;
      long n = 0;
      if (!integer(n)) return false;
      std::vector<long> repeated;
      for (long i = 0; i < n; ++i) repeated.insert(repeated.end(), a.begin(), a.end());
      a = repeated;
    }
    out.insert(out.end(), a.begin(), a.end());
    return true;
  }
  bool expr(std::vector<long>& out) {
    if (!term(out)) return false;
    while (at < text.size() && text[at] == '+') {
      ++at;
      if (!term(out)) return false;
    }
    return true;
  }
};

/// The argv words bash gives "${MODEL_ARGS[@]}" after `source`: each array line split at spaces,
/// single quotes removed (the only quoting the export may use, and only around patterns).
std::vector<std::vector<std::string>> megatron_array_lines(const std::string& text) {
  const std::string open = "\nMODEL_ARGS=(\n";
  const std::size_t start = text.find(open);
  REQUIRE(start != std::string::npos);
  REQUIRE(text.size() >= 3);
  REQUIRE(text.substr(text.size() - 2) == ")\n");
  // Before the array: comments only.
  std::size_t line_start = 0;
  while (line_start < start) {
    CHECK(text[line_start] == '#');
    line_start = text.find('\n', line_start) + 1;
  }
  std::vector<std::vector<std::string>> lines;
  std::size_t at = start + open.size();
  while (at < text.size() - 2) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    REQUIRE(line.rfind("  --", 0) == 0);
    std::vector<std::string> words;
    std::string word;
    bool quoted = false;
    for (const char ch : line.substr(2)) {
      if (ch == '\'') {
        quoted = !quoted;
      } else if (ch == ' ' && !quoted) {
        words.push_back(word);
        word.clear();
      } else {
        // Outside quotes, no character bash would expand or split on.
        if (!quoted) CHECK(std::string("$`\"\\*?[]()!&;|<>{}~#").find(ch) == std::string::npos);
        word += ch;
      }
    }
    CHECK_FALSE(quoted);
    words.push_back(word);
    lines.push_back(words);
  }
  return lines;
}

/// Checks a megatron export against the table; returns flag → value ("" for store_true).
std::map<std::string, std::string> check_megatron(const ArchConfig& c, const std::string& text) {
  using megatron_table::Kind;
  std::map<std::string, std::string> args;
  for (const auto& words : megatron_array_lines(text)) {
    INFO(words.front());
    const auto& table = megatron_table::flags();
    const auto flag = std::find_if(table.begin(), table.end(), [&](const auto& f) { return f.name == words.front(); });
    REQUIRE(flag != table.end());
    CHECK(args.count(words.front()) == 0);
    if (flag->kind == Kind::store_true) {
      CHECK(words.size() == 1);
      args[words.front()] = "";
      continue;
    }
    REQUIRE(words.size() == 2);
    const std::string& value = words[1];
    args[words.front()] = value;
    switch (flag->kind) {
      case Kind::integer: CHECK(std::regex_match(value, std::regex("-?[0-9]+"))); break;
      case Kind::floating:
        CHECK(std::regex_match(value, std::regex("[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?")));
        break;
      case Kind::choice:
        CHECK(std::find(flag->choices.begin(), flag->choices.end(), value) != flag->choices.end());
        break;
      case Kind::pattern: {
        CHECK(value.find_first_not_of(megatron_table::pattern_characters) == std::string::npos);
        PatternParser p{value};
        std::vector<long> layers;
        REQUIRE(p.expr(layers));
        CHECK(p.at == value.size());
        REQUIRE(static_cast<std::int64_t>(layers.size()) == c.num_layers);
        for (std::size_t i = 0; i < layers.size(); ++i) {
          CHECK(layers[i] == (static_cast<std::int64_t>(i) < c.ffn.first_dense_layers ? 0 : 1));
        }
        break;
      }
      case Kind::store_true: break;
    }
  }
  for (const auto& required : megatron_table::required()) CHECK(args.count(std::string(required)) == 1);
  CHECK(args.count("--vocab-size") == (c.vocab_size > 0 ? 1u : 0u));
  // validate_args: max_position_embeddings >= seq_length (arguments.py:1353-1356).
  CHECK(std::stoll(args.at("--max-position-embeddings")) >= std::stoll(args.at("--seq-length")));
  // Shapes: what budget counts is what Megatron builds.
  CHECK(args.at("--num-layers") == std::to_string(c.num_layers));
  CHECK(args.at("--hidden-size") == std::to_string(c.hidden_size));
  CHECK(args.at("--num-attention-heads") == std::to_string(c.attention.num_heads));
  CHECK(args.count("--swiglu") == (c.ffn.gated ? 1u : 0u));
  CHECK(args.count("--untie-embeddings-and-output-weights") == (c.tie_embeddings ? 0u : 1u));
  const bool gqa_yarn = !c.attention.mla && c.settings.rope_scaling && c.settings.rope_scaling->type == RopeScalingType::yarn;
  CHECK(args.at("--position-embedding-type") == (gqa_yarn ? "yarn" : "rope"));
  CHECK(args.at("--normalization") == (c.norm == NormKind::layernorm ? "LayerNorm" : "RMSNorm"));
  if (c.attention.mla) {
    CHECK(args.count("--multi-latent-attention") == 1);
    CHECK(args.at("--kv-lora-rank") == std::to_string(c.attention.mla->kv_lora_rank));
    CHECK(args.at("--qk-head-dim") == std::to_string(c.attention.mla->qk_nope_head_dim));
    CHECK(args.at("--qk-pos-emb-head-dim") == std::to_string(c.attention.mla->qk_rope_head_dim));
    CHECK(args.at("--v-head-dim") == std::to_string(c.attention.mla->v_head_dim));
    CHECK(args.count("--q-lora-rank") == (c.attention.mla->q_lora_rank > 0 ? 1u : 0u));
    CHECK(args.count("--qk-layernorm") == 1);
  } else {
    CHECK(args.at("--kv-channels") == std::to_string(c.attention.head_dim));
    CHECK(args.count("--num-query-groups") == (c.attention.num_kv_heads != c.attention.num_heads ? 1u : 0u));
    CHECK(args.count("--qk-layernorm") == (c.attention.qk_norm == QkNorm::per_head ? 1u : 0u));
  }
  const bool all_biases = c.attention.qkv_bias && c.attention.output_bias && c.ffn.bias;
  CHECK(args.count("--disable-bias-linear") == (all_biases ? 0u : 1u));
  CHECK(args.count("--add-qkv-bias") == (!all_biases && c.attention.qkv_bias ? 1u : 0u));
  if (c.ffn.is_moe()) {
    CHECK(args.at("--num-experts") == std::to_string(c.ffn.num_experts));
    CHECK(args.at("--moe-router-topk") == std::to_string(c.ffn.top_k));
    CHECK(args.at("--moe-ffn-hidden-size") == std::to_string(c.ffn.expert_dim));
    CHECK(args.count("--moe-layer-freq") == (c.ffn.first_dense_layers > 0 ? 1u : 0u));
    CHECK(args.count("--moe-router-enable-expert-bias") == (c.ffn.router_bias ? 1u : 0u));
    CHECK(args.count("--moe-shared-expert-gate") == (c.ffn.shared_expert_gate ? 1u : 0u));
    if (c.ffn.num_shared_experts > 0) {
      CHECK(args.at("--moe-shared-expert-intermediate-size") ==
            std::to_string(c.ffn.num_shared_experts * c.ffn.shared_expert_dim));
    }
    if (c.settings.router_score) CHECK(args.at("--moe-router-score-function") == to_string(*c.settings.router_score));
  } else {
    CHECK(args.count("--num-experts") == 0);
    CHECK(args.at("--ffn-hidden-size") == std::to_string(c.ffn.dense_dim));
  }
  if (c.ffn.first_dense_layers > 0 || !c.ffn.is_moe()) {
    CHECK(args.at("--ffn-hidden-size") == std::to_string(c.ffn.dense_dim));
  }
  CHECK(args.count("--mtp-num-layers") == (c.mtp_layers > 0 ? 1u : 0u));
  if (c.settings.rope_theta) CHECK(std::stod(args.at("--rotary-base")) == *c.settings.rope_theta);
  if (c.settings.norm_epsilon) CHECK(std::stod(args.at("--norm-epsilon")) == *c.settings.norm_epsilon);
  if (c.settings.max_position_embeddings > 0) {
    CHECK(args.at("--max-position-embeddings") == std::to_string(c.settings.max_position_embeddings));
  }
  return args;
}

/// Fields the megatron export refuses (docs/export.md lists them).
const std::set<std::string> megatron_refusals{"/attention/output_bias", "/ffn/bias",          "/attention/qkv_bias",
                                              "/attention/qk_norm",     "/attention/layer_types", "/lm_head_bias",
                                              "/ffn/router_bias",       "/settings/router_normalize_top_k",
                                              "/settings/rope_theta",   "/settings/max_position_embeddings",
                                              "/settings/rope_scaling",
                                              // the 2025 families' layer kinds (export_layer_kinds.cpp)
                                              "/linear_attention", "/mamba", "/layer_mixers", "/layer_ffns",
                                              "/attention/chunk_size", "/attention/sinks", "/attention/output_gate",
                                              "/attention/indexer", "/settings/partial_rotary_factor",
                                              "/settings/nope_layers"};

// --- torchtitan --------------------------------------------------------------------------------

/// The top-level keyword names of the call whose '(' is at `open` in `text`.
std::vector<std::string> call_keywords(const std::string& text, std::size_t open) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t i = open;
  std::size_t arg_start = open + 1;
  for (; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '(' || ch == '[' || ch == '{') ++depth;
    if (ch == ')' || ch == ']' || ch == '}') --depth;
    if ((depth == 1 && ch == ',') || depth == 0) {
      std::smatch m;
      const std::string arg = text.substr(arg_start, i - arg_start);
      if (std::regex_search(arg, m, std::regex("^\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*=[^=]"))) out.push_back(m[1]);
      arg_start = i + 1;
    }
    if (depth == 0) break;
  }
  return out;
}

void check_torchtitan(const std::string& text) {
  using torchtitan_table::Model;
  const bool deepseek = text.find("(torchtitan/models/deepseek_v3:") != std::string::npos;
  const Model model = deepseek ? Model::deepseek_v3 : Model::qwen3;
  // Imports: the table's, plus functools.partial and torch.nn ("import torch.nn as nn"); the
  // deepseek_v3 module also the standard library's copy and dataclasses.
  std::size_t imported = 0;
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("import ", 0) == 0) {
      INFO(line);
      CHECK((line == "import torch.nn as nn" || (deepseek && (line == "import copy" || line == "import dataclasses"))));
      continue;
    }
    if (line.rfind("from ", 0) != 0) continue;
    const std::size_t import_at = line.find(" import ");
    REQUIRE(import_at != std::string::npos);
    const std::string module = line.substr(5, import_at - 5);
    std::string names = line.substr(import_at + 8);
    if (names == "(") {
      names.clear();
      while (std::getline(lines, line) && line != ")") names += line;
    }
    std::stringstream list(names);
    std::string name;
    while (std::getline(list, name, ',')) {
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(' ') + 1);
      if (name.empty()) continue;
      INFO(module << " " << name);
      if (module == "functools") {
        CHECK(name == "partial");
        continue;
      }
      const auto& table = torchtitan_table::imports();
      CHECK(std::any_of(table.begin(), table.end(), [&](const auto& e) {
        return e.module == module && e.name == name && (e.model == model || e.model == Model::both);
      }));
      ++imported;
    }
  }
  const auto& imports = torchtitan_table::imports();
  CHECK(imported == static_cast<std::size_t>(std::count_if(imports.begin(), imports.end(), [&](const auto& e) {
          return e.model == model || e.model == Model::both;
        })));
  // Calls: every torchtitan constructor written is in the table, with keywords it accepts.
  const std::regex call("([A-Za-z_][A-Za-z0-9_]*(?:\\.Config)?)\\(");
  std::size_t checked = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), call); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (name.rfind("def", 0) == 0) continue;
    const auto& table = torchtitan_table::callables();
    const auto entry = std::find_if(table.begin(), table.end(), [&](const auto& e) { return e.name == name; });
    const bool torchtitan_like = name.find(".Config") != std::string::npos || name.rfind("make_", 0) == 0 ||
                                 name.rfind("get_", 0) == 0;
    if (!torchtitan_like) continue;
    INFO(name);
    REQUIRE(entry != table.end());
    for (const auto& kw : call_keywords(text, static_cast<std::size_t>(it->position(0) + it->length(0) - 1))) {
      INFO(kw);
      CHECK(std::find(entry->keywords.begin(), entry->keywords.end(), kw) != entry->keywords.end());
    }
    ++checked;
  }
  CHECK(checked >= 8);
  std::smatch m;
  if (std::regex_search(text, m, std::regex("score_func=\"([a-z]+)\""))) {
    const auto& choices = torchtitan_table::score_func_choices;
    CHECK(std::find(choices.begin(), choices.end(), m[1].str()) != choices.end());
  }
  if (deepseek) {
    // dataclasses.replace(attention, ...) sets only fields of deepseek_v3's Attention.Config.
    const std::size_t replace_at = text.find("dataclasses.replace(");
    REQUIRE(replace_at != std::string::npos);
    for (const auto& kw : call_keywords(text, replace_at + std::string("dataclasses.replace").size())) {
      INFO(kw);
      const auto& fields = torchtitan_table::mla_attention_replaced;
      CHECK(std::find(fields.begin(), fields.end(), kw) != fields.end());
    }
    // The registry's call signature (model_registry passes these four as keywords).
    const std::size_t def_at = text.find("def budget_config(");
    REQUIRE(def_at != std::string::npos);
    const std::string signature = text.substr(def_at, text.find(") ->", def_at) - def_at);
    for (const auto& name : torchtitan_table::deepseek_v3_signature) {
      INFO(name);
      CHECK(signature.find(std::string(name) + ":") != std::string::npos);
    }
    CHECK(text.find(std::string(torchtitan_table::deepseek_v3_registry) + "[") != std::string::npos);
    return;
  }
  // The registry's call signature: attn_backend and moe_comm_backend as keywords.
  CHECK(text.find("def budget_config(attn_backend: str = \"flex\", moe_comm_backend: str = \"standard\")") !=
        std::string::npos);
  CHECK(text.find(std::string(torchtitan_table::registry) + "[") != std::string::npos);
}

/// Fields the torchtitan export refuses.
const std::set<std::string> torchtitan_refusals{"/attention/qkv_bias", "/attention/output_bias", "/ffn/bias",
                                                "/attention/qk_norm",  "/attention/layer_types",  "/norm",
                                                "/lm_head_bias",       "/mtp_layers",             "/ffn/gated",
                                                "/settings/rope_scaling",
                                                // the 2025 families' layer kinds (export_layer_kinds.cpp)
                                                "/linear_attention", "/mamba", "/layer_mixers", "/layer_ffns",
                                                "/attention/chunk_size", "/attention/sinks", "/attention/output_gate",
                                                "/attention/indexer", "/settings/partial_rotary_factor",
                                                "/settings/nope_layers"};

/// A module-level constant of a torchtitan export: `NAME = value`.
std::string py_constant(const std::string& text, const std::string& name) {
  std::smatch m;
  REQUIRE(std::regex_search(text, m, std::regex("\n" + name + " = ([^\n]*)\n")));
  return m[1];
}

}  // namespace

TEST_CASE("export megatron: the paper's 200M pair, exactly, as a bash array", "[export][megatron]") {
  const ArchConfig base = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-baseline.json");
  const ExportedConfig e = export_config(base, ExportTarget::megatron);
  // 192 experts of width 432, top 8; GQA 10 heads × 128, 2 KV groups; vocab_size 0 (not modelled);
  // the paper workload's 4096 tokens; no rope_theta / norm epsilon given: Megatron's defaults stated.
  CHECK(e.text ==
        "# Megatron-LM model arguments for paper-200M-S95-baseline (budget-match export; docs/export.md)\n"
        "# Target: NVIDIA/Megatron-LM d98e8a64 (megatron/training/arguments.py)\n"
        "# Use: source this file, then: torchrun ... pretrain_gpt.py \"${MODEL_ARGS[@]}\" <data, training and "
        "parallelism arguments>\n"
        "# Megatron default left in place: --norm-epsilon 1e-05 (the config gives no norm epsilon)\n"
        "# Megatron default left in place: --rotary-base 10000 (the config gives no rope_theta)\n"
        "# NOT EXPRESSED: vocab_size is 0 (embeddings not modelled): add --vocab-size or a tokenizer\n"
        "# NOT EXPRESSED: the config gives no router score function: softmax is written\n"
        "MODEL_ARGS=(\n"
        "  --num-layers 12\n  --hidden-size 1280\n  --ffn-hidden-size 432\n  --num-attention-heads 10\n"
        "  --group-query-attention\n  --num-query-groups 2\n  --kv-channels 128\n  --swiglu\n"
        "  --disable-bias-linear\n  --normalization RMSNorm\n  --position-embedding-type rope\n"
        "  --untie-embeddings-and-output-weights\n  --seq-length 4096\n  --max-position-embeddings 4096\n"
        "  --num-experts 192\n  --moe-router-topk 8\n  --moe-ffn-hidden-size 432\n"
        "  --moe-router-score-function softmax\n"
        ")\n");
  CHECK(e.not_expressed.size() == 2);
  check_megatron(base, e.text);
  // The loop is stated; a longer workload sequence is written.
  const ArchConfig smelt = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-smelt.json");
  ExportOptions longer;
  longer.seq_length = 8192;
  const ExportedConfig s = export_config(smelt, ExportTarget::megatron, longer);
  CHECK_THAT(s.text, Catch::Contains("# NOT EXPRESSED: the loop (layers 4-9 run 2 times in a row with shared weights "
                                     "(18 executed layers from 12 stored)): Megatron-LM has no weight-shared layer "
                                     "loop; these arguments build the 12 stored layers unlooped"));
  const auto args = check_megatron(smelt, s.text);
  CHECK(args.at("--seq-length") == "8192");
  CHECK(args.at("--max-position-embeddings") == "8192");
}

TEST_CASE("export megatron: every released config and its match, against the flag table", "[export][megatron][families]") {
  std::size_t exported = 0;
  std::size_t refused = 0;
  for (const std::string& file : released_configs()) {
    INFO(file);
    const ArchConfig c = load_arch_config(file);
    std::vector<ArchConfig> configs{c};
    try {
      const MatchResult r = match(c, LoopSpec{}, paper_workload(), default_constraints(c), 1);
      if (r.summary.feasible) configs.push_back(r.candidates.front().config);
    } catch (const Error&) {
      // Not matchable (Mistral-7B: every layer sliding, no growing KV cache to lock).
    }
    for (const ArchConfig& config : configs) {
      // A sequence the config's context holds (Pythia: 2048).
      ExportOptions options;
      const std::int64_t context = config.settings.max_position_embeddings;
      options.seq_length = context > 0 && context < 4096 ? context : 4096;
      try {
        const ExportedConfig e = export_config(config, ExportTarget::megatron, options);
        check_megatron(config, e.text);
        ++exported;
      } catch (const Error& e) {
        INFO(e.what());
        CHECK(megatron_refusals.count(e.path()) == 1);
        ++refused;
      }
    }
  }
  CHECK(exported >= 20);
  INFO("refused " << refused);
}

TEST_CASE("export megatron: MLA, MTP, expert bias, shared gate, biases and settings of HF configs", "[export][megatron]") {
  // DeepSeek-V3: MLA (q 1536, kv 512, 128 + 64 qk, v 128), 3 dense layers, sigmoid router with
  // expert bias, one shared expert of 2048, one MTP module, rope_theta 10000, eps 1e-6, 163840.
  const ArchConfig v3 = load_arch_config(source_dir + "/tests/data/hf/deepseek-v3.json");
  const auto a = check_megatron(v3, export_config(v3, ExportTarget::megatron).text);
  CHECK(a.at("--q-lora-rank") == "1536");
  CHECK(a.at("--kv-lora-rank") == "512");
  CHECK(a.at("--qk-head-dim") == "128");
  CHECK(a.at("--qk-pos-emb-head-dim") == "64");
  CHECK(a.at("--v-head-dim") == "128");
  CHECK(a.at("--rope-type") == "yarn");  // its rope_scaling (the rope scaling test below)
  CHECK(a.at("--mtp-num-layers") == "1");
  CHECK(a.at("--moe-router-score-function") == "sigmoid");
  CHECK(a.count("--moe-router-enable-expert-bias") == 1);
  CHECK(a.at("--moe-layer-freq") == "([0]*3+[1]*58)");
  CHECK(a.at("--moe-shared-expert-intermediate-size") == "2048");
  CHECK(a.at("--rotary-base") == "10000");
  CHECK(a.at("--norm-epsilon") == "1e-06");
  CHECK(a.at("--max-position-embeddings") == "163840");
  // Qwen1.5-MoE: q/k/v biases, a gated shared expert of 5632, softmax without renormalisation.
  const ArchConfig qwen = load_arch_config(source_dir + "/examples/hf/qwen1.5-moe-a2.7b.json");
  const auto q = check_megatron(qwen, export_config(qwen, ExportTarget::megatron).text);
  CHECK(q.count("--add-qkv-bias") == 1);
  CHECK(q.count("--moe-shared-expert-gate") == 1);
  CHECK(q.at("--moe-shared-expert-intermediate-size") == "5632");
  CHECK(q.count("--moe-router-pre-softmax") == (qwen.settings.router_normalize_top_k == false ? 1u : 0u));
  // Mixtral renormalises its top-2: no --moe-router-pre-softmax; rope_theta 1e6 as an int.
  const ArchConfig mixtral = load_arch_config(source_dir + "/examples/hf/mixtral-8x7b.json");
  const auto m = check_megatron(mixtral, export_config(mixtral, ExportTarget::megatron).text);
  CHECK(m.count("--moe-router-pre-softmax") == 0);
  CHECK(m.at("--rotary-base") == "1000000");
  // Pythia: LayerNorm, a plain MLP, biases on every linear layer.
  const ArchConfig pythia = load_arch_config(source_dir + "/tests/data/hf/pythia-160m.json");
  ExportOptions context_2048;
  context_2048.seq_length = 2048;
  const auto p = check_megatron(pythia, export_config(pythia, ExportTarget::megatron, context_2048).text);
  CHECK(p.at("--normalization") == "LayerNorm");
  CHECK(p.count("--disable-bias-linear") == 0);
  CHECK(p.count("--swiglu") == 0);
  // What Megatron has no argument for is refused by field, with the commit named.
  ArchConfig only_output = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-baseline.json");
  only_output.attention.output_bias = true;
  CHECK_THROWS_WITH(export_config(only_output, ExportTarget::megatron),
                    Catch::Contains("NVIDIA/Megatron-LM d98e8a64") && Catch::Contains("output-projection bias"));
  ArchConfig fractional = only_output;
  fractional.attention.output_bias = false;
  fractional.settings.rope_theta = 10000.5;
  CHECK_THROWS_WITH(export_config(fractional, ExportTarget::megatron), Catch::Contains("--rotary-base takes an int"));
  ArchConfig short_context = fractional;
  short_context.settings.rope_theta.reset();
  short_context.settings.max_position_embeddings = 2048;
  CHECK_THROWS_WITH(export_config(short_context, ExportTarget::megatron),
                    Catch::Contains("sequence length 4096 exceeds max_position_embeddings 2048"));
}

TEST_CASE("export torchtitan: the paper's 200M match as a qwen3 config module", "[export][torchtitan]") {
  const ArchConfig smelt = load_arch_config(source_dir + "/examples/configs/paper-200M-S95-smelt.json");
  const ExportedConfig e = export_config(smelt, ExportTarget::torchtitan);
  check_torchtitan(e.text);
  CHECK(py_constant(e.text, "DIM") == "1056");
  CHECK(py_constant(e.text, "N_LAYERS") == "12");
  CHECK(py_constant(e.text, "N_HEADS") == "12");
  CHECK(py_constant(e.text, "N_KV_HEADS") == "2");
  CHECK(py_constant(e.text, "HEAD_DIM") == "88");
  CHECK(py_constant(e.text, "NUM_EXPERTS") == "288");
  CHECK(py_constant(e.text, "TOP_K") == "8");
  CHECK(py_constant(e.text, "MOE_HIDDEN_DIM") == "352");
  CHECK(py_constant(e.text, "SHARED_HIDDEN_DIM") == "0");
  CHECK(py_constant(e.text, "FIRST_DENSE_LAYERS") == "0");
  CHECK(py_constant(e.text, "MAX_CONTEXT_LENGTH") == "4096");
  CHECK(py_constant(e.text, "VOCAB_SIZE") == "0");
  CHECK_THAT(e.text, Catch::Contains("qk_norm=None,") && Catch::Contains("shared_experts = None") &&
                         Catch::Contains("score_func=\"softmax\"") && Catch::Contains("load_balance_coeff=None") &&
                         Catch::Contains("enable_weight_tying=False"));
  CHECK_THAT(e.text, Catch::Contains("# Target: pytorch/torchtitan b5bcd76c"));
  REQUIRE(e.not_expressed.size() >= 2);
  CHECK(e.not_expressed.back().rfind("the loop (layers 4-9 run 2 times", 0) == 0);
  CHECK_THAT(e.text, Catch::Contains("# NOT EXPRESSED: the loop (layers 4-9 run 2 times"));
}

TEST_CASE("export torchtitan: every released config and its match, against the symbol table",
          "[export][torchtitan][families]") {
  std::size_t exported = 0;
  for (const std::string& file : released_configs()) {
    INFO(file);
    const ArchConfig c = load_arch_config(file);
    try {
      const ExportedConfig e = export_config(c, ExportTarget::torchtitan);
      check_torchtitan(e.text);
      CHECK(py_constant(e.text, "DIM") == std::to_string(c.hidden_size));
      CHECK(py_constant(e.text, "N_LAYERS") == std::to_string(c.num_layers));
      if (c.attention.mla) {
        CHECK(py_constant(e.text, "KV_LORA_RANK") == std::to_string(c.attention.mla->kv_lora_rank));
        CHECK(py_constant(e.text, "Q_LORA_RANK") == std::to_string(c.attention.mla->q_lora_rank));
        CHECK(py_constant(e.text, "QK_NOPE_HEAD_DIM") == std::to_string(c.attention.mla->qk_nope_head_dim));
        CHECK(py_constant(e.text, "QK_ROPE_HEAD_DIM") == std::to_string(c.attention.mla->qk_rope_head_dim));
        CHECK(py_constant(e.text, "V_HEAD_DIM") == std::to_string(c.attention.mla->v_head_dim));
        CHECK(py_constant(e.text, "MTP_LAYERS") == std::to_string(c.mtp_layers));
      } else {
        CHECK(py_constant(e.text, "HEAD_DIM") == std::to_string(c.attention.head_dim));
        CHECK_THAT(e.text, Catch::Contains(c.attention.qk_norm == QkNorm::per_head ? "qk_norm=_norm(HEAD_DIM)"
                                                                                     : "qk_norm=None"));
      }
      if (c.ffn.is_moe()) {
        CHECK(py_constant(e.text, "FIRST_DENSE_LAYERS") == std::to_string(c.ffn.first_dense_layers));
        CHECK(py_constant(e.text, "SHARED_HIDDEN_DIM") ==
              std::to_string(c.ffn.num_shared_experts * c.ffn.shared_expert_dim));
        CHECK_THAT(e.text, Catch::Contains(c.ffn.router_bias ? "load_balance_coeff=1e-3" : "load_balance_coeff=None"));
        CHECK_THAT(e.text, Catch::Contains(c.ffn.shared_expert_gate ? "SigmoidGatedFeedForward.Config(" : "def "));
      }
      if (c.settings.rope_theta) CHECK(std::stod(py_constant(e.text, "ROPE_THETA")) == *c.settings.rope_theta);
      if (c.settings.norm_epsilon) CHECK(std::stod(py_constant(e.text, "NORM_EPS")) == *c.settings.norm_epsilon);
      ++exported;
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(torchtitan_refusals.count(e.path()) == 1);
    }
  }
  // The rest are refused by field: biases (Qwen2.5, Qwen1.5-MoE, Pythia, Phi-3.5-MoE), full q/k
  // norms (OLMoE), sliding windows (Mistral, Phi-3). MLA (DeepSeek-V2/V3, Kimi-K2) is deepseek_v3.
  CHECK(exported >= 13);
  // Qwen1.5-MoE (q/k/v biases) is refused by name; without them its gated shared expert is a
  // SigmoidGatedFeedForward of 5632, its router softmax without renormalisation.
  ArchConfig qwen = load_arch_config(source_dir + "/examples/hf/qwen1.5-moe-a2.7b.json");
  CHECK_THROWS_WITH(export_config(qwen, ExportTarget::torchtitan),
                    Catch::Contains("/attention/qkv_bias") || Catch::Contains("query/key/value biases"));
  qwen.attention.qkv_bias = false;
  const std::string text = export_config(qwen, ExportTarget::torchtitan).text;
  check_torchtitan(text);
  CHECK(py_constant(text, "SHARED_HIDDEN_DIM") == "5632");
  CHECK_THAT(text, Catch::Contains("gate=Linear.Config(in_features=DIM, out_features=1"));
  // DeepSeek-MoE's leading dense layer: a feed_forward layer before the MoE ones.
  const ArchConfig deepseek = load_arch_config(source_dir + "/examples/hf/deepseek-moe-16b.json");
  const std::string ds = export_config(deepseek, ExportTarget::torchtitan).text;
  check_torchtitan(ds);
  CHECK(py_constant(ds, "FIRST_DENSE_LAYERS") == "1");
  CHECK(py_constant(ds, "DENSE_HIDDEN_DIM") == "10944");
}

TEST_CASE("export torchtitan: DeepSeek-V3 and Kimi-K2 (MLA) as deepseek_v3 config modules", "[export][torchtitan]") {
  // DeepSeek-V3 (tests/data/hf/deepseek-v3.json): MLA q 1536, kv 512, 128 + 64 qk, v 128; 3 dense
  // layers of 18432; 256 experts of 2048, top 8, one shared expert of 2048; a sigmoid router with
  // renormalised top-k and an expert bias; one MTP module; yarn: factor 40, 4096, beta 32 / 1,
  // mscale = mscale_all_dim = 1.
  const ArchConfig v3 = load_arch_config(source_dir + "/tests/data/hf/deepseek-v3.json");
  const ExportedConfig e = export_config(v3, ExportTarget::torchtitan);
  check_torchtitan(e.text);
  CHECK_THAT(e.text, Catch::Contains("# Target: pytorch/torchtitan b5bcd76c (torchtitan/models/deepseek_v3:"));
  CHECK(py_constant(e.text, "DIM") == "7168");
  CHECK(py_constant(e.text, "N_HEADS") == "128");
  CHECK(py_constant(e.text, "Q_LORA_RANK") == "1536");
  CHECK(py_constant(e.text, "FIRST_DENSE_LAYERS") == "3");
  CHECK(py_constant(e.text, "DENSE_HIDDEN_DIM") == "18432");
  CHECK(py_constant(e.text, "NUM_EXPERTS") == "256");
  CHECK(py_constant(e.text, "TOP_K") == "8");
  CHECK(py_constant(e.text, "MOE_HIDDEN_DIM") == "2048");
  CHECK(py_constant(e.text, "SHARED_HIDDEN_DIM") == "2048");
  CHECK(py_constant(e.text, "MTP_LAYERS") == "1");
  CHECK(py_constant(e.text, "MSCALE") == "1.0");
  CHECK(py_constant(e.text, "NORM_EPS") == "1e-06");
  CHECK(py_constant(e.text, "MAX_CONTEXT_LENGTH") == "163840");
  CHECK_THAT(e.text, Catch::Contains("score_func=\"sigmoid\"") && Catch::Contains("route_norm=True") &&
                         Catch::Contains("load_balance_coeff=1e-3") &&
                         Catch::Contains("scaling=\"yarn\", rope_factor=40.0, beta_fast=32.0, beta_slow=1.0, "
                                         "original_seq_len=4096") &&
                         Catch::Contains("deepseekv3_configs[\"budget-"));
  // Not carried by budget, said: the routed scaling factor and expert groups.
  CHECK(std::any_of(e.not_expressed.begin(), e.not_expressed.end(),
                    [](const std::string& n) { return n.find("routed_scaling_factor") != std::string::npos; }));
  // Kimi-K2: 64 heads, one dense layer, 384 experts, yarn factor 32 with beta_fast 1.
  const ArchConfig kimi = load_arch_config(source_dir + "/tests/data/hf/kimi-k2.json");
  const std::string k = export_config(kimi, ExportTarget::torchtitan).text;
  check_torchtitan(k);
  CHECK(py_constant(k, "N_HEADS") == "64");
  CHECK(py_constant(k, "FIRST_DENSE_LAYERS") == "1");
  CHECK(py_constant(k, "NUM_EXPERTS") == "384");
  CHECK_THAT(k, Catch::Contains("scaling=\"yarn\", rope_factor=32.0, beta_fast=1.0, beta_slow=1.0, "
                                "original_seq_len=4096"));
  // Without query compression the query is one wq (make_mla_attention_config, q_lora_rank 0).
  const ArchConfig lite = load_arch_config(source_dir + "/tests/data/hf/deepseek-v2-lite.json");
  const std::string l = export_config(lite, ExportTarget::torchtitan).text;
  check_torchtitan(l);
  CHECK(py_constant(l, "Q_LORA_RANK") == "0");
  // The DeepSeek-V3 match (the loop stated) exports too.
  const MatchResult r = match(v3, LoopSpec{}, paper_workload(), default_constraints(v3), 1);
  REQUIRE(r.summary.feasible);
  const ExportedConfig matched = export_config(r.candidates.front().config, ExportTarget::torchtitan);
  check_torchtitan(matched.text);
  CHECK_THAT(matched.text, Catch::Contains("# NOT EXPRESSED: the loop ("));
}

TEST_CASE("export megatron and torchtitan: rope scaling of the released configs", "[export][megatron][torchtitan]") {
  // DeepSeek-V3, MLA yarn: --rope-type yarn, factor 40, mscale = mscale_all_dim = 1; its
  // original 4096 and betas 32 / 1 are MLATransformerConfig's defaults (no argument exists).
  const ArchConfig v3 = load_arch_config(source_dir + "/tests/data/hf/deepseek-v3.json");
  const auto a = check_megatron(v3, export_config(v3, ExportTarget::megatron).text);
  CHECK(a.at("--rope-type") == "yarn");
  CHECK(a.at("--position-embedding-type") == "rope");
  CHECK(a.at("--rotary-scaling-factor") == "40");
  CHECK(a.at("--mscale") == "1");
  CHECK(a.at("--mscale-all-dim") == "1");
  CHECK(a.count("--yarn-beta-fast") == 0);  // GQA-only arguments (argument_utils.py:397-399)
  // Kimi-K2's beta_fast 1 has no MLA argument: refused by name.
  const ArchConfig kimi = load_arch_config(source_dir + "/tests/data/hf/kimi-k2.json");
  try {
    export_config(kimi, ExportTarget::megatron);
    FAIL("Kimi-K2's beta_fast 1 was exported to Megatron");
  } catch (const Error& e) {
    CHECK(e.path() == "/settings/rope_scaling");
    CHECK_THAT(e.message(), Catch::Contains("beta_fast 1") && Catch::Contains("MLATransformerConfig.beta_fast = 32") &&
                                Catch::Contains("the --yarn-* arguments set non-MLA models only") &&
                                Catch::Contains("d98e8a64"));
  }
  // That is the only thing Megatron-LM's arguments cannot hold of Kimi-K2 (DeepSeek-V3's shape: MLA,
  // 384 experts, one shared expert, sigmoid router): with MLATransformerConfig's betas it exports.
  ArchConfig kimi_default_betas = kimi;
  kimi_default_betas.settings.rope_scaling->beta_fast = 32.0;
  kimi_default_betas.settings.rope_scaling->beta_slow = 1.0;
  const auto k = check_megatron(kimi_default_betas, export_config(kimi_default_betas, ExportTarget::megatron).text);
  CHECK(k.at("--num-experts") == "384");
  CHECK(k.count("--multi-latent-attention") == 1);
  // Llama-3.1-8B, llama3: --use-rope-scaling --rope-scaling-factor 8 (low 1, high 4, 8192 are
  // Megatron's fixed values).
  const ArchConfig llama = load_arch_config(source_dir + "/tests/data/hf/llama-3.1-8b.json");
  const auto l = check_megatron(llama, export_config(llama, ExportTarget::megatron).text);
  CHECK(l.count("--use-rope-scaling") == 1);
  CHECK(l.at("--rope-scaling-factor") == "8");
  CHECK(l.at("--position-embedding-type") == "rope");
  ArchConfig other_window = llama;
  other_window.settings.rope_scaling->original_max_position_embeddings = 4096;
  CHECK_THROWS_WITH(export_config(other_window, ExportTarget::megatron),
                    Catch::Contains("original_max_position_embeddings 4096") && Catch::Contains("fixes it at 8192"));
  // Phi-3-mini-4k: rope_scaling null, no scaling argument (its sliding window is refused first).
  ArchConfig phi = load_arch_config(source_dir + "/tests/data/hf/phi-3-mini-4k.json");
  CHECK_FALSE(phi.settings.rope_scaling.has_value());
  // A GQA yarn (as Qwen's long-context recipe): --position-embedding-type yarn and the yarn_ arguments.
  ArchConfig yarn_gqa = load_arch_config(source_dir + "/tests/data/hf/qwen3-8b.json");
  RopeScaling yarn;
  yarn.type = RopeScalingType::yarn;
  yarn.factor = 4.0;
  yarn.original_max_position_embeddings = 32768;
  yarn_gqa.settings.rope_scaling = yarn;
  yarn_gqa.settings.max_position_embeddings = 131072;
  const auto q = check_megatron(yarn_gqa, export_config(yarn_gqa, ExportTarget::megatron).text);
  CHECK(q.at("--position-embedding-type") == "yarn");
  CHECK(q.at("--rotary-scaling-factor") == "4");
  CHECK(q.at("--yarn-original-max-position-embeddings") == "32768");
  CHECK(q.count("--rope-type") == 0);
  // longrope and dynamic have no Megatron argument.
  ArchConfig longrope = yarn_gqa;
  longrope.settings.rope_scaling->type = RopeScalingType::longrope;
  CHECK_THROWS_WITH(export_config(longrope, ExportTarget::megatron), Catch::Contains("longrope rope scaling"));
  CHECK_THROWS_WITH(export_config(longrope, ExportTarget::torchtitan), Catch::Contains("longrope rope scaling"));

  // torchtitan: Llama-3.1 as ComplexRoPE with llama scaling (CosSinRoPE refuses it), stated.
  const ExportedConfig t = export_config(llama, ExportTarget::torchtitan);
  check_torchtitan(t.text);
  CHECK_THAT(t.text, Catch::Contains("rope = ComplexRoPE.Config(") &&
                         Catch::Contains("scaling=\"llama\", scaling_factor=8.0, low_freq_factor=1.0, "
                                         "high_freq_factor=4.0, original_max_position_embeddings=8192"));
  CHECK(std::any_of(t.not_expressed.begin(), t.not_expressed.end(),
                    [](const std::string& n) { return n.find("ComplexRoPE") != std::string::npos; }));
  // A GQA yarn with transformers' default attention factor 0.1 ln 4 + 1 has no qwen3 form.
  CHECK_THROWS_WITH(export_config(yarn_gqa, ExportTarget::torchtitan),
                    Catch::Contains("pure rotation") && Catch::Contains("b5bcd76c"));
  // Unscaled: CosSinRoPE with no scaling keyword.
  const ArchConfig qwen = load_arch_config(source_dir + "/tests/data/hf/qwen3-8b.json");
  const std::string plain = export_config(qwen, ExportTarget::torchtitan).text;
  CHECK_THAT(plain, Catch::Contains("rope = CosSinRoPE.Config("));
  CHECK(plain.find("scaling=") == std::string::npos);
}
