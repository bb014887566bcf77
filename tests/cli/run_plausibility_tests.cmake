# Issue 44 §2-§4 and issue 42 item 5 (docs/reliability.md, round 5): measured runs checked for
# plausibility, calibrate --from-runs bounded by --max-seconds, empty output paths refused, a fit on
# no runs without error figures. Run from the repository root.

set(bounds_profile cuda_profiler/profiles/b200-published.json)

# The audit's 1 µs step is skipped by name and reason; the other three runs are fitted (before: fitted,
# factors 0 written, `report` then printed "inf tokens/s").
budget_cli_test(NAME run_plausibility.implausible_run_skipped
  ARGS calibrate --profile ${bounds_profile} --from-runs tests/data/runs/implausible_runs.jsonl
  STDOUT_MATCHES [=[bf16: 3 runs fitted, 0 validated, 1 skipped]=]
    [=[one-microsecond +fit +1e-06 +skipped: implausible: a step of 1e-06 s is [0-9.e+]+ TFLOP/s]=]
    [=[above the GPU's dense BF16 peak of 2250 TFLOP/s]=])
# Every run skipped: an error naming them, exit 2 (before: exit 0, a fit on nothing).
budget_cli_test(NAME run_plausibility.all_runs_implausible
  ARGS calibrate --profile ${bounds_profile} --from-runs tests/data/runs/all_implausible_runs.jsonl EXPECT_EXIT 2
  STDERR_MATCHES [=[every one of the 2 runs of NVIDIA B200 was skipped, nothing to fit: run llama3_70b_l12_tp1_pp2_dp4_mbc4_cef: implausible]=])

# Issue 42 item 5: fitted on no runs, no leave-one-run-out figure (before: "median 0.0%, worst 0.0%").
budget_cli_test(NAME run_plausibility.fit_on_no_runs_says_so
  ARGS calibrate --profile ${bounds_profile} --from-runs tests/data/runs/validate_only_runs.jsonl
  STDOUT_MATCHES [=[bf16: 0 runs fitted, 2 validated, 0 skipped; fitted on no runs: no factors fitted]=]
    [=[no leave-one-run-out figures.validation median]=]
  STDOUT_NOT_MATCHES [=[leave-one-run-out \|error\|]=])
budget_cli_test(NAME run_plausibility.fit_on_no_runs_json
  ARGS calibrate --profile ${bounds_profile} --from-runs tests/data/runs/validate_only_runs.jsonl --format json
  STDOUT_MATCHES [=["fitted_on": \[\],]=] [=["loo_median_error": null,
      "loo_max_error": null,]=])

# The fit stops at the time limit with a clear message (before: 4,000 runs ran 199 s under a 5 s
# limit with no progress). The limit counts from the start, so the first tries may stop it while
# the profile is read; a run that finishes fails at once.
budget_cli_test(NAME run_plausibility.from_runs_time_limit
  ARGS calibrate --profile ${bounds_profile} --from-runs data/runs/measured_runs.jsonl
  EXPECT_EXIT 2 MAX_SECONDS_TRIES 0.05 0.1 0.2 0.4 0.8
  STDERR_MATCHES [=[calibrate --from-runs \((runs priced|leave-one-run-out fits)\): time limit: stopped after]=])

# An empty output path is refused: tests/python/test_call_bounds.py (a CMake list drops an empty
# argument).
