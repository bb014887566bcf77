# Large inputs end quickly with a clear message (docs/reliability.md). Invoked by
# cli.robust.large_input with EXE and OUT (a scratch directory).
#  1. a config with an unknown key holding a 2 MB array, over a 1 MiB limit: refused before parsing;
#  2. the same under the default limit: the unknown key is named once, its value not echoed;
#  3. a 1 MB unknown key: echoed once, cut, with its size.
string(REPEAT "1," 1000000 numbers)
set(config_head "{\"name\": \"big\", \"hidden_size\": 1280, \"num_layers\": 12, \"attention\": {\"num_heads\": 10, \"head_dim\": 128, \"num_kv_heads\": 2}, \"ffn\": {\"num_experts\": 192, \"top_k\": 8, \"expert_dim\": 432}")
file(WRITE "${OUT}/big_array.json" "${config_head}, \"junk\": [${numbers}1]}\n")
string(REPEAT "k" 1000000 long_key)
file(WRITE "${OUT}/big_key.json" "${config_head}, \"${long_key}\": 1}\n")

function(expect_error name expected)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "${name}: exit ${rc}, expected 2: ${err}")
  endif()
  if(NOT err MATCHES "${expected}")
    string(SUBSTRING "${err}" 0 400 shown)
    message(FATAL_ERROR "${name}: stderr does not match ${expected}: ${shown}")
  endif()
  string(LENGTH "${err}" length)
  if(length GREATER 2000)
    message(FATAL_ERROR "${name}: the message has ${length} bytes; expected one short line")
  endif()
endfunction()

expect_error(limit "more than the limit of 1048576 bytes.*BUDGET_MAX_INPUT_MB"
  "${CMAKE_COMMAND}" -E env BUDGET_MAX_INPUT_MB=1 "${EXE}" report "${OUT}/big_array.json")
expect_error(unknown_array "/junk: unknown key \"junk\"" "${EXE}" report "${OUT}/big_array.json")
expect_error(unknown_long_key "unknown key \"kkkkk[k]*[.][.][.] [(]1000000 bytes in all[)]\"" "${EXE}" report "${OUT}/big_key.json")
