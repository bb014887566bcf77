# Option-dependency errors exit 64 in every command (docs/cli.md, exit codes): an option given
# without one it needs, with one it excludes, or a required choice of options not made; the message
# names the option. A requirement that depends on a file's contents stays bad input (2). Issue 17:
# these used to exit 64 in some commands and 2 in others. Working directory: the repository root.
set(ec_base examples/configs/paper-200M-S95-baseline.json)
set(ec_profile cuda_profiler/profiles/h200-torch-eager.json)
set(ec_cluster examples/clusters/h200.json)
set(ec_scaling --target examples/scaling/looped.json --reference examples/scaling/baseline.json --C 1e21 --S 0.9)
set(ec_out "${CMAKE_CURRENT_BINARY_DIR}/exit_codes_cli")
file(MAKE_DIRECTORY "${ec_out}")

# --baseline (the matcher)
budget_cli_test(NAME exit_codes.match_rank_by_needs_calibration ARGS --baseline ${ec_base} --rank-by time
  EXPECT_EXIT 64 STDERR_MATCHES "error: --rank-by: --rank-by time and --max-time-ratio need --calibration")
budget_cli_test(NAME exit_codes.match_max_time_ratio_needs_calibration ARGS --baseline ${ec_base} --max-time-ratio 1.2
  EXPECT_EXIT 64 STDERR_MATCHES "error: --max-time-ratio: .* need --calibration")
budget_cli_test(NAME exit_codes.match_backend_needs_calibration ARGS --baseline ${ec_base} --attention-backend flash
  EXPECT_EXIT 64 STDERR_MATCHES "--attention-backend requires --calibration")
budget_cli_test(NAME exit_codes.match_out_format_needs_out ARGS --baseline ${ec_base} --out-format hf
  EXPECT_EXIT 64 STDERR_MATCHES "--out-format requires --out")
budget_cli_test(NAME exit_codes.match_loop_excludes_span_fraction ARGS --baseline ${ec_base} --loop 4-9 --span-fraction 0.5
  EXPECT_EXIT 64 STDERR_MATCHES "--loop excludes --span-fraction")
# report, compare (compare has no --attention-backend)
budget_cli_test(NAME exit_codes.report_backend_needs_calibration ARGS report ${ec_base} --attention-backend flash
  EXPECT_EXIT 64 STDERR_MATCHES "--attention-backend requires --calibration")
budget_cli_test(NAME exit_codes.compare_needs_two_configs ARGS compare ${ec_base} EXPECT_EXIT 64
  STDERR_MATCHES "configs")
# grid
budget_cli_test(NAME exit_codes.grid_rank_by_needs_calibration ARGS grid --rank-by time EXPECT_EXIT 64
  STDERR_MATCHES "error: --rank-by: --rank-by time and --max-time-ratio need --calibration")
budget_cli_test(NAME exit_codes.grid_ablation_excludes_rank_by ARGS grid --ablation span --calibration ${ec_profile} --rank-by time
  EXPECT_EXIT 64 STDERR_MATCHES "error: --rank-by: .* apply to the grid, not to --ablation")
budget_cli_test(NAME exit_codes.grid_backend_needs_calibration ARGS grid --attention-backend flash EXPECT_EXIT 64
  STDERR_MATCHES "--attention-backend requires --calibration")
# calibrate
budget_cli_test(NAME exit_codes.calibrate_needs_a_source ARGS calibrate EXPECT_EXIT 64
  STDERR_MATCHES "error: calibrate: give exactly one of --from-jsonl FILE")
budget_cli_test(NAME exit_codes.calibrate_profile_excludes_jsonl ARGS calibrate --from-jsonl x.jsonl --profile ${ec_profile}
  EXPECT_EXIT 64 STDERR_MATCHES "excludes")
# attention
budget_cli_test(NAME exit_codes.attention_needs_a_source ARGS attention EXPECT_EXIT 64
  STDERR_MATCHES "error: budget-match attention: give exactly one of --lengths FILE")
budget_cli_test(NAME exit_codes.attention_shuffled_needs_lengths ARGS attention --dist exp:mean=600 --order shuffled
  EXPECT_EXIT 64 STDERR_MATCHES "error: --order: --order shuffled applies to --lengths files only")
budget_cli_test(NAME exit_codes.attention_simulation_needs_samples ARGS attention --dist exp:mean=600 --samples 0 --method simulation
  EXPECT_EXIT 64 STDERR_MATCHES "error: --samples: --samples 0 leaves nothing to simulate")
# layout
budget_cli_test(NAME exit_codes.layout_needs_micro_batches ARGS layout ${ec_base} --cluster ${ec_cluster} --tp 2
  EXPECT_EXIT 64 STDERR_MATCHES "error: layout: a layout needs --micro-batch-size and --micro-batches")
budget_cli_test(NAME exit_codes.layout_search_needs_gpus ARGS layout ${ec_base} --cluster ${ec_cluster}
  EXPECT_EXIT 64 STDERR_MATCHES "error: layout: the layout search needs the GPU count")
budget_cli_test(NAME exit_codes.layout_dp_excludes_gpus ARGS layout ${ec_base} --cluster ${ec_cluster} --gpus 8 --dp 2
  EXPECT_EXIT 64 STDERR_MATCHES "excludes")
# ce-gain, and commands whose required options are missing
budget_cli_test(NAME exit_codes.ce_gain_seed_needs_bootstrap ARGS ce-gain ${ec_scaling} --seed 3 EXPECT_EXIT 64
  STDERR_MATCHES "--seed requires --bootstrap")
budget_cli_test(NAME exit_codes.export_template_needs_hf ARGS export ${ec_base} --to megatron --template examples/hf/mixtral-8x7b.json
  EXPECT_EXIT 64 STDERR_MATCHES "error: --template: applies to --to hf only")
budget_cli_test(NAME exit_codes.export_needs_to ARGS export ${ec_base} EXPECT_EXIT 64 STDERR_MATCHES "--to is required")
budget_cli_test(NAME exit_codes.frontier_needs_budgets ARGS frontier examples/scaling/looped.json --S 0.9 EXPECT_EXIT 64
  STDERR_MATCHES "--C is required")
# A requirement that depends on a file's contents is bad input: fit's data holds two architectures.
budget_cli_test(NAME exit_codes.fit_data_dependent_is_input_error ARGS fit examples/scaling/smelt_synthetic.csv
  --out "${ec_out}/one.json" EXPECT_EXIT 2 STDERR_MATCHES "the data has 2 architectures")
