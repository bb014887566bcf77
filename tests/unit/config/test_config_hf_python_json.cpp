// Hugging Face configs holding Python's JSON extensions Infinity, -Infinity and NaN
// (config/hf_python_json.cpp, base/json_python_nonfinite.cpp; docs/config.md): the released
// nvidia/Nemotron-H-56B-Base-8K config (time_step_limit [0.0, Infinity]) read and counted by hand;
// a non-finite value where the reader needs a finite number refused naming file, key and value;
// every other input (native configs, tokens inside strings, broken texts) as strict as before.

#include <string>

#include <catch2/catch.hpp>

#include "budget/accounting.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/ops.hpp"
#include "base/json_reader.hpp"
#include "config/config_test_support.hpp"

using namespace budget;

namespace {

const std::string nonfinite_hf_data = std::string(BUDGET_TEST_DATA_DIR) + "/hf/";

std::string nonfinite_error_of(const std::string& text) { return test::config_text_error(text, "nonfinite.json"); }

/// A small Nemotron-H config (the published 56B's keys, small sizes) with `extra` keys appended.
std::string small_nemotron_h(const std::string& extra) {
  return R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 256,
    "num_hidden_layers": 3, "hybrid_override_pattern": "M*-", "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512, "mamba_num_heads": 8,
    "mamba_head_dim": 32, "ssm_state_size": 16, "n_groups": 2, "conv_kernel": 4, "vocab_size": 1024,
    "chunk_size": 128, "expand": 1, "use_bias": false, "use_conv_bias": true, "mlp_bias": false,
    "attention_bias": false, "mlp_hidden_act": "relu2", "tie_word_embeddings": false,
    "rms_norm_eps": 1e-05)" +
         extra + "}";
}

}  // namespace

TEST_CASE("python non-finite: Nemotron-H-56B's released config read and counted by hand", "[config][hf][json]") {
  const ArchConfig c = load_arch_config(nonfinite_hf_data + "refused/nemotron-h-56b-base-8k.json");
  const Budgets b = account(c, paper_workload());
  // "M-M-M-M*-..." 118 layers: 54 Mamba-2 (M), 10 attention (*), 54 MLP (-); H 8192.
  // M: norm 8192 + in_proj 8192·(2·16384 + 2·8·256 + 256) = 304,087,040 + conv (16384 + 4096)·4
  //   weights + 20,480 biases + A_log, D, dt_bias 3·256 + gated norm 16,384 + out_proj 16384·8192 =
  //   134,217,728: 438,432,512.
  // *: norm 8192 + q, o 2·8192·8192 + k, v 2·8192·1024: 151,003,136.
  // -: norm 8192 + up, down 2·8192·32768 (relu², no gate): 536,879,104.
  // 54·438,432,512 + 10·151,003,136 + 54·536,879,104 + final norm 8192 = 54,176,866,816.
  CHECK(b.non_embedding_params_total == 54'176'866'816LL);
  // Untied embedding and LM head 2·131072·8192; 56,324,350,464 in all: the 56B of the name.
  CHECK(b.embedding_params == 2LL * 131'072 * 8'192);
  // The Infinity stands in time_step_limit (dt's clamp at training, no weight): said in a note.
  bool noted = false;
  for (const std::string& note : c.notes) noted = noted || note.find("/time_step_limit/1: Infinity") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("python non-finite: a key that needs a finite number refuses one by file, key and value",
          "[config][hf][json]") {
  CHECK(nonfinite_error_of(small_nemotron_h("")) == "no error");
  CHECK(nonfinite_error_of(small_nemotron_h(R"(, "time_step_limit": [0.0, Infinity])")) == "no error");
  CHECK(nonfinite_error_of(small_nemotron_h(R"(, "time_step_limit": [-Infinity, NaN])")) == "no error");
  std::string text = small_nemotron_h("");
  text.replace(text.find("\"intermediate_size\": 512"), 24, "\"intermediate_size\": Infinity");
  const std::string infinite = nonfinite_error_of(text);
  CHECK_THAT(infinite, Catch::Contains("nonfinite.json") && Catch::Contains("/intermediate_size") &&
                           Catch::Contains("Infinity"));
  text = small_nemotron_h("");
  text.replace(text.find("\"hidden_size\": 256"), 18, "\"hidden_size\": NaN");
  CHECK_THAT(nonfinite_error_of(text), Catch::Contains("/hidden_size") && Catch::Contains("NaN"));
  text = small_nemotron_h("");
  text.replace(text.find("\"num_hidden_layers\": 3"), 22, "\"num_hidden_layers\":-Infinity");
  CHECK_THAT(nonfinite_error_of(text), Catch::Contains("/num_hidden_layers") && Catch::Contains("-Infinity"));
}

TEST_CASE("python non-finite: only Hugging Face configs, only bare tokens, strict otherwise", "[config][hf][json]") {
  // A native config may not hold them.
  CHECK_THAT(nonfinite_error_of(R"({"name": "x", "hidden_size": Infinity})"), Catch::Contains("not valid JSON"));
  // Tokens that are not a whole value, or a text broken otherwise too: the strict reader's error.
  CHECK_THAT(nonfinite_error_of(small_nemotron_h(R"(, "time_step_limit": [0.0, Infinityx])")),
             Catch::Contains("not valid JSON"));
  CHECK_THAT(nonfinite_error_of(small_nemotron_h(R"(, "time_step_limit": [0.0, Infinity)")),
             Catch::Contains("not valid JSON"));
  CHECK_THAT(nonfinite_error_of(small_nemotron_h(R"(, "time_step_limit": [0.0, Inf])")),
             Catch::Contains("not valid JSON"));
  CHECK_THAT(nonfinite_error_of(small_nemotron_h(R"(, Infinity: 1)")), Catch::Contains("not valid JSON"));
  // The reader's own marker in the text: left to the strict reader.
  CHECK_THAT(nonfinite_error_of(small_nemotron_h(R"(, "a": "budget-python-nonfinite:NaN", "b": NaN)")),
             Catch::Contains("not valid JSON"));
  // Nor spelled with escapes (a string decoding to the marker is never taken for a token).
  CHECK_THAT(nonfinite_error_of(small_nemotron_h(R"(, "a": "\u0001budget\u002dpython-nonfinite:NaN", "b": NaN)")),
             Catch::Contains("not valid JSON"));

  // The rewrite itself: tokens in strings untouched, each bare one listed by JSON pointer.
  std::vector<detail::PythonNonfinite> found;
  const auto doc = detail::parse_json_text_with_python_nonfinite(
      R"({"s": "NaN, Infinity", "a/b": [1, -Infinity, {"x": NaN}], "t": Infinity})", "t.json", found);
  REQUIRE(doc.has_value());
  CHECK((*doc)["s"] == "NaN, Infinity");
  REQUIRE(found.size() == 3);
  CHECK(found[0].pointer == "/a~1b/1");
  CHECK(found[0].token == "-Infinity");
  CHECK(found[1].pointer == "/a~1b/2/x");
  CHECK(found[1].token == "NaN");
  CHECK(found[2].pointer == "/t");
  CHECK(detail::number_text((*doc)["t"]) == "Infinity");
  CHECK(detail::number_text((*doc)["a/b"][1]) == "-Infinity");
  CHECK(detail::number_text((*doc)["a/b"][2]["x"]) == "NaN");
  // No token: nullopt (the strict reader's error stands); a bare top-level token is a document.
  CHECK_FALSE(detail::parse_json_text_with_python_nonfinite(R"({"a": 1)", "t.json", found).has_value());
  CHECK(detail::parse_json_text_with_python_nonfinite("NaN", "t.json", found).has_value());
  // Bytes that end inside a string or an escape: no read past the end.
  CHECK_FALSE(detail::parse_json_text_with_python_nonfinite(std::string("[NaN, \"\\", 7), "t.json", found).has_value());
}
