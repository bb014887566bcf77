// Loop placement (ParallelLayout::loop_placement; docs/cluster.md, "Loops across pipeline stages"):
// the wrap mapping of an 8-layer config whose layers 3-6 run twice onto PP 2 × V 3 (issue 41's
// example, chunk by chunk by hand), its memory (weights once per stored layer, activations per
// execution at the schedule's in-flight counts), the validation of each placement, the replicated
// copies' gradient all-reduce, and the wrap layouts the searches try.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/communication.hpp"
#include "budget/error.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/pipeline_schedule.hpp"
#include "budget/training_memory.hpp"
#include "search/search_pipelines.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

/// 8 nodes of 8 test GPUs of 1 TiB, with no links and no peak given.
ClusterSpec roomy_cluster() {
  ClusterSpec c = test::test_nodes(8, 8, std::int64_t{1} << 40);
  c.intra_node = c.inter_node = {};
  c.compute = {};
  return c;
}

/// 8 layers (the paper's 200M baseline's widths, no vocabulary), layers 3-6 run twice: 12 executed.
ArchConfig eight_layers_looped() {
  ArchConfig c = test::paper_200m_baseline();
  c.num_layers = 8;
  c.loop = LoopConfig{3, 6, 2};
  return c;
}

/// PP × V on PP GPUs, m micro-batches of one sequence of 4096, the loop placed as asked.
ParallelLayout pipeline(std::int64_t pp, std::int64_t v, std::int64_t m, LoopPlacement placement) {
  ParallelLayout l = test::pipeline_of(pp, m);
  l.virtual_stages = v;
  l.loop_placement = placement;
  return l;
}

}  // namespace

TEST_CASE("loop placement: wrap maps layers 3-6 x2 of 8 onto PP 2 x V 3 chunk by chunk", "[cluster][loop]") {
  const ArchConfig c = eight_layers_looped();
  const ParallelLayout l = pipeline(2, 3, 2, LoopPlacement::wrap);
  REQUIRE(l.validation_error(c).empty());
  // 12 executions in 6 chunks of 2: c0 = r0 {1,2}, c1 = r1 {3,4}, c2 = r0 {5,6}, c3 = r1 {3,4 again},
  // c4 = r0 {5,6 again}, c5 = r1 {7,8} (issue 41).
  const std::vector<ModelChunk> chunks = model_chunks(c, l);
  const std::vector<std::vector<std::int64_t>> by_hand{{1, 2}, {3, 4}, {5, 6}, {3, 4}, {5, 6}, {7, 8}};
  REQUIRE(chunks.size() == 6);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    CHECK(chunks[i].executed_layers == by_hand[i]);
    CHECK(chunks[i].pipeline_rank == static_cast<std::int64_t>(i % 2));
  }
  // Each rank stores its 4 layers once and runs 6.
  const TrainingMemory m = training_memory(c, l, roomy_cluster());
  CHECK(m.stages[0].stored_layers == std::vector<std::int64_t>{1, 2, 5, 6});
  CHECK(m.stages[1].stored_layers == std::vector<std::int64_t>{3, 4, 7, 8});
  CHECK(m.stages[0].executed_layers == 6);
  CHECK(m.stages[1].executed_layers == 6);
  // Weights, gradients and optimizer states as the same 8 layers without the loop on PP 2 (4 stored
  // layers a rank, every layer of these widths the same size).
  ArchConfig plain = c;
  plain.loop.reset();
  const TrainingMemory p = training_memory(plain, pipeline(2, 1, 2, LoopPlacement::in_chunk), roomy_cluster());
  for (std::size_t s = 0; s < 2; ++s) {
    CHECK(m.stages[s].by_component.weights == p.stages[s].by_component.weights);
    CHECK(m.stages[s].by_component.gradients == p.stages[s].by_component.gradients);
    CHECK(m.stages[s].by_component.optimizer_states == p.stages[s].by_component.optimizer_states);
    CHECK(m.stages[s].share_ranks == 1);
  }
  // Activations per execution at the interleaved schedule's in-flight counts: with m = 2 rank 0
  // keeps all 6 chunk forwards (warm-up 2·1 + 2·2 = 6 = m·V), rank 1 min(6, 0 + 4 + 1) = 5; two
  // layers a chunk (no vocabulary: no embedding bytes).
  const double layer = layer_activation_bytes(c, 3, m.layout, false).total();
  CHECK(peak_saved_layer_executions({2, 2, 2, 2, 2, 2}, 2, 2) == std::vector<std::int64_t>{12, 10});
  CHECK(m.stages[0].in_flight_micro_batches == 6);
  CHECK(m.stages[1].in_flight_micro_batches == 5);
  CHECK(m.stages[0].by_component.activations == Approx(12 * layer).epsilon(1e-12));
  CHECK(m.stages[1].by_component.activations == Approx(10 * layer).epsilon(1e-12));
}

TEST_CASE("loop placement: each placement's validation", "[cluster][loop]") {
  const ArchConfig smelt = test::paper_200m_smelt();  // layers 4-9 x2 of 12: 18 executed
  // PP 2, one chunk a rank, 9 + 9 executions: layers 4-9 run on both ranks. in_chunk: the loop
  // crosses chunks; wrap: a layer on two ranks; replicated: valid.
  CHECK_THAT(pipeline(2, 1, 4, LoopPlacement::in_chunk).validation_error(smelt),
             Catch::Contains("crosses pipeline chunks 0 and 1") && Catch::Contains("--loop-placement"));
  CHECK_THAT(pipeline(2, 1, 4, LoopPlacement::wrap).validation_error(smelt),
             Catch::Contains("with loop placement wrap, layer 4 runs on pipeline ranks 0 and 1"));
  CHECK(pipeline(2, 1, 4, LoopPlacement::replicated).validation_error(smelt).empty());
  // PP 2 × V 3, 3 executions a chunk: {1-3} {4-6} {7-9} {4-6} {7-9} {10-12}: every layer on one rank.
  CHECK(pipeline(2, 3, 4, LoopPlacement::wrap).validation_error(smelt).empty());
  // Executed layers that do not divide: 18 over PP 4 × V 1.
  CHECK_THAT(pipeline(4, 1, 4, LoopPlacement::wrap).validation_error(smelt),
             Catch::Contains("18 executed layers do not divide by PP·V = 4·1"));
  CHECK(parse_loop_placement("wrap", "x") == LoopPlacement::wrap);
  CHECK_THROWS_WITH(parse_loop_placement("around", "--loop-placement"),
                    Catch::Contains("\"around\"") && Catch::Contains("in_chunk, wrap, replicated"));
}

TEST_CASE("loop placement: replicated copies' gradients all-reduced among the ranks sharing them", "[cluster][loop]") {
  const ArchConfig smelt = test::paper_200m_smelt();
  const ClusterSpec cluster = roomy_cluster();
  const TrainingMemory m = training_memory(smelt, pipeline(2, 1, 4, LoopPlacement::replicated), cluster);
  // Rank 0 stores 1-9, rank 1 4-12: layers 4-9 on both. One layer's parameters per GPU from the
  // unlooped config on PP 4 (rank 1 holds layers 4-6 alone: no vocabulary, no final norm).
  ArchConfig plain = smelt;
  plain.loop.reset();
  const double per_layer =
      training_memory(plain, pipeline(4, 1, 4, LoopPlacement::in_chunk), cluster).stages[1].dense_params / 3.0;
  for (const StageMemory& s : m.stages) {
    CHECK(s.share_ranks == 2);
    CHECK(s.shared_dense_params == Approx(6.0 * per_layer).epsilon(1e-12));
  }
  const std::vector<StageCommunication> comm = step_communication(smelt, m, cluster, CommOptions{});
  for (const StageCommunication& sc : comm) {
    const auto term = std::find_if(sc.terms.begin(), sc.terms.end(),
                                   [](const CommTerm& t) { return t.name == "loop_grad_all_reduce"; });
    REQUIRE(term != sc.terms.end());
    // bf16 training: fp32 main gradients, 4 bytes a parameter (experts' too), once a step, exposed.
    const StageMemory& s = m.stages[static_cast<std::size_t>(sc.pipeline_rank)];
    CHECK(term->size_bytes == Approx(4.0 * (s.shared_dense_params + s.shared_expert_params)).epsilon(1e-12));
    CHECK(term->group.size == 2);
    CHECK(term->calls_per_step == 1.0);
    CHECK_FALSE(term->overlapped);
  }
  // Wrapped, nothing is shared and nothing all-reduced across stages.
  const TrainingMemory w = training_memory(smelt, pipeline(2, 3, 4, LoopPlacement::wrap), cluster);
  for (const StageCommunication& sc : step_communication(smelt, w, cluster, CommOptions{})) {
    for (const CommTerm& t : sc.terms) CHECK(t.name != "loop_grad_all_reduce");
  }
}

TEST_CASE("loop placement: the wrap layouts the searches try", "[cluster][loop][search]") {
  const ArchConfig c = eight_layers_looped();
  // PP 2: 2 layers before the loop, 4 in it, 2 after. a = 1, k = 1: one chunk before and after, two a
  // pass (V 3, issue 41's example); k = 2: two before and after (V 4); a = 2: four a pass (V 5, 6).
  const std::vector<WrapSplit> splits = wrap_splits(c, 2);
  REQUIRE(splits.size() == 4);
  CHECK(splits[0].virtual_stages == 3);
  CHECK(splits[0].pipeline_layout == "Et*2|t*2|t*2|t*2|t*2|t*2L");
  CHECK(splits[1].virtual_stages == 4);
  CHECK(splits[1].pipeline_layout == "Et|t|t*2|t*2|t*2|t*2|t|tL");
  CHECK(splits[2].virtual_stages == 5);
  CHECK(splits[3].virtual_stages == 6);
  // Every wrap layout tried is valid as wrap: for each PP, each layer on one rank.
  for (const ArchConfig& config : {c, test::paper_200m_smelt()}) {
    for (std::int64_t pp = 2; pp <= 6; ++pp) {
      for (const WrapSplit& w : wrap_splits(config, pp)) {
        ParallelLayout l = pipeline(pp, w.virtual_stages, pp, LoopPlacement::wrap);
        l.split = PipelineSplit::per_stage(w.pipeline_layout, "wrap layout");
        INFO(config.name << " PP " << pp << " " << w.pipeline_layout);
        CHECK(l.validation_error(config).empty());
      }
    }
  }
  ArchConfig unlooped = c;
  unlooped.loop.reset();
  CHECK(wrap_splits(unlooped, 2).empty());
  CHECK(wrap_splits(c, 1).empty());
  // The search's pipelines: in_chunk alone without a loop; each placement with one; the held one alone.
  LayoutRecipe recipe;
  for (const SearchPipeline& p : search_pipelines(unlooped, 8, recipe)) CHECK(p.placement == LoopPlacement::in_chunk);
  const std::vector<SearchPipeline> all = search_pipelines(c, 8, recipe);
  for (const LoopPlacement placement : {LoopPlacement::in_chunk, LoopPlacement::wrap, LoopPlacement::replicated}) {
    CHECK(std::any_of(all.begin(), all.end(), [&](const SearchPipeline& p) { return p.placement == placement; }));
  }
  recipe.hold_loop_placement = true;
  recipe.base.loop_placement = LoopPlacement::wrap;
  for (const SearchPipeline& p : search_pipelines(c, 8, recipe)) CHECK(p.placement == LoopPlacement::wrap);
  // A held placement does not apply to a config without a loop (the baseline of a ranking).
  for (const SearchPipeline& p : search_pipelines(unlooped, 8, recipe)) CHECK(p.placement == LoopPlacement::in_chunk);
  CHECK(search_pipelines(unlooped, 8, recipe).size() == search_pipelines(unlooped, 8, LayoutRecipe{}).size());
}
