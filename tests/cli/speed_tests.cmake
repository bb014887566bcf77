# Issue 35: a cluster ranking stopped by the time limit prints the best of the candidates it
# finished, marked partial, with exit 4 (docs/cli.md; docs/cluster.md, "Shared work across
# candidates"). The paper cell's match finishes before the first progress report; the ranking
# checks the limit as each candidate finishes, so a limit of a millisecond stops it at the first.

set(speed_rank_args --baseline examples/configs/paper-200M-S95-baseline.json
    --calibration cuda_profiler/profiles/h200-torch-eager.json --rank-by time --cluster examples/clusters/h200.json
    --nodes 8 --gpus 64 --global-batch-tokens 1048576 --max-seconds 0.001)
budget_cli_test(NAME speed.cluster_rank_partial ARGS ${speed_rank_args} EXPECT_EXIT 4
  STDOUT_MATCHES [=[PARTIAL: cluster ranking \(matched candidates at their best layouts\): time limit: stopped after]=]
    [=[The rows are the best of the [0-9]+ of [0-9]+ equally matched candidates finished]=]
    [=[To finish: fewer candidates]=] [=[rank +hidden]=])
budget_cli_test(NAME speed.cluster_rank_partial_json ARGS ${speed_rank_args} --format json EXPECT_EXIT 4
  STDOUT_MATCHES [=["partial": {
      "finished": [0-9]+,
      "given": [0-9]+,
      "stopped_by": "cluster ranking]=] [=["to_finish": "fewer candidates]=])
budget_cli_test(NAME speed.cluster_rank_partial_no_out ARGS ${speed_rank_args} --out speed-partial-never-written.json
  EXPECT_EXIT 4 STDERR_MATCHES [=[speed-partial-never-written.json not written: the ranking is partial]=])
