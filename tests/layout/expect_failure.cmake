# cmake -DPYTHON=python3 -DSCRIPT=check_domain_includes.py -DTREE=dir -P expect_failure.cmake: runs
# the include checker on TREE (its domains.json, include/ and src/), prints its output, and fails
# unless it exited 1 (violations found); the caller matches the output.
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" --domains "${TREE}/domains.json" --root "${TREE}"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status EQUAL 1)
  message(FATAL_ERROR "expected exit 1, got ${status}")
endif()
