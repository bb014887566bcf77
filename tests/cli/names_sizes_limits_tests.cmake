# CLI regression tests of names, sizes and limits (the fourth audit, issue 33, docs/reliability.md):
# names from data never become code in an export nor reach a terminal raw, products of sizes never
# wrap, every search obeys --max-seconds, bounded plausible inputs, and the rough edges a new user
# hits.
# Working directory: the repository root; scratch directories under ${limits_out}.

set(limits_out "${CMAKE_CURRENT_BINARY_DIR}/names_sizes_limits_cli")
set(limits_data "${PROJECT_SOURCE_DIR}/tests/data/security")
set(limits_profile cuda_profiler/profiles/h200-torch-eager.json)
set(limits_base examples/configs/paper-200M-S95-baseline.json)
set(limits_h200 examples/clusters/h200.json)

# budget_source_export_test(NAME n KIND megatron|python OUT file ARGS ... [HEADER_MATCHES re]): runs
# the export into a fresh ${limits_out}/<n>, then sources (bash) or parses (python ast) it there;
# nothing but OUT may exist afterwards (tests/cli/source_export.cmake).
function(budget_source_export_test)
  cmake_parse_arguments(T "" "NAME;KIND;OUT;HEADER_MATCHES" "ARGS" ${ARGN})
  string(REPLACE ";" "\\;" args_escaped "${T_ARGS}")
  set(header_arg)
  if(DEFINED T_HEADER_MATCHES)
    set(header_arg "-DHEADER_MATCHES=${T_HEADER_MATCHES}")
  endif()
  add_test(NAME "cli.names_sizes_limits.${T_NAME}"
    COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:budget-match>" "-DARGS=${args_escaped}"
      "-DWORK=${limits_out}/${T_NAME}" "-DKIND=${T_KIND}" "-DOUT=${T_OUT}" ${header_arg}
      -P "${CMAKE_CURRENT_SOURCE_DIR}/cli/source_export.cmake")
  set_tests_properties("cli.names_sizes_limits.${T_NAME}" PROPERTIES TIMEOUT 120)
endfunction()

# --- critical: a newline in a name is never code in an export (the file is `source`d) ------------
budget_source_export_test(NAME megatron_name_newline KIND megatron OUT args.sh
  ARGS export "${limits_data}/name_newline.json" --to megatron --out "%WORK%/args.sh"
  HEADER_MATCHES "^# Megatron-LM model arguments for evil\\\\ntouch pwned_megatron_name\\\\n# [(]budget-match")
budget_source_export_test(NAME megatron_hf_name_or_path_newline KIND megatron OUT args.sh
  ARGS export "${limits_data}/hf_name_newline.json" --to megatron --out "%WORK%/args.sh"
  HEADER_MATCHES "^# Megatron-LM model arguments for meta-llama/x\\\\ntouch pwned_megatron_hf\\\\n#")
budget_source_export_test(NAME megatron_matched_name_newline KIND megatron OUT args.sh
  ARGS --baseline "${limits_data}/name_newline.json" --out "%WORK%/args.sh" --out-format megatron --quiet
  HEADER_MATCHES "^# Megatron-LM model arguments for evil\\\\ntouch pwned_megatron_name\\\\n#")
budget_source_export_test(NAME torchtitan_name_newline KIND python OUT budget_config.py
  ARGS export "${limits_data}/name_newline.json" --to torchtitan --out "%WORK%/budget_config.py"
  HEADER_MATCHES "^# torchtitan model config for evil\\\\ntouch pwned_megatron_name\\\\n#")
budget_source_export_test(NAME torch_name_newline KIND python OUT model.py
  ARGS export "${limits_data}/name_newline.json" --to torch --out "%WORK%/model.py"
  HEADER_MATCHES "module of \"evil\\\\ntouch pwned_megatron_name\\\\n#\"")

# --- signal deaths and wrapped numbers: refused with the quantity named ------------------------------
# b · s · DP = 4 · 2^50 · 2^12 wrapped to 0, then `global % 0`: SIGFPE (exit 136) before.
budget_cli_test(NAME names_sizes_limits.search_seq_len_refused
  ARGS layout ${limits_base} --cluster ${limits_h200} --nodes 512 --gpus 4096 --seq-len 1125899906842624
       --global-batch-tokens 1125899906842624 --profile ${limits_profile}
  EXPECT_EXIT 2 STDERR_MATCHES "--seq-len: seq_len = 1125899906842624 is not in [[]1, 2\\^32[]]")
budget_cli_test(NAME names_sizes_limits.search_huge_products_no_sigfpe
  ARGS layout ${limits_base} --cluster ${limits_h200} --nodes 512 --gpus 4096 --seq-len 4294967296
       --global-batch-tokens 1125899906842624 --profile ${limits_profile} --quiet --min-headroom 0
  EXPECT_EXIT 3 STDOUT_MATCHES "no layout fits: none of the [0-9]+ valid layouts leaves room" TIMEOUT 240)
# Tokens a step 2^20 · 2^32 · 2^20 · 32 wrapped to -2^63 ("-4454 tokens/s per GPU, MFU -57.3%, fits").
budget_cli_test(NAME names_sizes_limits.tokens_per_step_overflow
  ARGS layout ${limits_base} --cluster ${limits_h200} --nodes 4 --micro-batch-size 1048576 --micro-batches 1048576
       --seq-len 4294967296 --dp 32 --profile ${limits_profile}
  EXPECT_EXIT 2 STDERR_MATCHES "layout: a step of micro_batch_size x seq_len x micro_batches x DP = 1048576 x 4294967296 x 1048576 x 32 tokens is more than the 2\\^50")
budget_cli_test(NAME names_sizes_limits.vocab_divisible_by_overflow
  ARGS layout ${limits_data}/vocab_32000.json --cluster ${limits_h200} --micro-batch-size 1 --micro-batches 1
       --vocab-divisible-by 9223372036854775807
  EXPECT_EXIT 2 STDERR_MATCHES "vocab_divisible_by = 9223372036854775807 is above 1048576")

# --- bounded work: a linear memory pass, the time limit and progress in every search ----------------
# One fixed layout of 1,000,000 layers: the memory pass searched a stage's stored layers once per
# layer (quadratic: 18 s for 524,288 layers, about 70 s for 10^6); now well under a second of CPU.
budget_cli_test(NAME names_sizes_limits.memory_million_layers
  ARGS layout ${limits_data}/deep_1m_layers.json --cluster ${limits_h200} --micro-batch-size 1 --micro-batches 1
       --seq-len 128
  EXPECT_EXIT 3 STDOUT_MATCHES "\n0 +1-1000000 +1000000 +1 " TIMEOUT 30)
# The layout search of 10^6 layers stops at --max-seconds (before: it ignored the limit), with a
# progress line off a terminal after 2 s (each layout of 10^6 layers takes a fraction of a second).
budget_cli_test(NAME names_sizes_limits.search_max_seconds
  ARGS layout ${limits_data}/deep_1m_layers.json --cluster ${limits_h200} --gpus 8 --profile ${limits_profile}
       --max-seconds 5
  EXPECT_EXIT 2
  STDERR_MATCHES "budget-match: layout search [(]valid layouts of the space[)]: [0-9]+\n"
                 "error: layout search [(]valid layouts of the space[)]: time limit: stopped after [0-9]+ s, the time limit of 5 s"
  TIMEOUT 90)
# The datasheet-only H200 (no profile): the smallest-layout search alone meets the limit (with the
# example's profile, issue 32, the million-layer step time is predicted first and spends it).
budget_cli_test(NAME names_sizes_limits.smallest_layout_max_seconds
  ARGS report ${limits_data}/deep_1m_layers.json --cluster ${PROJECT_SOURCE_DIR}/tests/data/clusters/h200-datasheet-only.json
    --max-seconds 2
  EXPECT_EXIT 2
  STDERR_MATCHES "error: smallest layout [(][^)]+[)]: time limit: stopped after [0-9]+ s, the time limit of 2 s, at [0-9]+ of [0-9]+"
  TIMEOUT 60)

# --- implausible layer rows refused as op rows are ------------------------------------------------------
budget_cli_test(NAME names_sizes_limits.layer_row_tiny
  ARGS calibrate --profile ${limits_profile} --layers ${limits_data}/layer_row_1e-300.jsonl --out ${limits_out}/never.json
  EXPECT_EXIT 2 STDERR_MATCHES "layer_row_1e-300[.]jsonl: line 1/layer_ms: value 1e-300 is out of range; allowed: a number in [[]1e-06, 1000000000[]]")
budget_cli_test(NAME names_sizes_limits.layer_row_denormal
  ARGS calibrate --profile ${limits_profile} --layers ${limits_data}/layer_row_denormal.jsonl --out ${limits_out}/never.json
  EXPECT_EXIT 2 STDERR_MATCHES "line 1/layer_ms: value 5e-324 is out of range")

# --- names from data: printable on a terminal, refused where a device name must be printable --------
budget_cli_test(NAME names_sizes_limits.config_name_escaped
  ARGS report ${limits_data}/name_escape.json
  STDOUT_MATCHES "^evil\\\\x1b[[]2J\\\\x1b[]]0;owned\\\\x07name: H 1280")
budget_cli_test(NAME names_sizes_limits.config_name_escaped_in_tables
  ARGS layout ${limits_data}/name_escape.json --cluster ${limits_h200} --gpus 8 --profile ${limits_profile} --top 1
  STDOUT_MATCHES "^evil\\\\x1b[[]2J\\\\x1b[]]0;owned\\\\x07name on 8 of 8 GPUs")
budget_cli_test(NAME names_sizes_limits.cluster_gpu_name_escape
  ARGS layout ${limits_base} --cluster ${limits_data}/cluster_gpu_escape.json --gpus 8 --profile ${limits_profile}
  EXPECT_EXIT 2 STDERR_MATCHES "cluster_gpu_escape[.]json: /gpu/name: the device name \"NVIDIA H200\\\\x1b[[]2J\\\\x1b[]]0;owned\\\\x07\" holds control characters")
budget_cli_test(NAME names_sizes_limits.json_bytes_after_nul
  ARGS report ${limits_data}/trailing_after_nul.json
  EXPECT_EXIT 2 STDERR_MATCHES "trailing_after_nul[.]json: not valid JSON: a NUL byte at line 2, column 1")

# --- messages that name the cause ------------------------------------------------------------------
# Before: "no layout of the baseline ... fits 7 GPUs" (none was valid: the batch does not divide).
# Since the search tries uneven pipelines, 7 GPUs run the 12 layers as PP 7 (1 + 5·2 + 1); on 49 =
# 7·7 GPUs (TP and CP powers of two: 1; PP 1 or 7) DP is 49 or 7, and neither divides 2^22 tokens.
budget_cli_test(NAME names_sizes_limits.ranking_49_gpus
  ARGS --baseline ${limits_base} --cluster ${limits_h200} --nodes 7 --gpus 49 --calibration ${limits_profile} --rank-by time --quiet
  EXPECT_EXIT 2
  STDERR_MATCHES "cluster ranking: the baseline: paper-200M-S95-baseline on 49 GPUs of NVIDIA H200 SXM 141GB: no layout: the global batch of 4194304 tokens divides into no micro-batch of b x seq_len x DP tokens .*DP 49")
budget_cli_test(NAME names_sizes_limits.search_49_gpus
  ARGS layout ${limits_base} --cluster ${limits_h200} --nodes 7 --gpus 49 --profile ${limits_profile}
  EXPECT_EXIT 3 STDOUT_MATCHES "\nno layout: the global batch of 4194304 tokens divides into no micro-batch")
# The µs/token column at 10^6 GPUs: "0.000" before; three significant digits now.
budget_cli_test(NAME names_sizes_limits.ranking_million_gpus_per_token
  ARGS --baseline ${limits_base} --cluster ${limits_h200} --nodes 131072 --gpus 1048576 --global-batch-tokens 4294967296
       --calibration ${limits_profile} --rank-by time --top 1 --quiet
  STDOUT_MATCHES "\nbaseline +1280 +10×128 [(]KV 2[)] +192×432 [(]top 8[)] +TP[0-9]+ [^\n]+ dist-opt +0[.]000[1-9][0-9][0-9] "
  STDOUT_NOT_MATCHES "dist-opt +0[.]000[^0-9]" TIMEOUT 240)
# A CSV cell starting with = stays text, never a live formula (a grid cell's name in plan's CSV).
budget_cli_test(NAME names_sizes_limits.csv_formula_neutralised
  ARGS plan --grid ${limits_data}/grid_formula_name.json --format csv
  STDOUT_MATCHES "\nbaseline,\"'=HYPERLINK[(]\"\"http://x\"\",\"\"y\"\"[)]-E192\",")

# --- rough edges --------------------------------------------------------------------------------------
# grid --cluster: a cell whose baseline has no layout is shown in its row; the other cells are ranked.
budget_cli_test(NAME names_sizes_limits.grid_cluster_cell_without_layout
  ARGS grid --grid ${limits_data}/grid_one_cell_without_layout.json --cluster ${limits_h200} --gpus 8
       --calibration ${limits_profile} --rank-by time --quiet
  STDOUT_MATCHES "\n200M +TP1 [^\n]+\n200M-x64 +no layout +- " "\n200M-again +TP1 "
                 "200M-x64 [(]paper-200M-experts-x64[)]: paper-200M-experts-x64 on 8 GPUs of NVIDIA H200 SXM 141GB: no layout fits"
  TIMEOUT 240)
budget_cli_test(NAME names_sizes_limits.search_run_tokens
  ARGS layout ${limits_base} --cluster ${limits_h200} --gpus 8 --profile ${limits_profile} --run-tokens 1e12 --top 1
  STDOUT_MATCHES "headroom GiB +run h +GPU-hours\n" "\nrun: 1e[+]12 tokens\n")
budget_cli_test(NAME names_sizes_limits.search_run_tokens_json
  ARGS layout ${limits_base} --cluster ${limits_h200} --gpus 8 --profile ${limits_profile} --run-tokens 1e12 --top 1
       --format json
  STDOUT_MATCHES "\"run_tokens\": 1000000000000[.]0" "\"run\": [{]\n +\"wall_clock_seconds\": [0-9]")
# One attended-keys default, printed: layout and the ranking both take the workload's (the paper's).
budget_cli_test(NAME names_sizes_limits.layout_attention_default
  ARGS layout ${limits_base} --cluster ${limits_h200} --micro-batch-size 1 --micro-batches 8 --profile ${limits_profile}
  STDOUT_MATCHES "\nattention: 400 mean attended keys a query [(]the workload's document mask")
budget_cli_test(NAME names_sizes_limits.layout_attention_given
  ARGS layout ${limits_base} --cluster ${limits_h200} --gpus 8 --profile ${limits_profile} --attended-keys 2048.5 --top 1
  STDOUT_MATCHES "\nattention: 2048[.]5 mean attended keys a query [(]--attended-keys[)]")
budget_cli_test(NAME names_sizes_limits.ranking_attention_default
  ARGS --baseline ${limits_base} --cluster ${limits_h200} --gpus 8 --calibration ${limits_profile} --rank-by time --top 1 --quiet
  STDOUT_MATCHES "4096-token sequences [(]400 mean attended keys a query[)]" "[(]NVIDIA H200 SXM 141GB; 1 node of 8[)]")
# DeepSeek-V3's router in Megatron's flags (d98e8a64 TransformerConfig:780, :796, :804).
budget_cli_test(NAME names_sizes_limits.megatron_router_groups
  ARGS export tests/data/hf/deepseek-v3.json --to megatron
  STDOUT_MATCHES "\n  --moe-router-topk-scaling-factor 2[.]5\n" "\n  --moe-router-num-groups 8\n" "\n  --moe-router-group-topk 4\n")
# `match` and a lone config path.
budget_cli_test(NAME names_sizes_limits.match_alias
  ARGS match ${limits_base} --top 1 --quiet
  STDOUT_MATCHES "^baseline: paper-200M-S95-baseline [(]12 layers, H 1280[)]")
budget_cli_test(NAME names_sizes_limits.config_as_subcommand
  ARGS ${limits_base} EXPECT_EXIT 64
  STDERR_MATCHES "[(]a config is not a subcommand: `budget-match --baseline examples/configs/paper-200M-S95-baseline[.]json` matches it")
budget_cli_test(NAME names_sizes_limits.did_you_mean_flag
  ARGS layout ${limits_base} --cluster ${limits_h200} --gpu 8 EXPECT_EXIT 64
  STDERR_MATCHES "[(]--gpu: did you mean --gpus[?][)]")
budget_cli_test(NAME names_sizes_limits.did_you_mean_required_flag
  ARGS layout ${limits_base} --clustr ${limits_h200} EXPECT_EXIT 64
  STDERR_MATCHES "--cluster is required [(]--clustr: did you mean --cluster[?][)]")
budget_cli_test(NAME names_sizes_limits.flag_of_another_command
  ARGS report ${limits_base} --min-headroom 8 EXPECT_EXIT 64
  STDERR_MATCHES "[(]--min-headroom is an option of the matcher [(]budget-match --baseline[)], layout, .*not of `budget-match report`")
budget_cli_test(NAME names_sizes_limits.min_headroom_search
  ARGS layout ${limits_base} --cluster ${limits_h200} --gpus 8 --profile ${limits_profile} --min-headroom 1000
  EXPECT_EXIT 3 STDOUT_MATCHES "no layout fits: none of the [0-9]+ valid layouts leaves the 1000 GiB of headroom asked for [(]--min-headroom[)]")
budget_cli_test(NAME names_sizes_limits.min_headroom_layout
  ARGS layout ${limits_base} --cluster ${limits_h200} --micro-batch-size 1 --micro-batches 1 --profile ${limits_profile}
       --min-headroom 130
  EXPECT_EXIT 3 STDOUT_MATCHES "does not fit with the headroom asked for: peak [0-9.]+ GiB on stage 0 leaves [0-9.]+ GiB, less than the 130[.]00 GiB of --min-headroom")
budget_cli_test(NAME names_sizes_limits.min_headroom_ranking
  ARGS --baseline ${limits_base} --cluster ${limits_h200} --gpus 8 --calibration ${limits_profile} --rank-by time
       --min-headroom 1000 --quiet
  EXPECT_EXIT 2 STDERR_MATCHES "no layout fits: none of the [0-9]+ valid layouts leaves the 1000 GiB of headroom asked for")
budget_cli_test(NAME names_sizes_limits.min_headroom_bad
  ARGS layout ${limits_base} --cluster ${limits_h200} --gpus 8 --min-headroom nan EXPECT_EXIT 64
  STDERR_MATCHES "--min-headroom: value \"nan\" is not allowed; allowed: a finite number in [[]0, 1e[+]06[]]")
# Wording: "1 GPU", "1 micro-batch of 1 sequence"; a --nodes different from the file's in the name.
budget_cli_test(NAME names_sizes_limits.wording_singular
  ARGS layout ${limits_base} --cluster ${limits_h200} --micro-batch-size 1 --micro-batches 1
  EXPECT_EXIT 0 STDOUT_MATCHES "\n1 GPU: TP 1 [^\n]+; 1 micro-batch of 1 sequence of 4096 tokens;")
budget_cli_test(NAME names_sizes_limits.resized_cluster_name
  ARGS layout ${limits_base} --cluster ${limits_h200} --gpus 256 --nodes 32 --profile ${limits_profile} --top 1 --format json
  STDOUT_MATCHES "\"cluster\": \"1 node of 8x H200 SXM 141GB [(]DGX H200 class[)], resized to 32 nodes of 8\""
                 "\"nodes\": 32,")
