# budget-match --baseline BASE --out OUT --out-format megatron: OUT is exactly EXPECTED, and stderr
# says what Megatron-LM cannot express (the loop).
execute_process(COMMAND "${EXE}" --baseline "${BASE}" --all-trainable-shapes --top 1 --out "${OUT}" --out-format megatron
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "match failed (${rc}): ${err}")
endif()
if(NOT err MATCHES "note: megatron export: the loop")
  message(FATAL_ERROR "stderr does not state the loop: ${err}")
endif()
file(READ "${OUT}" written)
file(READ "${EXPECTED}" expected)
if(NOT written STREQUAL expected)
  message(FATAL_ERROR "written:\n${written}\nexpected:\n${expected}")
endif()
