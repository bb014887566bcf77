// Kernel-executed FLOPs in the accounting: exact attention for the budgets, whole tiles for time
// prediction, forward and backward kernels with their own tiles.

#include <catch2/catch.hpp>

#include "budget/accounting.hpp"
#include "budget/workload.hpp"

using namespace budget;

TEST_CASE("kernel: one 4096-token document per window, tiles counted by hand", "[accounting][kernel]") {
  // Every window holds one whole document of 4096 tokens (fixed lengths = seq_len).
  const Workload w = parse_workload(R"({"seq_len": 4096, "doc_lengths": {"distribution": "fixed:4096"},
                                        "attention_kernel": "varlen", "forward_tile": "128x128",
                                        "backward_tile": "64x128"})",
                                    "w.json");
  // Exact: (n + 1)/2 = 2048.5 keys per query.
  CHECK(w.attended_keys == 2048.5);
  // Forward 128×128 tiles: row block i (0-based) needs i + 1 key blocks: Σ_{i<32} (i+1) = 528
  // tiles of 128·128 = 8,650,752 keys over 4096 queries = 2112 keys per query.
  CHECK(w.kernel_forward_attended_keys == 2112.0);
  // Backward 64×128 tiles: row block i needs ceil((i+1)/2) key blocks: Σ_{j=1..64} ceil(j/2) =
  // 2·(1 + … + 32) = 1056 tiles of 64·128 = 8,650,752 keys: again 2112 per query.
  CHECK(w.kernel_backward_attended_keys == 2112.0);

  ArchConfig c;
  c.hidden_size = 256;
  c.num_layers = 2;
  c.attention = {4, 64, 2};  // q = 256
  c.ffn.dense_dim = 512;
  c.loop = LoopConfig{2, 2, 2};  // 3 executed layers
  const Budgets b = account(c, w);
  const double exact_scores = 3 * 4.0 * 256 * 2048.5;   // per token: executed layers · 4·q·A
  const double kernel_scores = 3 * 4.0 * 256 * 2112.0;
  CHECK(b.forward_by_component.attention_scores == exact_scores);
  CHECK(b.kernel_forward_flops_per_token - b.forward_flops_per_token == Approx(kernel_scores - exact_scores));
  // Training: 3 passes of everything; attention at the pass-weighted kernel keys (2112 here).
  CHECK(b.kernel_training_flops_per_token - b.training_flops_per_token == Approx(3 * (kernel_scores - exact_scores)));
  // The budgets (F) use the exact count only.
  CHECK(b.training_flops_per_token == 3 * b.forward_flops_per_token);
}

TEST_CASE("kernel: without a kernel model the kernel FLOPs equal the exact ones", "[accounting][kernel]") {
  ArchConfig c;
  c.hidden_size = 128;
  c.num_layers = 3;
  c.attention = {2, 64, 1};
  c.ffn.dense_dim = 256;
  const Budgets b = account(c, paper_workload());
  CHECK(b.kernel_forward_flops_per_token == b.forward_flops_per_token);
  CHECK(b.kernel_training_flops_per_token == b.training_flops_per_token);
}
