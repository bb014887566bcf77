# Issue 44 §5: the rough edges a new user meets, as a user meets them.
set(rough_base examples/configs/paper-200M-S95-baseline.json)
# A file of one kind passed where another is read says what it is and where it goes (before: the
# reader's list of allowed keys).
budget_cli_test(NAME rough_edges.cluster_file_as_calibration
  ARGS report ${rough_base} --calibration examples/clusters/h200.json EXPECT_EXIT 2
  STDERR_MATCHES [=[/schema: this is a cluster file \(schema "budget.cluster", docs/cluster.md\), not a calibration profile: pass it with --cluster]=])
budget_cli_test(NAME rough_edges.calibration_file_as_cluster
  ARGS layout ${rough_base} --cluster cuda_profiler/profiles/h200-published.json --gpus 8 EXPECT_EXIT 2
  STDERR_MATCHES [=[/schema: this is a calibration profile .*, not a cluster file: pass it with --calibration]=])
# This year's families export to Hugging Face in their own config schema (the file as the template;
# before: refused by every target), their matches too; the other targets say why per kind.
budget_cli_test(NAME rough_edges.export_hf_gpt_oss ARGS export tests/data/hf/gpt-oss-20b.json --to hf
  STDOUT_MATCHES [=["model_type": "gpt_oss"]=] [=["layer_types": \[]=])
budget_cli_test(NAME rough_edges.export_hf_llama4 ARGS export tests/data/hf/llama-4-scout-17b-16e-instruct.json --to hf
  STDOUT_MATCHES [=["model_type": "llama4_text"]=] [=["attention_chunk_size": 8192]=])
budget_cli_test(NAME rough_edges.export_hf_qwen3_next ARGS export tests/data/hf/qwen3-next-80b-a3b-thinking.json --to hf
  STDOUT_MATCHES [=["model_type": "qwen3_next"]=] [=["linear_num_value_heads": 32]=])
# A match of each written as its family's config.json reads back with the matched budgets.
set(rough_out "${CMAKE_CURRENT_BINARY_DIR}/rough_edges_out")
file(MAKE_DIRECTORY "${rough_out}")
foreach(family gpt-oss-20b llama-4-scout-17b-16e-instruct qwen3-next-80b-a3b-thinking)
  add_test(NAME cli.rough_edges.match_${family}_out_hf
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DBASE=${PROJECT_SOURCE_DIR}/tests/data/hf/${family}.json
            -DOUT=${rough_out}/${family}.matched.hf.json "-DEXTRA=--out-format\\;hf" -DKEEPS=model_type
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/out_roundtrip.cmake)
endforeach()
budget_cli_test(NAME rough_edges.export_llama4_megatron_reason
  ARGS export tests/data/hf/llama-4-scout-17b-16e-instruct.json --to megatron EXPECT_EXIT 2
  STDERR_MATCHES [=[chunked attention \(/attention/chunk_size: no argument: Megatron-LM d98e8a64 has sliding windows \(--window-size A:2384\) but no chunked attention\)]=])
# grid --plot: the 16 x labels read without overlapping (shortened, upright; before: the full names
# slanted by 35 degrees, crowded).
find_program(BUDGET_GNUPLOT_FOR_LABELS gnuplot)
if(BUDGET_GNUPLOT_FOR_LABELS)
  add_test(NAME cli.rough_edges.grid_plot_labels
    COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/plot_labels.py $<TARGET_FILE:budget-match> ${rough_out})
endif()
# The default headroom (4 GiB, budget::default_min_headroom_gib; before: 0): a layout leaving 2.36 GiB
# on its fullest H100 does not fit by default, fits with --min-headroom 0, and the search says the
# margin and why in its last line.
set(rough_fixed layout ${rough_base} --cluster examples/clusters/h100-sxm.json --gpus 8 --micro-batch-size 4 --micro-batches 32)
budget_cli_test(NAME rough_edges.default_headroom_fixed_layout ARGS ${rough_fixed} EXPECT_EXIT 3
  STDOUT_MATCHES [=[leaves 2[.]36 GiB, less than the 4[.]00 GiB of --min-headroom]=])
budget_cli_test(NAME rough_edges.min_headroom_zero_fits ARGS ${rough_fixed} --min-headroom 0
  STDOUT_MATCHES [=[fits: peak 76[.]29 GiB on stage 0, headroom 2[.]36 GiB]=])
budget_cli_test(NAME rough_edges.default_headroom_search_footer
  ARGS layout ${rough_base} --cluster examples/clusters/h100-sxm.json --gpus 8 --top 3 --quiet
  STDOUT_MATCHES [=[fit with 4[.]00 GiB of headroom]=]
                 [=[headroom: a layout fits when it leaves at least 4 GiB free on its fullest GPU \(--min-headroom; the default 4 GiB is the median slack of PyTorch's caching allocator]=])
budget_cli_test(NAME rough_edges.default_headroom_ranking_footer
  ARGS --baseline ${rough_base} --cluster examples/clusters/h200.json --gpus 8 --top 2 --rank-by time --quiet
  STDOUT_MATCHES [=[headroom: a layout fits when it leaves at least 4 GiB free on its fullest GPU \(--min-headroom;]=])
budget_cli_test(NAME rough_edges.default_headroom_ranking_json
  ARGS --baseline ${rough_base} --cluster examples/clusters/h200.json --gpus 8 --top 2 --rank-by time --quiet --format json
  STDOUT_MATCHES [=["min_headroom_bytes": 4294967296[.]0]=])
