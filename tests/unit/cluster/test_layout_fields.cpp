// The layout's field table (budget/layout_fields.hpp, layout/layout_fields_json.cpp): complete (every
// field non-default in one layout, written and read back to an equal layout, compared member by
// member here rather than through the table), the bytes `layout --format json` wrote before the table
// (the schema-1 object, as training_memory_json() built it by hand), unknown keys, ranges, the alias
// "vp", derived fields and the written object read back as a run file's "layout".

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "budget/layout_fields.hpp"
#include "budget/layout_search.hpp"
#include "budget/run_fit.hpp"
#include "budget/training_memory.hpp"
#include "layout/layout_fields_json.hpp"
#include "support/cluster_fixtures.hpp"
#include "support/layout_compare.hpp"

using namespace budget;

namespace {

/// Every field away from its default (the split's first/last form; pipeline_layout: split_layout()).
ParallelLayout unusual_layout() {
  ParallelLayout l;
  l.gpus = 16;
  l.tp = 2;
  l.sequence_parallel = true;
  l.pp = 2;
  l.virtual_stages = 3;
  l.ep = 4;
  l.etp = 2;  // expert DP 16 / (2·4·2) = 1
  l.cp = 2;
  l.dp = 2;
  l.micro_batch_size = 2;
  l.micro_batches = 8;
  l.seq_len = 8192;
  l.recompute = {
      RecomputeKind::selective, 3, RecomputeMethod::uniform, {RecomputeModule::moe_act, RecomputeModule::mlp}};
  l.distributed_optimizer = true;
  l.precision = TrainingPrecision::fp16;
  l.cross_entropy_fusion = true;
  l.capacity_factor = 1.25;
  l.imbalance = 1.5;
  l.loop_placement = LoopPlacement::replicated;
  l.flash_attention = false;
  l.dropout = true;
  l.gradient_accumulation_fusion = false;
  l.split = PipelineSplit::first_last(3, 2);
  l.embedding_in_split = true;
  l.loss_in_split = true;
  l.fsdp = FsdpKind::megatron_fsdp;
  l.fsdp_sharding = FsdpSharding::optim_grads;
  l.distributed_optimizer_instances = 2;
  l.fp8 = Fp8Recipe::blockwise;
  l.fp8_param_gather = true;
  l.cpu_offload_layers = 1;
  l.dispatcher = MoeDispatcher::flex;
  l.moe_permute_fusion = true;
  l.optimizer_dtypes = {true, true, StateDtype::fp16, StateDtype::bf16, StateDtype::fp8};
  l.vocab_divisible_by = 128;
  l.moe_memory.grouped_gemm = true;
  return l;
}

ParallelLayout split_layout() {
  ParallelLayout l = unusual_layout();
  l.split = PipelineSplit::per_stage("Et|tt|tt|tt|tt|tL", "test");
  return l;
}

/// Member by member (not through the table), every member the table maps.
void check_equal_layouts(const ParallelLayout& a, const ParallelLayout& b) {
  CHECK(a.gpus == b.gpus);  // as given (0: derived), beside the sizes in effect
  CHECK(a.etp == b.etp);
  CHECK(a.dp == b.dp);
  test::check_same_sizes(a, b);
  CHECK(a.recompute.kind == b.recompute.kind);
  CHECK(a.recompute.full_layers == b.recompute.full_layers);
  CHECK(a.recompute.method == b.recompute.method);
  CHECK(a.recompute.modules == b.recompute.modules);
  CHECK(a.loop_placement == b.loop_placement);
  CHECK(a.fsdp_sharding == b.fsdp_sharding);
  CHECK(a.moe_memory.grouped_gemm == b.moe_memory.grouped_gemm);
  test::check_same_recipe_settings(a, b);
}

/// The object the table writes, with the fields it reads but does not write added (as a user would).
nlohmann::json written_object(const ParallelLayout& l, std::int64_t vocab_size) {
  nlohmann::json object = nlohmann::json::parse(detail::layout_fields_json(l, {l.padded_vocab(vocab_size)}).dump());
  for (const LayoutField& f : layout_fields()) {
    if (f.written) continue;
    object[std::string(f.name)] = std::visit([](const auto& v) { return nlohmann::json(v); }, f.get(l, {}));
  }
  return object;
}

ParallelLayout read_object(const nlohmann::json& object, std::int64_t vocab_size = 1000) {
  return detail::read_layout_fields(detail::ObjectReader(object, "test.json", "/layout"), vocab_size);
}

ParallelLayout read_text(const std::string& text) { return read_object(nlohmann::json::parse(text)); }

/// The schema-1 layout object as training_memory_json() wrote it by hand before the field table.
std::string schema1_layout_by_hand(const ParallelLayout& l, std::int64_t padded_vocab) {
  std::vector<std::string> modules;
  if (l.recompute.kind == RecomputeKind::selective) {
    if (l.recompute.modules.empty()) modules.push_back("core_attn");
    for (const RecomputeModule m : l.recompute.modules) modules.emplace_back(to_string(m));
  }
  const auto s = [](auto e) { return std::string(to_string(e)); };
  nlohmann::ordered_json layout{{"gpus", l.gpus},
                                {"tp", l.tp},
                                {"sequence_parallel", l.sequence_parallel_active()},
                                {"pp", l.pp},
                                {"virtual_stages", l.virtual_stages},
                                {"ep", l.ep},
                                {"etp", l.expert_tp()},
                                {"cp", l.cp},
                                {"dp", l.data_parallel()},
                                {"expert_dp", l.expert_data_parallel()},
                                {"micro_batch_size", l.micro_batch_size},
                                {"micro_batches", l.micro_batches},
                                {"seq_len", l.seq_len},
                                {"recompute", s(l.recompute.kind)},
                                {"recompute_full_layers", l.recompute.full_layers},
                                {"distributed_optimizer", l.distributed_optimizer},
                                {"precision", s(l.precision)},
                                {"cross_entropy_fusion", l.cross_entropy_fusion},
                                {"capacity_factor", l.capacity_factor},
                                {"imbalance", l.imbalance},
                                {"padded_vocab", padded_vocab},
                                {"replicate_loop_weights", l.loop_placement == LoopPlacement::replicated},
                                {"loop_placement", s(l.loop_placement)},
                                {"flash_attention", l.flash_attention},
                                {"dropout", l.dropout},
                                {"gradient_accumulation_fusion", l.gradient_accumulation_fusion},
                                {"pipeline_layout", l.split.layout},
                                {"first_stage_layers", l.split.first_stage_layers.value_or(-1)},
                                {"last_stage_layers", l.split.last_stage_layers.value_or(-1)},
                                {"embedding_in_split", l.embedding_in_split},
                                {"loss_in_split", l.loss_in_split},
                                {"recompute_method", s(l.recompute.method)},
                                {"recompute_modules", modules},
                                {"fsdp", s(l.fsdp)},
                                {"fsdp_sharding", s(l.fsdp_sharding)},
                                {"distributed_optimizer_instances", l.distributed_optimizer_instances},
                                {"fp8", s(l.fp8)},
                                {"fp8_param_gather", l.fp8_param_gather},
                                {"cpu_offload_layers", l.cpu_offload_layers},
                                {"dispatcher", s(l.dispatcher)},
                                {"moe_permute_fusion", l.moe_permute_fusion},
                                {"bf16_main_grads", l.optimizer_dtypes.bf16_main_grads},
                                {"precision_aware_optimizer", l.optimizer_dtypes.precision_aware},
                                {"main_params_dtype", s(l.optimizer_dtypes.main_params)},
                                {"exp_avg_dtype", s(l.optimizer_dtypes.exp_avg)},
                                {"exp_avg_sq_dtype", s(l.optimizer_dtypes.exp_avg_sq)}};
  return layout.dump(2);
}

}  // namespace

TEST_CASE("layout fields: every field is away from its default in the test layouts and reads back equal",
          "[layout][fields]") {
  const ParallelLayout defaults, unusual = unusual_layout(), split = split_layout();
  for (const LayoutField& f : layout_fields()) {
    CAPTURE(f.name);
    CHECK(!f.doc.empty());
    CHECK((f.role == LayoutFieldRole::derived) == (f.set == nullptr));
    // 1000 rounded up to a multiple of 128·TP = 256 is 1024; the default layout pads nothing.
    const LayoutFieldValue mine = f.get(f.name == "pipeline_layout" ? split : unusual, {1024});
    CHECK(mine != f.get(defaults, {1000}));
  }
  CHECK(unusual.padded_vocab(1000) == 1024);
  for (const ParallelLayout& l : {unusual, split}) {
    const ParallelLayout back = read_object(written_object(l, 1000));
    check_equal_layouts(back, l);
  }
}

TEST_CASE("layout fields: the written object is the one training_memory_json wrote by hand (schema 1)",
          "[layout][fields]") {
  ParallelLayout resolved;
  resolved.dp = 1;
  for (const ParallelLayout& l : {unusual_layout(), split_layout(), resolved}) {
    CHECK(detail::layout_fields_json(l, {1024}).dump(2) == schema1_layout_by_hand(l, 1024));
  }
  // The table's order is the writer's: the written rows first, in the schema's order.
  bool written = true;
  for (const LayoutField& f : layout_fields()) {
    if (!f.written) written = false;
    CHECK((f.written || !written));
  }
}

TEST_CASE("layout fields: unknown keys, ranges, the alias vp and derived fields are checked by name",
          "[layout][fields]") {
  const std::string batch = R"("micro_batch_size": 1, "micro_batches": 4)";
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "virtual_stage": 2})"),
                      Catch::Contains("/layout/virtual_stage") && Catch::Contains("did you mean \"virtual_stages\""));
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "qqqqqqqqqqqqqqqq": 2})"),
                      Catch::Contains("allowed keys here") && Catch::Contains("virtual_stages, vp") &&
                          Catch::Contains("moe_grouped_gemm"));
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "tp": 0})"),
                      Catch::Contains("/layout/tp") && Catch::Contains("16777216"));
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "imbalance": 0.5})"), Catch::Contains("/layout/imbalance"));
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "fsdp": "zero3"})"),
                      Catch::Contains("/layout/fsdp") && Catch::Contains("megatron_fsdp"));
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "recompute_modules": ["attn"]})"),
                      Catch::Contains("recompute_modules") && Catch::Contains("core_attn"));
  REQUIRE_THROWS_WITH(read_text(R"({"micro_batches": 4})"), Catch::Contains("micro_batch_size"));
  CHECK(read_text("{" + batch + R"(, "vp": 3})").virtual_stages == 3);
  CHECK(read_text("{" + batch + R"(, "virtual_stages": 3})").virtual_stages == 3);
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "vp": 3, "virtual_stages": 3})"),
                      Catch::Contains("/layout/vp") && Catch::Contains("give one"));
  // gpus and dp: both given must agree (16 = 2·1·8·1).
  CHECK(read_text("{" + batch + R"(, "tp": 2, "gpus": 16, "dp": 8})").data_parallel() == 8);
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "tp": 2, "gpus": 16, "dp": 4})"),
                      Catch::Contains("/layout/dp") && Catch::Contains("give one of \"gpus\" and \"dp\""));
  // Derived fields: 8 GPUs over ETP·EP·PP = 1·2·1 is expert DP 4; the vocabulary 1000 is not padded.
  CHECK(read_text("{" + batch + R"(, "gpus": 8, "ep": 2, "expert_dp": 4})").ep == 2);
  REQUIRE_THROWS_WITH(
      read_text("{" + batch + R"(, "gpus": 8, "ep": 2, "expert_dp": 8})"),
      Catch::Contains("/layout/expert_dp") && Catch::Contains("expert_dp = 8") && Catch::Contains("derives, 4"));
  // Sizes whose expert group ETP·EP·PP = 2^72 is past 64 bits: refused before expert_dp is derived.
  REQUIRE_THROWS_WITH(
      read_text("{" + batch + R"(, "gpus": 8, "etp": 16777216, "ep": 16777216, "pp": 16777216, "expert_dp": 1})"),
      Catch::Contains("/layout/ep") && Catch::Contains("above 2^40"));
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "padded_vocab": 1024})"),
                      Catch::Contains("padded_vocab = 1024") && Catch::Contains("derives, 1000"));
  CHECK(read_text("{" + batch + R"(, "tp": 2, "vocab_divisible_by": 128, "padded_vocab": 1024})").tp == 2);
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "replicate_loop_weights": true})"),
                      Catch::Contains("replicate_loop_weights = true"));
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "recompute": "full:2", "recompute_full_layers": 2})"),
                      Catch::Contains("recompute_full_layers") && Catch::Contains("inline"));
  REQUIRE_THROWS_WITH(read_text("{" + batch + R"(, "pipeline_layout": "Et|tL", "first_stage_layers": 1})"),
                      Catch::Contains("first_stage_layers") && Catch::Contains("excludes"));
}

TEST_CASE("layout fields: layout --format json's layout reads back as a run file's layout", "[layout][fields][runs]") {
  // A dense 8-layer model (vocabulary 1000) on 8 GPUs: TP 2 with SP, PP 2 (V 2), DP 2, full:1 recompute.
  ArchConfig c;
  c.name = "dense";
  c.hidden_size = 256;
  c.num_layers = 8;
  c.attention = {8, 32, 8};
  c.ffn.dense_dim = 1024;
  c.vocab_size = 1000;
  ParallelLayout l;
  l.tp = 2;
  l.sequence_parallel = true;
  l.pp = 2;
  l.virtual_stages = 2;
  l.dp = 2;
  l.micro_batches = 4;
  l.seq_len = 512;
  l.recompute = parse_recompute("full:1", "test");
  const ClusterSpec cluster = test::test_nodes(1, 8, std::int64_t{1} << 40);
  // The layout as `layout --format json` writes it: its memory's layout and padded vocabulary.
  const auto written_layout = [&](const ParallelLayout& layout) {
    const TrainingMemory m = training_memory(c, layout, cluster);
    return nlohmann::json::parse(detail::layout_fields_json(m.layout, {m.padded_vocab}).dump());
  };
  const nlohmann::json written = written_layout(l);
  const ParallelLayout back = read_object(written);
  CHECK(back.virtual_stages == 2);
  CHECK(back.recompute.kind == RecomputeKind::full);
  CHECK(back.recompute.full_layers == 1);
  CHECK(back.gpu_count() == 8);
  CHECK(back.data_parallel() == 2);
  CHECK(written_layout(back) == written);
  // With vocabulary padding the written padded_vocab needs the vocab_divisible_by it came from.
  l.vocab_divisible_by = 128;  // 1000 → 1024, a multiple of 128·2
  nlohmann::json padded = written_layout(l);
  CHECK(padded.at("padded_vocab") == 1024);
  REQUIRE_THROWS_WITH(read_object(padded), Catch::Contains("padded_vocab = 1024"));
  padded["vocab_divisible_by"] = 128;
  CHECK(read_object(padded).padded_vocab(1000) == 1024);
}

namespace {
/// One run line of a one-node B200 run with `layout` (after the batch) and `time` (omitted when empty).
std::string run_line(const std::string& layout, const std::string& time) {
  return std::string(
             R"({"id":"x","gpu":"NVIDIA B200","hf_config":{"architectures":["LlamaForCausalLM"],"model_type":"llama",)"
             R"("hidden_size":1024,"num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":8,)"
             R"("intermediate_size":4096,"vocab_size":1000},"cluster":{"schema":"budget.cluster","schema_version":1,)"
             R"("gpu":{"name":"NVIDIA B200","memory_GiB":100,"compute":{"datasheet":{"bf16_dense_TFLOPs":2250,)"
             R"("source":"x"}}},"gpus_per_node":8,"nodes":1,"intra_node":{"bandwidth_GBps":900,"latency_us":3},)"
             R"("inter_node":{"bandwidth_GBps":50,"latency_us":5}},"layout":{"micro_batch_size":1,"micro_batches":4)") +
         (layout.empty() ? "" : "," + layout) + "}" + (time.empty() ? "" : R"(,"time":{)" + time + "}") +
         R"(,"step_time_s":1})";
}
}  // namespace

TEST_CASE("layout fields: a run file's layout reads vp and virtual_stages alike, and time's settings are given once",
          "[layout][fields][runs]") {
  CHECK(parse_measured_runs(run_line(R"("pp":2,"vp":2)", ""), "r.jsonl").at(0).layout.virtual_stages == 2);
  CHECK(parse_measured_runs(run_line(R"("pp":2,"virtual_stages":2)", ""), "r.jsonl").at(0).layout.virtual_stages == 2);
  REQUIRE_THROWS_WITH(parse_measured_runs(run_line(R"("vp":2,"virtual_stages":2)", ""), "r.jsonl"),
                      Catch::Contains("r.jsonl") && Catch::Contains("/layout/vp") && Catch::Contains("give one"));
  CHECK(parse_measured_runs(run_line(R"("fp8":"delayed")", R"("cuda_graphs":true)"), "r.jsonl").at(0).layout.fp8 ==
        Fp8Recipe::delayed);
  CHECK(parse_measured_runs(run_line("", R"("fp8_recipe":"delayed")"), "r.jsonl").at(0).layout.fp8 ==
        Fp8Recipe::delayed);
  REQUIRE_THROWS_WITH(parse_measured_runs(run_line(R"("fp8":"delayed")", R"("fp8_recipe":"delayed")"), "r.jsonl"),
                      Catch::Contains("/time/fp8_recipe") && Catch::Contains("\"fp8\""));
  REQUIRE_THROWS_WITH(parse_measured_runs(run_line(R"("bf16_main_grads":true)", R"("main_grad_bytes":2)"), "r.jsonl"),
                      Catch::Contains("/time/main_grad_bytes") && Catch::Contains("bf16_main_grads"));
}

TEST_CASE("layout fields: the minimums of the table are the ones validation_error enforces, by the same names",
          "[layout][fields]") {
  const ArchConfig config;
  for (const char* name : {"tp", "pp", "virtual_stages", "ep", "etp", "cp", "gpus", "dp", "micro_batch_size",
                           "micro_batches", "seq_len", "vocab_divisible_by"}) {
    CAPTURE(name);
    const LayoutField& f = *find_layout_field(name);
    const auto below = static_cast<std::int64_t>(f.minimum) - 1;
    ParallelLayout l;
    l.dp = 1;
    f.set(l, below, name);
    CHECK(l.validation_error(config) ==
          std::string(name) + " = " + std::to_string(below) + " is below " + std::to_string(below + 1));
    f.set(l, below + 1, name);
    CHECK(l.validation_error(config).find(std::string(name) + " = ") == std::string::npos);
  }
}
