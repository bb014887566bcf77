# CLI tests of issue 32: profiles from published kernel tables, the Megatron-Core/TE stack, FP8,
# provenance and calibration from measured runs. Run from the repository root.

set(kernels data/kernels/kernels.json)
set(runs data/runs/measured_runs.jsonl)
set(b200_profile cuda_profiler/profiles/b200-published.json)
set(llama tests/data/hf/llama-3-70b.json)

# The shipped profiles are the builder's output (rebuilt here, compared byte for byte by the
# profile test in tests/unit/time/test_published_profiles.cpp); the builder names its sources.
budget_cli_test(NAME published.calibrate_from_kernels ARGS calibrate --from-kernels ${kernels} --gpu H100_SXM
  STDOUT_MATCHES [=["name": "NVIDIA H100 SXM5 80GB"]=] [=["datasheet_peak_tflops": 989(\.0)?,]=]
    [=["datasheet_fp8_tflops": 1979(\.0)?]=] [=["stack": "megatron-core-te",]=] [=["kind": "published",]=]
    [=["ai-dynamo/aiconfigurator@095f58a51c4ca8e61b66ec108d86f223f8d559ce:aic-core/src/aiconfigurator_core/systems/data/h100_sxm/gemm/sglang/0.5.10/gemm_perf.parquet"]=]
    [=[{"op":"gemm","pass":"forward","M":8192,"K":8192,"N":8192,"backend":"cublas","ms":]=])
budget_cli_test(NAME published.gb200_carried_from_b200 ARGS calibrate --from-kernels ${kernels} --gpu GB200
  STDOUT_MATCHES [=["carried_from":"NVIDIA B200"]=] [=["backend":"cudnn"]=])
budget_cli_test(NAME published.unknown_gpu ARGS calibrate --from-kernels ${kernels} --gpu MI300X
  EXPECT_EXIT 2 STDERR_MATCHES [=[--gpu: GPU "MI300X" has no published profile; allowed: A100_SXM4_80GB, H100_SXM]=])
budget_cli_test(NAME published.from_kernels_needs_gpu ARGS calibrate --from-kernels ${kernels}
  EXPECT_EXIT 64 STDERR_MATCHES [=[--from-kernels and --gpu go together]=])

# Calibration from runs: leave-one-run-out errors per precision, the acceptance bound of issue 32
# (median |error| at most 8%) on the B200 BF16 runs.
budget_cli_test(NAME published.from_runs_b200 ARGS calibrate --profile ${b200_profile} --from-runs ${runs}
  STDOUT_MATCHES [=[bf16: 31 runs fitted, 13 validated]=] [=[median [0-7]\.[0-9]%, worst]=])
budget_cli_test(NAME published.from_runs_json ARGS calibrate --profile ${b200_profile} --from-runs ${runs} --format json
  STDOUT_MATCHES [=["precision": "bf16"]=])
# A run given by its Megatron-Bridge config (issue 42): read as the same run given by its Megatron-LM
# arguments, the same prediction (tests/data/bridge/README.md).
budget_cli_test(NAME published.from_runs_bridge_config ARGS calibrate
    --profile cuda_profiler/profiles/h100-sxm-published.json --from-runs tests/data/bridge/qwen3_runs.jsonl
  STDOUT_MATCHES [=[qwen3-30b-a3b-h100-bf16-n16-megatron-args +validate +20\.147 +([0-9.]+) ]=]
    [=[qwen3-30b-a3b-h100-bf16-n16-bridge-config +validate +20\.147 +([0-9.]+) ]=])

# The step time on the published B200 profile: the stack, the FP8 recipe, provenance shares, MFU
# against the datasheet peak.
budget_cli_test(NAME published.layout_stack_provenance ARGS layout ${llama} --cluster examples/clusters/b200.json
    --gpus 8 --tp 8 --sequence-parallel --micro-batch-size 1 --micro-batches 4 --seq-len 8192
    --profile ${b200_profile} --fp8-recipe mxfp8 --format json
  EXPECT_EXIT 3 STDOUT_MATCHES [=["stack": "megatron-core-te"]=] [=["fp8_recipe": "mxfp8"]=] [=["provenance": {
        "measured": 0(\.0)?,
        "published": [0-9.e+-]+,
        "interpolated": [0-9.e+-]+,]=] [=["run_fit": "mxfp8"]=] [=[the datasheet's dense BF16 peak, 2250 TFLOP/s]=])
budget_cli_test(NAME published.layout_fp8_refused_on_a100 ARGS layout ${llama} --cluster examples/clusters/a100-80gb.json
    --gpus 8 --tp 8 --sequence-parallel --micro-batch-size 1 --micro-batches 1 --profile cuda_profiler/profiles/a100-80gb-published.json
    --fp8-recipe tensorwise
  EXPECT_EXIT 2 STDERR_MATCHES [=[has no fp8 rows and no datasheet FP8 peak: FP8 is not timed on it]=])

# Issue 42: Blackwell Ultra profiles. Their own GEMM tables; B200's cuDNN attention carried by the
# measured trtllm_mha prefill ratio (the unit test checks the factors by hand).
budget_cli_test(NAME published.gb300_own_gemms_carried_attention ARGS calibrate --from-kernels ${kernels} --gpu GB300
  STDOUT_MATCHES [=["name": "NVIDIA GB300"]=] [=["compute_capability": "10.3"]=] [=["carried_from":"NVIDIA B200"]=]
    [=[cuDNN attention carried from B200 by trtllm_mha prefill times at identical shapes \(x 0.809 in time\)]=]
    [=[systems/data/gb300/gemm/sglang/0.5.10/gemm_perf.parquet]=])
budget_cli_test(NAME published.b300_carried_attention ARGS calibrate --from-kernels ${kernels} --gpu B300
  STDOUT_MATCHES [=["name": "NVIDIA B300"]=] [=[\(x 0.869 in time\)]=])

# Issue 42: the MoE runs priced from their exact Megatron-LM arguments; the runs that publish their
# peak memory get it compared (today −11.7% on the H100 Qwen3-30B-A3B run: the issue's 3% is not met,
# docs/cluster.md "MoE memory terms").
budget_cli_test(NAME published.from_runs_moe_memory ARGS calibrate --profile cuda_profiler/profiles/h100-sxm-published.json
    --from-runs data/runs/moe_runs.jsonl
  STDOUT_MATCHES [=[bf16: 4 runs fitted, 3 validated]=] [=[peak allocated memory per GPU \(the runs that publish it\)]=]
    [=[mbcard-qwen3-30b-h100-bf16-n16-perf +62\.17 +54\.92 +-11\.7%]=])
