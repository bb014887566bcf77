// The layout's field table (budget/layout_fields.hpp, layout/layout_fields_json.cpp): complete (every
// field non-default in one layout, written and read back to an equal layout, compared member by
// member here rather than through the table), the written object read back to every setting over
// varied layouts (padded vocabularies, each dispatcher and FP8 recipe, the MoE memory settings), the
// bytes `layout --format json` wrote before the table (the schema-1 object, as training_memory_json()
// built it by hand, now followed by the settings it left out), unknown keys, ranges, the alias "vp",
// derived fields and the written object read back as a run file's "layout".

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
  l.fp8_amax_history = 16;
  l.moe_memory = {true, 1.25, true, true, 24};  // HybridEP, rank capacity 1.25, grouped GEMM, EP overlap's schedule, 24 SMs
  return l;
}

ParallelLayout split_layout() {
  ParallelLayout l = unusual_layout();
  l.split = PipelineSplit::per_stage("Et|tt|tt|tt|tt|tL", "test");
  return l;
}

/// The modules selective recompute recomputes (none given: Megatron's default, core_attn, named).
std::vector<RecomputeModule> recomputed_modules(const RecomputeSpec& r) {
  if (r.kind != RecomputeKind::selective) return r.modules;
  return r.modules.empty() ? std::vector<RecomputeModule>{RecomputeModule::core_attn} : r.modules;
}

/// Member by member (not through the table), every setting of a ParallelLayout: the sizes as in effect
/// (ETP 0 is TP, DP as given or derived), GPUs as given.
void check_same_settings(const ParallelLayout& a, const ParallelLayout& b) {
  CHECK(a.gpus == b.gpus);  // as given (0: derived), beside the sizes in effect
  test::check_same_sizes(a, b);
  CHECK(a.recompute.kind == b.recompute.kind);
  CHECK(a.recompute.full_layers == b.recompute.full_layers);
  CHECK(a.recompute.method == b.recompute.method);
  CHECK(recomputed_modules(a.recompute) == recomputed_modules(b.recompute));
  CHECK(a.loop_placement == b.loop_placement);
  CHECK(a.fsdp_sharding == b.fsdp_sharding);
  CHECK(a.fp8_amax_history == b.fp8_amax_history);
  CHECK(a.moe_memory.hybridep == b.moe_memory.hybridep);
  CHECK(a.moe_memory.rank_capacity_factor == b.moe_memory.rank_capacity_factor);
  CHECK(a.moe_memory.grouped_gemm == b.moe_memory.grouped_gemm);
  CHECK(a.moe_memory.ep_overlap_schedule == b.moe_memory.ep_overlap_schedule);
  CHECK(a.moe_memory.flex_num_sms == b.moe_memory.flex_num_sms);
  test::check_same_recipe_settings(a, b);
}

/// A field's value as JSON, of its variant's own type.
const auto to_ordered_json = [](const auto& value) { return nlohmann::ordered_json(value); };

/// The object `layout --format json` writes for `l` and `derivation`: every field's value
/// (layout_field_values()) under its name, as render/'s layout_json() writes it.
nlohmann::ordered_json layout_object(const ParallelLayout& l, const LayoutDerivation& derivation) {
  nlohmann::ordered_json o;
  for (const auto& [k, v] : layout_field_values(l, derivation)) o[std::string(k)] = std::visit(to_ordered_json, v);
  return o;
}

/// The object `layout --format json` writes for `l` (a vocabulary of `vocab_size`).
nlohmann::json written_object(const ParallelLayout& l, std::int64_t vocab_size) {
  return nlohmann::json::parse(layout_object(l, {l.padded_vocab(vocab_size)}).dump());
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

/// The schema-1 object followed by the settings it left out (issue 40: the written object reads back).
std::string layout_by_hand(const ParallelLayout& l, std::int64_t padded_vocab) {
  nlohmann::ordered_json layout = nlohmann::ordered_json::parse(schema1_layout_by_hand(l, padded_vocab));
  layout["vocab_divisible_by"] = l.vocab_divisible_by;
  layout["moe_grouped_gemm"] = l.moe_memory.grouped_gemm;
  layout["fp8_amax_history"] = l.fp8_amax_history;
  layout["moe_hybridep"] = l.moe_memory.hybridep;
  layout["moe_expert_rank_capacity_factor"] = l.moe_memory.rank_capacity_factor;
  layout["ep_overlap_schedule"] = l.moe_memory.ep_overlap_schedule;
  layout["moe_flex_num_sms"] = l.moe_memory.flex_num_sms;
  return layout.dump(2);
}

/// Layouts of every dispatcher and FP8 recipe (the sizes and the rest of unusual_layout()), each with
/// other vocabulary padding, MoE memory settings and recompute: 3·5 layouts.
std::vector<ParallelLayout> varied_layouts() {
  std::vector<ParallelLayout> layouts;
  const std::int64_t divisors[] = {0, 1, 64, 128, 100};
  const char* recomputes[] = {"none", "selective", "full:1", "full-uniform:2", "selective:moe_act,mlp"};
  for (int d = 0; d <= static_cast<int>(MoeDispatcher::flex); ++d) {
    for (int f = 0; f <= static_cast<int>(Fp8Recipe::mxfp8); ++f) {
      const int i = static_cast<int>(layouts.size());
      ParallelLayout l = unusual_layout();
      l.dispatcher = static_cast<MoeDispatcher>(d);
      l.fp8 = static_cast<Fp8Recipe>(f);
      l.fp8_param_gather = l.fp8 != Fp8Recipe::none && i % 2 == 0;
      l.fp8_amax_history = l.fp8 == Fp8Recipe::delayed ? 1024 : 1;
      l.vocab_divisible_by = divisors[i % 5];
      l.recompute = parse_recompute(recomputes[(i + d) % 5], "test");
      l.moe_memory.hybridep = l.dispatcher == MoeDispatcher::flex && f % 2 == 1;
      l.moe_memory.rank_capacity_factor = l.moe_memory.hybridep ? 1.5 : 0.0;
      l.moe_memory.grouped_gemm = i % 3 != 0;
      l.moe_memory.ep_overlap_schedule = i % 4 == 1;
      l.moe_memory.flex_num_sms = l.dispatcher == MoeDispatcher::flex && i % 2 == 0 ? 32 : 0;
      l.capacity_factor = i % 2 == 0 ? 0.0 : 1.25;
      layouts.push_back(l);
    }
  }
  return layouts;
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
    check_same_settings(back, l);
    CHECK(back.etp == l.etp);  // given, not 0
    CHECK(back.dp == l.dp);
  }
}

TEST_CASE("layout fields: the written object reads back to every setting, padded vocabularies and MoE settings "
          "included",
          "[layout][fields]") {
  // Vocabularies 1000 and 50257: padded to a multiple of divisor·TP (128·2 = 256: 1024 and 50432; 100·2:
  // 1000 and 50400), or not at all (divisor 0).
  for (const std::int64_t vocab : {1000, 50257}) {
    for (const ParallelLayout& l : varied_layouts()) {
      const std::string dispatcher(to_string(l.dispatcher)), fp8(to_string(l.fp8));
      CAPTURE(vocab, dispatcher, fp8, l.vocab_divisible_by);
      const nlohmann::json written = written_object(l, vocab);
      const ParallelLayout back = read_object(written, vocab);
      check_same_settings(back, l);
      CHECK(written_object(back, vocab) == written);
    }
  }
  ParallelLayout padded;
  padded.tp = 2;
  padded.dp = 1;
  padded.vocab_divisible_by = 128;
  CHECK(written_object(padded, 50257).at("padded_vocab") == 50432);  // 197 · 256
  CHECK(read_object(written_object(padded, 50257), 50257).padded_vocab(50257) == 50432);
}

TEST_CASE("layout fields: the written object is the one training_memory_json wrote by hand (schema 1), then the "
          "settings it left out",
          "[layout][fields]") {
  ParallelLayout resolved;
  resolved.dp = 1;
  for (const ParallelLayout& l : {unusual_layout(), split_layout(), resolved}) {
    CHECK(layout_object(l, {1024}).dump(2) == layout_by_hand(l, 1024));
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
    return nlohmann::json::parse(layout_object(m.layout, {m.padded_vocab}).dump());
  };
  const nlohmann::json written = written_layout(l);
  const ParallelLayout back = read_object(written);
  CHECK(back.virtual_stages == 2);
  CHECK(back.recompute.kind == RecomputeKind::full);
  CHECK(back.recompute.full_layers == 1);
  CHECK(back.gpu_count() == 8);
  CHECK(back.data_parallel() == 2);
  CHECK(written_layout(back) == written);
  // With vocabulary padding the written object holds the vocab_divisible_by its padded_vocab came from
  // (before issue 40's fix it did not, and reading it back was refused naming padded_vocab).
  l.vocab_divisible_by = 128;  // 1000 → 1024, a multiple of 128·2
  const nlohmann::json padded = written_layout(l);
  CHECK(padded.at("padded_vocab") == 1024);
  CHECK(padded.at("vocab_divisible_by") == 128);
  const ParallelLayout padded_back = read_object(padded);
  CHECK(padded_back.vocab_divisible_by == 128);
  CHECK(written_layout(padded_back) == padded);
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

TEST_CASE("layout fields: a run file's moe_hybridep is the flex backend of the step time too, and its "
          "ep_overlap_schedule agrees with the overlap",
          "[layout][fields][runs]") {
  const MeasuredRun hybridep =
      parse_measured_runs(run_line(R"("dispatcher":"flex","moe_hybridep":true)", ""), "r.jsonl").at(0);
  CHECK(hybridep.layout.moe_memory.hybridep);
  CHECK(hybridep.moe.flex_backend == FlexBackend::hybridep);
  const MeasuredRun by_time =
      parse_measured_runs(run_line(R"("dispatcher":"flex")", R"("moe_flex_backend":"hybridep")"), "r.jsonl").at(0);
  CHECK(by_time.moe.flex_backend == FlexBackend::hybridep);
  REQUIRE_THROWS_WITH(
      parse_measured_runs(run_line(R"("moe_hybridep":false)", R"("moe_flex_backend":"hybridep")"), "r.jsonl"),
      Catch::Contains("/time/moe_flex_backend") && Catch::Contains("moe_hybridep"));
  // EP overlapped ("overlap": "dp,ep") holds the schedule's extra layer; the layout must say the same.
  CHECK(parse_measured_runs(run_line(R"("ep_overlap_schedule":true)", R"("overlap":"dp,ep")"), "r.jsonl")
            .at(0)
            .layout.moe_memory.ep_overlap_schedule);
  CHECK(!parse_measured_runs(run_line(R"("ep_overlap_schedule":false)", ""), "r.jsonl")
             .at(0)
             .layout.moe_memory.ep_overlap_schedule);
  REQUIRE_THROWS_WITH(parse_measured_runs(run_line(R"("ep_overlap_schedule":true)", R"("overlap":"dp")"), "r.jsonl"),
                      Catch::Contains("/layout/ep_overlap_schedule") && Catch::Contains("exposed"));
  REQUIRE_THROWS_WITH(parse_measured_runs(run_line(R"("ep_overlap_schedule":false)", R"("overlap":"ep")"), "r.jsonl"),
                      Catch::Contains("/layout/ep_overlap_schedule") && Catch::Contains("overlapped"));
  // The flex dispatcher's SMs: the layout's are time's too; both given must agree.
  const MeasuredRun sms = parse_measured_runs(run_line(R"("dispatcher":"flex","moe_flex_num_sms":24)", ""), "r.jsonl").at(0);
  CHECK(sms.layout.moe_memory.flex_num_sms == 24);
  CHECK(sms.moe.comm_sms == 24);
  CHECK(parse_measured_runs(run_line(R"("dispatcher":"flex")", R"("moe_comm_sms":24)"), "r.jsonl")
            .at(0)
            .layout.moe_memory.flex_num_sms == 24);
  REQUIRE_THROWS_WITH(
      parse_measured_runs(run_line(R"("dispatcher":"flex","moe_flex_num_sms":24)", R"("moe_comm_sms":32)"), "r.jsonl"),
      Catch::Contains("/layout/moe_flex_num_sms") && Catch::Contains("moe_comm_sms = 32"));
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
