# cmake -DPYTHON=python3 -DSCRIPT=check_sizes.py -DTREE=dir -P expect_sizes_failure.cmake: runs the
# size checker on TREE with small limits (files 40 lines, functions 10), prints its output, and
# fails unless it exited 1 (violations found); the caller matches the output.
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" --max-file 40 --max-function 10 "${TREE}"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status EQUAL 1)
  message(FATAL_ERROR "expected exit 1, got ${status}")
endif()
