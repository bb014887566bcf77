# CLI tests of the scaling-law commands (fit, frontier, ce-gain); see docs/scaling.md.
# Working directory: the repository root.

set(scaling_out "${CMAKE_CURRENT_BINARY_DIR}/scaling_cli")
file(MAKE_DIRECTORY "${scaling_out}")
set(scaling_data tests/data/scaling_paired_domains.csv)
set(paper_baseline examples/scaling/baseline.json)
set(paper_looped examples/scaling/looped.json)

# --- fit ---------------------------------------------------------------------------------------
budget_cli_test(NAME scaling.fit_help ARGS fit --help
  STDOUT_MATCHES "--delta" "--out" "--arch")
budget_cli_test(NAME scaling.fit_table ARGS fit ${scaling_data}
  STDOUT_MATCHES "baseline +72 " "looped +72 " "converged" "Per-domain intercepts" "looped +code +72")
budget_cli_test(NAME scaling.fit_json ARGS fit ${scaling_data} --arch looped --format json
  STDOUT_MATCHES "\"schema_version\": 1" "\"arch\": \"looped\"" "\"gamma\": 0[.]2" "\"domains\"" "\"fit_summary\""
  STDOUT_NOT_MATCHES "\"arch\": \"baseline\"")
budget_cli_test(NAME scaling.fit_out ARGS fit ${scaling_data} --out "${scaling_out}/coeffs-{arch}.json"
  STDOUT_MATCHES "baseline")
set_tests_properties(cli.scaling.fit_out PROPERTIES FIXTURES_SETUP scaling_coefficients)
budget_cli_test(NAME scaling.fit_out_needs_placeholder ARGS fit ${scaling_data} --out "${scaling_out}/one.json"
  EXPECT_EXIT 2 STDERR_MATCHES "--out: the data has 2 architectures" "[{]arch[}]")
budget_cli_test(NAME scaling.fit_chinchilla ARGS fit tests/data/chinchilla_epoch.csv
  STDOUT_MATCHES "chinchilla +245 " "[(]held[)]" "b held at 0" "A_N = ")
budget_cli_test(NAME scaling.fit_bad_row ARGS fit tests/data/scaling_bad_loss.csv
  EXPECT_EXIT 2
  STDERR_MATCHES "scaling_bad_loss[.]csv: line 4: column 'loss': value \"abc\" is not a number")
budget_cli_test(NAME scaling.fit_missing_file ARGS fit tests/data/no_such_losses.csv
  EXPECT_EXIT 2 STDERR_MATCHES "no_such_losses[.]csv")
budget_cli_test(NAME scaling.fit_unknown_arch ARGS fit ${scaling_data} --arch nope
  EXPECT_EXIT 2 STDERR_MATCHES "no points of architecture \"nope\"; the data has: baseline, looped")
budget_cli_test(NAME scaling.fit_bad_delta ARGS fit ${scaling_data} --delta -1
  EXPECT_EXIT 2 STDERR_MATCHES "--delta: huber_delta = -1 is not allowed")

# --- frontier ----------------------------------------------------------------------------------
budget_cli_test(NAME scaling.frontier_paper ARGS frontier ${paper_baseline} ${paper_looped} --C 1e20,1e21,1e22 --S 0.85,0.95,0.97
  STDOUT_MATCHES "baseline +0[.]2371" "looped +0[.]2503" "tokens/param" "looped +0[.]85 +1e[+]21")
budget_cli_test(NAME scaling.frontier_json ARGS frontier ${paper_looped} --C 1e21 --S 0.85 --format json
  STDOUT_MATCHES "\"schema_version\": 1" "\"gamma\": 0[.]250" "\"tokens_per_parameter\"" "\"N_equivalent\"")
budget_cli_test(NAME scaling.frontier_csv ARGS frontier ${paper_looped} --C 1e21 --S 0.85 --format csv
  STDOUT_MATCHES "^arch,S,C,F[*],")
budget_cli_test(NAME scaling.frontier_bad_sparsity ARGS frontier ${paper_looped} --C 1e21 --S 1.5
  EXPECT_EXIT 2 STDERR_MATCHES "--S: value 1[.]5 is not allowed; allowed: sparsities in [[]0, 1[)]")
budget_cli_test(NAME scaling.frontier_bad_budget ARGS frontier ${paper_looped} --C -1e21 --S 0.85
  EXPECT_EXIT 2 STDERR_MATCHES "--C: value -1e[+]21 is not allowed")
budget_cli_test(NAME scaling.frontier_bad_coefficients ARGS frontier tests/data/scaling_bad_coefficients.json --C 1e21 --S 0.85
  EXPECT_EXIT 2
  STDERR_MATCHES "scaling_bad_coefficients[.]json: /fit_sumary: unknown key \"fit_sumary\" [(]did you mean \"fit_summary\"[?][)]")
budget_cli_test(NAME scaling.frontier_needs_budgets ARGS frontier ${paper_looped} --S 0.85
  EXPECT_EXIT 64 STDERR_MATCHES "--C is required")

# --plot: draws through gnuplot where it is installed; a clear message naming the package where not.
find_program(BUDGET_GNUPLOT gnuplot)
if(BUDGET_GNUPLOT)
  budget_cli_test(NAME scaling.frontier_plot
    ARGS frontier ${paper_baseline} ${paper_looped} --C 1e20,1e21 --S 0.85 --plot "${scaling_out}/frontier.svg"
    STDOUT_MATCHES "plot written to .*frontier[.]svg")
else()
  budget_cli_test(NAME scaling.frontier_plot
    ARGS frontier ${paper_baseline} --C 1e21 --S 0.85 --plot "${scaling_out}/frontier.svg"
    EXPECT_EXIT 2 STDERR_MATCHES "gnuplot is not on PATH; install the Debian package gnuplot-nox")
endif()
# Without gnuplot on PATH (always checkable): PATH emptied for the run.
add_test(NAME cli.scaling.frontier_plot_without_gnuplot
  COMMAND ${CMAKE_COMMAND} -E env PATH=/nonexistent
    $<TARGET_FILE:budget-match> frontier ${paper_baseline} --C 1e21 --S 0.85 --plot "${scaling_out}/unused.svg"
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
set_tests_properties(cli.scaling.frontier_plot_without_gnuplot PROPERTIES
  PASS_REGULAR_EXPRESSION "--plot: gnuplot is not on PATH; install the Debian package gnuplot-nox")

# --- ce-gain -----------------------------------------------------------------------------------
budget_cli_test(NAME scaling.ce_gain_paper
  ARGS ce-gain --target ${paper_looped} --reference ${paper_baseline} --C 1e20,1e21,1e22 --S 0.85,0.95,0.97
  STDOUT_MATCHES "gamma: looped 0[.]2503, baseline 0[.]2371" "0[.]85 +[+]9[.]86% +[+]17[.]94% +[+]23[.]37%"
  STDOUT_NOT_MATCHES "bootstrap:")
budget_cli_test(NAME scaling.ce_gain_markdown
  ARGS ce-gain --target ${paper_looped} --reference ${paper_baseline} --C 1e21 --S 0.85 --format markdown
  STDOUT_MATCHES "[|] S [\\] C [|] 1e[+]21 [|]" "[|] 0[.]85 [|] [+]17[.]94% [|]")
budget_cli_test(NAME scaling.ce_gain_csv
  ARGS ce-gain --target ${paper_looped} --reference ${paper_baseline} --C 1e21 --S 0.85 --format csv
  STDOUT_MATCHES "^scope,S,C,gain,gain_lower,gain_upper,C_reference,loss,tpp_target,tpp_reference" "overall,0[.]85,1e[+]21,0[.]179")
budget_cli_test(NAME scaling.ce_gain_never_reached
  ARGS ce-gain --target ${paper_looped} --reference tests/data/scaling_high_floor.json --C 1e21 --S 0.85
  EXPECT_EXIT 2 STDERR_MATCHES "reference frontier never reaches the target's loss 1[.]74" "asymptote E = 2[.]5")
budget_cli_test(NAME scaling.ce_gain_bootstrap_needs_data
  ARGS ce-gain --target ${paper_looped} --reference ${paper_baseline} --C 1e21 --S 0.85 --resamples 10
  EXPECT_EXIT 64 STDERR_MATCHES "--resamples requires --bootstrap")
budget_cli_test(NAME scaling.ce_gain_bootstrap
  ARGS ce-gain --target "${scaling_out}/coeffs-looped.json" --reference "${scaling_out}/coeffs-baseline.json"
       --C 1e20,1e21 --S 0.85 --bootstrap ${scaling_data} --resamples 50 --seed 3 --threads 2 --format json --quiet
  STDOUT_MATCHES "\"lower\"" "\"upper\"" "\"paired\": true" "\"resamples\": 50" "\"failed_resamples\": 0"
                 "\"domain\": \"web\"" "\"domain\": \"code\""
  STDERR_MATCHES "^$")  # --quiet: a slow machine (an ASan build) would print progress lines after 2 s
set_tests_properties(cli.scaling.ce_gain_bootstrap PROPERTIES FIXTURES_REQUIRED scaling_coefficients)
budget_cli_test(NAME scaling.ce_gain_bootstrap_table
  ARGS ce-gain --target ${paper_looped} --reference ${paper_baseline} --C 1e21 --S 0.85
       --bootstrap ${scaling_data} --resamples 30
  STDOUT_MATCHES "bootstrap: 30 resamples of the 12 cells" "95% interval" "Per-domain gains" "web +0[.]85"
  STDERR_MATCHES "warning: the gains of .* differ by up to")
budget_cli_test(NAME scaling.ce_gain_unknown_arch
  ARGS ce-gain --target ${paper_looped} --reference ${paper_baseline} --C 1e21 --S 0.85
       --bootstrap ${scaling_data} --target-arch smelt
  EXPECT_EXIT 2 STDERR_MATCHES "scaling_paired_domains[.]csv: no points of architecture \"smelt\"")
