# CLI regression tests of untrusted input (the third audit, issue 23, docs/reliability.md): names
# from data never become gnuplot commands, {arch} expands to one path component, a command that
# writes several files writes all or none, option ranges, integer overflow, messages escaped.
# Working directory: the repository root; scratch directories under ${untrusted_out}.

set(untrusted_out "${CMAKE_CURRENT_BINARY_DIR}/untrusted_input_cli")
set(untrusted_data "${PROJECT_SOURCE_DIR}/tests/data/security")

# budget_files_test(NAME n ARGS ... [EXPECT_EXIT c] [DIRS d...] [FILES f...] [STDERR_MATCHES re]):
# runs in a fresh ${untrusted_out}/<n> and checks that exactly FILES exist there afterwards.
function(budget_files_test)
  cmake_parse_arguments(T "" "NAME;EXPECT_EXIT;STDERR_MATCHES" "ARGS;DIRS;FILES" ${ARGN})
  if(NOT DEFINED T_EXPECT_EXIT)
    set(T_EXPECT_EXIT 0)
  endif()
  string(REPLACE ";" "\\;" args_escaped "${T_ARGS}")
  string(REPLACE ";" "\\;" dirs_escaped "${T_DIRS}")
  string(REPLACE ";" "\\;" files_escaped "${T_FILES}")
  set(match_arg)
  if(DEFINED T_STDERR_MATCHES)
    set(match_arg "-DSTDERR_MATCHES=${T_STDERR_MATCHES}")
  endif()
  add_test(NAME "cli.untrusted_input.${T_NAME}"
    COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:budget-match>" "-DARGS=${args_escaped}"
      "-DWORK=${untrusted_out}/${T_NAME}" "-DDIRS=${dirs_escaped}" "-DEXPECT_FILES=${files_escaped}"
      "-DEXPECT_EXIT=${T_EXPECT_EXIT}" ${match_arg}
      -P "${CMAKE_CURRENT_SOURCE_DIR}/cli/files_written.cmake")
  set_tests_properties("cli.untrusted_input.${T_NAME}" PROPERTIES TIMEOUT 120)
endfunction()

# --- gnuplot: names are data, never script text (backquotes, quotes, newlines, system()) -------
find_program(BUDGET_GNUPLOT_FOR_ESCAPING gnuplot)
if(BUDGET_GNUPLOT_FOR_ESCAPING)
  budget_files_test(NAME gnuplot_fit_arch_backquotes
    ARGS fit "${untrusted_data}/hostile_arch_loss.csv" --plot fit.svg FILES fit.svg)
  budget_files_test(NAME gnuplot_frontier_arch_newline
    ARGS frontier "${untrusted_data}/hostile_coefficients.json" --C 1e20,1e21 --S 0.85 --plot frontier.svg
    FILES frontier.svg)
  budget_files_test(NAME gnuplot_grid_name_newline
    ARGS grid --grid "${untrusted_data}/hostile_grid.json" --plot grid.svg FILES grid.svg)
  budget_files_test(NAME gnuplot_grid_name_png
    ARGS grid --grid "${untrusted_data}/hostile_grid.json" --plot grid.png FILES grid.png)
  # fit --out D/{arch}.json with a plot that cannot be written: no coefficient file either.
  budget_files_test(NAME fit_out_all_or_none
    ARGS fit "${PROJECT_SOURCE_DIR}/tests/data/scaling_paired_domains.csv" --out "%WORK%/D/{arch}.json"
      --plot "%WORK%/missing/fit.svg"
    DIRS D EXPECT_EXIT 2 STDERR_MATCHES "missing/fit[.]svg: cannot write a file in .*nothing was written")
  budget_files_test(NAME fit_out_and_plot_together
    ARGS fit "${PROJECT_SOURCE_DIR}/tests/data/scaling_paired_domains.csv" --out "%WORK%/D/{arch}.json"
      --plot "%WORK%/fit.svg"
    DIRS D FILES D/baseline.json D/looped.json fit.svg)
endif()

# --- {arch} is one path component -------------------------------------------------------------
budget_files_test(NAME out_placeholder_traversal
  ARGS fit "${untrusted_data}/traversal_arch_loss.csv" --out "%WORK%/DIR/sub/{arch}.json"
  DIRS DIR/sub EXPECT_EXIT 2
  STDERR_MATCHES "--out: the value \"[.][.]/[.][.]/escaped\" put in place of [{]arch[}] contains '/'")
# Names with quotes and backquotes are valid file names: written as they are.
budget_files_test(NAME out_placeholder_hostile_but_valid_names
  ARGS fit "${untrusted_data}/hostile_arch_loss.csv" --out "%WORK%/D/{arch}.json"
  DIRS D FILES "D/`touch pwned_fit_backquote`.json" "D/it's'`touch pwned_fit_quote`'system('touch pwned_fit_system').json")

# --- options ------------------------------------------------------------------------------------
set(untrusted_profile cuda_profiler/profiles/h200-torch-eager.json)
set(untrusted_base examples/configs/paper-200M-S95-baseline.json)
budget_cli_test(NAME untrusted_input.max_time_ratio_nan
  ARGS --baseline ${untrusted_base} --calibration ${untrusted_profile} --max-time-ratio nan EXPECT_EXIT 64
  STDERR_MATCHES "--max-time-ratio: value \"nan\" is not allowed; allowed: a finite number in [(]0, 1e[+]300[]]")
budget_cli_test(NAME untrusted_input.max_time_ratio_inf
  ARGS grid --calibration ${untrusted_profile} --max-time-ratio inf EXPECT_EXIT 64
  STDERR_MATCHES "value \"inf\" is not allowed")
budget_cli_test(NAME untrusted_input.max_time_ratio_denormal
  ARGS --baseline ${untrusted_base} --calibration ${untrusted_profile} --max-time-ratio 5e-324 EXPECT_EXIT 3
  STDOUT_MATCHES "no matched candidate is within the time-ratio cap")
budget_cli_test(NAME untrusted_input.seed_too_large
  ARGS calibrate ${untrusted_profile} --validate --seed 18446744073709551616 EXPECT_EXIT 64
  STDERR_MATCHES "--seed: value \"18446744073709551616\" is out of range; allowed: 0 to 18446744073709551615")
budget_cli_test(NAME untrusted_input.seed_negative
  ARGS calibrate ${untrusted_profile} --validate --seed -1 EXPECT_EXIT 64
  STDERR_MATCHES "is not a non-negative decimal integer")
budget_cli_test(NAME untrusted_input.fit_delta_tiny ARGS fit tests/data/chinchilla_epoch.csv --delta 1e-20 EXPECT_EXIT 2
  STDERR_MATCHES "--delta: huber_delta = 1e-20 is not allowed; allowed: a number in [[]1e-06, 10[]]")

# --- a plot cut short (a full disk) is not kept ----------------------------------------------------
add_test(NAME cli.untrusted_input.plot_truncated_by_gnuplot
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DWORK=${untrusted_out}/truncated-plot
          -DMODE=truncated -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/plot_kept_on_failure.cmake
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")

# --- integer overflow: refused with the quantity named, never wrapped ------------------------------
budget_cli_test(NAME untrusted_input.time_topk_overflow
  ARGS report ${untrusted_data}/topk_2_23.json --calibration ${untrusted_profile} --workload ${untrusted_data}/workload_2_40_tokens.json
  EXPECT_EXIT 2 STDERR_MATCHES "routed tokens per step [(]tokens x top_k[)] = 1099511627776 [*] 8388608 is outside the 64-bit integer range")
budget_cli_test(NAME untrusted_input.plan_stable_tokens_overflow
  ARGS plan --recipe ${untrusted_data}/recipe_stable_overflow.json EXPECT_EXIT 2
  STDERR_MATCHES "recipe_stable_overflow[.]json: /stable_steps: stable-phase tokens [(]stable_steps x tokens_per_step[)] = 1099511627776 [*] 1152921504606846976 is outside")

# --- MFU of a forward-only workload ------------------------------------------------------------------
budget_cli_test(NAME untrusted_input.mfu_forward_only
  ARGS report ${untrusted_base} --calibration ${untrusted_profile} --workload ${untrusted_data}/workload_forward_only.json
  STDOUT_MATCHES "MFU 2[0-9][.][0-9]%")

# --- physically impossible profiles ---------------------------------------------------------------
budget_cli_test(NAME untrusted_input.profile_peak_tiny
  ARGS report ${untrusted_base} --calibration ${untrusted_data}/profile_peak_tiny.json EXPECT_EXIT 2
  STDERR_MATCHES "profile_peak_tiny[.]json: /peaks/bf16_gemm_tflops: value 1e-300 is out of range; allowed: a number in [[]0[.]001, 100000[]]")
budget_cli_test(NAME untrusted_input.profile_peak_denormal
  ARGS report ${untrusted_base} --calibration ${untrusted_data}/profile_peak_denormal.json EXPECT_EXIT 2
  STDERR_MATCHES "/peaks/bf16_gemm_tflops: value 5e-324 is out of range")
budget_cli_test(NAME untrusted_input.profile_row_too_fast
  ARGS report ${untrusted_base} --calibration ${untrusted_data}/profile_row_too_fast.json EXPECT_EXIT 2
  STDERR_MATCHES "/rows/0/ms: value 1e-160 is out of range; allowed: a number in [[]1e-06, 1000000000[]]")
budget_cli_test(NAME untrusted_input.profile_device_name_escape
  ARGS report ${untrusted_base} --calibration ${untrusted_data}/profile_device_escape.json EXPECT_EXIT 2
  STDERR_MATCHES "/device/name: the device name \"NVIDIA \\\\x1b[]]0;owned\\\\x07\\\\x1b[[]2J H200\" holds control characters")

# --- progress off a terminal, --quiet, the time limit ---------------------------------------------
# A simulation of 2^32 documents (about two minutes) stopped by --max-seconds 3: a progress line
# comes after 2 s although stderr is not a terminal; --quiet leaves only the error line.
set(untrusted_slow attention --dist fixed:4096 --samples 4294967296 --method simulation)
budget_cli_test(NAME untrusted_input.progress_not_a_terminal ARGS ${untrusted_slow} --max-seconds 3 EXPECT_EXIT 2
  STDERR_MATCHES "budget-match: simulated documents: [0-9]+/4294967296 [(][0-9]+%[)]\n"
    "simulated documents: time limit: stopped after [0-9]+ s, the time limit of 3 s, at [0-9]+ of 4294967296; raise the limit with --max-seconds S [(]0: no limit[)]")
budget_cli_test(NAME untrusted_input.quiet ARGS ${untrusted_slow} --max-seconds 3 --quiet EXPECT_EXIT 2
  STDERR_MATCHES "^budget-match: error: simulated documents: time limit: [^\n]+\n$")
budget_cli_test(NAME untrusted_input.max_seconds_stops_work ARGS ${untrusted_slow} --max-seconds 0.5 EXPECT_EXIT 2
  STDERR_MATCHES "time limit: stopped after [0-9]+ s, the time limit of 0[.]5 s")
budget_cli_test(NAME untrusted_input.max_seconds_bad ARGS ${untrusted_slow} --max-seconds nan EXPECT_EXIT 64
  STDERR_MATCHES "--max-seconds: value \"nan\" is not allowed")

# --- messages: a NUL byte in the input is shown, not the end of the message ---------------------
budget_cli_test(NAME untrusted_input.message_nul_byte ARGS fit ${untrusted_data}/loss_nul_byte.csv EXPECT_EXIT 2
  STDERR_MATCHES [=[loss_nul_byte[.]csv: line 3: column 'N': value "1e9\\x00zz" is not]=])
