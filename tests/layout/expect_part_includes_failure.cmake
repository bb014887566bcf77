# cmake -DPYTHON=python3 -DSCRIPT=check_part_includes.py -DTREE=dir -P expect_part_includes_failure.cmake:
# runs the checker of what render/, python/ and cli/ include on the small tree TREE, prints its
# output, and fails unless it exited 1 (violations found); the caller matches the output.
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" --root "${TREE}"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status EQUAL 1)
  message(FATAL_ERROR "expected exit 1, got ${status}")
endif()
