// Tests of the kernel table (budget/kernel_stack.hpp). The expected values are read off the
// kernels' sources by hand (docs/kernels.md names each one's file:line at the commits named
// in kernel_stack.hpp), not computed by the code under test.

#include <catch2/catch.hpp>

#include <string>

#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/kernel_stack.hpp"
#include "support/accounting_fixtures.hpp"

using namespace budget;

namespace {
KernelTarget target(const char* gpu, AttentionBackend backend, Precision precision = Precision::bf16) {
  return {gpu, parse_gpu_arch(gpu, "--gpu"), backend, precision};
}
}  // namespace

TEST_CASE("kernel stack: GPU names map to architectures", "[kernels]") {
  CHECK(parse_gpu_arch("h100-sxm", "--gpu") == GpuArch::sm90);
  CHECK(parse_gpu_arch("NVIDIA H200 SXM 141GB", "--gpu") == GpuArch::sm90);
  CHECK(parse_gpu_arch("b200", "--gpu") == GpuArch::sm100);
  CHECK(parse_gpu_arch("gb200-nvl72", "--gpu") == GpuArch::sm100);
  CHECK(parse_gpu_arch("a100-80gb", "--gpu") == GpuArch::sm80);
  CHECK_THROWS_WITH(parse_gpu_arch("mi300x", "--gpu"), Catch::Contains("mi300x") && Catch::Contains("h100-sxm"));
  CHECK_THROWS_WITH(parse_precision("fp8", "--precision"), Catch::Contains("fp8-blockwise"));
  CHECK_THROWS_WITH(parse_attention_backend("flash", "--attention-backend"), Catch::Contains("fa3"));
}

TEST_CASE("kernel stack: FlashAttention-3 on Hopper pads to its compiled head dims", "[kernels]") {
  const KernelTarget fa3 = target("h100-sxm", AttentionBackend::fa3);
  // hopper/flash_api.cpp:492-509 round_up_headdim: 64, 96, 128, 192, 256.
  const AttentionFit d168 = attention_fit(fa3, 168, 168);
  CHECK(d168.kind == KernelFitKind::padded);
  CHECK(d168.executed_qk == 192);
  CHECK(attention_fit(fa3, 80, 80).executed_qk == 96);
  CHECK(attention_fit(fa3, 128, 128).kind == KernelFitKind::native);
  CHECK(attention_fit(fa3, 192, 128).kind == KernelFitKind::native);  // the DeepSeek pair, Hopper only
  CHECK(attention_fit(fa3, 264, 264).kind == KernelFitKind::refused);
  CHECK(attention_fit(fa3, 84, 84).kind == KernelFitKind::refused);   // d % 8
  // No Blackwell kernels (TE utils.py:573-576 disables FA3 off sm90).
  CHECK(attention_fit(target("b200", AttentionBackend::fa3), 128, 128).kind == KernelFitKind::refused);
}

TEST_CASE("kernel stack: Transformer Engine's default per architecture", "[kernels]") {
  // sm90: cuDNN first, any multiple of 8 up to 256 (fused_attn.cpp:315-318, cuDNN >= 9.5).
  const KernelTarget h100 = target("h100-sxm", AttentionBackend::te_default);
  const AttentionFit h168 = attention_fit(h100, 168, 168);
  CHECK(h168.kind == KernelFitKind::native);
  CHECK(h168.backend == AttentionBackend::cudnn);
  // An MLA pair with both >= 128 other than (192, 128): cuDNN's known-bug exclusion; FA2 runs it at 256.
  const AttentionFit h_mla = attention_fit(h100, 256, 128);
  CHECK(h_mla.kind == KernelFitKind::padded);
  CHECK(h_mla.backend == AttentionBackend::fa2);
  CHECK(h_mla.executed_v == 256);
  CHECK(attention_fit(h100, 192, 128).kind == KernelFitKind::native);
  // sm100: cuDNN trains <= 128, (192, 128) and (256, 256); FA2 (built for sm100: setup.py:74,123)
  // runs 168 on its 192 tile (flash_api.cpp:458: 168 rounded up to a multiple of 64).
  const KernelTarget b200 = target("b200", AttentionBackend::te_default);
  CHECK(attention_fit(b200, 128, 128).kind == KernelFitKind::native);
  CHECK(attention_fit(b200, 120, 120).kind == KernelFitKind::native);
  CHECK(attention_fit(b200, 256, 256).kind == KernelFitKind::native);
  const AttentionFit b168 = attention_fit(b200, 168, 168);
  CHECK(b168.kind == KernelFitKind::padded);
  CHECK(b168.executed_qk == 192);
  CHECK(attention_fit(b200, 264, 264).kind == KernelFitKind::refused);
  // sm80: FlashAttention-2 first (no FusedAttention preference below sm90): 80 runs on the 96 tile.
  const AttentionFit a80 = attention_fit(target("a100-80gb", AttentionBackend::te_default), 80, 80);
  CHECK(a80.kind == KernelFitKind::padded);
  CHECK(a80.executed_qk == 96);
  // FA4 on Blackwell refuses 168 and (192, 192) (interface.py:112-129).
  const KernelTarget fa4 = target("b200", AttentionBackend::fa4);
  CHECK(attention_fit(fa4, 168, 168).kind == KernelFitKind::refused);
  CHECK(attention_fit(fa4, 192, 192).kind == KernelFitKind::refused);
  CHECK(attention_fit(fa4, 192, 128).kind == KernelFitKind::native);
}

TEST_CASE("kernel stack: widths per precision and the whole config's fit", "[kernels]") {
  CHECK(width_multiple(Precision::bf16) == 8);
  CHECK(width_multiple(Precision::fp8_tensorwise) == 16);
  CHECK(width_multiple(Precision::fp8_blockwise) == 128);
  CHECK(width_multiple(Precision::mxfp8) == 32);
  CHECK(width_multiple(Precision::nvfp4) == 16);
  ArchConfig c = test::paper_200m_baseline();
  c.hidden_size = 1160;  // 1160 = 36.25·32: off MXFP8's 32-element blocks
  c.attention.num_heads = 1160 / c.attention.head_dim;
  const KernelFit off = kernel_fit(c, target("b200", AttentionBackend::te_default, Precision::mxfp8));
  CHECK(off.kind == KernelFitKind::refused);
  CHECK_THAT(off.describe(), Catch::Contains("hidden_size 1160 is not a multiple of 32"));
  const KernelFit hopper_mx = kernel_fit(test::paper_200m_baseline(), target("h100-sxm", AttentionBackend::te_default, Precision::mxfp8));
  CHECK(hopper_mx.kind == KernelFitKind::refused);
  CHECK_THAT(hopper_mx.describe(), Catch::Contains("Blackwell"));
}

TEST_CASE("kernel stack: dispatcher limits on expert layouts", "[kernels]") {
  CHECK(expert_layout_refusal(false, 160, 64, 1, 6) == "160 experts do not divide by EP 64");
  CHECK(expert_layout_refusal(false, 128, 12, 1, 8).find("do not divide") != std::string::npos);
  CHECK(expert_layout_refusal(true, 128, 16, 1, 8).empty());
  CHECK(expert_layout_refusal(true, 120, 4, 3, 8).find("multiple of 8") != std::string::npos);
  CHECK(expert_layout_refusal(true, 128, 1, 1, 8).find("TP·EP > 1") != std::string::npos);
  CHECK(expert_layout_refusal(true, 128, 2, 4, 9).find("36") != std::string::npos);
  CHECK(expert_layout_refusal(true, 256, 256, 1, 8).find("160") != std::string::npos);
  CHECK(expert_layout_refusal(false, 256, 256, 1, 8).empty());
}

TEST_CASE("kernel stack: per-expert token padding", "[kernels]") {
  // TE quantization.py:262-278: MXFP8 32, NVFP4 128, other FP8 16; BF16 none.
  CHECK(padded_expert_tokens(17, Precision::fp8_blockwise) == 32);
  CHECK(padded_expert_tokens(33, Precision::mxfp8) == 64);
  CHECK(padded_expert_tokens(129, Precision::nvfp4) == 256);
  CHECK(padded_expert_tokens(17, Precision::bf16) == 17);
  CHECK(padded_expert_tokens(0, Precision::mxfp8) == 0);
  // 128 experts, 4096 routed tokens, MXFP8: (4096 + 128·31/2) / 4096 = 6080 / 4096.
  CHECK(expected_expert_padding_factor(4096, 128, Precision::mxfp8) == Approx(6080.0 / 4096.0));
  CHECK(expected_expert_padding_factor(4096, 128, Precision::bf16) == 1.0);
}

TEST_CASE("kernel stack: MLA's kv_a width under FP8 blockwise runs in FP8 with a partial block", "[kernels]") {
  // DeepSeek-V3 (tests/data/hf): kv_a writes kv_lora_rank + qk_rope_head_dim = 512 + 64 = 576 =
  // 4.5 blocks of 128. TE quantizes the last half block with its own scale and the block-scaled GEMM
  // needs multiples of 16 (cublaslt_gemm.cu:209-214): the model runs natively on H100 + FP8
  // blockwise, every other width (7168, 1536, 512, 128·192, 128·128, 2048) on 128.
  const ArchConfig v3 = load_arch_config(std::string(BUDGET_TEST_DATA_DIR) + "/hf/deepseek-v3.json");
  const KernelTarget blockwise = target("h100-sxm", AttentionBackend::te_default, Precision::fp8_blockwise);
  const KernelFit fit = kernel_fit(v3, blockwise);
  CHECK(fit.width_problems.empty());
  CHECK(fit.kind == KernelFitKind::native);
  // A rotary head dim of 72 makes it 584, off 16: refused by name under FP8 blockwise (every other
  // width stays on 128: 128·(128 + 72) = 200·128); BF16 needs 8 only, which 584 is.
  ArchConfig rope72 = v3;
  rope72.attention.mla->qk_rope_head_dim = 72;
  const KernelFit off = kernel_fit(rope72, blockwise);
  REQUIRE(off.width_problems.size() == 1);
  CHECK(off.width_problems.front() == "kv_a width (kv_lora_rank + qk_rope_head_dim) 584 is not a multiple of 16");
  CHECK(kernel_fit(rope72, target("h100-sxm", AttentionBackend::te_default)).width_problems.empty());
}

TEST_CASE("kernel stack: HybridEP's limits on expert layouts", "[kernels]") {
  // DeepEP hybrid-ep@94a9f8f, hand-read: (experts, EP, TP, hidden, NVLink domain, tokens a rank).
  // 128 experts on EP 16 across two 8-GPU domains: 16 % 8 = 0, 8 local x 8 = 64, 4096 tokens: runs.
  CHECK(hybridep_layout_refusal(128, 16, 1, 2048, 8, 4096).empty());
  // No cluster known: the hidden size alone (and EP 1, which DeepEP refuses, runs).
  CHECK(hybridep_layout_refusal(128, 1, 1, 2048, 0, 0).empty());
  CHECK_THAT(hybridep_layout_refusal(128, 8, 1, 2056, 0, 0), Catch::Contains("multiple of 16") && Catch::Contains("2056"));
  CHECK_THAT(hybridep_layout_refusal(128, 12, 1, 2048, 8, 4096), Catch::Contains("do not divide by EP 12"));
  // TP·EP = 12 ranks, 8 in a domain: 12 % 8 != 0 (hybrid_ep_buffer.py:74-76).
  CHECK_THAT(hybridep_layout_refusal(128, 4, 3, 2048, 8, 4096), Catch::Contains("TP·EP = 12, 8 in a domain"));
  // 6 experts on EP 2 in one domain: 3 local x 2 ranks = 6, not a multiple of 4 (config.cuh:91).
  CHECK_THAT(hybridep_layout_refusal(6, 2, 1, 2048, 8, 4096), Catch::Contains("3 x 2"));
  // A 144-GPU domain holds 144 ranks > 72 (config.cuh:16); 72-GPU domains (GB200 NVL72) run them.
  CHECK_THAT(hybridep_layout_refusal(288, 144, 1, 7168, 144, 4096), Catch::Contains("at most 72"));
  CHECK(hybridep_layout_refusal(288, 144, 1, 7168, 72, 4096).empty());
  // Across domains 3·T + 1 < 65,536: 21,844 tokens a rank run, 21,845 do not; inside one domain any.
  CHECK(hybridep_layout_refusal(128, 16, 1, 2048, 8, 21844).empty());
  CHECK_THAT(hybridep_layout_refusal(128, 16, 1, 2048, 8, 21845), Catch::Contains("at most 21844 tokens"));
  CHECK(hybridep_layout_refusal(128, 8, 1, 2048, 8, 32768).empty());
}
