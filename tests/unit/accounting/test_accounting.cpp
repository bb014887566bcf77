// Acceptance tests of the accounting core (issue 2): the paper's worked example, every grid
// baseline against its published parameter counts, and hand-derived tests per component.
//
// Expectations are derived by hand in the comments (or taken from the paper's published figures),
// never by calling the code. Conventions (docs/accounting.md): a weight matrix of k×n costs 2·k·n
// forward FLOPs per token; attention scores 4·q·A; norms 2·H per layer plus a final H; training =
// 3 × forward; KV per token = 2 · executed layers · kv_heads · head_dim.

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/accounting_fixtures.hpp"
#include "budget/accounting.hpp"
#include "budget/config.hpp"
#include "budget/error.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"
#include "config/config_json.hpp"

using budget::account;
using budget::ArchConfig;
using budget::Budgets;
using budget::LoopConfig;
using budget::Workload;
using namespace budget::test;

namespace {

bool within_relative(double value, double reference, double tolerance) {
  return std::abs(value - reference) <= tolerance * std::abs(reference);
}

const budget::Op* find_op(const std::vector<budget::Op>& ops, budget::OpKind kind) {
  for (const auto& op : ops) {
    if (op.kind == kind) return &op;
  }
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The paper's worked example (200M cell, S ≈ 95%).
//
// Baseline: H = 1280, L = 12, q = 10·128 = 1280, kv = 2·128 = 256, 192 experts × 432, top-8, gated.
// Per layer:
//   W_q,W_k,W_v : H·(q + 2kv) = 1280·1792            = 2,293,760 params, 4,587,520 FLOPs
//   W_o         : q·H         = 1280·1280            = 1,638,400 params, 3,276,800 FLOPs
//   scores      : 4·q·A       = 4·1280·400                               2,048,000 FLOPs
//   router      : H·E         = 1280·192             =   245,760 params,   491,520 FLOPs
//   one expert  : 3·H·d       = 3·1280·432           = 1,658,880 params
//   experts     : 192 · 1,658,880                    = 318,504,960 params stored
//                 8 · 1,658,880 = 13,271,040 active,                     26,542,080 FLOPs
//   norms       : 2·H                                 =     2,560 params
//   total/layer : 2,293,760 + 1,638,400 + 245,760 + 318,504,960 + 2,560 = 322,685,440
//   active/layer: 3,932,160 + 245,760 + 13,271,040 + 2,560              =  17,451,520
//   fwd/layer   : 4,587,520 + 3,276,800 + 2,048,000 + 491,520 + 26,542,080 = 36,945,920
// Model: total 12·322,685,440 + 1,280 (final norm) = 3,872,226,560
//        active 12·17,451,520 + 1,280             =   209,419,520
//        forward 12·36,945,920 = 443,351,040; training 3× = 1,330,053,120
//        KV 2·12·256 = 6,144 elements per token
// Paper: N = 3.87e9, N_act = 0.209e9, F = 1.33e9.
TEST_CASE("accounting: paper 200M S95 baseline reproduces the worked example", "[accounting]") {
  const Budgets b = account(paper_200m_baseline(), budget::paper_workload());

  CHECK(b.non_embedding_params_total == 3'872'226'560);
  CHECK(b.non_embedding_params_active == 209'419'520);
  CHECK(b.forward_flops_per_token == 443'351'040.0);
  CHECK(b.training_flops_per_token == 1'330'053'120.0);
  CHECK(b.kv_elements_per_token == 6'144);
  CHECK(b.physical_layers == 12);
  CHECK(b.executed_layers == 12);

  // Against the paper's published figures and the tolerances.
  CHECK(within_relative(static_cast<double>(b.non_embedding_params_total), 3.87e9, 0.003));
  CHECK(within_relative(static_cast<double>(b.non_embedding_params_active), 0.209e9, 0.005));
  CHECK(within_relative(b.training_flops_per_token, 1.33e9, 0.005));
}

// Looped: H = 1056, q = 12·88 = 1056, kv = 2·88 = 176, 288 experts × 352, layers 4–9 twice.
// Per layer:
//   W_q,W_k,W_v : 1056·(1056 + 352) = 1056·1408      = 1,486,848 params, 2,973,696 FLOPs
//   W_o         : 1056·1056                           = 1,115,136 params, 2,230,272 FLOPs
//   scores      : 4·1056·400                                              1,689,600 FLOPs
//   router      : 1056·288                            =   304,128 params,   608,256 FLOPs
//   one expert  : 3·1056·352                          = 1,115,136 params
//   experts     : 288 · 1,115,136 = 321,159,168 stored; 8 · 1,115,136 = 8,921,088 active,
//                                                                        17,842,176 FLOPs
//   norms       : 2·1056                              =     2,112 params
//   total/layer : 1,486,848 + 1,115,136 + 304,128 + 321,159,168 + 2,112 = 324,067,392
//   active/layer: 2,601,984 + 304,128 + 8,921,088 + 2,112               =  11,829,312
//   fwd/layer   : 2,973,696 + 2,230,272 + 1,689,600 + 608,256 + 17,842,176 = 25,344,000
// Executed layers: 12 + (2 − 1)·6 = 18.
// Model: total 12·324,067,392 + 1,056 = 3,888,809,760 (parameters once, loop or not)
//        active 12·11,829,312 + 1,056 =   141,952,800
//        forward 18·25,344,000 = 456,192,000; training 3× = 1,368,576,000
//        KV 2·18·176 = 6,336
// Ratios to the baseline: F 1,368,576,000 / 1,330,053,120 = 1.02896…; KV 6,336/6,144 = 1.03125.
// Paper: N = 3.89e9, F = 1.37e9, FLOPs ratio 1.029, KV ratio 1.031.
TEST_CASE("accounting: paper 200M S95 looped config reproduces the worked example", "[accounting]") {
  const Budgets base = account(paper_200m_baseline(), budget::paper_workload());
  const Budgets b = account(paper_200m_smelt(), budget::paper_workload());

  CHECK(b.non_embedding_params_total == 3'888'809'760);
  CHECK(b.non_embedding_params_active == 141'952'800);
  CHECK(b.forward_flops_per_token == 456'192'000.0);
  CHECK(b.training_flops_per_token == 1'368'576'000.0);
  CHECK(b.kv_elements_per_token == 6'336);
  CHECK(b.physical_layers == 12);
  CHECK(b.executed_layers == 18);

  CHECK(within_relative(static_cast<double>(b.non_embedding_params_total), 3.89e9, 0.003));
  CHECK(within_relative(b.training_flops_per_token, 1.37e9, 0.005));
  const double flops_ratio = b.training_flops_per_token / base.training_flops_per_token;
  const double kv_ratio = static_cast<double>(b.kv_elements_per_token) / static_cast<double>(base.kv_elements_per_token);
  CHECK(flops_ratio == Approx(1.029).margin(0.001));
  CHECK(kv_ratio == Approx(1.031).margin(0.001));
  // The paper's "+0.4%" parameters: 3,888,809,760 / 3,872,226,560 − 1 = 0.428%.
  CHECK(budget::relative_deviation(static_cast<double>(b.non_embedding_params_total),
                                   static_cast<double>(base.non_embedding_params_total)) ==
        Approx(0.004).margin(0.0005));
}

// Sparsity of the two worked-example configs (docs/accounting.md, "Sparsity").
// Baseline: executed-active = active = 209,419,520 → S = 1 − 209,419,520/3,872,226,560 = 94.592%
//           (paper: 94.6).
// Looped:   executed-active = 18·11,829,312 + 1,056 = 212,928,672
//           S = 1 − 212,928,672/3,888,809,760 = 1 − 0.054754… = 94.525% (paper: 94.7, not
//           reproducible from its published numbers; see docs/accounting.md);
//           param sparsity 1 − 141,952,800/3,888,809,760 = 1 − 0.036503… = 96.350%.
TEST_CASE("accounting: compute-equivalent and parameter sparsity of the worked example", "[accounting]") {
  const Budgets base = account(paper_200m_baseline(), budget::paper_workload());
  CHECK(base.executed_active_params == 209'419'520.0);
  CHECK(base.sparsity == Approx(0.94592).margin(1e-5));
  CHECK(base.param_sparsity == base.sparsity);

  const Budgets looped = account(paper_200m_smelt(), budget::paper_workload());
  CHECK(looped.executed_active_params == 212'928'672.0);
  CHECK(looped.sparsity == Approx(1.0 - 212'928'672.0 / 3'888'809'760.0).epsilon(1e-12));
  CHECK(looped.sparsity * 100 == Approx(94.525).margin(0.001));
  CHECK(looped.param_sparsity * 100 == Approx(96.350).margin(0.001));
}

// ---------------------------------------------------------------------------------------------
// Every grid baseline reproduces its published total and active parameters to the table's
// rounding, and its published S (unlooped, so compute-equivalent = parameter sparsity).

namespace {

/// Decimal places of the shortest representation of a published number (0.207 → 3, 12.54 → 2,
/// 0.1 → 1, 1.0 → 0). The grid file writes no trailing zeros, so this is the precision shown.
int decimals_shown(double published) {
  const std::string text = fmt::format("{}", published);
  const auto dot = text.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
}

bool rounds_to(double value, double published) {
  const double scale = std::pow(10.0, decimals_shown(published));
  return std::round(value * scale) == std::round(published * scale);
}

nlohmann::json read_grid() {
  std::ifstream in(std::string(BUDGET_SOURCE_DIR) + "/examples/grids/paper_grid.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("accounting: every paper grid baseline reproduces its published parameter counts", "[accounting]") {
  const nlohmann::json grid = read_grid();
  REQUIRE(grid.at("cells").size() == 16);
  const std::string source = "examples/grids/paper_grid.json";
  int exact_s = 0;
  for (std::size_t i = 0; i < grid["cells"].size(); ++i) {
    const auto& cell = grid["cells"][i];
    const ArchConfig c =
        budget::detail::read_arch_config(cell.at("baseline"), source, fmt::format("/cells/{}/baseline", i));
    const Budgets b = account(c, budget::paper_workload());
    const auto& published = cell.at("published_baseline");
    const double total_B = static_cast<double>(b.non_embedding_params_total) / 1e9;
    const double active_B = static_cast<double>(b.non_embedding_params_active) / 1e9;
    INFO(c.name << ": total " << total_B << " B, active " << active_B << " B, S " << b.sparsity * 100);
    CHECK(rounds_to(total_B, published.at("total_params_B").get<double>()));
    CHECK(rounds_to(active_B, published.at("active_params_B").get<double>()));
    // Unlooped: both sparsities are 1 − active/total.
    CHECK(b.sparsity == Approx(b.param_sparsity).epsilon(1e-12));
    // Published S (one decimal). 15 of 16 round exactly; 600M-E64 gives 84.449% against a
    // published 84.5 (0.051 points away), so the bound is half a unit plus 0.002.
    const double s_pct = published.at("S_pct").get<double>();
    CHECK(std::abs(b.sparsity * 100 - s_pct) <= 0.052);
    if (rounds_to(b.sparsity * 100, s_pct)) ++exact_s;
  }
  CHECK(exact_s >= 15);
}

TEST_CASE("accounting: the grid's 200M S95 cell is the worked example and its published ratios hold", "[accounting]") {
  const nlohmann::json grid = read_grid();
  const auto& cell = grid["cells"][6];
  REQUIRE(cell.at("baseline").at("name") == "paper-200M-E192-baseline");
  const ArchConfig base = budget::detail::read_arch_config(cell["baseline"], "grid", "/cells/6/baseline");
  ArchConfig smelt = paper_200m_smelt();
  REQUIRE(smelt.hidden_size == cell["published_smelt"]["hidden_size"].get<std::int64_t>());
  REQUIRE(smelt.ffn.num_experts == cell["published_smelt"]["num_experts"].get<std::int64_t>());
  const Budgets b0 = account(base, budget::paper_workload());
  const Budgets b1 = account(smelt, budget::paper_workload());
  CHECK(b1.training_flops_per_token / b0.training_flops_per_token ==
        Approx(cell["published_smelt"]["flops_ratio"].get<double>()).margin(0.0005));
  CHECK(static_cast<double>(b1.kv_elements_per_token) / static_cast<double>(b0.kv_elements_per_token) ==
        Approx(cell["published_smelt"]["kv_ratio"].get<double>()).margin(0.0005));
  CHECK(rounds_to(static_cast<double>(b1.non_embedding_params_total) / 1e9,
                  cell["published_smelt"]["total_params_B"].get<double>()));
  CHECK(rounds_to(static_cast<double>(b1.non_embedding_params_active) / 1e9,
                  cell["published_smelt"]["active_params_B"].get<double>()));
}

// Prints the sparsity table of docs/accounting.md (run with: budget_tests "[.sparsity_table]").
TEST_CASE("accounting: sparsity table for docs/accounting.md", "[.sparsity_table]") {
  const nlohmann::json grid = read_grid();
  std::string table =
      "| config | N (B) | N_active (B) | N_act^eq (B) | sparsity (ours) | param_sparsity | published S |\n"
      "|---|---|---|---|---|---|---|\n";
  const auto row = [&](const std::string& name, const Budgets& b, double published) {
    table += fmt::format("| {} | {:.4f} | {:.4f} | {:.4f} | {:.3f}% | {:.3f}% | {:.1f}% |\n", name,
                         static_cast<double>(b.non_embedding_params_total) / 1e9,
                         static_cast<double>(b.non_embedding_params_active) / 1e9, b.executed_active_params / 1e9,
                         b.sparsity * 100, b.param_sparsity * 100, published);
  };
  for (std::size_t i = 0; i < grid["cells"].size(); ++i) {
    const auto& cell = grid["cells"][i];
    const ArchConfig c = budget::detail::read_arch_config(cell["baseline"], "grid", "");
    row(c.name, account(c, budget::paper_workload()), cell["published_baseline"]["S_pct"].get<double>());
  }
  row("paper-200M-S95-smelt (looped 4–9 ×2)", account(paper_200m_smelt(), budget::paper_workload()),
      grid["cells"][6]["published_smelt"]["S_pct"].get<double>());
  std::cout << table;
  SUCCEED();
}

// ---------------------------------------------------------------------------------------------
// Hand-derived tests per component, on toy configs small enough to do by hand.
//
// toy_moe: H = 64, L = 4, q = 4·16 = 64, kv = 2·16 = 32, 8 gated experts × 32, top-2; A = 10.
// Per layer:
//   W_q,W_k,W_v : 64·(64 + 64)  = 8,192 params, 16,384 FLOPs
//   W_o         : 64·64         = 4,096 params,  8,192 FLOPs
//   scores      : 4·64·10                        2,560 FLOPs
//   router      : 64·8          =   512 params,  1,024 FLOPs
//   one expert  : 3·64·32       = 6,144 params
//   experts     : 8·6,144 = 49,152 stored; 2·6,144 = 12,288 active, 24,576 FLOPs
//   norms       : 2·64          =   128 params
//   total/layer : 8,192 + 4,096 + 512 + 49,152 + 128 = 62,080
//   active/layer: 8,192 + 4,096 + 512 + 12,288 + 128 = 25,216
//   fwd/layer   : 16,384 + 8,192 + 2,560 + 1,024 + 24,576 = 52,736
// Model: total 4·62,080 + 64 = 248,384; active 4·25,216 + 64 = 100,928;
//        forward 4·52,736 = 210,944; training 632,832; KV 2·4·32 = 256 elements,
//        512 bytes (2 B each), 512·64 = 32,768 bytes per 64-token window.
TEST_CASE("accounting: toy MoE: every component by hand", "[accounting]") {
  const Budgets b = account(toy_moe(), toy_workload());
  const auto& f = b.forward_by_component;
  CHECK(f.qkv_projection == 4 * 16'384.0);
  CHECK(f.attention_scores == 4 * 2'560.0);
  CHECK(f.output_projection == 4 * 8'192.0);
  CHECK(f.router == 4 * 1'024.0);
  CHECK(f.routed_experts == 4 * 24'576.0);
  CHECK(f.shared_experts == 0.0);
  CHECK(f.dense_ffn == 0.0);
  CHECK(b.forward_flops_per_token == 210'944.0);
  CHECK(b.training_flops_per_token == 632'832.0);

  const auto& p = b.params_by_component;
  CHECK(p.attention == 4 * (8'192 + 4'096));
  CHECK(p.router == 4 * 512);
  CHECK(p.routed_experts == 4 * 49'152);
  CHECK(p.shared_experts == 0);
  CHECK(p.dense_ffn == 0);
  CHECK(p.norms == 4 * 128 + 64);
  CHECK(b.non_embedding_params_total == 248'384);

  const auto& a = b.active_params_by_component;
  CHECK(a.attention == 4 * (8'192 + 4'096));
  CHECK(a.router == 4 * 512);
  CHECK(a.routed_experts == 4 * 12'288);
  CHECK(a.norms == 4 * 128 + 64);
  CHECK(b.non_embedding_params_active == 100'928);

  CHECK(b.kv_elements_per_token == 256);
  CHECK(b.kv_bytes_per_token == 512);
  CHECK(b.kv_bytes_per_sequence == 32'768);
  CHECK(b.embedding_params == 0);
  CHECK(b.lm_head_forward_flops_per_token == 0.0);
  CHECK(b.sparsity == Approx(1.0 - 100'928.0 / 248'384.0));
}

// The op list itself: shapes and per-layer costs of toy_moe (numbers as above).
TEST_CASE("accounting: toy MoE: op list shapes and per-layer costs", "[accounting]") {
  const auto ops = budget::layer_ops(toy_moe(), toy_workload());
  using K = budget::OpKind;
  const auto* qkv = find_op(ops, K::qkv_projection);
  REQUIRE(qkv != nullptr);
  CHECK(qkv->in_features == 64);
  CHECK(qkv->out_features == 128);  // q + 2·kv = 64 + 64
  CHECK(qkv->params_per_layer == 8'192);
  CHECK(qkv->forward_flops == 16'384.0);
  CHECK(qkv->physical_layers == 4);
  CHECK(qkv->executed_layers == 4);
  const auto* scores = find_op(ops, K::attention_scores);
  REQUIRE(scores != nullptr);
  CHECK(scores->matrices == 4);
  CHECK(scores->in_features == 16);
  CHECK(scores->params_per_layer == 0);
  CHECK(scores->forward_flops == 2'560.0);
  const auto* experts = find_op(ops, K::routed_experts);
  REQUIRE(experts != nullptr);
  CHECK(experts->in_features == 64);
  CHECK(experts->out_features == 32);
  CHECK(experts->matrices == 2 * 3);  // top_k · 3 matrices used per token
  CHECK(experts->params_per_layer == 49'152);
  CHECK(experts->active_params_per_layer == 12'288);
  CHECK(experts->forward_flops == 24'576.0);
  const auto* final_norm = find_op(ops, K::final_norm);
  REQUIRE(final_norm != nullptr);
  CHECK(final_norm->total_params() == 64);
  CHECK(final_norm->forward_flops == 0.0);
  CHECK(find_op(ops, K::shared_experts) == nullptr);
  CHECK(find_op(ops, K::dense_ffn) == nullptr);
  CHECK(find_op(ops, K::embedding) == nullptr);
  CHECK(find_op(ops, K::lm_head) == nullptr);
}

// Training passes scale F only: 4 passes (full recompute) → 4·210,944 = 843,776.
TEST_CASE("accounting: training FLOPs are passes times forward", "[accounting]") {
  Workload w = toy_workload();
  w.training_passes = 4;
  const Budgets b = account(toy_moe(), w);
  CHECK(b.forward_flops_per_token == 210'944.0);
  CHECK(b.training_flops_per_token == 843'776.0);
}

// Attention scores are linear in A: A = 10 → 4·(4·64·10) = 10,240; A = 33 → 4·(4·64·33) = 33,792.
// Nothing else changes. Causal window of 64 tokens: A = 65/2 = 32.5 → 4·4·64·32.5 = 33,280.
TEST_CASE("accounting: attention-score FLOPs are 4 q A per executed layer", "[accounting]") {
  Workload w = toy_workload();
  w.attended_keys = 33;
  const Budgets b = account(toy_moe(), w);
  CHECK(b.forward_by_component.attention_scores == 33'792.0);
  CHECK(b.forward_flops_per_token == 210'944.0 - 10'240.0 + 33'792.0);
  const Budgets causal = account(toy_moe(), budget::causal_workload(64));
  CHECK(causal.forward_by_component.attention_scores == 33'280.0);
  // Kernel-executed keys (whole tiles) change the kernel count only: A_kernel = 64 →
  // 4·4·64·64 = 65,536 instead of 10,240.
  Workload tiled = toy_workload();
  tiled.kernel_attended_keys = 64;
  const Budgets t = account(toy_moe(), tiled);
  CHECK(t.forward_flops_per_token == 210'944.0);
  CHECK(t.kernel_forward_flops_per_token == 210'944.0 - 10'240.0 + 65'536.0);
  CHECK(t.kernel_training_flops_per_token == 3 * (210'944.0 - 10'240.0 + 65'536.0));
}

// Loop 2–3 ×3 on toy_moe: executed = 4 + (3 − 1)·2 = 8.
//   params unchanged: 248,384 total, 100,928 active
//   forward 8·52,736 = 421,888; KV 2·8·32 = 512
//   executed-active 8·25,216 + 64 = 201,792
TEST_CASE("accounting: loops: parameters once, FLOPs and KV per execution", "[accounting]") {
  ArchConfig c = toy_moe();
  c.loop = LoopConfig{2, 3, 3};
  CHECK(c.executed_layers() == 8);
  CHECK(c.executions_of_layer(1) == 1);
  CHECK(c.executions_of_layer(2) == 3);
  CHECK(c.executions_of_layer(3) == 3);
  CHECK(c.executions_of_layer(4) == 1);
  const Budgets b = account(c, toy_workload());
  CHECK(b.non_embedding_params_total == 248'384);
  CHECK(b.non_embedding_params_active == 100'928);
  CHECK(b.forward_flops_per_token == 421'888.0);
  CHECK(b.forward_by_component.routed_experts == 8 * 24'576.0);
  CHECK(b.forward_by_component.attention_scores == 8 * 2'560.0);
  CHECK(b.kv_elements_per_token == 512);
  CHECK(b.executed_layers == 8);
  CHECK(b.physical_layers == 4);
  CHECK(b.executed_active_params == 201'792.0);
  CHECK(b.sparsity == Approx(1.0 - 201'792.0 / 248'384.0));
  CHECK(b.param_sparsity == Approx(1.0 - 100'928.0 / 248'384.0));
}

TEST_CASE("accounting: a loop with repeats = 1 equals no loop", "[accounting]") {
  ArchConfig looped = paper_200m_baseline();
  looped.loop = LoopConfig{4, 9, 1};
  const Budgets a = account(paper_200m_baseline(), budget::paper_workload());
  const Budgets b = account(looped, budget::paper_workload());
  CHECK(b.training_flops_per_token == a.training_flops_per_token);
  CHECK(b.forward_flops_per_token == a.forward_flops_per_token);
  CHECK(b.non_embedding_params_total == a.non_embedding_params_total);
  CHECK(b.non_embedding_params_active == a.non_embedding_params_active);
  CHECK(b.kv_elements_per_token == a.kv_elements_per_token);
  CHECK(b.executed_layers == a.executed_layers);
  CHECK(b.executed_active_params == a.executed_active_params);
  CHECK(b.sparsity == a.sparsity);
  CHECK(b.param_sparsity == a.param_sparsity);
}

// toy_dense: H = 64, L = 2, q = 64, kv = 4·16 = 64, plain FFN (2 matrices) of width 256; A = 10.
// Per layer:
//   W_q,W_k,W_v : 64·(64 + 128) = 12,288 params, 24,576 FLOPs
//   W_o         : 64·64         =  4,096 params,  8,192 FLOPs
//   scores      : 4·64·10                         2,560 FLOPs
//   FFN         : 2·64·256      = 32,768 params, 65,536 FLOPs
//   norms       : 128
//   total/layer 49,280; fwd/layer 100,864
// Model: total 2·49,280 + 64 = 98,624 = active; forward 201,728; KV 2·2·64 = 256; no router.
TEST_CASE("accounting: dense model: no router, all parameters active, sparsity 0", "[accounting]") {
  const Budgets b = account(toy_dense(), toy_workload());
  CHECK(b.non_embedding_params_total == 98'624);
  CHECK(b.non_embedding_params_active == 98'624);
  CHECK(b.params_by_component.dense_ffn == 2 * 32'768);
  CHECK(b.params_by_component.router == 0);
  CHECK(b.params_by_component.routed_experts == 0);
  CHECK(b.forward_by_component.dense_ffn == 2 * 65'536.0);
  CHECK(b.forward_by_component.router == 0.0);
  CHECK(b.forward_flops_per_token == 201'728.0);
  CHECK(b.kv_elements_per_token == 256);
  CHECK(b.sparsity == 0.0);
  CHECK(b.param_sparsity == 0.0);
  const auto ops = budget::layer_ops(toy_dense(), toy_workload());
  CHECK(find_op(ops, budget::OpKind::router) == nullptr);
  CHECK(find_op(ops, budget::OpKind::routed_experts) == nullptr);
}

// toy_moe + 1 shared gated expert of width 64: 3·64·64 = 12,288 params per layer, all active,
// 24,576 FLOPs. total/layer 62,080 + 12,288 = 74,368 → 4·74,368 + 64 = 297,536;
// active/layer 25,216 + 12,288 = 37,504 → 150,080; fwd/layer 77,312 → 309,248.
TEST_CASE("accounting: shared experts are stored and always active", "[accounting]") {
  ArchConfig c = toy_moe();
  c.ffn.num_shared_experts = 1;
  c.ffn.shared_expert_dim = 64;
  const Budgets b = account(c, toy_workload());
  CHECK(b.params_by_component.shared_experts == 4 * 12'288);
  CHECK(b.active_params_by_component.shared_experts == 4 * 12'288);
  CHECK(b.forward_by_component.shared_experts == 4 * 24'576.0);
  CHECK(b.non_embedding_params_total == 297'536);
  CHECK(b.non_embedding_params_active == 150'080);
  CHECK(b.forward_flops_per_token == 309'248.0);
  // Two shared experts of width 32 cost the same as one of width 64 (2·3·64·32 = 12,288).
  ArchConfig two = toy_moe();
  two.ffn.num_shared_experts = 2;
  two.ffn.shared_expert_dim = 32;
  const Budgets b2 = account(two, toy_workload());
  CHECK(b2.non_embedding_params_total == 297'536);
  CHECK(b2.forward_flops_per_token == 309'248.0);
}

// toy_moe with first_dense_layers = 1, dense_dim = 128 (gated: 3·64·128 = 24,576 params,
// 49,152 FLOPs). Layer 1: 8,192 + 4,096 + 24,576 + 128 = 36,992 params (all active),
// fwd 16,384 + 8,192 + 2,560 + 49,152 = 76,288. Layers 2–4 as toy_moe.
// total 36,992 + 3·62,080 + 64 = 223,296; active 36,992 + 3·25,216 + 64 = 112,704;
// forward 76,288 + 3·52,736 = 234,496; router only in 3 layers: 1,536 params.
TEST_CASE("accounting: first dense layers replace the MoE FFN in the leading layers", "[accounting]") {
  ArchConfig c = toy_moe();
  c.ffn.first_dense_layers = 1;
  c.ffn.dense_dim = 128;
  CHECK(c.dense_ffn_layers() == 1);
  const Budgets b = account(c, toy_workload());
  CHECK(b.params_by_component.dense_ffn == 24'576);
  CHECK(b.params_by_component.router == 3 * 512);
  CHECK(b.params_by_component.routed_experts == 3 * 49'152);
  CHECK(b.non_embedding_params_total == 223'296);
  CHECK(b.non_embedding_params_active == 112'704);
  CHECK(b.forward_by_component.dense_ffn == 49'152.0);
  CHECK(b.forward_by_component.router == 3 * 1'024.0);
  CHECK(b.forward_flops_per_token == 234'496.0);
  CHECK(b.kv_elements_per_token == 256);
}

// first_dense_layers = 2 (layers 1–2 dense) and a loop over 2–3 ×2: layer 2 (dense) and layer 3
// (MoE) run twice. Executions: dense 1 + 2 = 3, MoE 2 + 1 = 3, executed depth 6.
// forward 3·76,288 + 3·52,736 = 228,864 + 158,208 = 387,072;
// params 2·36,992 + 2·62,080 + 64 = 198,208; KV 2·6·32 = 384.
// A loop wholly outside the dense layers (3–4 ×2, first_dense_layers = 1) re-executes MoE only:
// forward 76,288 + 5·52,736 = 339,968.
TEST_CASE("accounting: a loop overlapping the first dense layers", "[accounting]") {
  ArchConfig c = toy_moe();
  c.ffn.first_dense_layers = 2;
  c.ffn.dense_dim = 128;
  c.loop = LoopConfig{2, 3, 2};
  CHECK(c.executed_dense_ffn_layers() == 3);
  const Budgets b = account(c, toy_workload());
  CHECK(b.executed_layers == 6);
  CHECK(b.forward_by_component.dense_ffn == 3 * 49'152.0);
  CHECK(b.forward_by_component.routed_experts == 3 * 24'576.0);
  CHECK(b.forward_by_component.router == 3 * 1'024.0);
  CHECK(b.forward_flops_per_token == 387'072.0);
  CHECK(b.non_embedding_params_total == 198'208);
  CHECK(b.kv_elements_per_token == 384);

  ArchConfig d = toy_moe();
  d.ffn.first_dense_layers = 1;
  d.ffn.dense_dim = 128;
  d.loop = LoopConfig{3, 4, 2};
  CHECK(d.executed_dense_ffn_layers() == 1);
  CHECK(account(d, toy_workload()).forward_flops_per_token == 339'968.0);
}

// Embedding and LM head are reported apart. vocab 100, H = 64: embedding 6,400 params; an untied
// LM head another 6,400 (12,800 apart from N); tied, 6,400. LM head forward 2·64·100 = 12,800
// FLOPs either way. The non-embedding budgets do not move: 248,384 params, 210,944 FLOPs.
TEST_CASE("accounting: tied and untied embeddings and LM head are reported apart", "[accounting]") {
  ArchConfig untied = toy_moe();
  untied.vocab_size = 100;
  untied.tie_embeddings = false;
  ArchConfig tied = untied;
  tied.tie_embeddings = true;
  const Budgets u = account(untied, toy_workload());
  const Budgets t = account(tied, toy_workload());
  CHECK(u.embedding_params == 12'800);
  CHECK(t.embedding_params == 6'400);
  CHECK(u.lm_head_forward_flops_per_token == 12'800.0);
  CHECK(t.lm_head_forward_flops_per_token == 12'800.0);
  for (const Budgets* b : {&u, &t}) {
    CHECK(b->non_embedding_params_total == 248'384);
    CHECK(b->non_embedding_params_active == 100'928);
    CHECK(b->forward_flops_per_token == 210'944.0);
    CHECK(b->training_flops_per_token == 632'832.0);
  }
  const auto ops = budget::layer_ops(tied, toy_workload());
  const auto* head = find_op(ops, budget::OpKind::lm_head);
  REQUIRE(head != nullptr);
  CHECK(head->params_per_layer == 0);
  CHECK(head->forward_flops == 12'800.0);
}

// ---------------------------------------------------------------------------------------------
// Monotonicity properties, on the 200M baseline.

// One more expert (193): params grow by one expert and one router column per layer,
// 12·(1,658,880 + 1,280) = 19,921,920; FLOPs grow only by the router, 12·2·1,280 = 30,720;
// active only by the router column, 12·1,280 = 15,360.
TEST_CASE("accounting: more experts: more parameters, same FLOPs except the router", "[accounting]") {
  const Budgets a = account(paper_200m_baseline(), budget::paper_workload());
  ArchConfig more = paper_200m_baseline();
  more.ffn.num_experts = 193;
  const Budgets b = account(more, budget::paper_workload());
  CHECK(b.non_embedding_params_total - a.non_embedding_params_total == 19'921'920);
  CHECK(b.non_embedding_params_active - a.non_embedding_params_active == 15'360);
  CHECK(b.forward_flops_per_token - a.forward_flops_per_token == 30'720.0);
  CHECK(b.forward_by_component.routed_experts == a.forward_by_component.routed_experts);
  CHECK(b.kv_elements_per_token == a.kv_elements_per_token);
  for (std::int64_t e : {8, 64, 192, 336, 1024}) {
    ArchConfig c = paper_200m_baseline();
    c.ffn.num_experts = e;
    ArchConfig d = c;
    d.ffn.num_experts = e + 8;
    const Budgets x = account(c, budget::paper_workload());
    const Budgets y = account(d, budget::paper_workload());
    CHECK(y.non_embedding_params_total > x.non_embedding_params_total);
    CHECK(y.sparsity > x.sparsity);
    CHECK(y.forward_flops_per_token - x.forward_flops_per_token ==
          y.forward_by_component.router - x.forward_by_component.router);
  }
}

TEST_CASE("accounting: wider: more of everything", "[accounting]") {
  const Budgets a = account(paper_200m_baseline(), budget::paper_workload());
  const auto check_more = [&](const ArchConfig& wider, bool kv_grows) {
    const Budgets b = account(wider, budget::paper_workload());
    CHECK(b.non_embedding_params_total > a.non_embedding_params_total);
    CHECK(b.non_embedding_params_active > a.non_embedding_params_active);
    CHECK(b.training_flops_per_token > a.training_flops_per_token);
    if (kv_grows) {
      CHECK(b.kv_elements_per_token > a.kv_elements_per_token);
    } else {
      CHECK(b.kv_elements_per_token == a.kv_elements_per_token);
    }
  };
  ArchConfig hidden = paper_200m_baseline();
  hidden.hidden_size = 1408;
  check_more(hidden, false);  // KV width is heads × head_dim, not H
  ArchConfig heads = paper_200m_baseline();
  heads.attention.head_dim = 144;
  check_more(heads, true);
  ArchConfig experts = paper_200m_baseline();
  experts.ffn.expert_dim = 512;
  check_more(experts, false);
}

// KV heads 2 → 5 (divides 10): KV 2·12·5·128 = 15,360 elements instead of 6,144; W_k, W_v grow
// by 2·1280·(3·128) = 983,040 per layer.
TEST_CASE("accounting: more KV heads: more KV cache", "[accounting]") {
  const Budgets a = account(paper_200m_baseline(), budget::paper_workload());
  ArchConfig c = paper_200m_baseline();
  c.attention.num_kv_heads = 5;
  const Budgets b = account(c, budget::paper_workload());
  CHECK(b.kv_elements_per_token == 15'360);
  CHECK(b.non_embedding_params_total - a.non_embedding_params_total == 12 * 983'040);
  CHECK(b.forward_by_component.attention_scores == a.forward_by_component.attention_scores);
  std::int64_t previous = 0;
  for (std::int64_t kv_heads : {1, 2, 5, 10}) {
    ArchConfig d = paper_200m_baseline();
    d.attention.num_kv_heads = kv_heads;
    const std::int64_t kv = account(d, budget::paper_workload()).kv_elements_per_token;
    CHECK(kv > previous);
    previous = kv;
  }
}

// Repeats r over 4–9 of the 200M baseline: executed 12 + 6(r − 1), so KV 2·(12 + 6(r − 1))·256
// and forward (12 + 6(r − 1))·36,945,920; params fixed at 3,872,226,560.
TEST_CASE("accounting: more repeats: more FLOPs and KV, same parameters", "[accounting]") {
  double previous_flops = 0;
  std::int64_t previous_kv = 0;
  for (std::int64_t r = 1; r <= 4; ++r) {
    ArchConfig c = paper_200m_baseline();
    c.loop = LoopConfig{4, 9, r};
    const Budgets b = account(c, budget::paper_workload());
    const std::int64_t executed = 12 + 6 * (r - 1);
    CHECK(b.executed_layers == executed);
    CHECK(b.kv_elements_per_token == 2 * executed * 256);
    CHECK(b.forward_flops_per_token == static_cast<double>(executed) * 36'945'920.0);
    CHECK(b.non_embedding_params_total == 3'872'226'560);
    CHECK(b.non_embedding_params_active == 209'419'520);
    CHECK(b.training_flops_per_token > previous_flops);
    CHECK(b.kv_elements_per_token > previous_kv);
    previous_flops = b.training_flops_per_token;
    previous_kv = b.kv_elements_per_token;
  }
}

// The integer totals stay exact where a 32-bit count would overflow: 1.6B-E336 baseline has
// 53,886,092,544 parameters (> 2^32); check in 64 bits against the hand value
// 30·(H(q+2kv) + qH + H·E + 3·H·d·E + 2H) + H with H = 2304, q = 2304, kv = 256, E = 336, d = 768:
// 2304·2816 = 6,488,064; 2304² = 5,308,416; 2304·336 = 774,144; 3·2304·768·336 = 1,783,627,776;
// 2H = 4,608 → per layer 1,796,203,008 → 30× = 53,886,090,240 + 2,304 = 53,886,092,544.
TEST_CASE("accounting: large totals are exact 64-bit integers", "[accounting]") {
  ArchConfig c;
  c.hidden_size = 2304;
  c.num_layers = 30;
  c.attention = {18, 128, 2};
  c.ffn.num_experts = 336;
  c.ffn.top_k = 8;
  c.ffn.expert_dim = 768;
  const Budgets b = account(c, budget::paper_workload());
  CHECK(b.non_embedding_params_total == 53'886'092'544);
}

// account(config, workload) validates both inputs.
TEST_CASE("accounting: account validates its inputs", "[accounting]") {
  ArchConfig bad = toy_moe();
  bad.attention.num_kv_heads = 3;
  CHECK_THROWS_AS(account(bad, toy_workload()), budget::Error);
  Workload w = toy_workload();
  w.attended_keys = 100;  // > seq_len 64
  CHECK_THROWS_AS(account(toy_moe(), w), budget::Error);
}
