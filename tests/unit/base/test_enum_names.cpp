// One name table per enum (base/enum_names.hpp): the table's checks, the lookups, the reader that
// parses with a table, and every public enum's to_string() over all of its enumerators (each named,
// no two alike), with the names a user types spelled here by hand.

#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "budget/attention_cost.hpp"
#include "budget/cluster.hpp"
#include "budget/communication.hpp"
#include "budget/config.hpp"
#include "budget/config_io.hpp"
#include "budget/doc_lengths.hpp"
#include "budget/error.hpp"
#include "budget/export.hpp"
#include "budget/kernel_class.hpp"
#include "budget/match.hpp"
#include "budget/ops.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/scaling_fit.hpp"
#include "budget/time_model.hpp"
#include "budget/workload.hpp"
#include "base/enum_names.hpp"
#include "base/json_reader.hpp"

using namespace budget;
using budget::detail::EnumName;
using budget::detail::EnumNames;

namespace {

enum class Colour { red, green, blue };

constexpr auto colour_names =
    detail::enum_names<Colour::blue>({{Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}});

/// to_string() of every enumerator 0..last: none "?" and none twice.
template <class Enum>
std::set<std::string> all_names(Enum last) {
  std::set<std::string> names;
  using U = std::underlying_type_t<Enum>;
  for (U i = 0; i <= static_cast<U>(last); ++i) {
    const std::string name(to_string(static_cast<Enum>(i)));
    INFO("enumerator " << +i << " is \"" << name << "\"");
    CHECK(name != "?");
    CHECK(!name.empty());
    CHECK(names.insert(name).second);
  }
  CHECK(names.size() == static_cast<std::size_t>(static_cast<U>(last)) + 1);
  return names;
}

}  // namespace

TEST_CASE("enum names: a table covers every enumerator once, in order", "[base][enum_names]") {
  STATIC_REQUIRE(detail::covers_in_order(colour_names, Colour::blue));
  constexpr EnumNames<Colour, 2> missing{{{Colour::red, "red"}, {Colour::green, "green"}}};
  STATIC_REQUIRE_FALSE(detail::covers_in_order(missing, Colour::blue));
  constexpr EnumNames<Colour, 3> reordered{{{Colour::green, "green"}, {Colour::red, "red"}, {Colour::blue, "blue"}}};
  STATIC_REQUIRE_FALSE(detail::covers_in_order(reordered, Colour::blue));
  constexpr EnumNames<Colour, 3> unnamed{{{Colour::red, "red"}, {Colour::green, ""}, {Colour::blue, "blue"}}};
  STATIC_REQUIRE_FALSE(detail::covers_in_order(unnamed, Colour::blue));
  // In a constant expression a bad table does not compile; evaluated at run time, it throws.
  const EnumName<Colour> two_rows[] = {{Colour::red, "red"}, {Colour::blue, "blue"}};
  CHECK_THROWS_AS(detail::enum_names<Colour::blue>(two_rows), std::logic_error);
}

TEST_CASE("enum names: lookups both ways and the allowed list", "[base][enum_names]") {
  STATIC_REQUIRE(detail::name_of(colour_names, Colour::green) == "green");
  CHECK(detail::name_of(colour_names, static_cast<Colour>(9)) == "?");
  CHECK(detail::name_of(colour_names, static_cast<Colour>(9), "unknown") == "unknown");
  STATIC_REQUIRE(detail::enum_named(colour_names, "blue") == Colour::blue);
  CHECK_FALSE(detail::enum_named(colour_names, "Blue"));  // exact, case-sensitive
  CHECK_FALSE(detail::enum_named(colour_names, ""));
  CHECK(detail::names_list(colour_names) == "red, green, blue");
  CHECK(detail::names_list(colour_names, "\"") == "\"red\", \"green\", \"blue\"");
}

TEST_CASE("enum names: a reader takes a table's names, its fallback when absent, and lists them on error",
          "[base][enum_names]") {
  const nlohmann::json doc = nlohmann::json::parse(R"({"colour": "green", "typo": "bleu", "number": 3})");
  const detail::ObjectReader r(doc, "f.json", "");
  CHECK(r.enum_or("colour", Colour::red, colour_names) == Colour::green);
  CHECK(r.enum_or("absent", Colour::blue, colour_names) == Colour::blue);
  CHECK_THROWS_WITH(r.enum_or("typo", Colour::red, colour_names),
                    "f.json: /typo: value \"bleu\" is not allowed; allowed: \"red\", \"green\", \"blue\" (did you mean "
                    "\"blue\"?)");
  CHECK_THROWS_AS(r.enum_or("number", Colour::red, colour_names), Error);
}

TEST_CASE("enum names: every public enum names each enumerator, once", "[base][enum_names]") {
  all_names(QkNorm::full);
  all_names(LayerAttention::chunked);
  all_names(LayerMixer::none);
  all_names(LayerFfn::none);
  all_names(NormKind::layernorm);
  all_names(RouterScore::sigmoid);
  all_names(RopeScalingType::longrope);
  all_names(AttentionMask::document);
  all_names(AttentionLaunch::dense_masked);
  all_names(PackingOrder::shuffled);
  all_names(CostMethod::simulation);
  all_names(LengthSourceKind::lengths_file);
  all_names(LengthFileFormat::u64);
  all_names(KernelClass::not_timed);
  const std::set<std::string> ops = all_names(OpKind::attention_gate);
  CHECK(ops.count("qkv_projection") == 1);
  CHECK(ops.count("router_softmax_fp32") == 1);
  CHECK(ops.count("delta_rule_scan") == 1);
  all_names(RowOrder::predicted_time_within_accuracy);
  all_names(SearchStatus::over_search_limit);
  all_names(FitTermination::failure);
  all_names(TimeClass::glue);
  all_names(TimeQuery::Pass::forward_backward);
  all_names(ComputeSource::datasheet);
  all_names(CollectiveKind::send_recv);
  all_names(ExportTarget::torch);
  all_names(RecomputeKind::full);
  all_names(TrainingPrecision::fp32);
}

TEST_CASE("enum names: the names files and flags spell, and what a cast value prints", "[base][enum_names]") {
  CHECK(to_string(LengthFileFormat::automatic) == "auto");
  CHECK(parse_length_file_format("u32") == LengthFileFormat::u32);
  CHECK_THROWS_WITH(parse_length_file_format("u16", "--format"),
                    "--format: length file format \"u16\" is not allowed; allowed: auto, text, u32, u64");
  CHECK(to_string(LengthSourceKind::lengths_file) == "lengths");
  CHECK(to_string(TimeQuery::Pass::forward_backward) == "forward+backward");
  CHECK(to_string(FitTermination::function_tolerance) == "ftol_rel reached");
  CHECK(to_string(QkNorm::per_head) == "per_head");
  CHECK(to_string(AttentionLaunch::dense_masked) == "dense_masked");
  CHECK(parse_export_target("Megatron-LM") == ExportTarget::megatron);
  CHECK(parse_export_target("torchtitan") == ExportTarget::torchtitan);
  CHECK_THROWS_WITH(parse_export_target("jax", "--to"),
                    "--to: value \"jax\" is not an export target; allowed: native, hf, megatron, torchtitan, torch");
  CHECK_THROWS_WITH(parse_training_precision("bf8", "--precision"),
                    "--precision: value \"bf8\" is not allowed; allowed: bf16, fp16, fp32");
  CHECK(parse_recompute("selective", "x").kind == RecomputeKind::selective);
  // Outside the enum (a cast integer): the fallback each to_string() has always printed.
  CHECK(to_string(static_cast<QkNorm>(7)) == "?");
  CHECK(to_string(static_cast<ExportTarget>(7)) == "unknown");
  CHECK(to_string(static_cast<FitTermination>(7)) == "unknown");
  CHECK(to_string(static_cast<RowOrder>(7)) == "shown_deviation");
}

TEST_CASE("enum names: the native reader spells the config's enums as the writer does", "[base][enum_names][config]") {
  const std::string text = R"({"name": "n", "hidden_size": 256, "num_layers": 2, "vocab_size": 100, "norm": "layernorm",
    "attention": {"num_heads": 4, "head_dim": 64, "qk_norm": "per_head", "sliding_window": 16,
                  "layer_types": ["sliding", "full"]},
    "ffn": {"num_experts": 4, "top_k": 2, "expert_dim": 64},
    "settings": {"router_score": "sigmoid"}})";
  const ArchConfig c = parse_arch_config(text, "n.json");
  CHECK(c.norm == NormKind::layernorm);
  CHECK(c.attention.qk_norm == QkNorm::per_head);
  REQUIRE(c.attention.layer_types.size() == 2);
  CHECK(c.attention.layer_types[0] == LayerAttention::sliding);
  CHECK(c.attention.layer_types[1] == LayerAttention::full);
  CHECK(c.settings.router_score == RouterScore::sigmoid);
  const ArchConfig again = parse_arch_config(arch_config_to_json(c), "again.json");
  CHECK(again.norm == c.norm);
  CHECK(again.attention.qk_norm == c.attention.qk_norm);
  CHECK(again.attention.layer_types == c.attention.layer_types);
  CHECK(again.settings.router_score == c.settings.router_score);
  CHECK_THROWS_WITH(parse_arch_config(R"({"hidden_size": 8, "num_layers": 1, "norm": "batchnorm",
      "attention": {"num_heads": 1, "head_dim": 8}, "ffn": {"dense_dim": 8}})",
                                      "b.json"),
                    Catch::Contains("/norm: value \"batchnorm\" is not allowed; allowed: \"rmsnorm\", \"layernorm\""));
}
