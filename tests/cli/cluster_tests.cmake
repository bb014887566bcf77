# CLI tests of `budget-match layout` and `report --cluster` (docs/cluster.md): the table, the JSON
# keys the issue lists, the verdict and its exit code, loops, refusals with their reasons, and the
# strict cluster reader's errors. Run from the repository root with the shipped example clusters.

set(base examples/configs/paper-200M-S95-baseline.json)
set(smelt examples/configs/paper-200M-S95-smelt.json)
set(mixtral examples/hf/mixtral-8x7b.json)
set(h200 examples/clusters/h200.json)
set(a100 examples/clusters/a100-80gb.json)
# The H200 example without its profile (gpu.compute.datasheet only): the refusals that need one.
set(h200_datasheet tests/data/clusters/h200-datasheet-only.json)

budget_cli_test(NAME cluster.layout_table ARGS layout ${base} --cluster ${h200} --micro-batch-size 8 --micro-batches 1
  STDOUT_MATCHES [=[stage +layers +executed +in flight +weights +grads +optimizer +activations +logits +buffers +total GiB]=]
    [=[
0 +1-12 +12 +1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +0\.00 +[0-9.]+ +[0-9.]+
]=] [=[fits: peak [0-9.]+ GiB on stage 0, headroom [0-9.]+ GiB \(139\.40 GiB usable of 140\.40 GiB on NVIDIA H200]=])
budget_cli_test(NAME cluster.layout_json ARGS layout ${mixtral} --cluster ${h200} --nodes 2 --tp 2 --sequence-parallel
    --pp 4 --ep 4 --etp 1 --gpus 16 --micro-batch-size 1 --micro-batches 8 --distributed-optimizer --format json
  STDOUT_MATCHES [=["schema_version": 1,]=] [=["memory": {
    "peak_bytes": [0-9.e+]+,]=] [=["stages": .]=] [=["layers": .
          1,]=] [=["peak_bytes": [0-9.e+]+,
        "by_component": {
          "weights": [0-9.e+]+,
          "gradients": [0-9.e+]+,
          "optimizer_states": [0-9.e+]+,
          "activations": [0-9.e+]+,
          "logits": [0-9.e+]+,
          "buffers": [0-9.e+]+]=] [=["expert_dp": 1,]=] [=["fits": true]=])
budget_cli_test(NAME cluster.layout_does_not_fit ARGS layout ${mixtral} --cluster ${a100} --micro-batch-size 1 --micro-batches 1
  EXPECT_EXIT 3 STDOUT_MATCHES [=[does not fit: peak [0-9.]+ GiB on stage 0 exceeds the capacity by [0-9.]+ GiB]=])
budget_cli_test(NAME cluster.layout_loop_inside_stage ARGS layout ${smelt} --cluster ${h200} --pp 2 --micro-batch-size 1 --micro-batches 4
  EXPECT_EXIT 2 STDERR_MATCHES [=[the loop over layers 4-9 crosses pipeline chunks 0 and 1 \(6 layers each\): a loop must lie inside one pipeline stage]=])
budget_cli_test(NAME cluster.layout_loop_replicated ARGS layout ${smelt} --cluster ${h200} --pp 2 --micro-batch-size 1
    --micro-batches 4 --replicate-loop-weights
  STDOUT_MATCHES [=[
0 +1-9 +9 +2 ]=] [=[
1 +4-12 +9 +1 ]=] [=[note: loop over layers 4-9 x2: weights, gradients and optimizer states once per stored layer, activations once per execution \(18 executions of 12 layers\); loop placement replicated]=])
# Loop placement (issue 41; docs/cluster.md, "Loops across pipeline stages"): wrap on PP 2 x V 3, the
# 18 executions 3 a chunk (each layer on one rank); wrap refused where a layer runs on two ranks; the
# name checked; --replicate-loop-weights is --loop-placement replicated; the ranking holds the
# placement given for every looped candidate and names it.
budget_cli_test(NAME cluster.layout_loop_wrap ARGS layout ${smelt} --cluster ${h200} --pp 2 --vp 3 --micro-batch-size 1
    --micro-batches 4 --loop-placement wrap --format json
  STDOUT_MATCHES [=["loop_placement": "wrap"]=] [=["virtual_stages": 3]=] [=["fits": true]=])
budget_cli_test(NAME cluster.layout_loop_wrap_text ARGS layout ${smelt} --cluster ${h200} --pp 2 --vp 3 --micro-batch-size 1
    --micro-batches 4 --loop-placement wrap --pipeline-layout "Et*3|t*3|t*3|t*3|t*3|t*3L"
  STDOUT_MATCHES [=[PP 2 \(V 3\), loop placement wrap]=] [=[loop placement wrap: the loop's passes wrap around the pipeline]=])
budget_cli_test(NAME cluster.layout_loop_wrap_refused ARGS layout ${smelt} --cluster ${h200} --pp 2 --micro-batch-size 1
    --micro-batches 4 --loop-placement wrap
  EXPECT_EXIT 2 STDERR_MATCHES [=[with loop placement wrap, layer 4 runs on pipeline ranks 0 and 1]=])
budget_cli_test(NAME cluster.layout_loop_placement_unknown ARGS layout ${smelt} --cluster ${h200} --pp 2 --micro-batch-size 1
    --micro-batches 4 --loop-placement around
  EXPECT_EXIT 2 STDERR_MATCHES [=[loop placement "around" is not known; allowed: in_chunk, wrap, replicated]=])
budget_cli_test(NAME cluster.layout_loop_placement_twice ARGS layout ${smelt} --cluster ${h200} --pp 2 --micro-batch-size 1
    --micro-batches 4 --loop-placement wrap --replicate-loop-weights
  EXPECT_EXIT 64 STDERR_MATCHES [=[--replicate-loop-weights means --loop-placement replicated]=])
budget_cli_test(NAME cluster.rank_loop_placement_held ARGS --baseline ${base} --calibration cuda_profiler/profiles/h200-published.json
    --rank-by time --cluster ${h200} --gpus 8 --top 1 --loop-placement wrap --format json
  STDOUT_MATCHES [=["loop_placement": "wrap"]=] [=["basis": "searched"]=])
budget_cli_test(NAME cluster.layout_refuses_heads ARGS layout ${base} --cluster ${h200} --tp 4 --sequence-parallel --gpus 4
    --micro-batch-size 1 --micro-batches 1
  EXPECT_EXIT 2 STDERR_MATCHES [=[^budget-match: error: layout: 10 attention heads do not divide by TP = 4
$]=])
budget_cli_test(NAME cluster.layout_refuses_gpus ARGS layout ${base} --cluster ${h200} --pp 4 --gpus 6 --micro-batch-size 1 --micro-batches 4
  EXPECT_EXIT 2 STDERR_MATCHES [=[6 GPUs do not divide by TP·CP·PP = 1·1·4 = 4]=])
budget_cli_test(NAME cluster.layout_refuses_too_many_gpus ARGS layout ${base} --cluster ${h200} --gpus 16 --micro-batch-size 1 --micro-batches 1
  EXPECT_EXIT 2 STDERR_MATCHES [=[the layout needs 16 GPUs; the cluster has 8 \(1 node of 8\); set more nodes]=])
budget_cli_test(NAME cluster.layout_bad_recompute ARGS layout ${base} --cluster ${h200} --micro-batch-size 1 --micro-batches 1 --recompute full:x
  EXPECT_EXIT 2 STDERR_MATCHES [=[--recompute: value "full:x" is not allowed; allowed: none, selective, selective:MODULE.*full, full:N]=])
budget_cli_test(NAME cluster.layout_needs_cluster ARGS layout ${base} --micro-batch-size 1 --micro-batches 1
  EXPECT_EXIT 64 STDERR_MATCHES [=[--cluster is required]=])
budget_cli_test(NAME cluster.bad_cluster_file ARGS layout ${base} --cluster ${base} --micro-batch-size 1 --micro-batches 1
  EXPECT_EXIT 2 STDERR_MATCHES [=[paper-200M-S95-baseline.json: /[a-z_]+: unknown key]=])
budget_cli_test(NAME cluster.report_cluster ARGS report ${mixtral} --cluster ${h200}
  STDOUT_MATCHES [=[on one NVIDIA H200 SXM 141GB \(139\.40 GiB usable; full recompute, micro-batch 1\): peak [0-9.]+ GiB, does not fit]=]
    [=[smallest layout: [0-9]+ GPUs, TP [0-9]+]=])
budget_cli_test(NAME cluster.report_cluster_json ARGS report ${base} --cluster ${h200} --format json
  STDOUT_MATCHES [=["cluster": {
    "gpu": "NVIDIA H200 SXM 141GB",
    "fits_one_gpu": true,]=] [=["smallest_layout": {]=])

# Part 2: communication and step time (docs/cluster.md, "Step time").
set(h200_profile cuda_profiler/profiles/h200-torch-eager.json)
budget_cli_test(NAME cluster.layout_time_json ARGS layout ${smelt} --cluster ${h200} --gpus 8 --ep 8
    --micro-batch-size 1 --micro-batches 8 --distributed-optimizer --profile ${h200_profile} --run-tokens 1e10
    --format json
  STDOUT_MATCHES [=["time": {
    "seconds_per_step": [0-9.e+-]+,]=] [=["tokens_per_second_per_gpu": [0-9.e+-]+,
    "mfu": [0-9.e+-]+,]=] [=["by_component": {
      "compute": {]=] [=["ep_all_to_all": {]=] [=["dp_grad_reduce_scatter": {
        "seconds": [0-9.e+-]+,
        "overlapped": true]=] [=["bubble": {]=] [=["gpu_hours": [0-9.e+-]+]=])
budget_cli_test(NAME cluster.layout_time_table ARGS layout ${base} --cluster ${h200} --gpus 8 --tp 2 --sequence-parallel
    --ep 4 --micro-batch-size 1 --micro-batches 4 --profile ${h200_profile} --overlap none
  STDOUT_MATCHES [=[tp_all_gather +[0-9.]+ +[0-9.]+%]=] [=[dp_grad_all_reduce +[0-9.]+ +[0-9.]+%]=]
    [=[s a step of 65536 tokens, [0-9]+ tokens/s per GPU, MFU [0-9.]+% \(the datasheet's dense BF16 peak, 989 TFLOP/s]=])
# A hybrid stack (Mamba-2, attention, MoE) timed per layer kind, with Mamba-2's CP all-to-alls.
budget_cli_test(NAME cluster.layout_time_hybrid ARGS layout tests/data/hf/nemotron-3-nano-30b-a3b.json --cluster ${h200}
    --nodes 2 --gpus 16 --tp 2 --sequence-parallel --cp 2 --ep 4 --micro-batch-size 1 --micro-batches 8 --seq-len 8192
    --profile ${h200_profile} --distributed-optimizer
  STDOUT_MATCHES [=[cp_mamba_all_to_all +[0-9.]+ +[0-9.]+%]=] [=[cp_send_recv +[0-9.]+]=] [=[s a step of 262144 tokens]=])
budget_cli_test(NAME cluster.layout_time_needs_profile ARGS layout ${base} --cluster ${h200_datasheet} --micro-batch-size 1
    --micro-batches 1
  STDOUT_MATCHES [=[step time: not computed: the cluster gives datasheet peaks only; give a calibration profile]=])
# Issue 32: without --profile the cluster file's profile (gpu.compute.calibration) times the step:
# the H200 example names h200-published.json, whose MFU denominator is the datasheet peak it cites;
# report --cluster without --calibration likewise (the B200 example's profile, its device named).
budget_cli_test(NAME cluster.layout_time_cluster_profile ARGS layout ${base} --cluster ${h200} --micro-batch-size 1
    --micro-batches 1
  STDOUT_MATCHES [=[s a step of 4096 tokens, [0-9]+ tokens/s per GPU, MFU [0-9.]+% \(the datasheet's dense BF16 peak, 989 TFLOP/s]=])
budget_cli_test(NAME cluster.report_cluster_profile ARGS report ${base} --cluster examples/clusters/b200.json
  STDOUT_MATCHES [=[predicted training step \(NVIDIA B200, budget-match calibrate --from-kernels;]=])
budget_cli_test(NAME cluster.layout_bad_overlap ARGS layout ${base} --cluster ${h200} --micro-batch-size 1
    --micro-batches 1 --profile ${h200_profile} --overlap dp,xp
  EXPECT_EXIT 2 STDERR_MATCHES [=[--overlap: value "xp" is not allowed; allowed: none or a comma-separated list]=])
budget_cli_test(NAME cluster.layout_search_table ARGS layout ${base} --cluster ${h200} --gpus 8
    --global-batch-tokens 131072 --profile ${h200_profile} --top 3
  STDOUT_MATCHES [=[layouts enumerated, [0-9]+ valid, [0-9]+ fit]=]
    [=[rank +layout +s/step +tokens/s/GPU +MFU +compute +comm exposed +bubble +headroom GiB]=]
    [=[
1 +TP[0-9]+ CP[0-9]+ PP[0-9]+ ]=] [=[
3 +TP]=])
budget_cli_test(NAME cluster.layout_search_json ARGS layout ${smelt} --cluster ${h200} --gpus 8
    --global-batch-tokens 131072 --profile ${h200_profile} --top 2 --format json
  STDOUT_MATCHES [=["layouts": .
    {
      "layout": {]=] [=["memory": {]=] [=["time": {
        "seconds_per_step": ]=])
budget_cli_test(NAME cluster.layout_search_needs_profile ARGS layout ${base} --cluster ${h200_datasheet} --gpus 8
  EXPECT_EXIT 2 STDERR_MATCHES [=[the layout search ranks by step time and needs a calibration profile]=])
budget_cli_test(NAME cluster.layout_needs_micro_batches ARGS layout ${base} --cluster ${h200} --tp 2 --gpus 8
  EXPECT_EXIT 64 STDERR_MATCHES [=[a layout needs --micro-batch-size and --micro-batches]=])

# Issue 20, items 4 and 5: matched candidates ranked by cluster time (match and grid --cluster) and
# the compute-efficiency gain in GPU-hours (ce-gain --cluster); docs/cluster.md.
# A 2% tolerance: several equally matched candidates to rank (the 0.25% default leaves one here).
set(rank_args --baseline ${base} --calibration ${h200_profile} --rank-by time --cluster ${h200} --gpus 8
    --global-batch-tokens 131072 --top 2 --constraints tests/data/match/tolerance_2pct.json)
budget_cli_test(NAME cluster.match_rank_table ARGS ${rank_args}
  STDOUT_MATCHES [=[On 8 of 8 GPUs \(NVIDIA H200 SXM 141GB; 1 node of 8\), each at its own best layout, 131,072 tokens]=]
    [=[rank +hidden +heads×dim \(KV\) +experts×width +best layout +µs/token +tokens/s/GPU +MFU +cluster × +× equal F +1-GPU × +headroom GiB]=]
    [=[baseline +1280 +10×128 \(KV 2\) +192×432 \(top 8\) +TP[0-9]+ CP[0-9]+ PP[0-9]+ ]=]
    [=[
1 +[0-9]+ ]=] [=[
2 +[0-9]+ ]=]
    [=[#1: cluster [0-9.]+× vs 1-GPU [0-9.]+×]=] [=[\+50% MoE layer executions per token \(18 vs 12\); no all-to-all at either best layout \(EP 1\)]=]
    [=[compute: [+-][0-9]+% per token; [+-][0-9.]+ of the ratio]=])
budget_cli_test(NAME cluster.match_rank_json ARGS ${rank_args} --format json
  STDOUT_MATCHES [=["cluster": {
        "found": true,
        "layout": {]=] [=["memory": {]=] [=["time": {]=] [=["ratio_to_baseline": [0-9.e+-]+,
        "single_gpu_ratio_to_baseline": [0-9.e+-]+,]=] [=["ratio_components": .
          {
            "component": "compute",]=] [=["contribution": ]=]
    [=[
  "cluster": {
    "cluster": "[^"]+",
    "gpu": "NVIDIA H200 SXM 141GB",
    "gpus": 8,
    "global_batch_tokens": 131072,]=] [=["candidates_without_layout": 0,
    "team_layout": null,
    "recipe": {]=] [=[
    "baseline": {
      "found": true,]=])
budget_cli_test(NAME cluster.match_rank_csv ARGS ${rank_args} --format csv
  STDOUT_MATCHES [=[^rank,hidden,heads×dim \(KV\),experts×width,best layout,µs/token,tokens/s/GPU,MFU,cluster ×,× equal F,1-GPU ×,headroom GiB
baseline,1280,]=] [=[
1,[0-9]+,]=]
  STDOUT_NOT_MATCHES [=[What makes]=])
budget_cli_test(NAME cluster.match_rank_markdown ARGS ${rank_args} --format markdown
  STDOUT_MATCHES [=[\| rank \| hidden \|]=] [=[\| baseline \| 1280 \|]=])
budget_cli_test(NAME cluster.match_rank_needs_gpus
  ARGS --baseline ${base} --rank-by time --cluster ${h200}
  EXPECT_EXIT 64 STDERR_MATCHES [=[^budget-match: error: --cluster: --cluster needs --gpus \(the layout search]=])
# Issue 32: without --calibration the cluster file's profile is used; a cluster of datasheet peaks
# only is refused by name.
budget_cli_test(NAME cluster.match_rank_needs_a_profile
  ARGS --baseline ${base} --rank-by time --cluster ${h200_datasheet} --gpus 8
  EXPECT_EXIT 2 STDERR_MATCHES [=[--cluster: the cluster file gives datasheet peaks only: give a calibration profile]=])
budget_cli_test(NAME cluster.match_gpus_needs_cluster ARGS --baseline ${base} --gpus 8
  EXPECT_EXIT 64 STDERR_MATCHES [=[--gpus: --gpus needs --cluster \(it sets up the cluster layout search\)]=])
budget_cli_test(NAME cluster.match_batch_needs_cluster ARGS --baseline ${base} --global-batch-tokens 131072
  EXPECT_EXIT 64 STDERR_MATCHES [=[--global-batch-tokens needs --cluster]=])
budget_cli_test(NAME cluster.match_cluster_needs_rank_by_time
  ARGS --baseline ${base} --calibration ${h200_profile} --cluster ${h200} --gpus 8
  EXPECT_EXIT 64 STDERR_MATCHES [=[--cluster: --cluster ranks the equally matched candidates by time on the cluster; give --rank-by time]=])
budget_cli_test(NAME cluster.match_cluster_refuses_cap ARGS ${rank_args} --max-time-ratio 1.5
  EXPECT_EXIT 64 STDERR_MATCHES [=[--max-time-ratio: --max-time-ratio caps the single-GPU time ratio; it is not combined]=])
budget_cli_test(NAME cluster.match_csv_needs_cluster ARGS --baseline ${base} --format csv
  EXPECT_EXIT 64 STDERR_MATCHES [=[--format: --format csv prints the cluster ranking table; it needs --cluster]=])
budget_cli_test(NAME cluster.match_cluster_too_many_gpus
  ARGS --baseline ${base} --calibration ${h200_profile} --rank-by time --cluster ${h200} --gpus 64
  EXPECT_EXIT 2 STDERR_MATCHES [=[--gpus: 64 GPUs: the cluster has 8 \(1 node of 8\); set more nodes]=])
budget_cli_test(NAME cluster.match_cluster_nodes ARGS --baseline ${base} --calibration ${h200_profile} --rank-by time
    --cluster ${h200} --nodes 8 --gpus 64 --global-batch-tokens 1048576 --top 1 --format json
  STDOUT_MATCHES [=["gpus": 64,]=] [=["dp": ]=])

# Issue 30: on a cluster the expert count keeps the EP of the baseline's best layout when that costs
# the match nothing; Mixtral's EP 8 would cost 9.83%, so its multiples of 2 stay and the note says so.
budget_cli_test(NAME cluster.match_expert_count_note ARGS --baseline ${mixtral} --calibration ${h200_profile}
    --rank-by time --cluster ${h200} --nodes 8 --gpus 64 --top 1
  STDOUT_MATCHES [=[note: expert counts: multiples of 2, which the EP 8 of the baseline's best layout on the cluster does not divide: multiples of 8 would keep it, but the best match keeping it is 9\.83% against 1\.56%]=])

budget_cli_test(NAME cluster.grid_cluster ARGS grid --grid tests/data/grid-two-cells.json --calibration ${h200_profile}
    --rank-by time --cluster ${h200} --gpus 8 --global-batch-tokens 131072
  STDOUT_MATCHES [=[2 cells, loop .*on 8 GPUs of NVIDIA H200 SXM 141GB, 131,072 tokens a step]=]
    [=[size +baseline layout +looped +looped layout +µs/token base +µs/token looped +cluster × +1-GPU × +dropped]=]
    [=[
200M +TP[0-9]+ ]=] [=[200M \(paper-200M-E192-baseline\): cluster [0-9.]+× vs 1-GPU [0-9.]+×]=])
budget_cli_test(NAME cluster.grid_cluster_json ARGS grid --grid tests/data/grid-two-cells.json --calibration ${h200_profile}
    --rank-by time --cluster ${h200} --gpus 8 --global-batch-tokens 131072 --format json
  STDOUT_MATCHES [=["cluster": {
          "found": true,]=] [=["cluster": {
        "cluster": ]=] [=["dropped": \[\]]=] [=["notes": \[]=])
budget_cli_test(NAME cluster.grid_cluster_needs_gpus ARGS grid --cluster ${h200} --calibration ${h200_profile} --rank-by time
  EXPECT_EXIT 64 STDERR_MATCHES [=[--cluster needs --gpus \(]=])
budget_cli_test(NAME cluster.grid_cluster_needs_rank_by_time ARGS grid --cluster ${h200} --gpus 8 --calibration ${h200_profile}
  EXPECT_EXIT 64 STDERR_MATCHES [=[give --rank-by time]=])

set(ce_args ce-gain --target examples/scaling/looped.json --reference examples/scaling/baseline.json --C 1e20,1e21
    --S 0.95)
set(ce_cluster --cluster ${h200} --gpus 8 --calibration ${h200_profile} --target-config ${smelt}
    --reference-config ${base} --global-batch-tokens 131072)
budget_cli_test(NAME cluster.ce_gain_gpu_hours ARGS ${ce_args} ${ce_cluster}
  STDOUT_MATCHES [=[GPU-hours at equal loss on 8 GPUs of .*G_h = 1 − \(1 − G\)·ρ, ρ = τ_target/τ_reference]=]
    [=[target paper-200M-S95-smelt \(examples/configs/paper-200M-S95-smelt.json\): TP[0-9]+ ]=]
    [=[ρ = [0-9.]+: the target's time per FLOP is [+-][0-9.]+% the reference's]=]
    [=[S +C +FLOPs gain +GPU-hours gain +GPU-h target +GPU-h reference +verdict]=]
    [=[
 *0\.95 +1e\+21 +\+[0-9.]+% +[+-][0-9.]+% +[0-9.e+]+ +[0-9.e+]+ +(saves GPU-hours|FLOPs saving eaten by the time per FLOP)]=])
budget_cli_test(NAME cluster.ce_gain_gpu_hours_json ARGS ${ce_args} ${ce_cluster} --format json
  STDOUT_MATCHES [=["gpu_hours": {]=] [=["formula": "GPU-hours = FLOPs \* gpu_seconds_per_flop / 3600]=]
    [=["time_per_flop_ratio": [0-9.e+-]+,]=] [=["gpu_hours_gain": {
          "value": [0-9.e+-]+
        },]=] [=["saving_eaten": (true|false)]=])
budget_cli_test(NAME cluster.ce_gain_gpu_hours_csv ARGS ${ce_args} ${ce_cluster} --format csv
  STDOUT_MATCHES [=[^scope,S,C,gain,gain_lower,gain_upper,C_reference,loss,tpp_target,tpp_reference,time_per_flop_ratio,gpu_hours_gain,gpu_hours_gain_lower,gpu_hours_gain_upper,target_gpu_hours,reference_gpu_hours,saving_eaten
overall,0\.95,1e\+20,]=])
budget_cli_test(NAME cluster.ce_gain_cluster_needs_configs ARGS ${ce_args} --cluster ${h200} --gpus 8 --calibration ${h200_profile}
  EXPECT_EXIT 64 STDERR_MATCHES [=[--cluster needs --target-config and --reference-config \(the GPU-hours need]=])
budget_cli_test(NAME cluster.ce_gain_config_needs_cluster ARGS ${ce_args} --target-config ${smelt}
  EXPECT_EXIT 64 STDERR_MATCHES [=[--target-config: --target-config needs --cluster]=])
budget_cli_test(NAME cluster.ce_gain_calibration_needs_cluster ARGS ${ce_args} --calibration ${h200_profile}
  EXPECT_EXIT 64 STDERR_MATCHES [=[--calibration needs --cluster]=])
# Values no layout can take are refused up front with the option's name, not left to the search to
# drop every layout as "0 valid" without a reason; --calibration names the profile as elsewhere.
budget_cli_test(NAME cluster.layout_search_gpus_zero ARGS layout ${mixtral} --cluster ${h200} --calibration cuda_profiler/profiles/h200-torch-eager.json --gpus 0
  EXPECT_EXIT 64 STDERR_MATCHES "--gpus: Value 0 not in range 1 to")
budget_cli_test(NAME cluster.layout_search_imbalance_below_one ARGS layout ${mixtral} --cluster ${h200} --calibration cuda_profiler/profiles/h200-torch-eager.json
  --gpus 8 --imbalance 0.5 EXPECT_EXIT 64 STDERR_MATCHES "--imbalance: Value 0.5 not in range 1")
# No valid layout: the table says why (the first refusal, or that no combination divides the batch).
budget_cli_test(NAME cluster.layout_search_none_valid_says_why ARGS layout ${mixtral} --cluster ${h200} --nodes 8
  --calibration cuda_profiler/profiles/h200-torch-eager.json --gpus 64 --global-batch-tokens 1125899906842624
  EXPECT_EXIT 3 STDOUT_MATCHES "0 valid, 0 fit" "no layout is valid on 64 GPUs: the first refused: a parallel size or batch count [(]4294967296[)] is above")
budget_cli_test(NAME cluster.layout_search_batch_not_divisible_says_why ARGS layout ${mixtral} --cluster ${h200}
  --calibration cuda_profiler/profiles/h200-torch-eager.json --gpus 8 --global-batch-tokens 4097 --format json
  EXPECT_EXIT 3 STDOUT_MATCHES [=["no_valid_layout": "no layout: the global batch of 4097 tokens divides into no micro-batch]=])

# Megatron-LM arguments in (issue 31, docs/megatron.md): the published layouts priced without
# refusal (exit 0 fits, 3 does not fit; never 2), what was read listed; an argument Megatron does not
# have refused with a did-you-mean; the layout given twice refused.
set(h100 examples/clusters/h100-sxm.json)
budget_cli_test(NAME megatron.deepseek_v3_published ARGS layout tests/data/hf/deepseek-v3.json --cluster ${h100}
    --nodes 128 --gpus 1024 --megatron-args examples/megatron/deepseek-v3-1024-h100.args
  STDOUT_MATCHES [=[1024 GPUs: TP 2 \(SP\) x CP 1 x DP 64 x PP 8 \(V 4\); experts ETP 1 x EP 64]=] [=[fits: peak]=]
    [=[note: Megatron-LM arguments \(examples/megatron/deepseek-v3-1024-h100.args\): modelled: .*--pipeline-model-parallel-layout]=])
budget_cli_test(NAME megatron.kimi_k2_published ARGS layout tests/data/hf/kimi-k2.json --cluster ${h100}
    --nodes 128 --gpus 1024 --megatron-args examples/megatron/kimi-k2-1024-h100.args
  STDOUT_MATCHES [=[TP 8 \(SP\) x CP 1 x DP 8 x PP 16 \(V 2\)]=] [=[fits: peak]=])
budget_cli_test(NAME megatron.qwen3_235b_published ARGS layout tests/data/hf/qwen3-235b-a22b.json --cluster ${h100}
    --nodes 32 --gpus 256 --megatron-args examples/megatron/qwen3-235b-256-h100.args --format json
  STDOUT_MATCHES [=["fits": true]=] [=["embedding_in_split": true]=] [=["virtual_stages": 4]=] [=["megatron_args": {]=])
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/typo.args" "--tensor-model-paralel-size 2 --seq-length 4096\n")
budget_cli_test(NAME megatron.unknown_argument ARGS layout ${mixtral} --cluster ${h100} --gpus 8
    --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/typo.args
  EXPECT_EXIT 2 STDERR_MATCHES [=[did you mean --tensor-model-parallel-size\?]=])
# Megatron-Bridge configs in (issue 42 item 3, docs/megatron.md "Megatron-Bridge configs"): the
# Qwen3-30B-A3B recipe's YAML gives the layout of its Megatron-LM arguments, with what no argument says
# listed; an unknown field refused with a did-you-mean; the two recipe options exclude each other.
set(qwen3_bridge tests/data/bridge/qwen3_30b_a3b_h100_bf16_n16.yaml)
budget_cli_test(NAME bridge.qwen3_layout ARGS layout tests/data/hf/qwen3-30b-a3b.json --cluster ${h100} --nodes 2
    --gpus 16 --bridge-config ${qwen3_bridge}
  STDOUT_MATCHES [=[16 GPUs: TP 1 x CP 1 x DP 16 x PP 1; experts ETP 1 x EP 16]=]
    [=[note: Megatron-Bridge config, as Megatron-LM arguments \(tests/data/bridge/qwen3_30b_a3b_h100_bf16_n16.yaml\)]=]
    [=[env_vars.CUDA_DEVICE_MAX_CONNECTIONS = 1: read, not modelled]=]
    [=[comm_overlap.tp_comm_overlap true: turned off by Bridge with TP < 2]=])
# The recipe's CUDA graphs price its step as the run fit does (issue 42): the Bridge recipe graphs the
# router and the dispatcher's preprocessing only, said in the notes; --cuda-graphs and
# --cuda-graph-modules are the recipe file's to give; a module Megatron-LM does not have is refused.
budget_cli_test(NAME bridge.qwen3_layout_cuda_graph_modules ARGS layout tests/data/hf/qwen3-30b-a3b.json
    --cluster ${h100} --nodes 2 --gpus 16 --bridge-config ${qwen3_bridge}
    --profile cuda_profiler/profiles/h100-sxm-published.json
  STDOUT_MATCHES [=[--cuda-graph-modules moe_router moe_preprocess: CUDA graphs of these modules only; the rest launched by the CPU, 30 µs a launch]=])
# The cluster ranking takes a Bridge config too (its FP8 recipe and attention backend were read as
# Megatron-LM arguments before: "_target_:" refused), with its CUDA graphs and dispatcher settings.
budget_cli_test(NAME bridge.match_cluster ARGS --baseline tests/data/hf/qwen3-30b-a3b.json --rank-by time
    --cluster ${h100} --nodes 2 --gpus 16 --top 2 --bridge-config ${qwen3_bridge}
    --calibration cuda_profiler/profiles/h100-sxm-published.json
  STDOUT_MATCHES [=[team's layout of the baseline: TP1 CP1 PP1 DP16 EP16 ETP1 b1 m64 none dist-opt at [0-9.]+× the searched baseline's time per token]=])
budget_cli_test(NAME bridge.cuda_graphs_beside_recipe ARGS layout tests/data/hf/qwen3-30b-a3b.json --cluster ${h100}
    --nodes 2 --gpus 16 --bridge-config ${qwen3_bridge} --cuda-graphs
  EXPECT_EXIT 64 STDERR_MATCHES [=[--cuda-graphs and --bridge-config both give it; give one]=])
budget_cli_test(NAME layout.cuda_graph_modules_unknown ARGS layout ${mixtral} --cluster ${h100} --gpus 8 --ep 8
    --micro-batch-size 1 --micro-batches 8
    --profile cuda_profiler/profiles/h100-sxm-published.json --cuda-graph-modules attention
  EXPECT_EXIT 2 STDERR_MATCHES [=[--cuda-graph-modules: value "attention" is not allowed; allowed: attn, mlp, moe, moe_router, moe_preprocess, mamba]=])
budget_cli_test(NAME layout.cuda_graph_modules_excludes_graphs ARGS layout ${mixtral} --cluster ${h100} --gpus 8
    --ep 8 --cuda-graph-modules attn --cuda-graphs
  EXPECT_EXIT 64 STDERR_MATCHES [=[excludes]=])
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/typo.yaml" "model:\n  tensor_model_paralel_size: 2\n")
budget_cli_test(NAME bridge.unknown_field ARGS layout tests/data/hf/qwen3-30b-a3b.json --cluster ${h100} --gpus 8
    --bridge-config ${CMAKE_CURRENT_BINARY_DIR}/typo.yaml
  EXPECT_EXIT 2 STDERR_MATCHES [=[model.tensor_model_paralel_size \(line 2\): is not a field of Megatron-Bridge's model config at 067f987d; did you mean model.tensor_model_parallel_size\?]=])
budget_cli_test(NAME bridge.excludes_megatron_args ARGS layout tests/data/hf/qwen3-30b-a3b.json --cluster ${h100}
    --gpus 16 --bridge-config ${qwen3_bridge} --megatron-args examples/megatron/qwen3-235b-256-h100.args
  EXPECT_EXIT 64 STDERR_MATCHES [=[--megatron-args excludes --bridge-config]=])
budget_cli_test(NAME bridge.report_memory ARGS report tests/data/hf/qwen3-30b-a3b.json --cluster ${h100}
    --gpus 16 --bridge-config ${qwen3_bridge}
  STDOUT_MATCHES [=[16 GPUs]=])
# The cluster ranking and the layout search at the team's recipe (--megatron-args with --cluster /
# --search): one basis, every config searched with the recipe held; the team's layout prices the
# baseline on its own row ([team], its ratio to the searched baseline) or says why not; FP8 held in the recipe; the batch from the file (--global-batch-tokens
# refused beside it); the file's model-shape flags checked against the baseline.
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/team-ep8-fp8.args"
  "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --expert-model-parallel-size 8\n"
  "--micro-batch-size 1 --global-batch-size 64 --seq-length 4096 --bf16 --use-distributed-optimizer\n"
  "--recompute-granularity selective --fp8-format hybrid --fp8-recipe tensorwise\n")
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/team-pp8.args"
  "--pipeline-model-parallel-size 8 --micro-batch-size 1 --global-batch-size 64 --seq-length 4096 --bf16\n")
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/team-13-layers.args"
  "--num-layers 13 --micro-batch-size 1 --global-batch-size 64 --seq-length 4096 --bf16\n")
set(team_rank_args --baseline ${base} --calibration cuda_profiler/profiles/h200-published.json --rank-by time
    --cluster ${h200} --gpus 8 --top 2 --constraints tests/data/match/tolerance_2pct.json)
budget_cli_test(NAME megatron.match_cluster_team_layout ARGS ${team_rank_args}
    --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/team-ep8-fp8.args
  STDOUT_MATCHES [=[one basis: each, the baseline too, at its own best layout searched with the team's recipe held; the team's layout TP1 CP1 PP1 DP8 EP8 ETP1 b1 m8 selective dist-opt prices the baseline on its own row]=]
    [=[262,144 tokens a step]=] [=[
team +1280 .*TP1 CP1 PP1 DP8 EP8 ETP1 b1 m8 selective dist-opt \[team\]]=]
    [=[The team's Megatron-LM arguments]=] [=[
team's layout of the baseline: TP1 CP1 PP1 DP8 EP8 ETP1 b1 m8 selective dist-opt at [0-9.]+× the searched baseline's time per token
#1: ]=])
budget_cli_test(NAME megatron.match_cluster_team_layout_json ARGS ${team_rank_args}
    --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/team-ep8-fp8.args --format json
  STDOUT_MATCHES [=["team_layout": "TP1 CP1 PP1 DP8 EP8 ETP1 b1 m8 selective dist-opt"]=] [=["fp8": "tensorwise"]=]
    [=["micro_batch_size": 1,]=] [=["basis": "searched_with_team_recipe"]=] [=["layout_choice": "the team's layout"]=]
    [=["megatron_args": {]=])
budget_cli_test(NAME megatron.match_cluster_team_layout_invalid ARGS ${team_rank_args}
    --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/team-pp8.args --format json
  STDOUT_MATCHES [=["reason": "the team's layout is not valid for it: ]=])
budget_cli_test(NAME megatron.match_cluster_batch_twice ARGS ${team_rank_args} --global-batch-tokens 131072
    --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/team-ep8-fp8.args
  EXPECT_EXIT 64 STDERR_MATCHES [=[--megatron-args gives the batch]=])
budget_cli_test(NAME megatron.match_needs_cluster ARGS --baseline ${base}
    --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/team-ep8-fp8.args
  EXPECT_EXIT 64 STDERR_MATCHES [=[--megatron-args needs --cluster]=])
budget_cli_test(NAME megatron.match_cluster_shape_disagrees ARGS ${team_rank_args}
    --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/team-13-layers.args
  EXPECT_EXIT 2 STDERR_MATCHES [=[--num-layers: 13 disagrees with the config's layers \(12\)]=])
budget_cli_test(NAME megatron.grid_cluster_team_layout ARGS grid --grid tests/data/grid-two-cells.json
    --calibration cuda_profiler/profiles/h200-published.json --rank-by time --cluster ${h200} --gpus 8
    --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/team-ep8-fp8.args
  STDOUT_MATCHES [=[at its best layout with the team's recipe held \(--megatron-args; one basis\), the team's layout TP1 CP1 PP1 DP8 EP8 ETP1 b1 m8 selective dist-opt pricing each baseline apart]=]
    [=[team's layout of the baseline: TP1 CP1 PP1 DP8 EP8 ETP1 b1 m8 selective dist-opt at [0-9.]+× the searched baseline's]=])
budget_cli_test(NAME megatron.layout_search_recipe ARGS layout ${base} --cluster ${h200} --gpus 8 --search
    --profile cuda_profiler/profiles/h200-published.json --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/team-ep8-fp8.args
    --format json
  STDOUT_MATCHES [=["recipe": {
    "precision": "bf16",
    "fp8": "tensorwise",]=] [=["recompute": "selective"]=] [=["megatron_args": {]=])
budget_cli_test(NAME megatron.layout_given_twice ARGS layout ${mixtral} --cluster ${h100} --gpus 8 --tp 2
    --megatron-args ${CMAKE_CURRENT_BINARY_DIR}/typo.args
  EXPECT_EXIT 64 STDERR_MATCHES [=[--tp and --megatron-args both give it]=])
