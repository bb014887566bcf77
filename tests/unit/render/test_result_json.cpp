// The JSON printers of the library's results (issue 40 item 5: render/ is the only printer): a
// layout and its memory (budget_render/memory.hpp), a step time on a cluster
// (budget_render/cluster_time.hpp), a layout search and its recipe (budget_render/layout_search.hpp)
// and a fit's summary (budget_render/fit.hpp), each from a struct built by hand here. What the
// printers must agree with is the library's: the run-file reader reads the written layout back, and
// the search's run is run_cost()'s. The goldens (tests/golden) hold the whole documents byte for byte.

#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "budget/cluster_time.hpp"
#include "budget/layout_fields.hpp"
#include "budget/layout_search.hpp"
#include "budget/parallel_layout.hpp"
#include "budget/run_fit.hpp"
#include "budget/scaling_fit.hpp"
#include "budget/training_memory.hpp"
#include "budget_render/cluster_time.hpp"
#include "budget_render/fit.hpp"
#include "budget_render/layout_search.hpp"
#include "budget_render/memory.hpp"

using namespace budget;
using json = nlohmann::ordered_json;

namespace {

/// A layout far from the defaults, set through the layout's field table: TP 2 with SP, PP 2 (first
/// stage 3 layers), DP 2, micro-batch 2 of 4, full:1 recompute, FP8 delayed, the flex dispatcher.
ParallelLayout unusual_layout() {
  using V = LayoutFieldValue;
  const std::vector<std::pair<const char*, V>> settings{
      {"tp", V{std::int64_t{2}}},          {"sequence_parallel", V{true}},  {"pp", V{std::int64_t{2}}},
      {"dp", V{std::int64_t{2}}},          {"micro_batch_size", V{std::int64_t{2}}},
      {"micro_batches", V{std::int64_t{4}}}, {"seq_len", V{std::int64_t{512}}}, {"recompute", V{std::string("full:1")}},
      {"distributed_optimizer", V{true}},  {"first_stage_layers", V{std::int64_t{3}}}, {"fp8", V{std::string("delayed")}},
      {"dispatcher", V{std::string("flex")}}, {"moe_permute_fusion", V{true}}, {"cross_entropy_fusion", V{true}},
      {"capacity_factor", V{1.25}}};
  ParallelLayout l;
  for (const auto& [name, value] : settings) find_layout_field(name)->set(l, value, name);
  return l;
}

/// One run line of a one-node B200 run of a dense 8-layer model (vocabulary 1000) whose "layout" is
/// `layout` (the form of data/runs/*.jsonl, budget/run_fit.hpp).
std::string run_line(const json& layout) {
  return std::string(
             R"({"id":"x","gpu":"NVIDIA B200","hf_config":{"architectures":["LlamaForCausalLM"],"model_type":"llama",)"
             R"("hidden_size":256,"num_hidden_layers":8,"num_attention_heads":8,"num_key_value_heads":8,)"
             R"("intermediate_size":1024,"vocab_size":1000},"cluster":{"schema":"budget.cluster","schema_version":1,)"
             R"("gpu":{"name":"NVIDIA B200","memory_GiB":100,"compute":{"datasheet":{"bf16_dense_TFLOPs":2250,)"
             R"("source":"x"}}},"gpus_per_node":8,"nodes":1,"intra_node":{"bandwidth_GBps":900,"latency_us":3},)"
             R"("inter_node":{"bandwidth_GBps":50,"latency_us":5}},"layout":)") +
         layout.dump() + R"(,"step_time_s":1})";
}

/// A memory result of `layout` with one stage, built by hand.
TrainingMemory memory_of(const ParallelLayout& layout, const DispatcherBufferBytes& buffers) {
  StageMemory s;
  s.stored_layers = {1, 2, 3};
  s.executed_layers = 3, s.in_flight_micro_batches = 2;
  s.dense_params = 1000, s.expert_params = 24;
  s.by_component = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  s.dispatcher_buffers = buffers;
  s.outside_allocator_bytes = buffers.total();
  TrainingMemory m;
  m.layout = layout;
  m.padded_vocab = 1024;
  m.peak_bytes = s.peak_bytes = 3.5e9;
  m.capacity_bytes = 8e10, m.headroom_bytes = 7.65e10;
  m.fits = true;
  m.stages = {s};
  m.notes = {"a note"};
  return m;
}

}  // namespace

TEST_CASE("result JSON: a layout's written object reads back as a run file's layout", "[render][json][layout]") {
  const ParallelLayout l = unusual_layout();
  const json written = render::layout_json(l, {l.padded_vocab(1000)});
  // Every row, in the field table's order.
  std::vector<std::string> keys;
  for (const auto& [key, value] : written.items()) keys.push_back(key);
  std::vector<std::string> rows;
  for (const LayoutField& f : layout_fields()) rows.emplace_back(f.name);
  CHECK(keys == rows);
  CHECK(written.at("tp") == 2);
  CHECK(written.at("fp8") == "delayed");
  CHECK(written.at("capacity_factor") == 1.25);
  CHECK(written.at("padded_vocab") == l.padded_vocab(1000));
  // The run-file reader (runs/run_reader.cpp) reads it back, its derived fields checked against the
  // layout read, and writing that again gives the same object.
  const ParallelLayout back = parse_measured_runs(run_line(written), "r.jsonl").at(0).layout;
  CHECK(render::layout_json(back, {back.padded_vocab(1000)}) == written);
}

TEST_CASE("result JSON: a training memory's layout, memory and stages", "[render][json][memory]") {
  const json j = render::training_memory_json(memory_of(unusual_layout(), {}));
  CHECK(j.at("layout") == render::layout_json(unusual_layout(), {1024}));
  const json& m = j.at("memory");
  CHECK(m.at("peak_bytes") == 3.5e9);
  CHECK(m.at("fits") == true);
  REQUIRE(m.at("stages").size() == 1);
  const json& s = m.at("stages").at(0);
  CHECK(s.at("params") == 1024);  // dense + expert
  CHECK(s.at("expert_params") == 24);
  CHECK(s.at("by_component") == json{{"weights", 1.0},     {"gradients", 2.0}, {"optimizer_states", 3.0},
                                     {"activations", 4.0}, {"logits", 5.0},    {"buffers", 6.0}});
  CHECK_FALSE(s.contains("outside_allocator_bytes"));  // absent without the flex dispatcher's buffers
  CHECK_FALSE(s.contains("dispatcher_buffers"));
  CHECK(j.at("notes") == json{"a note"});
  const json flex = render::training_memory_json(memory_of(unusual_layout(), {3.0e8, 2.0e8, 32.0 * 1024 * 1024}));
  const json& stage = flex.at("memory").at("stages").at(0);
  CHECK(stage.at("outside_allocator_bytes") == 3.0e8 + 2.0e8 + 32.0 * 1024 * 1024);
  CHECK(stage.at("dispatcher_buffers") ==
        json{{"nvlink_bytes", 3.0e8}, {"rdma_bytes", 2.0e8}, {"workspace_bytes", 32.0 * 1024 * 1024}});
}

TEST_CASE("result JSON: a cluster step time's parts, stages and what timed it", "[render][json][time]") {
  ClusterStepTime t;
  t.seconds_per_step = 2.0;
  t.tokens_per_step = 8192;
  t.by_component = {{"compute", 1.5, false}, {"dp", 0.5, true}};
  StageTime stage;
  stage.pipeline_rank = 0;
  stage.seconds = 2.0;
  t.stages = {stage};
  t.profile_gpu = "NVIDIA H200";
  t.profile_gpu_is_cluster_gpu = false;
  const json j = render::cluster_step_time_json(t);
  CHECK(j.at("seconds_per_step") == 2.0);
  CHECK(j.at("by_component") == json{{"compute", {{"seconds", 1.5}, {"overlapped", false}}},
                                     {"dp", {{"seconds", 0.5}, {"overlapped", true}}}});
  CHECK(j.at("stages").at(0).at("seconds") == 2.0);
  CHECK(j.at("compute_timed_on").at("profile_gpu") == "NVIDIA H200");
  CHECK(j.at("compute_timed_on").at("same_gpu_as_cluster") == false);
  CHECK(j.at("compute_timed_on").at("run_fit").is_null());
  // One validation entry per cost line the library judges (cost_line_validation()).
  CHECK(j.at("validation").size() == cost_line_validation(t).size());
  t.run_fit_precision = Precision::fp8_delayed;
  CHECK(render::cluster_step_time_json(t).at("compute_timed_on").at("run_fit") == "fp8-delayed");
  // A run: run_cost()'s numbers under their names.
  const RunCost run = run_cost(t, 8, 8192.0 * 100);
  CHECK(render::run_cost_json(run) == json{{"wall_clock_seconds", 200.0}, {"gpu_hours", 200.0 * 8 / 3600}, {"steps", 100.0}});
}

TEST_CASE("result JSON: a layout search gives each layout's run for run_tokens", "[render][json][search]") {
  LayoutSearchResult found;
  found.enumerated = 10;
  found.valid = 4;
  found.fitting = 2;
  RankedLayout r;
  r.memory = memory_of(unusual_layout(), {});
  r.memory.layout.gpus = 8;
  r.time.seconds_per_step = 2.0;
  r.time.tokens_per_step = 8192;
  found.layouts = {r};
  ClusterSpec cluster;
  cluster.gpu_name = "NVIDIA B200";
  cluster.nodes = 1;
  cluster.gpus_per_node = 8;
  LayoutSearchOptions o;
  o.gpus = 8;
  json j = render::layout_search_json(found, "x", cluster, o);
  CHECK(j.at("cluster") == "NVIDIA B200");  // no cluster name: its GPU's
  CHECK(j.at("run_tokens").is_null());
  CHECK(j.at("recipe") == render::layout_recipe_json(o.recipe));
  REQUIRE(j.at("layouts").size() == 1);
  CHECK(j.at("layouts").at(0).at("layout") == render::training_memory_json(r.memory).at("layout"));
  CHECK_FALSE(j.at("layouts").at(0).at("time").contains("run"));
  o.run_tokens = 1e12;
  j = render::layout_search_json(found, "x", cluster, o);
  CHECK(j.at("run_tokens") == 1e12);
  CHECK(j.at("layouts").at(0).at("time").at("run") == render::run_cost_json(run_cost(r.time, 8, 1e12)));
  CHECK(j.at("layouts").at(0).at("time").at("run").at("steps") == Approx(1e12 / 8192));
}

TEST_CASE("result JSON: the search's recipe object, held fields and searched ones", "[render][json][search]") {
  LayoutRecipe recipe;
  static_cast<TrainingRecipe&>(recipe.base) = unusual_layout();
  const json searched = render::layout_recipe_json(recipe);
  std::vector<std::string> keys;
  for (const auto& [key, value] : searched.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"precision", "fp8", "fp8_param_gather", "bf16_main_grads",
                                         "precision_aware_optimizer", "main_params_dtype", "exp_avg_dtype",
                                         "exp_avg_sq_dtype", "micro_batch_size", "recompute", "distributed_optimizer",
                                         "fsdp", "cpu_offload_layers", "dispatcher", "moe_permute_fusion",
                                         "cross_entropy_fusion", "capacity_factor"});
  CHECK(searched.at("fp8") == "delayed");
  CHECK(searched.at("dispatcher") == "flex");
  CHECK(searched.at("capacity_factor") == 1.25);
  // Searched: null.
  CHECK(searched.at("micro_batch_size").is_null());
  CHECK(searched.at("recompute").is_null());
  CHECK(searched.at("distributed_optimizer").is_null());
  recipe.hold_micro_batch_size = recipe.hold_recompute = recipe.hold_distributed_optimizer = true;
  const json held = render::layout_recipe_json(recipe);
  CHECK(held.at("micro_batch_size") == 2);
  CHECK(held.at("recompute") == "full");
  CHECK(held.at("distributed_optimizer") == true);
}

TEST_CASE("result JSON: a fit's summary, held b and compute range where so", "[render][json][fit]") {
  FitSummary s;
  s.points = 12;
  s.rmse = 0.002;
  json j = render::fit_summary_json(s);
  CHECK(j.at("points") == 12);
  CHECK(j.at("rmse") == 0.002);
  CHECK_FALSE(j.contains("fixed_b_value"));
  CHECK_FALSE(j.contains("compute_range"));
  s.b_fixed = true;
  s.fixed_b_value = 0.3;
  s.min_compute = 1e18;
  s.max_compute = 1e20;
  j = render::fit_summary_json(s);
  CHECK(j.at("fixed_b_value") == 0.3);
  CHECK(j.at("compute_range") == json{1e18, 1e20});
  CHECK(j.at("converged") == s.usable());
}
