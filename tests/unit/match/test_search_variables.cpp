// Tests of the search-variable table (libbudget/src/match/search_space.hpp): each row's config
// field, and the KV-structure values the rows give a GQA and an MLA baseline (the KV latent is a
// row like head_dim and num_kv_heads; its MLA-only scope decides where it is searched).

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/config_io.hpp"
#include "budget/match.hpp"
#include "match/search_space.hpp"
#include "support/accounting_fixtures.hpp"

using namespace budget;
using match_detail::search_variable;
using match_detail::search_variables;

namespace {

ArchConfig deepseek_v2_lite() {
  return load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/tests/data/hf/deepseek-v2-lite.json");
}

}  // namespace

TEST_CASE("each search variable's row names its config field", "[match]") {
  const ArchConfig gqa = test::paper_200m_baseline();
  const ArchConfig mla = deepseek_v2_lite();
  REQUIRE(mla.attention.mla);
  // By hand, field by field: the value each row reads from a config.
  const std::vector<std::pair<const char*, std::int64_t>> gqa_values{
      {"head_dim", gqa.attention.head_dim},   {"num_kv_heads", gqa.attention.num_kv_heads},
      {"hidden_size", gqa.hidden_size},       {"num_experts", gqa.ffn.num_experts},
      {"expert_dim", gqa.ffn.expert_dim},     {"num_heads", gqa.attention.num_heads},
      {"num_layers", gqa.num_layers},         {"top_k", gqa.ffn.top_k},
      {"kv_lora_rank", 0},                    {"shared_expert_dim", gqa.ffn.shared_expert_dim}};
  for (const auto& [name, value] : gqa_values) {
    INFO(name);
    CHECK(config_value(search_variable(name), gqa) == value);
  }
  CHECK(config_value(search_variable("kv_lora_rank"), mla) == mla.attention.mla->kv_lora_rank);
  CHECK(config_value(search_variable("head_dim"), mla) == mla.attention.mla->qk_head_dim());
  // A dense config's expert width is its dense FFN width.
  const ArchConfig dense = test::toy_dense();
  CHECK(config_value(search_variable("expert_dim"), dense) == dense.ffn.dense_dim);

  // assign() writes the field; a GQA config has no latent to write.
  for (const match_detail::SearchVariable& v : search_variables()) {
    ArchConfig c = mla;
    assign(v, c, 4242);
    INFO(v.name);
    CHECK(config_value(v, c) == 4242);
  }
  ArchConfig c = gqa;
  assign(search_variable("kv_lora_rank"), c, 512);
  CHECK_FALSE(c.attention.mla);
  CHECK(config_value(search_variable("kv_lora_rank"), c) == 0);
  CHECK_THROWS_AS(search_variable("q_lora_rank"), std::logic_error);
}

TEST_CASE("an MLA baseline searches its KV latent and holds head_dim and its one KV head", "[match]") {
  const ArchConfig b = deepseek_v2_lite();
  const Workload workload = paper_workload();
  const LoopSpec loop = LoopSpec::smelt();
  MatchConstraints c = default_constraints(b);
  // Ranges that hold the baseline's values and others: only the baseline's are structure values.
  c.num_kv_heads = {1, 4, 1};
  c.head_dim = {b.attention.head_dim - 64, b.attention.head_dim + 64, 32};
  c.kv_lora_rank = {64, 1024, 64};
  c.max_structures = std::int64_t{1} << 30;
  const match_detail::SearchSpace space(b, loop, workload, c);
  CHECK(space.structure_values(search_variable("num_kv_heads")) == std::vector<std::int64_t>{1});
  CHECK(space.structure_values(search_variable("head_dim")) == std::vector<std::int64_t>{b.attention.head_dim});
  std::vector<std::int64_t> latents;
  for (std::int64_t r = 64; r <= 1024; r += 64) latents.push_back(r);
  CHECK(space.structure_values(search_variable("kv_lora_rank")) == latents);
  // Brute force: one KV structure per (depth, top_k, latent), each with the KV elements of its config.
  std::set<std::int64_t> seen;
  for (const match_detail::KvStructure& kv : space.kv_structures()) {
    CHECK(kv.num_kv_heads == 1);
    CHECK(kv.head_dim == b.attention.head_dim);
    seen.insert(kv.kv_lora);
    const ArchConfig shape = space.structure_config(kv, b.hidden_size, b.attention.num_heads);
    REQUIRE(shape.attention.mla);
    CHECK(shape.attention.mla->kv_lora_rank == kv.kv_lora);
    const double dkv = static_cast<double>(shape.kv_elements_per_token()) /
                           static_cast<double>(b.kv_elements_per_token()) - 1.0;
    CHECK(kv.kv_dev == Approx(dkv).margin(1e-12));
  }
  CHECK(space.kv_structures().size() ==
        static_cast<std::size_t>(c.num_layers.size() * c.top_k.size()) * latents.size());
  CHECK(seen == std::set<std::int64_t>(latents.begin(), latents.end()));
}

TEST_CASE("a GQA baseline has no KV latent: a latent range is not searched", "[match]") {
  const ArchConfig b = test::paper_200m_baseline();
  const Workload workload = paper_workload();
  const LoopSpec loop = LoopSpec::smelt();
  MatchConstraints c = default_constraints(b);
  const MatchConstraints without = c;
  c.kv_lora_rank = {16, 512, 16};
  const match_detail::SearchSpace space(b, loop, workload, c);
  CHECK(space.structure_values(search_variable("kv_lora_rank")) == std::vector<std::int64_t>{0});
  for (const match_detail::KvStructure& kv : space.kv_structures()) CHECK(kv.kv_lora == 0);
  // The same KV structures as without the range, and the same space size (the latent is no factor).
  const match_detail::SearchSpace plain(b, loop, workload, without);
  CHECK(space.kv_structures().size() == plain.kv_structures().size());
  CHECK(space.space_size() == plain.space_size());
}
