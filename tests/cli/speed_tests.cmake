# Issue 35: a cluster ranking stopped by the time limit prints the best of the candidates it
# finished, marked partial, with exit 4 (docs/cli.md; docs/cluster.md, "Shared work across
# candidates"). DeepSeek-V3 on the whole lattice (--free-shapes: 361 equally matched candidates): the
# limit must pass after the first part (the match and the baseline's layout search, under 0.5 s in a
# release build on two cores) and before the ranking ends (about 4 s there). The first part's time
# depends on the build: under ASan + UBSan the baseline's layout search alone took about 8 s (exit 2
# at every limit up to 4 s). So the limit is tried at 0.5, 1, 2, ..., 32 s (MAX_SECONDS_TRIES: the
# first at which every check passes; a run that finishes fails, and so does the last limit). The unit
# test "cluster ranking: shared work, stopped by the time limit..." stops the ranking
# deterministically.

set(speed_rank_args --baseline tests/data/hf/deepseek-v3.json --free-shapes
    --calibration cuda_profiler/profiles/h200-torch-eager.json --rank-by time --cluster examples/clusters/h200.json
    --nodes 128 --gpus 1024)
budget_cli_test(NAME speed.cluster_rank_partial ARGS ${speed_rank_args} EXPECT_EXIT 4 MAX_SECONDS_TRIES 0.5 1 2 4 8 16 32 TIMEOUT 300
  STDOUT_MATCHES [=[PARTIAL: .*time limit: stopped after]=]
    [=[The rows are the best of the [0-9]+ of [0-9]+ equally matched candidates finished]=]
    [=[To finish: fewer candidates]=] [=[rank +hidden]=])
budget_cli_test(NAME speed.cluster_rank_partial_json ARGS ${speed_rank_args} --format json EXPECT_EXIT 4 MAX_SECONDS_TRIES 0.5 1 2 4 8 16 32 TIMEOUT 300
  STDOUT_MATCHES [=["partial": {
      "finished": [0-9]+,
      "given": [0-9]+,
      "stopped_by": "[^"]*time limit]=] [=["to_finish": "fewer candidates]=])
budget_cli_test(NAME speed.cluster_rank_partial_no_out ARGS ${speed_rank_args} --out speed-partial-never-written.json
  EXPECT_EXIT 4 MAX_SECONDS_TRIES 0.5 1 2 4 8 16 32 TIMEOUT 300 STDERR_MATCHES [=[speed-partial-never-written.json not written: the ranking is partial]=])
