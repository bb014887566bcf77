# budget-match export and --out-format: as a user runs them (working directory: the repo root).
set(BASE examples/configs/paper-200M-S95-baseline.json)
set(export_out "${CMAKE_CURRENT_BINARY_DIR}/export_out")
file(MAKE_DIRECTORY "${export_out}")

budget_cli_test(NAME export.megatron_baseline ARGS export ${BASE} --to megatron
  STDOUT_MATCHES "\nMODEL_ARGS=[(]\n  --num-layers 12\n  --hidden-size 1280\n  --ffn-hidden-size 432\n"
                 "  --seq-length 4096\n  --max-position-embeddings 4096\n"
                 "  --moe-ffn-hidden-size 432\n  --moe-router-score-function softmax\n[)]\n$"
                 "# Target: NVIDIA/Megatron-LM d98e8a64"
  STDERR_MATCHES "note: megatron export: vocab_size is 0")
budget_cli_test(NAME export.megatron_loop_stated ARGS export examples/configs/paper-200M-S95-smelt.json --to megatron
  STDOUT_MATCHES "# NOT EXPRESSED: the loop [(]layers 4-9 run 2 times"
  STDERR_MATCHES "note: megatron export: the loop")
budget_cli_test(NAME export.megatron_workload_seq_len
  ARGS export examples/configs/paper-200M-S95-smelt.json --to megatron --workload tests/data/export/workload-8k.json
  STDOUT_MATCHES "  --seq-length 8192\n  --max-position-embeddings 8192\n")
# The documented recipe: source the file, "${MODEL_ARGS[@]}" is the argv Megatron gets.
add_test(NAME cli.export.megatron_paste_recipe
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/megatron_paste.sh $<TARGET_FILE:budget-match> ${PROJECT_SOURCE_DIR}
          ${export_out}/megatron-paste)
# torchtitan modules, built against a shape-only stand-in of torchtitan's constructors, describe
# exactly budget's parameter count (tests/cli/torchtitan_params.py).
add_test(NAME cli.export.torchtitan_params
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cli/torchtitan_params.py $<TARGET_FILE:budget-match> ${PROJECT_SOURCE_DIR}
          ${export_out}/torchtitan-params)
# torchtitan modules compile (python3 -m py_compile).
add_test(NAME cli.export.torchtitan_py_compile
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/torchtitan_compile.sh $<TARGET_FILE:budget-match> ${PROJECT_SOURCE_DIR}
          ${export_out}/torchtitan)
budget_cli_test(NAME export.hf_keeps_keys ARGS export examples/hf/mixtral-8x7b.json --to HF
  STDOUT_MATCHES "\"rope_theta\": 1000000[.]0" "\"num_local_experts\": 8")
budget_cli_test(NAME export.torchtitan ARGS export examples/configs/paper-200M-S95-smelt.json --to torchtitan
  STDOUT_MATCHES "# Target: pytorch/torchtitan b5bcd76c" "\nMOE_HIDDEN_DIM = 352\n"
                 "\ndef budget_config[(]attn_backend: str = \"flex\", moe_comm_backend: str = \"standard\"[)]")
# export --template: a native config written into a Hugging Face file's keys (a multimodal wrapper
# too: its text_config takes the shapes).
budget_cli_test(NAME export.hf_template_option
  ARGS export tests/data/export/mistral-small-text.json --to hf --template tests/data/hf/mistral-small-3.1-24b.json
  STDOUT_MATCHES "\"vision_config\": [{]" "\"text_config\": [{]" "\"hidden_size\": 5056")
budget_cli_test(NAME export.hf_template_not_hf
  ARGS export ${BASE} --to hf --template ${BASE} EXPECT_EXIT 2
  STDERR_MATCHES "--template: the file is a native config, not a Hugging Face config.json")
budget_cli_test(NAME export.bad_target ARGS export ${BASE} --to onnx EXPECT_EXIT 64
  STDERR_MATCHES "allowed: native, hf, megatron, torchtitan")
budget_cli_test(NAME export.unexpressible ARGS export tests/data/hf/olmoe-1b-7b-0924.json --to torchtitan EXPECT_EXIT 2
  STDERR_MATCHES "/attention/qk_norm: q/k norms over the whole query/KV width [(]full[)] cannot be expressed")
budget_cli_test(NAME export.torchtitan_deepseek_v3 ARGS export tests/data/hf/deepseek-v3.json --to torchtitan
  STDOUT_MATCHES "# Target: pytorch/torchtitan b5bcd76c [(]torchtitan/models/deepseek_v3" "\nQ_LORA_RANK = 1536\n"
                 "scaling=\"yarn\", rope_factor=40[.]0")
budget_cli_test(NAME export.to_file ARGS export ${BASE} --to native --out "${export_out}/native.json")

# --baseline ... --out FILE --out-format hf: the written HF config reads back with the matched budgets.
add_test(NAME cli.match.out_format_hf_roundtrip
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DBASE=${PROJECT_SOURCE_DIR}/${BASE}
          -DOUT=${export_out}/matched.hf.json "-DEXTRA=--out-format\\;hf"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/out_roundtrip.cmake)
add_test(NAME cli.match.out_format_hf_from_hf_baseline
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DBASE=${PROJECT_SOURCE_DIR}/examples/hf/qwen1.5-moe-a2.7b.json
          -DOUT=${export_out}/qwen-matched.hf.json "-DEXTRA=--out-format\\;hf" -DKEEPS=rope_theta
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/out_roundtrip.cmake)
# --out-format megatron: the exact argument list of the matched 200M config.
add_test(NAME cli.match.out_format_megatron
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DBASE=${PROJECT_SOURCE_DIR}/${BASE}
          -DOUT=${export_out}/matched.megatron.txt
          -DEXPECTED=${CMAKE_CURRENT_SOURCE_DIR}/data/export/paper-200M-S95-matched.megatron.txt
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/out_megatron.cmake)

# The layout search's uneven pipeline (DeepSeek-V3's 61 layers on 1,024 H200s) through Megatron's
# arguments and back: the same split, the same step time.
add_test(NAME cli.cluster.uneven_pipeline_search_roundtrip
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DCFG=${PROJECT_SOURCE_DIR}/tests/data/hf/deepseek-v3.json
          -DCLUSTER=${PROJECT_SOURCE_DIR}/examples/clusters/h200.json -DNODES=128 -DGPUS=1024
          -DOUT=${export_out}/deepseek-v3-uneven.megatron.sh
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/uneven_search_roundtrip.cmake)

# --plot of fit, frontier, grid: files produced (SVG and PNG) where gnuplot is installed; without
# it, the message says how to get it.
find_program(BUDGET_GNUPLOT gnuplot)
set(fit_data tests/data/chinchilla_epoch.csv)
function(budget_plot_test name plot)
  set(args ${ARGN})
  if(BUDGET_GNUPLOT)
    string(REPLACE ";" "\\;" args_escaped "${args}")
    add_test(NAME cli.plot.${name}
      COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> "-DARGS=${args_escaped}" -DPLOT=${plot}
              -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/plot_file.cmake
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  else()
    budget_cli_test(NAME plot.${name} ARGS ${args} EXPECT_EXIT 2
      STDERR_MATCHES "gnuplot is not on PATH; install the Debian package gnuplot-nox")
  endif()
endfunction()
budget_plot_test(grid_svg "${export_out}/grid.svg" grid --plot "${export_out}/grid.svg")
budget_plot_test(grid_png "${export_out}/grid.png" grid --plot "${export_out}/grid.png" --format csv)
budget_plot_test(fit_svg "${export_out}/fit.svg" fit ${fit_data} --plot "${export_out}/fit.svg")
# Issue 30, item 6: an ablation's deviations (%) and time ratios on separate axes.
if(BUDGET_GNUPLOT)
  add_test(NAME cli.plot.ablation_two_axes
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match>
            "-DARGS=grid\;--ablation\;span\;--calibration\;cuda_profiler/profiles/h200-torch-eager.json\;--plot\;${export_out}/ablation.svg"
            -DPLOT=${export_out}/ablation.svg
            "-DSVG_CONTAINS=deviation (%)\;predicted time ratio at matched work (x)"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/plot_file.cmake
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
endif()
budget_plot_test(frontier_png "${export_out}/frontier.png"
  frontier examples/scaling/looped.json --C 1e20,1e21 --S 0.85 --plot "${export_out}/frontier.png")
budget_cli_test(NAME plot.bad_extension ARGS grid --plot "${export_out}/grid.pdf" EXPECT_EXIT 2
  STDERR_MATCHES "--plot: value .*grid[.]pdf\" has no plot extension; allowed: a file ending in [.]svg or [.]png")
add_test(NAME cli.plot.grid_without_gnuplot
  COMMAND ${CMAKE_COMMAND} -E env PATH=/nonexistent
    $<TARGET_FILE:budget-match> grid --plot "${export_out}/unused.svg"
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
set_tests_properties(cli.plot.grid_without_gnuplot PROPERTIES
  PASS_REGULAR_EXPRESSION "--plot: gnuplot is not on PATH; install the Debian package gnuplot-nox")
budget_cli_test(NAME export.out_format_needs_out ARGS --baseline ${BASE} --out-format hf EXPECT_EXIT 64
  STDERR_MATCHES "--out-format requires --out")
budget_cli_test(NAME export.help ARGS export --help STDOUT_MATCHES "--to" "native\\|hf\\|megatron\\|torchtitan")
# grid --plot with a calibration: the time ratio is a fourth bar series.
budget_plot_test(grid_time_svg "${export_out}/grid-time.svg"
  grid --calibration cuda_profiler/profiles/h200-torch-eager.json --plot "${export_out}/grid-time.svg")
# An ablation plots one bar group per point (with the time ratio when calibrated).
budget_plot_test(ablation_svg "${export_out}/ablation.svg" grid --ablation span --plot "${export_out}/ablation.svg")
budget_plot_test(ablation_time_png "${export_out}/ablation-time.png" grid --ablation depth
  --calibration cuda_profiler/profiles/h200-torch-eager.json --plot "${export_out}/ablation-time.png" --format json)
# A plotter that fails half-way (a fake gnuplot writing a partial file, then exit 1): the old
# plot is kept byte for byte, no temporary file is left, exit 2 naming the plot.
add_test(NAME cli.plot.failed_plot_keeps_old_file
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:budget-match> -DWORK=${export_out}/failing-plotter
          -DMODE=failing -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/plot_kept_on_failure.cmake
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
# A bad --plot is refused before the work: a 4×4 grid is not matched first.
budget_cli_test(NAME plot.refused_before_work ARGS fit tests/data/does-not-exist.csv --plot "${export_out}/x.jpg"
  EXPECT_EXIT 2 STDERR_MATCHES "--plot: value .*x[.]jpg\" has no plot extension")
