// The op-kind → kernel-class map (budget/kernel_class.hpp), read by the time model and by
// budget-profile: every kind has one class, the memory-bound kinds exactly the memory-bound
// classes, and the op list of a real MoE config holds only the classes the two readers handle.

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "budget/config_io.hpp"
#include "budget/kernel_class.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"

using namespace budget;

namespace {
// Every OpKind, written out (not derived from the enum's values), with the class docs/accounting.md
// and the readers expect.
const std::map<OpKind, KernelClass>& expected_classes() {
  static const std::map<OpKind, KernelClass> table{
      {OpKind::qkv_projection, KernelClass::projection_gemm},
      {OpKind::attention_scores, KernelClass::attention},
      {OpKind::output_projection, KernelClass::projection_gemm},
      {OpKind::router, KernelClass::projection_gemm},
      {OpKind::routed_experts, KernelClass::expert_gemms},
      {OpKind::shared_experts, KernelClass::mlp_gemms},
      {OpKind::dense_ffn, KernelClass::mlp_gemms},
      {OpKind::norms, KernelClass::rms_norm},
      {OpKind::final_norm, KernelClass::rms_norm},
      {OpKind::embedding, KernelClass::embedding_lookup},
      {OpKind::lm_head, KernelClass::projection_gemm},
      {OpKind::q_down_projection, KernelClass::projection_gemm},
      {OpKind::q_up_projection, KernelClass::projection_gemm},
      {OpKind::kv_down_projection, KernelClass::projection_gemm},
      {OpKind::kv_up_projection, KernelClass::projection_gemm},
      {OpKind::mtp_module, KernelClass::not_timed},
      {OpKind::router_topk, KernelClass::router_topk},
      {OpKind::expert_dispatch, KernelClass::gather_scatter},
      {OpKind::expert_combine, KernelClass::gather_scatter},
      {OpKind::expert_activation, KernelClass::activation},
      {OpKind::shared_activation, KernelClass::activation},
      {OpKind::dense_activation, KernelClass::activation},
      {OpKind::residual_add, KernelClass::layer_glue},
      {OpKind::attention_layout, KernelClass::layer_glue},
      {OpKind::routing_weights, KernelClass::layer_glue},
      {OpKind::combine_zero, KernelClass::layer_glue},
      {OpKind::router_softmax_fp32, KernelClass::layer_glue},
      {OpKind::mixer_in_projection, KernelClass::projection_gemm},
      {OpKind::short_convolution, KernelClass::short_convolution},
      {OpKind::delta_rule_scan, KernelClass::recurrent_scan},
      {OpKind::ssd_scan, KernelClass::recurrent_scan},
      {OpKind::mixer_out_projection, KernelClass::projection_gemm},
      {OpKind::indexer_projection, KernelClass::projection_gemm},
      {OpKind::indexer_scores, KernelClass::indexer_scores},
      {OpKind::indexer_topk, KernelClass::layer_glue},
      {OpKind::attention_gate, KernelClass::layer_glue},
  };
  return table;
}

bool memory_bound_class(KernelClass k) {
  return k == KernelClass::router_topk || k == KernelClass::gather_scatter || k == KernelClass::activation ||
         k == KernelClass::layer_glue;
}
}  // namespace

TEST_CASE("kernel_class: every op kind has its documented class", "[accounting][kernel_class]") {
  // 36 kinds: qkv_projection .. dense_activation, the five layer-glue kinds, and the nine of hybrid
  // stacks and sparse attention (mixer_in_projection .. attention_gate; budget/ops.hpp).
  REQUIRE(expected_classes().size() == 36);
  std::set<std::string> kind_names;
  for (const auto& [kind, expected] : expected_classes()) {
    INFO(to_string(kind));
    kind_names.insert(std::string(to_string(kind)));
    CHECK(kernel_class(kind) == expected);
    CHECK(is_memory_bound(kind) == memory_bound_class(kernel_class(kind)));
  }
  CHECK(kind_names.count("?") == 0);
  CHECK(kind_names.size() == 36);
}

TEST_CASE("kernel_class: names are the enumerators' and distinct", "[accounting][kernel_class]") {
  const KernelClass all[] = {KernelClass::projection_gemm, KernelClass::mlp_gemms,      KernelClass::expert_gemms,
                             KernelClass::attention,       KernelClass::rms_norm,       KernelClass::router_topk,
                             KernelClass::gather_scatter,  KernelClass::activation,     KernelClass::embedding_lookup,
                             KernelClass::layer_glue,      KernelClass::short_convolution,
                             KernelClass::recurrent_scan,  KernelClass::indexer_scores,
                             KernelClass::not_timed};
  std::set<std::string_view> names;
  for (KernelClass k : all) names.insert(to_string(k));
  CHECK(names.size() == 14);
  CHECK(names.count("?") == 0);
  CHECK(to_string(KernelClass::expert_gemms) == "expert_gemms");
}

TEST_CASE("kernel_class: the paper's 200M MoE baseline uses every timed class", "[accounting][kernel_class]") {
  const ArchConfig c = load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/examples/configs/paper-200M-S95-baseline.json");
  std::set<KernelClass> seen;
  for (const Op& op : layer_ops(c, paper_workload())) seen.insert(kernel_class(op.kind));
  for (KernelClass k : {KernelClass::projection_gemm, KernelClass::expert_gemms, KernelClass::attention,
                        KernelClass::rms_norm, KernelClass::router_topk, KernelClass::gather_scatter,
                        KernelClass::activation}) {
    INFO(to_string(k));
    CHECK(seen.count(k) == 1);
  }
}
