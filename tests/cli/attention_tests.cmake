# CLI tests of `budget-match attention` (issue 4), run from the repository root. Expected numbers
# are hand-derived:
#  - one 4096-token document per 4096 window: (4096 + 1)/2 = 2048.5 keys per query; 128×128 tiles
#    execute 528 of 1024 tiles, 528·128² / (4096·4097/2) = 1.031× the exact work; forward FLOPs
#    per token and layer with q = 10·128 = 1280: 4·1280·2048.5 = 10,488,320.
#  - sliding window 1024 over that window: (1024·1025/2 + 3072·1024)/4096 = 896.125 keys.
#  - tests/data/doc_lengths_small.*: 10 documents of 600+1+4096+5000+37+12000+2+128+129+3000 =
#    24,993 tokens: 6 full windows of 4096 (24,576 tokens) and a partial one of 417.
#
# This file is also a script: run with -P it compares the attended keys `budget-match attention`
# reports for --dist exp:mean=600 with those load_workload() derives from
# examples/workloads/exp-600-doc.json (reported by --workload).

if(CMAKE_SCRIPT_MODE_FILE)
  function(attended_keys out)
    execute_process(COMMAND "${EXE}" attention ${ARGN} --format json
      WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "budget-match attention ${ARGN} failed (${rc}): ${err}")
    endif()
    set(${out} "${json}" PARENT_SCOPE)
  endfunction()
  attended_keys(from_dist --dist exp:mean=600 --seq-len 4096 --method expectation)
  attended_keys(from_workload --workload examples/workloads/exp-600-doc.json)
  string(JSON dist_keys GET "${from_dist}" expectation document_mask attended_keys)
  string(JSON workload_keys GET "${from_workload}" workload attended_keys)
  string(JSON workload_expectation GET "${from_workload}" expectation document_mask attended_keys)
  string(JSON dist_varlen GET "${from_dist}" expectation document_mask kernels varlen forward_keys)
  string(JSON workload_varlen GET "${from_workload}" expectation document_mask kernels varlen forward_keys)
  if(NOT dist_keys STREQUAL workload_keys OR NOT dist_keys STREQUAL workload_expectation
     OR NOT dist_varlen STREQUAL workload_varlen)
    message(FATAL_ERROR "attended keys differ: --dist ${dist_keys}, workload ${workload_keys} "
                        "(its report ${workload_expectation}); varlen ${dist_varlen} vs ${workload_varlen}")
  endif()
  message(STATUS "attended_keys ${dist_keys} from both")
  return()
endif()

set(one_error_line "^budget-match: error: [^\n]+\n$")

budget_cli_test(NAME attention.help ARGS attention --help
  STDOUT_MATCHES [=[--lengths]=] [=[--histogram]=] [=[--dist]=] [=[--workload]=] [=[--seq-len]=] [=[--tile]=]
                 [=[--bwd-tile]=] [=[--sliding-window]=] [=[--heads]=] [=[--head-dim]=] [=[docs/attention\.md]=])
budget_cli_test(NAME attention.listed ARGS --help STDOUT_MATCHES [=[attention +Attention cost]=])

budget_cli_test(NAME attention.single_window_table ARGS attention --dist fixed:4096 --samples 1000
  STDOUT_MATCHES [=[document +expectation +2048\.50 +10\.5 M +31\.5 M +1\.031×]=]
                 [=[document +simulation +2048\.50]=] [=[ 4096 +1,000 +100\.0% +█+]=])
budget_cli_test(NAME attention.single_window_json ARGS attention --dist fixed:4096 --samples 1000 --format json
  STDOUT_MATCHES [=["schema_version": 1]=] [=["attended_keys": 2048\.5,]=]
                 [=["forward_flops_per_token_per_layer": 10488320\.0]=] [=["forward_ratio": 1\.0309]=]
                 [=["forward": 528000,]=] [=["full_windows": 1000,]=] [=["piece_histogram": \[]=])
budget_cli_test(NAME attention.sliding_window ARGS attention --dist fixed:4096 --sliding-window 1024
  --method expectation --format json
  STDOUT_MATCHES [=["attended_keys": 896\.125]=] [=["sliding_window": 1024]=]
  STDOUT_NOT_MATCHES [=["simulation"]=])
budget_cli_test(NAME attention.markdown ARGS attention --dist fixed:512 --samples 100 --format markdown
  STDOUT_MATCHES [=[\| mask \| method \| keys/query \|]=] [=[\| document \| expectation \| 256\.50 \|]=])

foreach(ext txt u32 u64)
  budget_cli_test(NAME attention.lengths_${ext} ARGS attention --lengths tests/data/doc_lengths_small.${ext}
    STDOUT_MATCHES [=[documents +10]=] [=[tokens +24,993]=] [=[windows of 4096 +7 \(last partial\)]=]
                   [=[document +simulation]=]
    STDOUT_NOT_MATCHES [=[expectation]=])
endforeach()
budget_cli_test(NAME attention.lengths_both ARGS attention --lengths tests/data/doc_lengths_small.u32 --method both
  --order shuffled --seed 3 --tokens-per-doc 2
  STDOUT_MATCHES [=[document +expectation]=] [=[document +simulation]=] [=[tokens +25,013]=]
                 [=[shuffled, seed 3]=])
budget_cli_test(NAME attention.histogram ARGS attention --histogram tests/data/doc_lengths_histogram.csv
  --samples 2000 --tile 64x64
  STDOUT_MATCHES [=[histogram tests/data/doc_lengths_histogram\.csv \(4 lengths\)]=] [=[forward 64x64]=])
budget_cli_test(NAME attention.workload ARGS attention --workload examples/workloads/histogram-sliding-1024.json
  STDOUT_MATCHES [=[sliding window 1024]=] [=[workload .*attended_keys [0-9.]+ \(document mask\), kernel_attended_keys [0-9.]+ \(dense_masked\)]=])

add_test(NAME cli.attention.workload_matches_dist
  COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:budget-match>" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}"
          -P "${CMAKE_CURRENT_LIST_FILE}")

# Bad input: one line on stderr naming the file or option, the location and what is allowed; exit 2.
budget_cli_test(NAME attention.truncated_binary ARGS attention --lengths tests/data/doc_lengths_truncated.u32
  EXPECT_EXIT 2
  STDERR_MATCHES "${one_error_line}" [=[doc_lengths_truncated\.u32: the file has 7 bytes, not a multiple of 4]=])
budget_cli_test(NAME attention.zero_binary ARGS attention --lengths tests/data/doc_lengths_zero.u32 EXPECT_EXIT 2
  STDERR_MATCHES "${one_error_line}" [=[doc_lengths_zero\.u32: byte offset 8: document length 0 is not allowed]=])
budget_cli_test(NAME attention.negative_text ARGS attention --lengths tests/data/doc_lengths_negative.txt EXPECT_EXIT 2
  STDERR_MATCHES "${one_error_line}" [=[doc_lengths_negative\.txt: line 3: negative document length "-5"]=])
budget_cli_test(NAME attention.non_numeric_text ARGS attention --lengths tests/data/doc_lengths_nonnumeric.txt
  EXPECT_EXIT 2 STDERR_MATCHES "${one_error_line}" [=[line 2: "abc" is not a document length]=])
budget_cli_test(NAME attention.empty_file ARGS attention --lengths tests/data/doc_lengths_empty.txt EXPECT_EXIT 2
  STDERR_MATCHES "${one_error_line}" [=[doc_lengths_empty\.txt: the file is empty]=])
budget_cli_test(NAME attention.missing_file ARGS attention --lengths tests/data/no_such_file.u32 EXPECT_EXIT 2
  STDERR_MATCHES "${one_error_line}" [=[no_such_file\.u32: cannot open file]=])
budget_cli_test(NAME attention.bad_histogram ARGS attention --histogram tests/data/doc_lengths_histogram_bad.csv
  EXPECT_EXIT 2 STDERR_MATCHES "${one_error_line}" [=[doc_lengths_histogram_bad\.csv: line 3: count "many"]=])
budget_cli_test(NAME attention.bad_spec ARGS attention --dist exp:meen=600 EXPECT_EXIT 2
  STDERR_MATCHES "${one_error_line}"
                 [=[--dist: in "exp:meen=600": unknown parameter "meen" \(did you mean "mean"\?\)]=])
budget_cli_test(NAME attention.bad_weights ARGS attention --dist mix:0.7*exp:mean=300+0.2*fixed:4096 EXPECT_EXIT 2
  STDERR_MATCHES "${one_error_line}" [=[the weights sum to 0\.9; they must sum to 1]=])
budget_cli_test(NAME attention.no_source ARGS attention EXPECT_EXIT 64
  STDERR_MATCHES "^budget-match: error: [^\n]+\nRun with --help for usage[.]\n$" [=[give exactly one of --lengths FILE, --histogram FILE, --dist SPEC]=])
budget_cli_test(NAME attention.two_sources ARGS attention --dist fixed:5 --lengths tests/data/doc_lengths_small.txt
  EXPECT_EXIT 64 STDERR_MATCHES [=[found 2]=])
budget_cli_test(NAME attention.bad_tile ARGS attention --dist fixed:5 --tile 128 EXPECT_EXIT 2
  STDERR_MATCHES "${one_error_line}" [=[--tile: tile "128" is not allowed; expected ROWSxCOLS]=])
budget_cli_test(NAME attention.seq_len_too_long ARGS attention --dist fixed:5 --seq-len 2000000 EXPECT_EXIT 2
  STDERR_MATCHES "${one_error_line}" [=[--seq-len: value 2000000 is out of range; allowed: an integer in \[1, 2\^20\]]=])
budget_cli_test(NAME attention.shuffle_distribution ARGS attention --dist fixed:5 --order shuffled EXPECT_EXIT 64
  STDERR_MATCHES [=[--order: --order shuffled applies to --lengths files only]=])
budget_cli_test(NAME attention.workload_excludes_dist ARGS attention --workload examples/workloads/exp-600-doc.json
  --dist fixed:5 EXPECT_EXIT 64 STDERR_MATCHES [=[excludes]=])
budget_cli_test(NAME attention.workload_without_doc_lengths ARGS attention --workload examples/workloads/paper-4096.json
  EXPECT_EXIT 2 STDERR_MATCHES [=[paper-4096\.json: /doc_lengths: the workload has no "doc_lengths"]=])
