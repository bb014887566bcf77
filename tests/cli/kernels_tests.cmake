# Kernel targets (issue 43; docs/kernels.md): --gpu, --precision, --attention-backend, --portable-shapes.
set(KBASE examples/hf/mixtral-8x7b.json)
# B200 + MXFP8: the kernels column, a padded row #1 (168 on FA2's 192 kernel) and the native reach
# (best native beside best padded).
budget_cli_test(NAME kernels.b200_mxfp8 ARGS --baseline ${KBASE} --gpu b200 --precision mxfp8
  STDOUT_MATCHES "kernels" "padded→192" "best native: max dev 3\\.12%.*native" "best padded: max dev 1\\.56%"
  "kernels of b200 \\(sm100\\), attention te-default, precision mxfp8")
# H100's default (cuDNN) runs 168 natively; FA3 pads it.
budget_cli_test(NAME kernels.h100_default_native ARGS --baseline ${KBASE} --gpu h100-sxm --top 1
  STDOUT_MATCHES "×168 \\(KV 4\\).* native")
budget_cli_test(NAME kernels.json ARGS --baseline ${KBASE} --gpu h100-sxm --attention-backend fa3 --format json --top 2
  STDOUT_MATCHES "\"kernel_stack\": {" "\"attention_backend\": \"fa3\"" "\"kernel_fit\": {" "\"fit\": \"native\"")
# The portable set names the budget it cannot reach and suggests a loop span.
budget_cli_test(NAME kernels.portable ARGS --baseline examples/configs/paper-200M-S95-baseline.json --portable-shapes
  STDOUT_MATCHES "the native shapes cannot reach: kv: -25\\.00%" "--loop 1-12 gives a native match")
# The portable set's ablations: a point the native shapes cannot match widens its depth to explain
# why, keeping only the stacks that hold the point's loop (it failed with "loop layers 6–7 do not
# fit in a stack of 1 layers").
budget_cli_test(NAME kernels.portable_ablation ARGS grid --ablation span --portable-shapes
  STDOUT_MATCHES "span 2 +12/14 +6–7 ×2" "KV heads 2 held at 6 of 6 points")
# Every cell's row #1 runs on the target (JSON: the matched candidates' kernel_fit; the paper's
# baselines themselves have expert width 432, off MXFP8's 32, and the table says "refused" for them).
budget_cli_test(NAME kernels.grid ARGS grid --gpu b200 --precision mxfp8 --format json
  STDOUT_MATCHES "\"kernel_stack\": {" "\"fit\": \"native\"" STDOUT_NOT_MATCHES "\"fit\": \"refused\"")
# Refusals: an unknown GPU, a precision without a GPU, MXFP8 on Hopper, a profile backend without a profile.
budget_cli_test(NAME kernels.bad_gpu ARGS --baseline ${KBASE} --gpu mi300x EXPECT_EXIT 2
  STDERR_MATCHES "--gpu: GPU \"mi300x\" is not known; allowed: .*h100-sxm")
budget_cli_test(NAME kernels.precision_needs_gpu ARGS --baseline ${KBASE} --precision mxfp8 EXPECT_EXIT 64
  STDERR_MATCHES "--precision: a kernel target needs a GPU")
budget_cli_test(NAME kernels.mxfp8_on_hopper ARGS --baseline ${KBASE} --gpu h100-sxm --precision mxfp8 EXPECT_EXIT 2
  STDERR_MATCHES "mxfp8 needs Blackwell")
budget_cli_test(NAME kernels.bad_precision ARGS --baseline ${KBASE} --gpu b200 --precision fp8 EXPECT_EXIT 2
  STDERR_MATCHES "precision \"fp8\" is not known; allowed: bf16, fp8-tensorwise")
