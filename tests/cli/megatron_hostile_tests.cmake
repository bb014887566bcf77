# Hostile Megatron-LM inputs (issue 44 §1 and §4, docs/reliability.md): argument files, run files
# and logs whose sizes multiply past 64 bits (was SIGFPE, exit 136), numbers of 50,000 digits and
# --moe-layer-freq nested 100,000 deep (was SIGSEGV, exit 139), + lists of 2^20 entries (was about
# 8 GB), out-of-range doubles (was "internal error: stod"), integers as Python's int() reads them,
# and stage-layer counts Megatron refuses. Every refusal: exit 2 and one line naming the file, the
# argument and the value. Inputs are written at configure time under ${hostile_out}.

set(hostile_out "${CMAKE_CURRENT_BINARY_DIR}/megatron_hostile")
file(MAKE_DIRECTORY "${hostile_out}")
set(hostile_base examples/configs/paper-200M-S95-baseline.json)  # 12 layers, every one MoE
set(hostile_h200 examples/clusters/h200.json)

# budget_hostile_args_test(NAME n TEXT words EXPECT_EXIT rc MATCHES re...): `layout` of the paper
# baseline on 8 H200s with --megatron-args holding TEXT.
function(budget_hostile_args_test)
  cmake_parse_arguments(T "" "NAME;TEXT;EXPECT_EXIT" "MATCHES" ${ARGN})
  file(WRITE "${hostile_out}/${T_NAME}.args" "${T_TEXT}\n")
  set(stream STDERR_MATCHES)
  if(T_EXPECT_EXIT EQUAL 0)
    set(stream STDOUT_MATCHES)
  endif()
  budget_cli_test(NAME megatron_hostile.${T_NAME}
    ARGS layout ${hostile_base} --cluster ${hostile_h200} --gpus 8 --megatron-args "${hostile_out}/${T_NAME}.args"
    EXPECT_EXIT ${T_EXPECT_EXIT} ${stream} ${T_MATCHES})
endfunction()

# --- products of sizes: checked, never a wrapped divisor -------------------------------------------
budget_hostile_args_test(NAME tp_cp_overflow EXPECT_EXIT 2
  TEXT "--seq-length 4096 --tensor-model-parallel-size 4294967296 --context-parallel-size 4294967296"
  MATCHES [=[tp_cp_overflow\.args: TP x CP = 4294967296 \* 4294967296 is outside the 64-bit integer range]=])
budget_hostile_args_test(NAME pp_virtual_overflow EXPECT_EXIT 2
  TEXT "--seq-length 4096 --pipeline-model-parallel-size 4294967296 --num-layers-per-virtual-pipeline-stage 4294967296"
  MATCHES [=[PP x --num-layers-per-virtual-pipeline-stage = 4294967296 \* 4294967296 is outside]=])
# MBS·DP = 2^59 · 32 = 2^64 on 32 GPUs (the default GBS, MBS·DP, wrapped to 0 and divided by 0).
file(WRITE "${hostile_out}/mbs_dp_overflow.args" "--seq-length 4096 --micro-batch-size 576460752303423488\n")
budget_cli_test(NAME megatron_hostile.mbs_dp_overflow
  ARGS layout ${hostile_base} --cluster ${hostile_h200} --nodes 4 --gpus 32
    --megatron-args "${hostile_out}/mbs_dp_overflow.args"
  EXPECT_EXIT 2 STDERR_MATCHES [=[--micro-batch-size x DP = 576460752303423488 \* 32 is outside the 64-bit integer range]=])
# The same through a run file's megatron_args (calibrate --from-runs): the first run of
# tests/data/runs/megatron_args_runs.jsonl with TP = CP = 2^32.
budget_cli_test(NAME megatron_hostile.run_file_tp_cp_overflow
  ARGS calibrate --profile cuda_profiler/profiles/b200-published.json --from-runs tests/data/megatron_hostile/tp_cp_overflow_runs.jsonl
  EXPECT_EXIT 2 STDERR_MATCHES [=[megatron_args: TP x CP = 4294967296 \* 4294967296 is outside the 64-bit integer range]=])

# --- numbers of any length, without std::regex ------------------------------------------------------
string(REPEAT "1" 50000 digits_50k)
budget_hostile_args_test(NAME float_50k_digits EXPECT_EXIT 2
  TEXT "--seq-length 4096 --hidden-dropout ${digits_50k}"
  MATCHES [=[--hidden-dropout: "1111.* is outside the range of a double]=])
budget_hostile_args_test(NAME negative_word_50k_digits EXPECT_EXIT 2
  TEXT "--seq-length 4096 --hidden-dropout -${digits_50k}"
  MATCHES [=[--hidden-dropout: "-1111.* is outside the range of a double]=])
budget_hostile_args_test(NAME int_50k_digits EXPECT_EXIT 2
  TEXT "--seq-length ${digits_50k}"
  MATCHES [=[--seq-length: "1111.* has more than 4300 digits, which Python's int\(\) refuses]=])
budget_hostile_args_test(NAME float_out_of_range EXPECT_EXIT 2
  TEXT "--seq-length 4096 --hidden-dropout 1e400"
  MATCHES [=[--hidden-dropout: "1e400" is outside the range of a double]=])
budget_hostile_args_test(NAME float_underflow_is_zero EXPECT_EXIT 0
  TEXT "--seq-length 4096 --hidden-dropout 1e-400 --attention-dropout 0"
  MATCHES [=[modelled: .*--hidden-dropout]=])
# Integers as Python's int() reads them: spaces around, '_' between digits; 20 digits kept for a
# flag not modelled (listed as such), refused by name for a modelled one.
budget_hostile_args_test(NAME int_python_forms EXPECT_EXIT 0
  TEXT "--seq-length ' 4_096 ' --micro-batch-size 1_0 --global-batch-size 80 --seed 12345678901234567890"
  MATCHES [=[1 micro-batch of 10 sequences of 4096 tokens]=] [=[not modelled \(change nothing here\): --seed]=])
budget_hostile_args_test(NAME int_past_64_bits EXPECT_EXIT 2
  TEXT "--seq-length 12345678901234567890"
  MATCHES [=[--seq-length: "12345678901234567890" is outside the 64-bit integer range this tool reads]=])
# A log's elapsed-time field of 50,000 digits (calibrate --from-runs with a megatron_log).
file(READ ${PROJECT_SOURCE_DIR}/tests/data/runs/deepseekv2_ep8_mbc4.log hostile_log)
string(REPLACE "elapsed time per iteration (ms): 372.9 " "elapsed time per iteration (ms): ${digits_50k} "
  hostile_log "${hostile_log}")
file(WRITE "${hostile_out}/deepseekv2_ep8_mbc4.log" "${hostile_log}")
file(COPY ${PROJECT_SOURCE_DIR}/tests/data/runs/log_runs.jsonl DESTINATION "${hostile_out}")
budget_cli_test(NAME megatron_hostile.log_elapsed_50k_digits
  ARGS calibrate --profile cuda_profiler/profiles/b200-published.json --from-runs "${hostile_out}/log_runs.jsonl"
  EXPECT_EXIT 2 STDERR_MATCHES [=[deepseekv2_ep8_mbc4\.log: line [0-9]+: elapsed time per iteration \(ms\): "1111]=])

# --- --moe-layer-freq: depth-bounded, lists bounded by the layers before they are built -------------
string(REPEAT "(" 100000 open_100k)
string(REPEAT ")" 100000 close_100k)
budget_hostile_args_test(NAME moe_freq_nested_100k EXPECT_EXIT 2
  TEXT "--seq-length 4096 --moe-layer-freq '${open_100k}[1]*12${close_100k}'"
  MATCHES [=[--moe-layer-freq: ".*brackets and parentheses nested deeper than 200]=])
set(huge_sum "[1]*1048576")
foreach(i RANGE 850)
  string(APPEND huge_sum "+[1]*1048576")
endforeach()
budget_hostile_args_test(NAME moe_freq_huge_sum EXPECT_EXIT 2
  TEXT "--seq-length 4096 --moe-layer-freq '${huge_sum}'"
  MATCHES [=[--moe-layer-freq: ".*" has more than 12 entries; the config has 12 layers]=])
budget_hostile_args_test(NAME moe_freq_pattern EXPECT_EXIT 0
  TEXT "--seq-length 4096 --moe-layer-freq '([1]*3)*4'"
  MATCHES [=[fits: peak]=])

# --- stage-layer counts Megatron refuses (transformer_config.py:2303, "must be larger than 0") ------
budget_hostile_args_test(NAME first_stage_minus_one EXPECT_EXIT 2
  TEXT "--seq-length 4096 --pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers -1"
  MATCHES [=[--decoder-first-pipeline-num-layers: -1 is not above 0]=])
budget_hostile_args_test(NAME last_stage_minus_one EXPECT_EXIT 2
  TEXT "--seq-length 4096 --pipeline-model-parallel-size 2 --decoder-last-pipeline-num-layers -1"
  MATCHES [=[--decoder-last-pipeline-num-layers: -1 is not above 0]=])

# --- the matcher's --loop range, read without std::regex (50,000 digits: SIGSEGV before) ----------
budget_cli_test(NAME megatron_hostile.loop_range_50k_digits
  ARGS --baseline ${hostile_base} --loop "${digits_50k}-2"
  EXPECT_EXIT 2 STDERR_MATCHES [=[--loop: layer 1111.*\(50000 bytes in all\) in ".*" is out of range; allowed: layers 1 to]=])
budget_cli_test(NAME megatron_hostile.loop_range_spaces
  ARGS --baseline ${hostile_base} --loop " 4 : 9 " --top 1
  STDOUT_MATCHES [=[loop: layers 4–9 ×2]=])
