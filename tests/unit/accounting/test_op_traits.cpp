// The op-traits table (budget/op_traits.hpp): the checked table helper (base/enum_names.hpp,
// enum_rows()), each trait of every op kind against the maps the library switched on before the
// table (written out here by hand), and the budgets' component sums, which add up to their totals.

#include <map>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "budget/accounting.hpp"
#include "budget/config_io.hpp"
#include "budget/op_traits.hpp"
#include "budget/time_model.hpp"
#include "base/enum_names.hpp"

using namespace budget;

namespace {

enum class Shape { dot, line, plane };
struct ShapeRow {
  Shape shape;
  int dims;
};

constexpr auto shape_rows =
    detail::enum_rows<Shape::plane, &ShapeRow::shape>({{Shape::dot, 0}, {Shape::line, 1}, {Shape::plane, 2}});

/// Each op kind's expected traits and time class. Parts: attention holds the mixers, norms, residual
/// adds, attention layout copies, the indexer and the attention gate; moe_tp the router, its top-k and
/// fp32 softmax and the shared experts; routed the routed experts, dispatch, combine, the routing
/// weights and the combine buffer. FP8 linears: the q/k/v/o and MLA projections and the three FFNs.
/// Megatron-Core skips the attention layout copies, the routing weights and the combine buffer.
struct Expected {
  TimeClass time;
  LayerPart part;
  WeightShard weights;
  bool fp8_linear;
  bool megatron_skips;
};

const std::map<OpKind, Expected>& expected_traits() {
  using T = TimeClass;
  using L = LayerPart;
  using W = WeightShard;
  static const std::map<OpKind, Expected> table{
      {OpKind::qkv_projection, {T::gemm, L::attention, W::attention_tp, true, false}},
      {OpKind::attention_scores, {T::attention_aligned, L::attention, W::attention_tp, false, false}},
      {OpKind::output_projection, {T::gemm, L::attention, W::attention_tp, true, false}},
      {OpKind::router, {T::gemm, L::moe_tp, W::moe_replicated, false, false}},
      {OpKind::routed_experts, {T::expert_gemms, L::routed, W::experts, true, false}},
      {OpKind::shared_experts, {T::gemm, L::moe_tp, W::moe_tp, true, false}},
      {OpKind::dense_ffn, {T::gemm, L::dense, W::dense_tp, true, false}},
      {OpKind::norms, {T::elementwise, L::attention, W::attention_replicated, false, false}},
      {OpKind::final_norm, {T::elementwise, L::final_norm, W::final_norm, false, false}},
      {OpKind::embedding, {T::indexed, L::embedding, W::embedding, false, false}},
      {OpKind::lm_head, {T::gemm, L::head, W::lm_head, false, false}},
      {OpKind::q_down_projection, {T::gemm, L::attention, W::attention_replicated, true, false}},
      {OpKind::q_up_projection, {T::gemm, L::attention, W::attention_tp, true, false}},
      {OpKind::kv_down_projection, {T::gemm, L::attention, W::attention_replicated, true, false}},
      {OpKind::kv_up_projection, {T::gemm, L::attention, W::attention_tp, true, false}},
      {OpKind::mtp_module, {T::gemm, L::none, W::mtp, false, false}},
      {OpKind::router_topk, {T::elementwise, L::moe_tp, W::none, false, false}},
      {OpKind::expert_dispatch, {T::indexed, L::routed, W::none, false, false}},
      {OpKind::expert_combine, {T::indexed, L::routed, W::none, false, false}},
      {OpKind::expert_activation, {T::elementwise, L::routed, W::none, false, false}},
      {OpKind::shared_activation, {T::elementwise, L::moe_tp, W::none, false, false}},
      {OpKind::dense_activation, {T::elementwise, L::dense, W::none, false, false}},
      {OpKind::residual_add, {T::glue, L::attention, W::none, false, false}},
      {OpKind::attention_layout, {T::glue, L::attention, W::none, false, true}},
      {OpKind::routing_weights, {T::glue, L::routed, W::none, false, true}},
      {OpKind::combine_zero, {T::glue, L::routed, W::none, false, true}},
      {OpKind::router_softmax_fp32, {T::glue, L::moe_tp, W::none, false, false}},
      {OpKind::mixer_in_projection, {T::gemm, L::attention, W::attention_tp, false, false}},
      {OpKind::short_convolution, {T::elementwise, L::attention, W::attention_tp, false, false}},
      {OpKind::delta_rule_scan, {T::gemm, L::attention, W::attention_tp, false, false}},
      {OpKind::ssd_scan, {T::gemm, L::attention, W::attention_tp, false, false}},
      {OpKind::mixer_out_projection, {T::gemm, L::attention, W::attention_tp, false, false}},
      {OpKind::indexer_projection, {T::gemm, L::attention, W::attention_tp, false, false}},
      {OpKind::indexer_scores, {T::attention_aligned, L::attention, W::none, false, false}},
      {OpKind::indexer_topk, {T::glue, L::attention, W::none, false, false}},
      {OpKind::attention_gate, {T::glue, L::attention, W::none, false, false}},
  };
  return table;
}

}  // namespace

TEST_CASE("op traits: a row table covers every enumerator once, in order", "[accounting][op_traits]") {
  STATIC_REQUIRE(shape_rows[2].dims == 2);
  STATIC_REQUIRE(shape_rows.size() == 3);
  // In a constant expression a bad table does not compile; evaluated at run time, it throws.
  const ShapeRow missing[] = {{Shape::dot, 0}, {Shape::plane, 2}};
  CHECK_THROWS_AS((detail::enum_rows<Shape::plane, &ShapeRow::shape>(missing)), std::logic_error);
  const ShapeRow reordered[] = {{Shape::line, 1}, {Shape::dot, 0}, {Shape::plane, 2}};
  CHECK_THROWS_AS((detail::enum_rows<Shape::plane, &ShapeRow::shape>(reordered)), std::logic_error);
}

TEST_CASE("op traits: every op kind's row, and the time class that follows from its kernel class",
          "[accounting][op_traits]") {
  REQUIRE(expected_traits().size() == op_kind_count);
  for (const auto& [kind, expected] : expected_traits()) {
    INFO(to_string(kind));
    const OpTraits& t = op_traits(kind);
    CHECK(t.kind == kind);
    CHECK(t.kernel == kernel_class(kind));
    CHECK(time_class_of(kind) == expected.time);
    CHECK(t.part == expected.part);
    CHECK(t.weights == expected.weights);
    CHECK(t.fp8_linear == expected.fp8_linear);
    CHECK(t.megatron_skips == expected.megatron_skips);
    // Reported apart (no component) exactly when the op is outside the non-embedding budgets.
    const bool counted = t.budget.flops != nullptr || t.budget.params != nullptr;
    if (!is_non_embedding(kind)) CHECK_FALSE(counted);
    if (is_memory_bound(kind)) CHECK_FALSE(counted);
  }
  // A cast integer past the enum reads an empty row.
  CHECK(op_traits(static_cast<OpKind>(op_kind_count)).kernel == KernelClass::not_timed);
}

TEST_CASE("op traits: the budgets' components add up to their totals", "[accounting][op_traits]") {
  // The paper's MoE baseline; DeepSeek-V3.2 (MLA, the indexer, shared experts, a dense prefix, MTP);
  // Qwen3-Next (Gated DeltaNet mixers, gated attention); Nemotron-3-Nano (Mamba-2).
  for (const char* path : {"/examples/configs/paper-200M-S95-baseline.json", "/tests/data/hf/deepseek-v3.2.json",
                           "/tests/data/hf/qwen3-next-80b-a3b-thinking.json",
                           "/tests/data/hf/nemotron-3-nano-30b-a3b.json"}) {
    INFO(path);
    const ArchConfig c = load_arch_config(std::string(BUDGET_SOURCE_DIR) + path);
    const Budgets b = account(layer_ops(c, paper_workload()), c, paper_workload());
    CHECK(b.forward_by_component.total() == Approx(b.forward_flops_per_token).epsilon(1e-12));
    CHECK(b.params_by_component.total() == b.non_embedding_params_total);
    CHECK(b.active_params_by_component.total() == b.non_embedding_params_active);
  }
}
