# CLI tests of calibration profiles and time (issue 8): calibrate, report/match/grid --calibration,
# --rank-by time, --max-time-ratio, --explain with a profile, and their errors. Run from the
# repository root with the shipped H200 PyTorch-eager profile.

set(base examples/configs/paper-200M-S95-baseline.json)
set(profile cuda_profiler/profiles/h200-torch-eager.json)
set(measurements tests/data/h200_torch_ops.jsonl)
set(one_error_line "^budget-match: error: [^\n]+\n$")

# --- calibrate -----------------------------------------------------------------------------------
budget_cli_test(NAME time.calibrate_validate ARGS calibrate --from-jsonl ${measurements} --validate
  STDOUT_MATCHES [=[held-out accuracy]=] [=[NVIDIA H200 \(pytorch-eager \(torch 2\.11\.0\+cu130\)\)]=]
    [=[gemm +441 +459 +[0-9.]+% +[0-9.]+%]=] [=[attention +[0-9]+ +[0-9]+ ]=] [=[all +1065 +1096 ]=])
budget_cli_test(NAME time.calibrate_validate_json ARGS calibrate --profile ${profile} --validate --format json
  STDOUT_MATCHES [=["schema_version": 1]=] [=["op": "combine_scatter_add"]=] [=["median_relative_error": 0\.0]=])
budget_cli_test(NAME time.calibrate_to_stdout ARGS calibrate --from-jsonl ${measurements}
  STDOUT_MATCHES [=[^{
  "schema": "budget.calibration",
  "schema_version": 1,]=] [=[
    {"op":"attention","pass":"forward\+backward","docs":32,"doc_len":1024,"tokens":32768,"num_heads":8,"num_kv_heads":2,"head_dim":68,"backend":"cudnn","refused":true,]=])
budget_cli_test(NAME time.calibrate_layers_validate ARGS calibrate --from-jsonl ${measurements}
    --layers tests/data/time/h200_torch_layers.jsonl --validate
  STDOUT_MATCHES [=[Whole layers, leave one cell out]=] [=[correction fitted on all 48 layer rows: factors gemm 1\.000, attention_aligned 0\.886, attention_unaligned 1\.213]=]
    [=[head_dim a multiple of 8, 65–128: cudnn; head_dim not a multiple of 8, 65–128: flash]=]
    [=[600M-E336 +aligned +2 +cudnn +20\.007 ]=] [=[time ratio error: median 0\.0[0-9]+, worst 0\.0[0-9]+]=]
    [=[baselines over-predicted: 2 of 6; worst vs the runs' mean \+1\.2%, vs the slowest run \+0\.9%]=])
budget_cli_test(NAME time.calibrate_layers_json ARGS calibrate --profile ${profile} --validate --format json
  STDOUT_MATCHES [=["layers": {
    "correction": {]=] [=["max_ratio_error": 0\.0]=] [=["tag": "baseline"]=])
budget_cli_test(NAME time.calibrate_layers_bad ARGS calibrate --from-jsonl ${measurements} --layers ${measurements}
  EXPECT_EXIT 2 STDERR_MATCHES [=[h200_torch_ops.jsonl: line 1/[a-z_]+: ]=])
budget_cli_test(NAME time.calibrate_needs_one_source ARGS calibrate EXPECT_EXIT 64
  STDERR_MATCHES [=[exactly one of --from-jsonl]=])
budget_cli_test(NAME time.calibrate_bad_lines ARGS calibrate --from-jsonl tests/data/bad/not_json.json EXPECT_EXIT 2
  STDERR_MATCHES [=[tests/data/bad/not_json.json: line 1: ]=])
budget_cli_test(NAME time.profile_bad ARGS report ${base} --calibration examples/configs/paper-200M-S95-baseline.json
  EXPECT_EXIT 2 STDERR_MATCHES [=[paper-200M-S95-baseline.json: /[a-z_]+: unknown key]=])
budget_cli_test(NAME time.profile_missing ARGS report ${base} --calibration no-such-profile.json EXPECT_EXIT 2
  STDERR_MATCHES [=[no-such-profile.json: cannot open file for reading: no such file]=])

# --- report --calibration ---------------------------------------------------------------------------
budget_cli_test(NAME time.report_table ARGS report ${base} --calibration ${profile}
  STDOUT_MATCHES [=[predicted training step \(NVIDIA H200, pytorch-eager]=] [=[32,768 tokens/step]=]
    [=[attention backend cudnn]=] [=[MFU [0-9.]+% of the profile's measured GEMM peak 760 TFLOP/s \([0-9.]+% of the datasheet's 989 TFLOP/s\)]=] [=[backend cudnn as the layer rows show for head_dim a multiple of 8]=]
    [=[op +training FLOPs / step +time / step +share +TFLOP/s +note]=]
    [=[routed_experts +31\.3 TFLOP +[0-9.]+ ms]=] [=[expert_combine +- +[0-9.]+ [mu]?s]=] [=[residual_add +- +[0-9.]+ ms]=]
    [=[router_topk .*no router_softmax_topk rows: bytes at the measured copy bandwidth]=])
budget_cli_test(NAME time.report_json ARGS report ${base} --calibration ${profile} --format json
  STDOUT_MATCHES [=["time": {
    "profile": {]=] [=["seconds_per_token": [0-9.e-]+,]=] [=["tokens_per_second": [0-9.e+]+,]=]
    [=["mfu": 0\.[0-9]+,]=] [=["by_op": .]=] [=["op": "attention_scores",]=] [=["tokens_per_step": 32768]=])
# Beside the time: whether weights, gradients, optimizer states and activations fit one GPU of the
# profile's kind (the shipped profile has no capacity: examples/clusters/h200.json's).
budget_cli_test(NAME time.report_fits_one_gpu ARGS report ${base} --calibration ${profile}
  STDOUT_MATCHES [=[memory: fits one NVIDIA H200 \(needs [0-9.]+ GiB of 139\.4 GiB usable; full recompute, micro-batch 1\)]=])
budget_cli_test(NAME time.report_does_not_fit_one_gpu ARGS report tests/data/hf/deepseek-v3.json --calibration ${profile}
  STDOUT_MATCHES [=[memory: does not fit one NVIDIA H200 \(needs [0-9.]+ TiB of 139\.4 GiB usable; full recompute, micro-batch 1; smallest layout that fits: [0-9]+ GPUs, TP [0-9]+ x PP [0-9]+ x DP [0-9]+, EP [0-9]+, recompute [a-z]+\)]=])
budget_cli_test(NAME time.report_fits_one_gpu_json ARGS report tests/data/hf/deepseek-v3.json --calibration ${profile} --format json
  STDOUT_MATCHES [=["fits_one_gpu": false,
    "one_gpu_memory": {
      "gpu": "NVIDIA H200",
      "capacity_source": "cluster_example",
      "capacity_from": "examples/clusters/h200.json \(NVIDIA H200 SXM 141GB\)",]=] [=["smallest_layout": {
        "gpus": [0-9]+,]=])
budget_cli_test(NAME time.compare_fits_one_gpu ARGS compare ${base} examples/configs/paper-200M-S95-smelt.json --calibration ${profile}
  STDOUT_MATCHES [=[memory: reference fits one NVIDIA H200]=] [=[memory: 1 fits one NVIDIA H200]=])
budget_cli_test(NAME time.match_fits_one_gpu ARGS --baseline ${base} --calibration ${profile} --top 2
  --constraints tests/data/match/tolerance_2pct.json
  STDOUT_MATCHES [=[memory: baseline fits one NVIDIA H200 \(needs]=] [=[memory: #1 fits one NVIDIA H200]=] [=[memory: #2 fits one NVIDIA H200]=])
budget_cli_test(NAME time.report_tokens_per_step ARGS report ${base} --calibration ${profile}
  --workload tests/data/time/workload_64k.json STDOUT_MATCHES [=[65,536 tokens/step]=])
budget_cli_test(NAME time.report_bad_backend ARGS report ${base} --calibration ${profile} --attention-backend xformers
  EXPECT_EXIT 2 STDERR_MATCHES [=[attention backend "xformers"]=])

# --- match ---------------------------------------------------------------------------------------
budget_cli_test(NAME time.match_ratios ARGS --baseline ${base} --all-trainable-shapes --calibration ${profile}
  STDOUT_MATCHES [=[max dev +FLOPs +params +KV +time ×]=]
    [=[base +1\.33 GF +3\.87 G +6,144 +1\.00×]=]
    [=[ 1 +1\.56% +[-+]0\.[0-9]+% +[-+]0\.[0-9]+% +-1\.56% +1\.[0-9][0-9]× ±0\.05 +12/18]=] [=[Ranked by budget]=]
    [=[time ± from the leave-one-cell-out layer validation of the profile \([0-9]+ cells\)]=])
# Time ranking with the model's accuracy: the equal band and its footer; JSON intervals.
budget_cli_test(NAME time.match_rank_by_time_band ARGS --baseline ${base} --calibration ${profile} --rank-by time
  STDOUT_MATCHES [=[candidates within ±0\.05 of the fastest are equal within the model's accuracy: [0-9]+ of them, ordered by match quality]=]
    [=[rows: the equally matched within the model's ± of the fastest first, by match quality]=])
budget_cli_test(NAME time.match_interval_json ARGS --baseline ${base} --calibration ${profile} --rank-by time --format json
  STDOUT_MATCHES [=["time_ratio_interval": \{]=] [=["low": 1\.[0-9]+]=] [=["half_width": 0\.0[0-9]+]=]
    [=["accuracy": \{]=] [=["source": "leave-one-cell-out layer validation]=] [=["equal_within_interval": [0-9]+]=])
budget_cli_test(NAME time.match_cap_honest ARGS --baseline ${base} --calibration ${profile} --max-time-ratio 1.3
  STDOUT_MATCHES [=[--max-time-ratio 1\.300: a candidate is dropped only when its ratio minus its ± exceeds the cap \([0-9]+ kept above the cap but within their ±\)]=])
budget_cli_test(NAME time.match_rank_by_time ARGS --baseline ${base} --calibration ${profile} --rank-by time --format json
  STDOUT_MATCHES [=["rank_by": "time"]=] [=["time_ratio": 1\.[0-9]+]=] [=["within_tolerance": [0-9]+]=])
budget_cli_test(NAME time.match_cap_infeasible ARGS --baseline ${base} --calibration ${profile} --max-time-ratio 0.5
  EXPECT_EXIT 3 STDOUT_MATCHES [=[no matched candidate is within the time-ratio cap 0\.500]=])
budget_cli_test(NAME time.match_cap_needs_profile ARGS --baseline ${base} --max-time-ratio 1.3 EXPECT_EXIT 64
  STDERR_MATCHES [=[--max-time-ratio: .*need --calibration]=])
budget_cli_test(NAME time.match_rank_needs_profile ARGS --baseline ${base} --rank-by time EXPECT_EXIT 64
  STDERR_MATCHES "^budget-match: error: [^\n]+\nRun with --help for usage[.]\n$" [=[--rank-by: ]=])
budget_cli_test(NAME time.match_explain_alignment ARGS --baseline ${base} --calibration ${profile} --explain
  STDOUT_MATCHES [=[What aligning dims costs]=] [=[alignment required +max dev +time ×]=]
    [=[head_dim multiple of 8 +[0-9.]+% +[0-9.]+×]=] [=[all three multiples of 64]=] [=[yes]=])

# --- grid ----------------------------------------------------------------------------------------
budget_cli_test(NAME time.grid ARGS grid --calibration ${profile}
  STDOUT_MATCHES [=[paper max dev +time ×]=] [=[predicted time ratios of the matched configs: 1\.[0-9]+× to 1\.[0-9]+×]=]
  STDOUT_NOT_MATCHES [=[infeasible]=])
budget_cli_test(NAME time.grid_rank_by_time_footer ARGS grid --calibration ${profile} --rank-by time
  STDOUT_MATCHES [=[search space: trainable shapes for the portable set \(no --gpu]=] [=[row #1 of each cell: the fastest equally matched at matched work \(--rank-by time\)]=])
budget_cli_test(NAME time.grid_rank_by_time_csv ARGS grid --calibration ${profile} --rank-by time --format csv
  STDOUT_MATCHES [=[time ×]=] [=[1\.[0-9]+×]=])

# --- compare ---------------------------------------------------------------------------------------
budget_cli_test(NAME time.compare ARGS compare ${base} examples/configs/paper-200M-S95-smelt.json --calibration ${profile}
  STDOUT_MATCHES [=[KV +time ×]=] [=[1\.00×]=] [=[ 1 +[0-9.]+% .* 1\.[0-9][0-9]× ±0\.05 +12/18]=] [=[time ×: predicted time per token / the reference's]=])
# --attention-backend picks the profile's attention rows for the reference and every config alike.
budget_cli_test(NAME time.compare_backend ARGS compare ${base} examples/configs/paper-200M-S95-smelt.json
  --calibration ${profile} --attention-backend flash --format json
  STDOUT_MATCHES [=["reference": {.*"attention_backend": "flash".*"configs": ..*"attention_backend": "flash"]=]
  STDOUT_NOT_MATCHES [=["attention_backend": "(cudnn|default)"]=])
budget_cli_test(NAME time.compare_bad_backend ARGS compare ${base} examples/configs/paper-200M-S95-smelt.json
  --calibration ${profile} --attention-backend xformers
  EXPECT_EXIT 2 STDERR_MATCHES [=[attention backend "xformers"]=])
budget_cli_test(NAME time.ablation ARGS grid --ablation span --all-trainable-shapes --calibration ${profile}
  STDOUT_MATCHES [=[paper loss +family held +time ×]=] [=[span 0 .* reference +1\.000×]=] [=[span 6 .* KV heads +1\.[0-9]+×]=])
budget_cli_test(NAME time.ablation_rank_by_time ARGS grid --ablation span --calibration ${profile} --rank-by time
  EXPECT_EXIT 64 STDERR_MATCHES [=[--rank-by: .*apply to the grid, not to --ablation]=])
