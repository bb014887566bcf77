# budget-match --baseline, grid, plan: as a user runs them (working directory: the repo root).
set(BASE examples/configs/paper-200M-S95-baseline.json)

budget_cli_test(NAME match.table ARGS --baseline ${BASE} --all-trainable-shapes
  STDOUT_MATCHES "base +1\\.33 GF" "12/18 +4–9 ×2" "matched: #1 max deviation 1\\.562%")
budget_cli_test(NAME match.json ARGS --baseline ${BASE} --all-trainable-shapes --format json --top 3
  STDOUT_MATCHES "\"schema_version\": 1" "\"deviation\": {" "\"flops\":" "\"max\": 0\\.015625"
                 "\"baseline\": {" "\"budgets\": {")
budget_cli_test(NAME match.markdown ARGS --baseline ${BASE} --format markdown
  STDOUT_MATCHES "\\| # \\| max dev \\|")
budget_cli_test(NAME match.explicit_loop ARGS --baseline ${BASE} --loop 3-10 --repeats 2
  STDOUT_MATCHES "12/20 +3–10 ×2")
budget_cli_test(NAME match.loop_outside_stack ARGS --baseline ${BASE} --loop 10-14 EXPECT_EXIT 2
  STDERR_MATCHES "--loop: loop layers 10–14 do not fit in a stack of 12 layers")
budget_cli_test(NAME match.bad_loop_syntax ARGS --baseline ${BASE} --loop four-nine EXPECT_EXIT 2
  STDERR_MATCHES "--loop: value \"four-nine\" is not a layer range")
budget_cli_test(NAME match.loop_and_span_exclusive ARGS --baseline ${BASE} --loop 4-9 --span-fraction 0.5 EXPECT_EXIT 64
  STDERR_MATCHES "excludes")
budget_cli_test(NAME match.infeasible_cap ARGS --baseline ${BASE} --all-trainable-shapes --constraints tests/data/match/kv_cap_infeasible.json
  EXPECT_EXIT 3
  STDOUT_MATCHES "the kv budget cannot be met within 0\\.5%: the closest attainable is 1\\.562%"
                 "head_dim multiple of 8" "Best without the caps")
budget_cli_test(NAME match.constraints_typo ARGS --baseline ${BASE} --constraints tests/data/match/typo.json EXPECT_EXIT 2
  STDERR_MATCHES "typo.json: /hidden_size/multiple_off: unknown key \"multiple_off\" \\(did you mean \"multiple_of\"\\?\\)")
budget_cli_test(NAME match.aligned ARGS --baseline ${BASE} --constraints tests/data/match/aligned.json --free-shapes --format json
  STDOUT_MATCHES "\"feasible\": true")
# The same caps on the trainable defaults (1 KV head of 168: hidden a multiple of lcm(64, 168)):
# infeasible, and the explanation names the relaxation that helps.
budget_cli_test(NAME match.aligned_trainable ARGS --baseline ${BASE} --all-trainable-shapes --constraints tests/data/match/aligned.json
  EXPECT_EXIT 3 STDOUT_MATCHES "relaxing any one of these makes it feasible: hidden_size multiple of 64")
# --align beyond a range names the search variable whose range holds no multiple.
budget_cli_test(NAME match.align_beyond_range ARGS --baseline ${BASE} --align 4096 EXPECT_EXIT 2
  STDERR_MATCHES "--align: hidden_size: no multiple of 4096 lies in \\[320, 2560\\]; choose a smaller --align")

# --out writes a config that `report` accepts, with the same budgets.
add_test(NAME cli.match.out_roundtrip
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DBASE=${PROJECT_SOURCE_DIR}/${BASE}
          -DOUT=${CMAKE_CURRENT_BINARY_DIR}/matched.json -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/out_roundtrip.cmake)
# --out-row N writes row N (issue 30, item 7): at a 2% tolerance the 200M cell has several rows.
add_test(NAME cli.match.out_row
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DBASE=${PROJECT_SOURCE_DIR}/${BASE}
          -DOUT=${CMAKE_CURRENT_BINARY_DIR}/matched-row2.json -DROW=2
          "-DEXTRA=--constraints\;${PROJECT_SOURCE_DIR}/tests/data/match/tolerance_2pct.json"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/out_roundtrip.cmake)
budget_cli_test(NAME match.out_row_not_shown ARGS --baseline ${BASE} --top 1 --out ${CMAKE_CURRENT_BINARY_DIR}/x.json --out-row 3
  EXPECT_EXIT 2 STDERR_MATCHES "--out-row: row 3 is not shown: the match has 1 row \\(raise --top to show more\\)")
budget_cli_test(NAME match.out_row_needs_out ARGS --baseline ${BASE} --out-row 2 EXPECT_EXIT 64 STDERR_MATCHES "--out")

# The trainable space (issue 30), no longer the default without --gpu (issue 43): kernel-ready head
# dims, the baseline's expert-parallel degrees, widths in proportion; the footer says so and names
# the way out.
budget_cli_test(NAME match.trainable_default ARGS --baseline ${BASE} --all-trainable-shapes
  STDOUT_MATCHES "6×168 \\(KV 1\\) +288×368" "search space: every trainable shape \\(not only the portable set\\)"
                 "experts multiples of 32" "within 2× of the baseline's proportions" "--free-shapes"
                 "equally matched: each budget within 0\\.25%" "rows: one per shape among the equally matched"
  STDOUT_NOT_MATCHES "off the fused kernels' full-rate path")
budget_cli_test(NAME match.free_shapes ARGS --baseline ${BASE} --free-shapes --order tightest
  STDOUT_MATCHES "1680 +20×84 \\(KV 2\\) +712×88" "search space: the whole lattice \\(--free-shapes\\)"
                 "rows \\(--order tightest\\)" "head_dim 84 is not a multiple of 8")
budget_cli_test(NAME match.free_shapes_key ARGS --baseline ${BASE} --constraints tests/data/match/free_shapes.json --format json
  STDOUT_MATCHES "\"shapes\": \"free\"" "\"order\": \"shown_deviation\"" "\"head_dim\": 84")
budget_cli_test(NAME match.order_json ARGS --baseline ${BASE} --format json --constraints tests/data/match/tolerance_2pct.json
  STDOUT_MATCHES "\"order\": \"proportions\"" "\"order_reason\": \"rows: one per shape" "\"tightest\": {"
                 "\"equally_matched\": {" "\"excess\":" "\"range_edges\": \\[")
budget_cli_test(NAME match.bad_order ARGS --baseline ${BASE} --order widest EXPECT_EXIT 64 STDERR_MATCHES "widest")

budget_cli_test(NAME grid.table ARGS grid --all-trainable-shapes STDOUT_MATCHES "16 cells" "1\\.6B +looped" "largest deviation over the grid: 1\\.81%")
budget_cli_test(NAME grid.csv ARGS grid --format csv STDOUT_MATCHES "^size,arch,hidden,layers")
budget_cli_test(NAME grid.json ARGS grid --format json STDOUT_MATCHES "\"schema_version\": 1" "\"paper_max_deviation\"")
budget_cli_test(NAME grid.ablation_span ARGS grid --ablation span STDOUT_MATCHES "span 6 +12/18" "1\\.8517")
budget_cli_test(NAME grid.ablation_repeats ARGS grid --ablation repeats --cell paper-200M-E64-baseline
  STDOUT_MATCHES "repeats 4 +12/30" "1\\.9360")
budget_cli_test(NAME grid.ablation_depth ARGS grid --ablation depth STDOUT_MATCHES "18 layers, middle half ×2")
budget_cli_test(NAME grid.bad_ablation ARGS grid --ablation width EXPECT_EXIT 64 STDERR_MATCHES "width")
# Issue 30: grid takes --free-shapes and --order as budget-match --baseline does, and says which applied.
budget_cli_test(NAME grid.trainable_footer ARGS grid --all-trainable-shapes
  STDOUT_MATCHES "search space: every trainable shape \\(--all-trainable-shapes" "row #1 of each cell: the equally matched shape nearest")
# Issue 43: without --gpu the default is the portable set (head dims 64, 128, 256). The paper's
# 200M cell then misses KV by -25% (KV heads x head_dim steps of 64 against 6144 / (2 x 18) = 170.7
# a token), says so, and shows the best off the portable set beside it (1 x 168: -1.5625%, as
# --all-trainable-shapes matches) and a loop span that a native shape matches (the whole stack).
budget_cli_test(NAME match.portable_default ARGS --baseline ${BASE}
  STDOUT_MATCHES "search space: trainable shapes \\(the default\\): the portable set"
                 "the native shapes cannot reach: kv: -25\\.00%"
                 "best off the portable set \\(--all-trainable-shapes.*KV -1\\.56%.*6×168 \\(KV 1\\).*off the portable set"
                 "--loop 1-12 gives a native match of largest deviation 1\\.29%")
budget_cli_test(NAME match.portable_default_json ARGS --baseline ${BASE} --format json --top 1
  STDOUT_MATCHES "\"shapes\": \"portable\"" "\"best_off_portable\": {" "\"suggested_loop\": \"--loop 1-12\"")
# MLA: the portable set's KV latents (multiples of 128) miss DeepSeek-V3's looped KV by -16%; the
# trainable shapes' 320 matches it.
budget_cli_test(NAME match.portable_mla ARGS --baseline tests/data/hf/deepseek-v3.json --top 1
  STDOUT_MATCHES "the native shapes cannot reach: kv: -16\\.21%" "best off the portable set.*MLA 320\\+64")
# The grid without --gpu: every paper cell's row #1 misses KV by more than 3.9% on the portable set
# (their baselines' head dims 112 and 128 at 1.5x executed layers), and the footer says so; with a
# target (kernels.grid) or --all-trainable-shapes (grid.table) the cells match.
budget_cli_test(NAME grid.portable_default ARGS grid
  STDOUT_MATCHES "the portable set misses FLOPs, params, KV by more than 3\\.9% in 16 of 16 cells"
                 "search space: trainable shapes for the portable set")
budget_cli_test(NAME match.all_trainable_with_gpu ARGS --baseline ${BASE} --all-trainable-shapes --gpu h100-sxm
  EXPECT_EXIT 64 STDERR_MATCHES "--all-trainable-shapes applies without a kernel target")
budget_cli_test(NAME match.all_trainable_excludes_portable ARGS --baseline ${BASE} --all-trainable-shapes --portable-shapes
  EXPECT_EXIT 64 STDERR_MATCHES "excludes")
budget_cli_test(NAME grid.free_shapes_order ARGS grid --free-shapes --order tightest
  STDOUT_MATCHES "200M +looped +1680 +12/18 +20×84 \\(KV 2\\) +712" "search space: the whole lattice \\(--free-shapes"
                 "row #1 of each cell: the tightest equally matched")
budget_cli_test(NAME grid.free_shapes_json ARGS grid --free-shapes --format json
  STDOUT_MATCHES "\"shapes\": \"free\"" "\"order\": \"proportions\""
  STDOUT_NOT_MATCHES "\"shapes\": \"trainable\"")
budget_cli_test(NAME grid.bad_order ARGS grid --order widest EXPECT_EXIT 64 STDERR_MATCHES "widest")
# Ablations in one shape family (issue 30, item 6): the family held and why not, in the table and JSON.
budget_cli_test(NAME grid.ablation_family ARGS grid --ablation span --all-trainable-shapes
  STDOUT_MATCHES "family held" "span 0 .* reference" "span 6 .* KV heads" "KV heads 1 held at 6 of 6 points"
                 "head_dim follows the executed depth" "span 0 is the reference")
budget_cli_test(NAME grid.ablation_family_json ARGS grid --ablation depth --all-trainable-shapes --format json
  STDOUT_MATCHES "\"family\": {" "\"num_kv_heads\": 2" "\"holds_kv_heads\": false" "\"reference\": true"
                 "\"family_note\": \"2 KV heads: KV \\+3\\.12%")
budget_cli_test(NAME grid.ablation_constraints ARGS grid --ablation repeats --free-shapes
  STDOUT_MATCHES "KV heads fixed at 2 by the search space")
budget_cli_test(NAME grid.unknown_cell ARGS grid --ablation span --cell nope EXPECT_EXIT 2
  STDERR_MATCHES "--cell: no cell whose baseline is named \"nope\"")
budget_cli_test(NAME plan.table ARGS plan STDOUT_MATCHES "32 runs × 6 branches = 192 endpoints" "total compute of the grid")
budget_cli_test(NAME plan.csv ARGS plan --format csv STDOUT_MATCHES "^arch,cell,F,S,branch step,D,C")
budget_cli_test(NAME plan.recipe ARGS plan --recipe examples/recipes/paper-wsd.json --format json
  STDOUT_MATCHES "\"stable_steps\": 196075")
budget_cli_test(NAME match.explain ARGS --baseline ${BASE} --all-trainable-shapes --top 1 --explain
  STDOUT_MATCHES "Which constraint binds" "num_layers fixed at 12 +0\\.488%" "widths within 2× of the baseline's proportions")
budget_cli_test(NAME match.explain_json ARGS --baseline ${BASE} --top 1 --explain --format json
  STDOUT_MATCHES "\"sensitivity\":" "\"constraint\": \"head_dim multiple of 8\"")

# compare: the paper's hand-matched looped config against its baseline. By hand (docs/accounting.md):
# F 1,368,576,000 / 1,330,053,120 = 1.0290, N 3,888,809,760 / 3,872,226,560 = 1.0043, KV 6336/6144 = 1.03125.
budget_cli_test(NAME compare.paper_smelt
  ARGS compare examples/configs/paper-200M-S95-baseline.json examples/configs/paper-200M-S95-smelt.json
  STDOUT_MATCHES "3\\.12% +\\+2\\.90% +\\+0\\.43% +\\+3\\.12%")
budget_cli_test(NAME compare.json
  ARGS compare examples/configs/paper-200M-S95-baseline.json examples/configs/paper-200M-S95-smelt.json --format json
  STDOUT_MATCHES "\"schema_version\": 1" "\"kv\": 0\\.03125")
budget_cli_test(NAME compare.needs_two ARGS compare examples/configs/paper-200M-S95-baseline.json EXPECT_EXIT 64
  STDERR_MATCHES "configs")
# plan --data-template writes the fit's CSV schema; fit then asks for the losses, naming the line.
add_test(NAME cli.plan.data_template
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DOUT=${CMAKE_CURRENT_BINARY_DIR}/plan_template.csv
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/plan_template.cmake
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

# Rows best-first by the deviation shown (Mixtral-8x7B: before, #2 at 1.98% stood above #3 at 1.79%).
add_test(NAME cli.match.rows_best_first
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/rows_best_first.py $<TARGET_FILE:budget-match> ${PROJECT_SOURCE_DIR}
          --baseline examples/hf/mixtral-8x7b.json --free-shapes --order tightest)
budget_cli_test(NAME match.order_footer ARGS --baseline examples/hf/mixtral-8x7b.json --format json
  STDOUT_MATCHES "\"order\": \"proportions\"" "\"best_max_deviation\": " "\"weighted_objective\": ")
budget_cli_test(NAME match.order_footer_tightest ARGS --baseline examples/hf/mixtral-8x7b.json --format json --order tightest
  STDOUT_MATCHES "\"order\": \"shown_deviation\"")
budget_cli_test(NAME match.weighted_order ARGS --baseline ${BASE} --constraints tests/data/match/weighted.json --order tightest
  STDOUT_MATCHES "weighted objective [0-9.]+%" "first, by the weighted objective")
# --explain: a relaxation the search limits refused is "not searched", never "infeasible".
budget_cli_test(NAME match.explain_not_searched ARGS --baseline ${BASE} --top 1 --explain --max-structures 3000
  STDOUT_MATCHES "num_layers fixed at 12 +not searched +over the search limit \\(raise --max-structures\\)"
  STDOUT_NOT_MATCHES "num_layers fixed at 12 +infeasible")
# --count-lm-head: F with the LM head matched, both figures shown (Qwen3-30B-A3B: vocabulary 151,936).
budget_cli_test(NAME match.count_lm_head ARGS --baseline tests/data/hf/qwen3-30b-a3b.json --count-lm-head
  STDOUT_MATCHES "FLOPs w/o head" "training FLOPs per token with the LM head \\(--count-lm-head\\)"
                 "\\(F with the LM head\\)")
budget_cli_test(NAME match.lm_head_shown ARGS --baseline tests/data/hf/qwen3-30b-a3b.json
  STDOUT_MATCHES "FLOPs w/ head" "training FLOPs per token without the LM head")
# Without a vocabulary (the paper's configs) there is no LM head: no second FLOPs column, no line.
budget_cli_test(NAME match.no_lm_head_no_column ARGS --baseline ${BASE}
  STDOUT_MATCHES "max dev +FLOPs +params +KV +layers"
  STDOUT_NOT_MATCHES "w/ head" "LM head")
budget_cli_test(NAME match.count_lm_head_json ARGS --baseline tests/data/hf/qwen3-30b-a3b.json --count-lm-head --format json
  STDOUT_MATCHES "\"lm_head_in_flops\": true" "\"flops_with_lm_head\": " "\"flops_without_lm_head\": "
                 "\"training_flops_per_token_with_lm_head\": ")
budget_cli_test(NAME match.count_lm_head_no_vocab ARGS --baseline ${BASE} --count-lm-head EXPECT_EXIT 2
  STDERR_MATCHES "/count_lm_head: .*vocab_size 0")
