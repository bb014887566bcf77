# Regression tests of the audit of issue 12 (docs/reliability.md): hostile inputs end in seconds
# with exit 0 and a correct result, or exit 2/3/64 and a clear message. Working directory: the
# repository root.
set(BASE examples/configs/paper-200M-S95-baseline.json)
set(R tests/data/robust)
set(robust_out "${CMAKE_CURRENT_BINARY_DIR}/robust_cli")
file(MAKE_DIRECTORY "${robust_out}")

# --- strict JSON: numbers beyond double, duplicate keys, NUL bytes --------------------------------
budget_cli_test(NAME robust.json_number_overflow ARGS report ${R}/number_overflow.json EXPECT_EXIT 2
  STDERR_MATCHES "number_overflow[.]json: /hidden_size: number 1e400 at line 3, column [0-9]+ is outside the range of a double")
budget_cli_test(NAME robust.json_number_overflow_nested ARGS report ${R}/number_overflow_nested.json EXPECT_EXIT 2
  STDERR_MATCHES "/attention/num_kv_heads: number -1e999 at line 5")
budget_cli_test(NAME robust.json_number_overflow_array ARGS attention --histogram ${R}/histogram_overflow.json EXPECT_EXIT 2
  STDERR_MATCHES "histogram_overflow[.]json: /1/1: number 1e400")
budget_cli_test(NAME robust.json_number_overflow_workload ARGS report ${BASE} --workload ${R}/workload_overflow.json
  EXPECT_EXIT 2 STDERR_MATCHES "workload_overflow[.]json: /attended_keys: number 1e309")
budget_cli_test(NAME robust.json_number_overflow_constraints ARGS --baseline ${BASE} --constraints ${R}/constraints_overflow.json
  EXPECT_EXIT 2 STDERR_MATCHES "constraints_overflow[.]json: /hidden_size/max: number 1e400")
budget_cli_test(NAME robust.json_duplicate_key ARGS report ${R}/duplicate_key.json EXPECT_EXIT 2
  STDERR_MATCHES "duplicate_key[.]json: /hidden_size: duplicate key \"hidden_size\"")
budget_cli_test(NAME robust.json_duplicate_key_nested ARGS report ${R}/duplicate_key_nested.json EXPECT_EXIT 2
  STDERR_MATCHES "/attention/head_dim: duplicate key \"head_dim\"")
budget_cli_test(NAME robust.json_nul_in_key ARGS report ${R}/nul_in_key.json EXPECT_EXIT 2
  STDERR_MATCHES "unknown key \"bogus\\\\x00key\"")

# --- files: only regular files, with a size limit ---------------------------------------------------
budget_cli_test(NAME robust.read_dev_zero ARGS report /dev/zero EXPECT_EXIT 2 TIMEOUT 10
  STDERR_MATCHES "/dev/zero: cannot read it: not a regular file")
add_test(NAME cli.robust.empty_file_names
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/empty_arguments.sh $<TARGET_FILE:budget-match>)
budget_cli_test(NAME robust.read_directory_histogram ARGS attention --histogram tests/data EXPECT_EXIT 2
  STDERR_MATCHES "tests/data: cannot open file for reading: it is a directory")
budget_cli_test(NAME robust.read_directory_lengths ARGS attention --lengths tests/data EXPECT_EXIT 2
  STDERR_MATCHES "tests/data: is a directory")
# An unusable BUDGET_MAX_INPUT_MB (0) keeps the default limit.
budget_cli_test(NAME robust.read_size_limit_invalid_env ARGS report ${BASE} ENV BUDGET_MAX_INPUT_MB=0 EXPECT_EXIT 0
  STDOUT_MATCHES "1[.]33 GF")

# --- checked writes -----------------------------------------------------------------------------------
budget_cli_test(NAME robust.stdout_dev_full ARGS report ${BASE} STDOUT_TO /dev/full EXPECT_EXIT 2
  STDERR_MATCHES "<stdout>: error while writing the output")
budget_cli_test(NAME robust.stdout_dev_full_json ARGS --baseline ${BASE} --format json STDOUT_TO /dev/full EXPECT_EXIT 2
  STDERR_MATCHES "<stdout>: error while writing the output")
budget_cli_test(NAME robust.out_dev_full ARGS --baseline ${BASE} --out /dev/full EXPECT_EXIT 2
  STDERR_MATCHES "/dev/full: cannot write it: it exists and is not a regular file"
  STDOUT_NOT_MATCHES "wrote the best candidate")
budget_cli_test(NAME robust.out_missing_directory ARGS --baseline ${BASE} --out "${robust_out}/no/such/dir/x.json" EXPECT_EXIT 2
  STDERR_MATCHES "x[.]json: cannot write a file in")
budget_cli_test(NAME robust.fit_out_dev_full ARGS fit tests/data/scaling_paired_domains.csv --arch looped --out /dev/full
  EXPECT_EXIT 2 STDERR_MATCHES "/dev/full: cannot write it")
budget_cli_test(NAME robust.plan_template_dev_full ARGS plan --data-template /dev/full EXPECT_EXIT 2
  STDERR_MATCHES "/dev/full: cannot write it")

# --- command-line values --------------------------------------------------------------------------------
budget_cli_test(NAME robust.loop_overflow ARGS --baseline ${BASE} --loop 99999999999999999999-1 EXPECT_EXIT 2
  STDERR_MATCHES "--loop: layer 99999999999999999999 in \"99999999999999999999-1\" is out of range")
budget_cli_test(NAME robust.seed_negative_ce_gain
  ARGS ce-gain --target examples/scaling/looped.json --reference examples/scaling/baseline.json --C 1e21 --S 0.9
       --bootstrap tests/data/scaling_paired_domains.csv --seed -1
  EXPECT_EXIT 64 STDERR_MATCHES "--seed")
budget_cli_test(NAME robust.seed_negative_attention ARGS attention --dist fixed:100 --seed -1 EXPECT_EXIT 64
  STDERR_MATCHES "--seed")
budget_cli_test(NAME robust.budget_list_empty_item
  ARGS frontier examples/scaling/baseline.json --C 1e21,,1e22 --S 0.9 EXPECT_EXIT 2
  STDERR_MATCHES "--C: \"1e21,,1e22\" has an empty item")
budget_cli_test(NAME robust.budget_list_two_options
  ARGS frontier examples/scaling/baseline.json --C 1e21,1e22 --C 1e23 --S 0.9 --format csv
  STDOUT_MATCHES "1e[+]?23")
budget_cli_test(NAME robust.ce_gain_budget_1e308
  ARGS ce-gain --target examples/scaling/looped.json --reference examples/scaling/baseline.json --C 1e308 --S 0.9
  EXPECT_EXIT 2 STDERR_MATCHES "--C: value 1e[+]?308 is not allowed; allowed: budgets in FLOPs in [(]0, 1e[+]?30[]]")
budget_cli_test(NAME robust.frontier_budget_1e308
  ARGS frontier examples/scaling/baseline.json --C 1e308 --S 0.9 EXPECT_EXIT 2
  STDERR_MATCHES "--C: value 1e[+]?308 is not allowed")
budget_cli_test(NAME robust.frontier_budget_1e27
  ARGS frontier examples/scaling/baseline.json --C 1e27 --S 0.9 --format json
  STDOUT_MATCHES "\"C\": 1e[+]?27" STDOUT_NOT_MATCHES "nan|inf")

# --- degenerate data: a diagnosis, not coefficients ---------------------------------------------------
budget_cli_test(NAME robust.histogram_count_overflow ARGS attention --histogram ${R}/histogram_count_overflow.csv
  EXPECT_EXIT 2 STDERR_MATCHES "counts sum to more than the largest double")
budget_cli_test(NAME robust.fit_constant_losses ARGS fit ${R}/fit_constant.csv EXPECT_EXIT 2
  STDERR_MATCHES "all losses equal [(]2[.]5[)]")
budget_cli_test(NAME robust.fit_rising_losses ARGS fit ${R}/fit_rising.csv EXPECT_EXIT 2
  STDERR_MATCHES "the loss does not decrease with compute F·D")
budget_cli_test(NAME robust.fit_tiny_losses ARGS fit ${R}/fit_tiny.csv EXPECT_EXIT 2
  STDERR_MATCHES "line 2: column 'loss': value 1e-300 is not allowed; allowed: a loss in \\[1e-6, 1e6\\]")
budget_cli_test(NAME robust.fit_non_utf8_arch_json ARGS fit ${R}/fit_non_utf8_arch.csv --format json
  STDOUT_MATCHES "\"schema_version\"")

# --- bounded work -------------------------------------------------------------------------------------
budget_cli_test(NAME robust.samples_over_limit ARGS attention --dist exp:mean=600 --samples 1099511627776
  EXPECT_EXIT 64 STDERR_MATCHES "--samples")
budget_cli_test(NAME robust.samples_too_many_tokens ARGS attention --dist fixed:1099511627776 --method simulation
  EXPECT_EXIT 2 TIMEOUT 20
  STDERR_MATCHES "--samples: 1000000 documents drawn from this distribution are too many")
budget_cli_test(NAME robust.resamples_over_limit
  ARGS ce-gain --target examples/scaling/looped.json --reference examples/scaling/baseline.json --C 1e21 --S 0.9
       --bootstrap tests/data/scaling_paired_domains.csv --resamples 1000000
  EXPECT_EXIT 64 STDERR_MATCHES "--resamples")
budget_cli_test(NAME robust.match_structures_limit ARGS --baseline bench/configs/deepseek-v3-gqa-baseline.json --all-trainable-shapes --max-structures 100000 EXPECT_EXIT 2
  STDERR_MATCHES "search space: [0-9]+ structures to calibrate .* more than the limit of 100000[^0-9].*--max-structures")
# The DeepSeek-V3 GQA space takes about 9 s in Release since row #1 is taken over every equally
# matched shape (issue 17), over 30 s under ASan: the limit says "ends", not how fast (bench_match does).
budget_cli_test(NAME robust.match_deepseek_v3_gqa ARGS --baseline bench/configs/deepseek-v3-gqa-baseline.json --top 2
  TIMEOUT 240 STDOUT_MATCHES "matched: #1 max deviation")
budget_cli_test(NAME robust.match_qwen3_235b ARGS --baseline bench/configs/qwen3-235b-a22b.json --top 2
  TIMEOUT 240 STDOUT_MATCHES "matched: #1 max deviation")

# --- determinism: byte-identical output across runs and --threads --------------------------------------
add_test(NAME cli.robust.deterministic_outputs
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DOUT=${robust_out}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/deterministic_outputs.cmake
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
set_tests_properties(cli.robust.deterministic_outputs PROPERTIES TIMEOUT 300)

# --- Ctrl-C: exit 130, a message, nothing written ----------------------------------------------------
add_test(NAME cli.robust.interrupt
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/interrupt.sh $<TARGET_FILE:budget-match> ${robust_out})
set_tests_properties(cli.robust.interrupt PROPERTIES TIMEOUT 30)

# --- large inputs: refused over the size limit; huge keys echoed once, cut -----------------------------
add_test(NAME cli.robust.large_input
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DOUT=${robust_out}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/large_input.cmake)
set_tests_properties(cli.robust.large_input PROPERTIES TIMEOUT 60)
